//! `promptc view`: snapshots of the text and JSON views of every fixture in `fixtures/rollouts`,
//! and assertions of what fixtures/README.md states about them (synthetic items and their ids,
//! dropped items, how every line of a file is accounted for).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{
    all_fixture_files, code, fixture_names, json, per_fixture, root, run, stdout_json, transcript,
};

fn rollout(name: &str) -> String {
    format!("fixtures/rollouts/{name}.jsonl")
}

/// The text view (COLUMNS=100, set by the support command).
fn snapshot_text(name: &str) {
    insta::assert_snapshot!(
        format!("view_text__{name}"),
        transcript(&["view", &rollout(name)])
    );
}

/// The JSON view.
fn snapshot_json(name: &str) {
    insta::assert_snapshot!(
        format!("view_json__{name}"),
        transcript(&["view", "--json", &rollout(name)])
    );
}

mod text {
    use super::*;

    crate::support::rollout_fixtures! { per_fixture { fixture_names("rollouts"), snapshot_text; } }
}

mod json {
    use super::*;

    crate::support::rollout_fixtures! { per_fixture { fixture_names("rollouts"), snapshot_json; } }
}

/// Wide terminals get the raw history and the model view side by side.
#[test]
fn side_by_side_at_width_160() {
    insta::assert_snapshot!(
        "view_text_width_160__missing_output_no_id",
        transcript(&[
            "view",
            "--width",
            "160",
            "fixtures/rollouts/missing_output_no_id.jsonl"
        ])
    );
}

/// `--turn N --step K` shows the history as it stood for that request.
#[test]
fn view_of_one_step() {
    insta::assert_snapshot!(
        "view_text_turn_2_step_1__turn_aborted",
        transcript(&[
            "view",
            "--turn",
            "2",
            "--step",
            "1",
            "fixtures/rollouts/turn_aborted.jsonl"
        ])
    );
}

fn view_json(file: &str) -> Value {
    json(&["view", "--json", file])
}

/// The model view entries that normalization added.
fn synthetic(view: &Value) -> Vec<&Value> {
    view["model_view"]
        .as_array()
        .expect("model_view is an array")
        .iter()
        .filter(|entry| entry["origin"] != "raw")
        .collect()
}

/// The `type`s of the model view, in order.
fn model_view_types(view: &Value) -> Vec<String> {
    view["model_view"]
        .as_array()
        .expect("model_view is an array")
        .iter()
        .map(|entry| entry["item"]["type"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The synthetic output ids are the ones fixtures/README.md computed independently with
/// Python's `uuid.uuid5`.
#[test]
fn synthetic_output_ids_match_the_readme() {
    let view = view_json(&rollout("missing_output_with_id"));
    let synthetic = synthetic(&view);
    assert_eq!(synthetic.len(), 2, "two outputs are synthesized");
    let expected = [
        (
            5,
            "function_call_output",
            "call_m1",
            "fco_e0cc7ac0-59ff-5ba8-b62a-c35acb7a855d",
        ),
        (
            8,
            "custom_tool_call_output",
            "call_m2",
            "ctco_1cc632e8-d382-56cc-84e9-3b0163a358b6",
        ),
    ];
    for (entry, (index, kind, call_id, id)) in synthetic.iter().zip(expected) {
        assert_eq!(entry["origin"], "synthetic");
        assert_eq!(entry["index"], index, "{kind} sits directly after its call");
        assert_eq!(entry["item"]["type"], kind);
        assert_eq!(entry["item"]["call_id"], call_id);
        assert_eq!(entry["item"]["output"], "aborted");
        assert_eq!(entry["item"]["id"], id);
    }
    assert_eq!(view["model_view"].as_array().map(Vec::len), Some(9));
    assert_eq!(view["raw"].as_array().map(Vec::len), Some(7));
}

/// Calls without an item id get synthetic outputs without an `id`; a `local_shell_call` without
/// a `call_id` gets none.
#[test]
fn calls_without_ids_get_outputs_without_ids() {
    for (name, count) in [
        ("fixtures/rollouts/missing_output_no_id.jsonl", 2),
        ("fixtures/rollouts/turn_aborted.jsonl", 1),
        ("fixtures/malformed/truncated_last_line.jsonl", 1),
    ] {
        let view = view_json(name);
        let synthetic = synthetic(&view);
        assert_eq!(synthetic.len(), count, "{name}");
        for entry in synthetic {
            assert_eq!(entry["item"]["output"], "aborted", "{name}");
            assert!(
                entry["item"].get("id").is_none(),
                "{name}: a synthetic output for a call without an id has no id: {}",
                entry["item"]
            );
        }
    }
    let view = view_json(&rollout("missing_output_no_id"));
    assert_eq!(
        model_view_types(&view),
        [
            "message",
            "message",
            "message",
            "message",
            "function_call",
            "function_call_output",
            "local_shell_call",
            "function_call_output",
            "local_shell_call",
        ]
    );
    let calls: Vec<&Value> = synthetic(&view)
        .iter()
        .map(|e| &e["item"]["call_id"])
        .collect();
    assert_eq!(calls, ["call_n1", "call_n2"]);
}

#[test]
fn ghost_snapshots_are_kept_in_history_and_dropped_from_the_model_view() {
    let view = view_json(&rollout("ghost_snapshot"));
    let raw_types: Vec<&str> = view["raw"]
        .as_array()
        .expect("raw")
        .iter()
        .map(|e| e["item"]["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(raw_types.len(), 7);
    assert_eq!(
        raw_types[2], "ghost_snapshot",
        "line 6 stays in the history"
    );
    assert_eq!(view["raw"][2]["line"], 6);
    assert!(!model_view_types(&view).contains(&"ghost_snapshot".to_string()));
    assert_eq!(view["model_view"].as_array().map(Vec::len), Some(6));
    assert_eq!(
        view["dropped"],
        serde_json::json!([{"raw_index": 2, "reason": "ghost_snapshot"}])
    );
}

#[test]
fn orphan_outputs_are_dropped_with_a_reason() {
    let view = view_json(&rollout("orphan_outputs"));
    let dropped = view["dropped"].as_array().expect("dropped");
    let lines: Vec<&Value> = dropped
        .iter()
        .map(|d| &view["raw"][d["raw_index"].as_u64().expect("index") as usize]["line"])
        .collect();
    assert_eq!(lines, [9, 12], "the outputs of call_gone1 and call_gone3");
    for d in dropped {
        assert_eq!(d["reason"], "orphan_output");
    }
    // The output matching the local_shell_call on line 10 is kept.
    assert_eq!(
        model_view_types(&view),
        [
            "message",
            "message",
            "message",
            "message",
            "local_shell_call",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(view["model_view"][5]["item"]["call_id"], "call_o2");
    assert!(synthetic(&view).is_empty());

    let view = view_json("fixtures/malformed/compaction_orphans.jsonl");
    assert_eq!(view["raw"].as_array().map(Vec::len), Some(5));
    assert_eq!(view["model_view"].as_array().map(Vec::len), Some(4));
    assert_eq!(view["dropped"][0]["reason"], "orphan_output");
    assert_eq!(
        view["raw"][view["dropped"][0]["raw_index"].as_u64().expect("index") as usize]["item"]["call_id"],
        "call_zz"
    );
}

/// Every non-blank line of a file is either a record or a skipped line, exactly once.
fn assert_lines_accounted_for(file: &str) {
    let path = root().join(file);
    let expected: BTreeSet<usize> = crate::support::non_blank_lines(&path).into_iter().collect();
    let args = ["view", "--json", file];
    let output = run(&args);
    if expected.is_empty() {
        assert_eq!(code(&output), 2, "{file}: a file with no lines is an error");
        return;
    }
    if code(&output) == 2 {
        // A file none of whose lines can be read is not a rollout: an error, not a view.
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("nor a Claude Code transcript: no line is a JSON object"),
            "{file}: {stderr}"
        );
        return;
    }
    assert_eq!(
        code(&output),
        0,
        "{file}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let view = stdout_json(&args, &output);
    let mut seen = Vec::new();
    for record in view["records"].as_array().expect("records") {
        seen.push(record["line"].as_u64().expect("line") as usize);
    }
    for skipped in view["skipped_lines"].as_array().expect("skipped_lines") {
        seen.push(skipped["line"].as_u64().expect("line") as usize);
    }
    let unique: BTreeSet<usize> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "{file}: a line is counted twice");
    assert_eq!(
        unique, expected,
        "{file}: records + skipped_lines are not the non-blank lines"
    );
}

#[test]
fn records_and_skipped_lines_account_for_every_line_of_every_fixture() {
    let files = all_fixture_files();
    assert!(files.len() > 60, "all three fixture folders are found");
    for file in files {
        assert_lines_accounted_for(&file);
    }
}

#[test]
fn skipped_lines_carry_line_and_column() {
    let view = view_json(&rollout("truncated_last_line"));
    assert_eq!(
        view["skipped_lines"],
        serde_json::json!([{"line": 8, "column": 174, "reason": "not JSON: EOF while parsing a string"}])
    );
    let view = view_json("fixtures/malformed/nul_byte.jsonl");
    let lines: Vec<&Value> = view["skipped_lines"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|s| &s["line"])
        .collect();
    assert_eq!(lines, [5, 6], "the NUL inside a string and the NUL padding");
}

/// Turn and step layout from fixtures/README.md: (turn line, [(step line, input items)]).
fn turns(view: &Value) -> Vec<(u64, Vec<(u64, u64)>)> {
    view["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|t| {
            (
                t["line"].as_u64().expect("line"),
                t["steps"]
                    .as_array()
                    .expect("steps")
                    .iter()
                    .map(|s| {
                        (
                            s["line"].as_u64().expect("line"),
                            s["input_items"].as_u64().expect("input_items"),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn turns_and_steps_of_fixtures_whose_inputs_are_not_normalized() {
    // (fixture, [(turn line, [(first model item line, input items)])]) from fixtures/README.md.
    type Turns = &'static [(u64, &'static [(u64, u64)])];
    let cases: &[(&str, Turns)] = &[
        ("era_a_bare", &[(6, &[(8, 3), (12, 6)]), (15, &[(17, 9)])]),
        ("era_a_tagged", &[(4, &[(6, 2), (11, 5)])]),
        ("era_b_steps", &[(3, &[(9, 2), (16, 5), (23, 8)])]),
        (
            "era_c_turns",
            &[
                (5, &[(10, 4), (14, 7), (19, 10)]),
                (22, &[(26, 12), (29, 14)]),
            ],
        ),
        ("era_d_newer", &[(3, &[(7, 1)])]),
        ("plain_items", &[(1, &[(2, 1), (4, 3)])]),
        (
            "compaction_replacement",
            // Line 21: the compaction request, its 12 items then the checkpoint prompt.
            &[(5, &[(9, 4), (12, 7)]), (14, &[(18, 9), (21, 13), (24, 5)])],
        ),
        (
            "compaction_legacy",
            // Line 17: the /compact request, its 9 items then the checkpoint prompt.
            &[
                (4, &[(7, 3), (11, 6)]),
                (12, &[(15, 8), (17, 10)]),
                (19, &[(22, 6)]),
            ],
        ),
        (
            "rollback",
            &[
                (5, &[(8, 4), (10, 6)]),
                (12, &[(15, 8)]),
                (17, &[(21, 11), (23, 13)]),
                (26, &[(30, 11)]),
            ],
        ),
        ("truncated_last_line", &[(2, &[(6, 1), (7, 3)])]),
        ("escape_sequences", &[(2, &[(6, 1), (8, 3)])]),
        ("unknown_types", &[(2, &[(9, 1)])]),
        ("session_meta_only", &[]),
    ];
    for (name, expected) in cases {
        let view = view_json(&rollout(name));
        let expected: Vec<(u64, Vec<(u64, u64)>)> = expected
            .iter()
            .map(|(line, steps)| (*line, steps.to_vec()))
            .collect();
        assert_eq!(turns(&view), expected, "{name}");
    }
    let rollback = view_json(&rollout("rollback"));
    let rolled_back: Vec<&Value> = rollback["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|t| &t["rolled_back"])
        .collect();
    assert_eq!(rolled_back, [false, false, true, false]);
    let aborted = view_json(&rollout("turn_aborted"));
    assert_eq!(aborted["turns"][0]["aborted"], true);
    assert_eq!(aborted["turns"][1]["aborted"], false);
}

/// A step's `input_items` in `view --json` is the number of items of the request that step sent:
/// the model view as it stood, with synthetic outputs and without dropped items (README:
/// missing_output_with_id step 2 "input #0–#6", turn_aborted T2 "input #0–#8" and "#0–#10",
/// ghost_snapshot "Step 1 input: lines 2 and 3").
#[test]
fn step_input_items_are_the_compiled_input() {
    let mut mismatches = Vec::new();
    for file in crate::support::fixtures("rollouts")
        .into_iter()
        .chain(crate::support::fixtures("malformed"))
    {
        let output = run(&["view", "--json", &file]);
        if code(&output) != 0 {
            continue;
        }
        let view = stdout_json(&["view"], &output);
        for turn in view["turns"].as_array().expect("turns") {
            for step in turn["steps"].as_array().expect("steps") {
                let t = turn["number"].to_string();
                let s = step["step"].to_string();
                let compiled = json(&["compile", "--json", "--turn", &t, "--step", &s, &file]);
                let n = compiled["request"]["input"].as_array().map(Vec::len);
                if Some(step["input_items"].as_u64().expect("n") as usize) != n {
                    mismatches.push(format!(
                        "{file} turn {t} step {s}: view says {}, compile sends {n:?}",
                        step["input_items"]
                    ));
                }
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// README, compaction_legacy: "#0 AGENTS (approximate); #1 env (approximate); #2 U1 (rebuilt);
/// #3 U2 (rebuilt); #4 summary message (synthetic)". codex-rollout.md §10: "Mark synthetic items
/// ("aborted" outputs, rebuilt compaction messages)".
#[test]
fn legacy_compaction_marks_rebuilt_items() {
    let view = view_json(&rollout("compaction_legacy"));
    let origins: Vec<&str> = view["model_view"]
        .as_array()
        .expect("model_view")
        .iter()
        .map(|e| e["origin"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(origins.len(), 7);
    assert_eq!(origins[4], "synthetic", "the summary message is synthetic");
    for (i, origin) in origins[..4].iter().enumerate() {
        assert_ne!(
            *origin, "raw",
            "#{i} is rebuilt by the compaction, not read from a line"
        );
    }
    assert_eq!(&origins[5..], ["raw", "raw"], "lines 19 and 22");
}

/// README, era_d_newer line 9 and unknown_types line 6: "an unknown line type. It is skipped with
/// a diagnostic, not an error"; json_not_object line 8 (`{}`): "skipped (\"unrecognised line\")".
/// `view --json` lists them as records (effect `unknown_line_not_replayed`), but the text view and
/// stderr say nothing: its header reads "0 skipped" and no note names the line.
#[test]
fn unknown_line_types_are_skipped_with_a_diagnostic() {
    for (file, line) in [
        (rollout("era_d_newer"), 9),
        (rollout("unknown_types"), 6),
        (
            "fixtures/malformed/unknown_type_every_level.jsonl".to_string(),
            2,
        ),
        ("fixtures/malformed/json_not_object.jsonl".to_string(), 8),
    ] {
        let output = run(&["view", &file]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            text.contains(&format!("line {line}")) || text.contains(&format!(":{line}:")),
            "{file}: neither the text view nor stderr mentions line {line}"
        );
    }
}

/// The text of every `view` has the same header: file, session, history.
#[test]
fn every_text_view_names_the_file_and_counts_turns_and_steps() {
    for file in crate::support::fixtures("rollouts") {
        let output = run(&["view", &file]);
        assert_eq!(code(&output), 0, "{file}");
        let text = String::from_utf8(output.stdout).expect("text output is UTF-8");
        assert!(text.starts_with(&format!("file      {file} (")), "{file}");
        let view = view_json(&file);
        let history = format!(
            "history   {} turns, {} steps,",
            view["session"]["turns"], view["session"]["steps"]
        );
        assert!(text.contains(&history), "{file}: {history}");
    }
}

/// `promptc view <big file> | head -1`: the closed pipe is not an error (exit 0, no stderr).
#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let fixture =
        std::fs::read(root().join("fixtures/rollouts/era_c_turns.jsonl")).expect("fixture");
    let mut big = tempfile::Builder::new()
        .suffix(".jsonl")
        .tempfile()
        .expect("temp file");
    for _ in 0..2000 {
        std::io::Write::write_all(&mut big, &fixture).expect("write");
    }
    let path = big.path().to_str().expect("UTF-8 path").to_string();
    let mut child = crate::support::promptc()
        .args(["view", &path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("read one line");
    assert!(first.starts_with("file "), "{first}");
    // The reader is dropped here: the pipe is closed while promptc is still writing.
    let output = child.wait_with_output().expect("wait");
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every command's JSON output has `schema_version: 1`.
#[test]
fn every_json_document_has_schema_version_1() {
    let (a, b) = crate::support::diff_pair("history_rewritten");
    let commands: Vec<Vec<&str>> = vec![
        vec!["view", "--json", "fixtures/rollouts/era_c_turns.jsonl"],
        vec![
            "view",
            "--format",
            "json",
            "fixtures/rollouts/era_c_turns.jsonl",
        ],
        vec![
            "view",
            "--json",
            "--turn",
            "1",
            "--step",
            "2",
            "fixtures/rollouts/era_c_turns.jsonl",
        ],
        vec!["compile", "--json", "fixtures/rollouts/era_c_turns.jsonl"],
        vec![
            "fingerprint",
            "--json",
            "fixtures/rollouts/era_c_turns.jsonl",
        ],
        vec!["steps", "--json", "fixtures/rollouts/era_c_turns.jsonl"],
        vec![
            "steps",
            "--json",
            "--no-tokens",
            "fixtures/rollouts/era_c_turns.jsonl",
        ],
        vec!["diff", "--json", &a, &b],
        vec!["check", "--json", "fixtures/rollouts/era_c_turns.jsonl"],
        vec!["check", "--json", "fixtures/diff/volatile_prefix/a.jsonl"],
    ];
    for args in commands {
        let output = run(&args);
        assert!(matches!(code(&output), 0 | 1), "promptc {args:?}");
        stdout_json(&args, &output);
    }
    for file in all_fixture_files() {
        for command in [&["view"][..], &["fingerprint"], &["steps", "--no-tokens"]] {
            let mut args = command.to_vec();
            args.extend(["--json", file.as_str()]);
            let output = run(&args);
            if code(&output) == 2 {
                assert!(
                    output.stdout.is_empty(),
                    "promptc {args:?}: an error prints no JSON"
                );
                continue;
            }
            stdout_json(&args, &output);
        }
    }
}

/// Output is byte-identical from one run to the next, in every format.
#[test]
fn output_is_identical_across_runs() {
    let (a, b) = crate::support::diff_pair("compaction");
    let mut commands: Vec<Vec<String>> = Vec::new();
    for file in crate::support::fixtures("rollouts")
        .into_iter()
        .chain(crate::support::fixtures("malformed"))
    {
        for command in ["view", "compile", "fingerprint"] {
            commands.push(vec![command.into(), file.clone()]);
            commands.push(vec![command.into(), "--json".into(), file.clone()]);
        }
        // Token estimation costs ~0.5 s per run in a debug build: estimate for a few files (the
        // snapshots pin the estimates of every rollout).
        commands.push(vec!["steps".into(), "--no-tokens".into(), file.clone()]);
        commands.push(vec![
            "steps".into(),
            "--json".into(),
            "--no-tokens".into(),
            file.clone(),
        ]);
        if ["era_b_steps", "era_c_turns", "compaction_replacement"]
            .iter()
            .any(|name| file.ends_with(&format!("/{name}.jsonl")))
        {
            commands.push(vec!["steps".into(), file.clone()]);
            commands.push(vec!["steps".into(), "--json".into(), file.clone()]);
        }
    }
    commands.push(vec!["diff".into(), a.clone(), b.clone()]);
    commands.push(vec!["diff".into(), "--json".into(), a, b]);
    commands.push(
        ["check", "--json"]
            .iter()
            .map(|s| s.to_string())
            .chain(crate::support::fixtures("rollouts"))
            .collect(),
    );
    for args in commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let first = run(&args);
        let second = run(&args);
        assert_eq!(
            first.status.code(),
            second.status.code(),
            "promptc {args:?}"
        );
        assert!(
            first.stdout == second.stdout,
            "promptc {args:?}: stdout differs"
        );
        assert!(
            first.stderr == second.stderr,
            "promptc {args:?}: stderr differs"
        );
    }
}

/// README, unknown_types line 3: "the message is kept and the part is preserved verbatim as an
/// unknown content item and flagged" (codex-rollout.md §10: open enums for content items).
/// The part is kept (compile sends it) but nothing in the view flags it.
#[test]
fn unknown_content_parts_are_flagged() {
    let file = rollout("unknown_types");
    let compiled = json(&["compile", "--json", &file]);
    assert_eq!(
        compiled["request"]["input"][0]["content"][1]["type"], "input_hologram",
        "the part is kept verbatim"
    );
    let text =
        String::from_utf8_lossy(&run(&["view", "--width", "300", &file]).stdout).into_owned();
    let view = view_json(&file);
    let noted = view["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .any(|n| n["line"] == 3);
    assert!(
        noted || text.contains("input_hologram"),
        "line 3's unknown part is not flagged: {text}"
    );
}

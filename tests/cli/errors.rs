//! Malformed input and errors: every file in `fixtures/malformed` loads without a panic, with a
//! diagnostic per bad line naming the file, line and column (default), or fails at the first bad
//! line with exit 2 (`--strict`); files that are not rollouts at all are errors (exit 2).

use std::io::Write;

use serde_json::Value;

use crate::support::{code, fixture_names, json, per_fixture, run, stdout_json, transcript};

fn malformed(name: &str) -> String {
    format!("fixtures/malformed/{name}.jsonl")
}

/// `view` in the default (lenient) mode: stdout, the warnings on stderr and the exit code.
fn snapshot_lenient(name: &str) {
    insta::assert_snapshot!(
        format!("malformed_view__{name}"),
        transcript(&["view", &malformed(name)])
    );
}

/// `view --strict`: exit 2 on the first bad line, otherwise as lenient.
fn snapshot_strict(name: &str) {
    insta::assert_snapshot!(
        format!("malformed_view_strict__{name}"),
        transcript(&["view", "--strict", &malformed(name)])
    );
}

mod lenient {
    use super::*;

    crate::support::malformed_fixtures! { per_fixture { fixture_names("malformed"), snapshot_lenient; } }
}

mod strict {
    use super::*;

    crate::support::malformed_fixtures! { per_fixture { fixture_names("malformed"), snapshot_strict; } }
}

/// `--strict` stops at the first bad line: exit 2, the file and line on stderr, nothing on stdout.
#[test]
fn strict_fails_on_the_first_bad_line() {
    for (name, at) in [
        ("invalid_utf8", ":5:"),
        ("json_not_object", ":2:"),
        ("non_json_middle", ":5:"),
        ("nul_byte", ":5:"),
        ("truncated_last_line", ":6:"),
        ("wrong_payload_shape", ":3:"),
    ] {
        let file = malformed(name);
        let output = run(&["view", "--strict", &file]);
        assert_eq!(code(&output), 2, "{name}");
        assert!(output.stdout.is_empty(), "{name}: nothing on stdout");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(&format!("error: {file}{at}")),
            "{name}: {stderr}"
        );
        // Lenient mode loads the same file and warns about that line.
        let output = run(&["view", &file]);
        assert_eq!(code(&output), 0, "{name}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(&format!("warning: {file}{at}")),
            "{name}"
        );
    }
}

/// (item type, line) of each model view item, in order; synthetic items have no line.
type ModelView = &'static [(&'static str, Option<u64>)];

/// Model views the README gives for the malformed files: (file, [(item type, line)]).
#[test]
fn malformed_files_load_into_the_readme_model_views() {
    let cases: &[(&str, ModelView)] = &[
        (
            "truncated_last_line",
            &[
                ("message", Some(3)),
                ("function_call", Some(5)),
                ("function_call_output", None),
            ],
        ),
        (
            "non_json_middle",
            &[("message", Some(3)), ("message", Some(6))],
        ),
        (
            "json_not_object",
            &[("message", Some(5)), ("message", Some(10))],
        ),
        (
            "invalid_utf8",
            &[("message", Some(3)), ("message", Some(6))],
        ),
        ("nul_byte", &[("message", Some(3)), ("message", Some(7))]),
        (
            "session_meta_not_first",
            &[
                ("message", Some(1)),
                ("message", Some(2)),
                ("message", Some(5)),
            ],
        ),
        (
            "two_session_meta",
            &[
                ("message", Some(3)),
                ("message", Some(5)),
                ("message", Some(9)),
                ("message", Some(11)),
            ],
        ),
        (
            "duplicate_call_ids",
            &[
                ("message", Some(3)),
                ("function_call", Some(5)),
                ("function_call_output", Some(6)),
                ("function_call", Some(7)),
                ("message", Some(8)),
            ],
        ),
        (
            "output_before_call",
            &[
                ("message", Some(3)),
                ("function_call_output", Some(5)),
                ("function_call", Some(6)),
                ("message", Some(7)),
            ],
        ),
        (
            "compaction_orphans",
            &[
                ("message", Some(9)),
                ("compaction", Some(9)),
                ("message", Some(12)),
                ("message", Some(14)),
            ],
        ),
        (
            "rollback_too_many",
            &[
                ("message", Some(2)),
                ("message", Some(3)),
                ("message", Some(4)),
                ("message", Some(17)),
                ("message", Some(19)),
            ],
        ),
        (
            "unknown_type_every_level",
            &[
                ("message", Some(5)),
                ("reasoning", Some(8)),
                ("local_shell_call", Some(9)),
                ("function_call_output", Some(10)),
                ("web_search_call", Some(11)),
                ("message", Some(13)),
            ],
        ),
    ];
    for (name, expected) in cases {
        let view = json(&["view", "--json", &malformed(name)]);
        assert_eq!(model_view(&view), expected.to_vec(), "{name}");
    }
}

/// (type, line) of each model view item; synthetic items have no line.
fn model_view(view: &Value) -> Vec<(&str, Option<u64>)> {
    view["model_view"]
        .as_array()
        .expect("model_view")
        .iter()
        .map(|entry| {
            let line = (entry["origin"] == "raw")
                .then(|| {
                    view["raw"][entry["raw_index"].as_u64().expect("raw_index") as usize]["line"]
                        .as_u64()
                })
                .flatten();
            (entry["item"]["type"].as_str().unwrap_or("?"), line)
        })
        .collect()
}

/// The first session_meta decides the thread id, wherever it is.
#[test]
fn the_first_session_meta_decides_the_thread_id() {
    let view = json(&["view", "--json", &malformed("session_meta_not_first")]);
    assert_eq!(
        view["session"]["id"],
        "019b8e40-0000-7000-8000-000000000008"
    );
    assert_eq!(view["session"]["turns"], 1);
    let view = json(&["view", "--json", &malformed("two_session_meta")]);
    assert_eq!(
        view["session"]["id"],
        "019b8e40-0000-7000-8000-000000000009"
    );
    assert_eq!(
        view["session"]["cli_version"], "0.104.0",
        "from line 1, not line 7"
    );
    assert_eq!(view["session"]["turns"], 2);
    assert_eq!(view["notes"][0]["line"], 7);
}

/// A rollback of more turns than exist cuts at the first user turn and says so.
#[test]
fn rollback_of_too_many_turns_keeps_the_prefix() {
    let view = json(&["view", "--json", &malformed("rollback_too_many")]);
    assert_eq!(view["approximations"][0]["line"], 15);
    let note = view["approximations"][0]["note"].as_str().expect("note");
    assert!(note.contains('5') && note.contains('2'), "{note}");
}

/// Duplicate call ids are reported by `check` (README: "promptc should warn").
#[test]
fn duplicate_call_ids_are_reported_by_check() {
    let output = run(&["check", &malformed("duplicate_call_ids")]);
    assert_eq!(code(&output), 1);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("unique_call_ids"), "{stdout}");
    assert!(stdout.contains("call_dup"), "{stdout}");
}

/// README: wrong_payload_shape "Lines 3, 5, 6, 7 and 8 are skipped with shape diagnostics. View:
/// user (line 4), assistant (line 10)." Line 7 is a `response_item` without a payload; line 8 a
/// message whose `content` is a string (Codex's `ContentItem` list cannot parse it, so Codex
/// skips the line: codex-rollout.md §1, §5).
#[test]
fn wrong_payload_shapes_are_skipped() {
    let view = json(&["view", "--json", &malformed("wrong_payload_shape")]);
    let skipped: Vec<&Value> = view["skipped_lines"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|s| &s["line"])
        .collect();
    assert_eq!(skipped, [3, 5, 6, 7, 8]);
    assert_eq!(
        model_view(&view),
        [("message", Some(4)), ("message", Some(10))]
    );
}

/// README: session_meta_not_first "The thread id comes from the first session_meta (line 3,
/// …0008), with a \"not first\" diagnostic."
#[test]
fn session_meta_not_first_is_noted() {
    let view = json(&["view", "--json", &malformed("session_meta_not_first")]);
    let noted = view["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .any(|n| n["line"] == 3);
    assert!(noted, "no note for line 3: {}", view["notes"]);
}

/// README: unknown_type_every_level "Zero errors, several \"unknown\" notes"; line 6 (`effort`
/// "ultra" and other unknown values) "loaded; values shown verbatim and flagged; compiled effort
/// marked unknown".
#[test]
fn unknown_things_are_noted() {
    let file = malformed("unknown_type_every_level");
    let output = run(&["view", "--json", &file]);
    assert_eq!(code(&output), 0);
    assert!(output.stderr.is_empty(), "zero errors");
    let view = stdout_json(&["view"], &output);
    let notes = view["notes"].as_array().expect("notes");
    assert!(notes.len() >= 2, "several notes: {notes:?}");
    let compiled = json(&["compile", "--json", &file]);
    let flags_effort = compiled["approximations"]
        .as_array()
        .expect("approximations")
        .iter()
        .any(|a| a.to_string().contains("effort"));
    assert!(flags_effort, "{}", compiled["approximations"]);
}

fn assert_error(args: &[&str], message: &str) {
    let output = run(args);
    assert_eq!(code(&output), 2, "promptc {args:?}");
    assert!(
        output.stdout.is_empty(),
        "promptc {args:?}: nothing on stdout"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains(message),
        "promptc {args:?}: {stderr}"
    );
}

#[test]
fn a_missing_file_is_an_error() {
    assert_error(
        &["view", "fixtures/no-such-file.jsonl"],
        "no-such-file.jsonl",
    );
    assert_error(
        &[
            "diff",
            "fixtures/diff/identical/a.jsonl",
            "fixtures/no-such-file.jsonl",
        ],
        "no-such-file.jsonl",
    );
    assert_error(
        &["compile", "fixtures/no-such-file.jsonl"],
        "no-such-file.jsonl",
    );
}

#[test]
fn a_directory_is_an_error() {
    assert_error(&["view", "fixtures"], "directory");
    assert_error(&["steps", "fixtures/rollouts"], "directory");
}

#[test]
fn an_empty_file_is_an_error() {
    assert_error(&["view", &malformed("empty")], "empty");
    assert_error(&["view", &malformed("only_blank_lines")], "empty");
    assert_error(&["view", "--json", &malformed("empty")], "empty");
}

#[test]
fn a_binary_file_is_an_error() {
    let ls = std::path::Path::new("/bin/ls");
    if !ls.is_file() {
        crate::support::skip("/bin/ls is not present");
        return;
    }
    assert_error(
        &["view", "/bin/ls"],
        "neither a Codex rollout nor a Claude Code transcript",
    );
    assert_error(
        &["steps", "--json", "/bin/ls"],
        "neither a Codex rollout nor a Claude Code transcript",
    );
}

#[test]
fn a_json_array_file_is_an_error() {
    let mut file = tempfile::Builder::new()
        .suffix(".json")
        .tempfile()
        .expect("temp file");
    let fixture =
        std::fs::read_to_string(crate::support::root().join("fixtures/rollouts/era_c_turns.jsonl"))
            .expect("fixture");
    let items: Vec<Value> = fixture
        .lines()
        .map(|l| serde_json::from_str(l).expect("line is JSON"))
        .collect();
    file.write_all(serde_json::to_string(&items).expect("json").as_bytes())
        .expect("write");
    let path = file.path().to_str().expect("UTF-8 path").to_string();
    assert_error(
        &["view", &path],
        "neither a Codex rollout nor a Claude Code transcript",
    );
    assert_error(
        &["fingerprint", &path],
        "neither a Codex rollout nor a Claude Code transcript",
    );
}

#[test]
fn usage_errors_exit_2() {
    let output = run(&["view", "--no-such-flag", &malformed("empty")]);
    assert_eq!(code(&output), 2);
    let output = run(&[
        "compile",
        "--step",
        "1",
        "fixtures/rollouts/era_c_turns.jsonl",
    ]);
    assert_eq!(code(&output), 2, "--step requires --turn");
}

/// Selecting a turn or step that does not exist is an error.
#[test]
fn selecting_a_missing_step_is_an_error() {
    let output = run(&[
        "compile",
        "--turn",
        "9",
        "fixtures/rollouts/era_c_turns.jsonl",
    ]);
    assert_eq!(code(&output), 2);
    let output = run(&[
        "compile",
        "--turn",
        "1",
        "--step",
        "9",
        "fixtures/rollouts/era_c_turns.jsonl",
    ]);
    assert_eq!(code(&output), 2);
}

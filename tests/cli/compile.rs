//! `promptc compile`: snapshots of the request compiled for the default step (the last one) of
//! every fixture in `fixtures/rollouts`, in text and JSON, and what the README states about
//! requests (item ids, metadata, instructions, approximations).

use serde_json::Value;

use crate::support::{code, fixture_names, json, per_fixture, root, run, transcript};

fn rollout(name: &str) -> String {
    format!("fixtures/rollouts/{name}.jsonl")
}

fn snapshot_text(name: &str) {
    insta::assert_snapshot!(
        format!("compile_text__{name}"),
        transcript(&["compile", &rollout(name)])
    );
}

fn snapshot_json(name: &str) {
    insta::assert_snapshot!(
        format!("compile_json__{name}"),
        transcript(&["compile", "--json", &rollout(name)])
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

fn compile(file: &str, turn: usize, step: usize) -> Value {
    json(&[
        "compile",
        "--json",
        "--turn",
        &turn.to_string(),
        "--step",
        &step.to_string(),
        file,
    ])
}

fn input(request: &Value) -> &Vec<Value> {
    request["request"]["input"]
        .as_array()
        .expect("request.input is an array")
}

/// The default step is the last one; `--turn N --step K` picks one.
#[test]
fn default_step_is_the_last_step() {
    let last = json(&["compile", "--json", &rollout("era_c_turns")]);
    assert_eq!(
        (last["turn"].clone(), last["step"].clone()),
        (2.into(), 2.into())
    );
    assert_eq!(input(&last).len(), 14);
    let first = compile(&rollout("era_c_turns"), 1, 1);
    assert_eq!(input(&first).len(), 4);
}

/// Requests carry the synthetic outputs of the model view at that step (README,
/// missing_output_with_id: step 2 input #0–#6 contains synthetic #5).
#[test]
fn requests_carry_synthetic_outputs() {
    let request = compile(&rollout("missing_output_with_id"), 2, 1);
    let items = input(&request);
    assert_eq!(items.len(), 7);
    assert_eq!(
        items[5],
        serde_json::json!({"type":"function_call_output","id":"fco_e0cc7ac0-59ff-5ba8-b62a-c35acb7a855d","call_id":"call_m1","output":"aborted"})
    );
    assert_eq!(request["input_items"][5]["origin"], "synthetic");

    // turn_aborted: T2's first request (line 17) is #0–#8 with synthetic #6 and no id.
    let request = compile(&rollout("turn_aborted"), 2, 1);
    let items = input(&request);
    assert_eq!(items.len(), 9);
    assert_eq!(
        items[6],
        serde_json::json!({"type":"function_call_output","call_id":"call_t1","output":"aborted"})
    );
    assert!(
        items[7]["content"][0]["text"]
            .as_str()
            .expect("text")
            .starts_with("<turn_aborted>")
    );
}

/// Ghost snapshots and orphan outputs never reach a request.
#[test]
fn requests_leave_out_ghost_snapshots_and_orphans() {
    let request = compile(&rollout("ghost_snapshot"), 1, 1);
    assert_eq!(input(&request).len(), 2, "step 1 input: lines 2 and 3");
    let request = compile(&rollout("ghost_snapshot"), 1, 2);
    assert_eq!(
        input(&request).len(),
        5,
        "step 2 input: lines 2, 3, 8, 9, 10"
    );
    for step in [1, 2] {
        let request = compile(&rollout("orphan_outputs"), 1, step);
        for item in input(&request) {
            assert_ne!(item["call_id"], "call_gone1");
            assert_ne!(item["call_id"], "call_gone3");
        }
    }
}

/// Era D's sibling `metadata` object is not part of the item and is never sent; `ordinal` neither.
#[test]
fn era_d_metadata_is_never_sent() {
    let output = run(&["compile", "--json", &rollout("era_d_newer")]);
    assert_eq!(code(&output), 0);
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let request: Value = serde_json::from_str(&text).expect("JSON");
    // The items: the body's own `client_metadata` (0.122+) is another thing.
    let body = request["request"]["input"].to_string();
    assert!(!body.contains("metadata"), "{body}");
    assert!(!body.contains("ordinal"), "{body}");
    assert_eq!(request["request"]["model"], "gpt-5.5");
}

/// Server item ids are parsed but not sent by 2025 builds (README "Server item ids"): Era A's
/// `rs_…`/`fc_…` ids do not appear in the compiled request.
#[test]
fn era_a_server_ids_are_not_sent() {
    let request = json(&["compile", "--json", &rollout("era_a_bare")]);
    let body = request["request"].to_string();
    for id in ["rs_a1", "rs_a2", "rs_a3", "fc_a1"] {
        assert!(!body.contains(id), "{id} is sent: {body}");
    }
}

/// `base_instructions` is the exact instructions text; without it (Era A/B) the instructions
/// are unknown, never guessed.
#[test]
fn instructions_come_from_base_instructions_or_are_unknown() {
    let request = json(&["compile", "--json", &rollout("era_c_turns")]);
    assert_eq!(request["instructions_source"], "session_meta");
    assert_eq!(
        request["request"]["instructions"],
        "You are Codex, a coding agent running in a terminal. Be concise and precise."
    );
    for name in ["era_a_bare", "era_a_tagged", "era_b_steps", "plain_items"] {
        let request = json(&["compile", "--json", &rollout(name)]);
        assert_eq!(request["instructions_source"], "unknown", "{name}");
        assert_eq!(request["request"]["instructions"], Value::Null, "{name}");
        assert!(
            request["fingerprint"]["unknown"]
                .as_array()
                .expect("unknown")
                .contains(&"instructions".into()),
            "{name}"
        );
    }
}

/// The prompt cache key is the session id; a file without a meta has none.
#[test]
fn prompt_cache_key_is_the_session_id() {
    let request = json(&["compile", "--json", &rollout("era_a_bare")]);
    assert_eq!(
        request["request"]["prompt_cache_key"],
        "5f0c1a2e-3b4d-4e6f-8a9b-0c1d2e3f4a01"
    );
    let request = json(&["compile", "--json", &rollout("plain_items")]);
    assert!(
        request["request"]
            .get("prompt_cache_key")
            .is_none_or(Value::is_null)
    );
}

/// A truncated last line loses the response, but its request is still compiled, as pending.
#[test]
fn the_request_after_a_lost_response_is_pending() {
    let request = json(&["compile", "--json", &rollout("truncated_last_line")]);
    assert_eq!(request["pending"], true);
    assert_eq!(
        (request["turn"].clone(), request["step"].clone()),
        (1.into(), 2.into())
    );
    assert_eq!(input(&request).len(), 3);
}

/// A rollout without turns has no request to compile: an error, exit 2.
#[test]
fn a_rollout_without_turns_cannot_be_compiled() {
    let output = run(&["compile", &rollout("session_meta_only")]);
    assert_eq!(code(&output), 2);
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: "));
}

/// README, compaction_legacy: "Not byte-reproducible. Requests after line 17 must be marked
/// approximate." The text header says so ("approx line 17"); the JSON `approximations` of the
/// request must too, and the requests before the compaction must not.
#[test]
fn requests_after_a_legacy_compaction_are_approximate() {
    let approximations = |turn, step| -> Vec<Value> {
        compile(&rollout("compaction_legacy"), turn, step)["approximations"]
            .as_array()
            .expect("approximations")
            .clone()
    };
    let before = approximations(2, 1);
    let after = approximations(3, 1);
    let extra: Vec<&Value> = after.iter().filter(|a| !before.contains(a)).collect();
    assert!(
        !extra.is_empty(),
        "the request after line 17 has the same approximations as the one before: {after:?}"
    );
}

/// `--output-schema FILE`: the schema `codex exec --output-schema` sends as `text.format`, which
/// 0.58-0.77 (era B's shape) do not record; compact, keys in the file's order. A file that is not
/// JSON is an error naming it.
#[test]
fn output_schema_is_sent_as_text_format() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let schema = dir.path().join("schema.json");
    std::fs::write(
        &schema,
        "{\"type\": \"object\",\n \"required\": [\"files\"], \"additionalProperties\": false}\n",
    )
    .expect("write the schema");
    let file = rollout("era_b_steps");
    let schema_arg = schema.to_string_lossy().into_owned();
    let without = json(&["compile", "--json", &file]);
    let parts = |doc: &Value| -> Vec<String> {
        doc["approximations"]
            .as_array()
            .expect("approximations")
            .iter()
            .map(|a| a["part"].as_str().expect("a part").to_string())
            .collect()
    };
    assert!(without["request"].get("text").is_none());
    assert!(parts(&without).contains(&"text.format".to_string()));
    let with = json(&["compile", "--json", &file, "--output-schema", &schema_arg]);
    assert_eq!(
        with["request"]["text"].to_string(),
        r#"{"format":{"type":"json_schema","strict":true,"schema":{"type":"object","required":["files"],"additionalProperties":false},"name":"codex_output_schema"}}"#
    );
    assert!(!parts(&with).contains(&"text.format".to_string()));
    // The fingerprint printed beside the body is the body's: `params` holds the schema.
    assert_ne!(
        with["fingerprint"]["params"],
        without["fingerprint"]["params"]
    );
    assert_ne!(
        with["fingerprint"]["request"],
        without["fingerprint"]["request"]
    );
    assert_eq!(
        with["fingerprint"]["input"],
        without["fingerprint"]["input"]
    );

    // A build that records the schema (0.104.0): the recorded schema given again compiles the
    // same body to the same fingerprint; another schema changes both.
    let found = walk(&root().join("tests/conformance/0.104.0/output_schema/home/sessions"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("the recorded 0.104.0 output_schema case");
    let recorded = found.to_string_lossy().into_owned();
    let plain = json(&["compile", "--json", &recorded]);
    let sent = &plain["request"]["text"]["format"]["schema"];
    assert!(sent.is_object(), "0.104.0 records the schema");
    std::fs::write(&schema, sent.to_string()).expect("write");
    let again = json(&[
        "compile",
        "--json",
        &recorded,
        "--output-schema",
        &schema_arg,
    ]);
    assert_eq!(again["request"], plain["request"]);
    assert_eq!(again["fingerprint"], plain["fingerprint"]);
    std::fs::write(&schema, r#"{"type":"object"}"#).expect("write");
    let other = json(&[
        "compile",
        "--json",
        &recorded,
        "--output-schema",
        &schema_arg,
    ]);
    assert_ne!(other["request"], plain["request"]);
    assert_ne!(
        other["fingerprint"]["params"],
        plain["fingerprint"]["params"]
    );

    std::fs::write(&schema, "not json").expect("write");
    let output = run(&["compile", &file, "--output-schema", &schema_arg]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a JSON schema"), "{stderr}");
}

/// The files under `dir`, depth first.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

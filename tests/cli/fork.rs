//! Forks written by `codex exec fork` (0.152+): the fork's file starts with its own turn, and
//! its `session_meta` names the parent (`forked_from_id`, `forked_from_ordinal_exclusive`,
//! `history_base`). promptc loads the parent from the Codex home that holds the fork, so the
//! fork's first request starts with the parent's history as Codex sent it; without the parent
//! the output says so. `fixtures/fork-home` is the 0.171.0 conformance case, trimmed.

use serde_json::Value;

use crate::support::{code, json, run, run_env, stdout_json};

const DIR: &str = "fixtures/fork-home/sessions/2026/12/02";
const PARENT: &str = "rollout-2026-12-02T09-02-58-01a235fe-2931-7c83-aca7-0875ae32363a.jsonl";
const FORK: &str = "rollout-2026-12-02T09-02-59-01a235fe-2b89-7a80-8bb7-5c585a098b44.jsonl";

fn path(name: &str) -> String {
    format!("{DIR}/{name}")
}

fn input_texts(document: &Value) -> Vec<String> {
    document["request"]["input"]
        .as_array()
        .expect("input")
        .iter()
        .map(Value::to_string)
        .collect()
}

/// Codex's fork request (requests.jsonl of the case, request 2) is the parent's history up to
/// the fork (its first run: context, prompt, call, output, answer) plus the fork's prompt.
#[test]
fn the_forks_first_request_starts_with_the_parents_history() {
    let parent = json(&[
        "compile",
        "--json",
        &path(PARENT),
        "--turn",
        "1",
        "--step",
        "2",
    ]);
    let fork = json(&[
        "compile",
        "--json",
        &path(FORK),
        "--turn",
        "1",
        "--step",
        "1",
    ]);
    let parent_input = input_texts(&parent);
    let fork_input = input_texts(&fork);
    // The parent's step 2 input, then its answer, then the fork's own prompt. The first item is
    // the base instructions as 0.162+ send them, a developer message whose id derives from the
    // thread id (CONFORMANCE.md "Request rules"): the fork's differs from its parent's, as in
    // the case's requests 0 and 2.
    assert_eq!(fork_input.len(), parent_input.len() + 2, "{fork_input:#?}");
    assert_ne!(fork_input[0], parent_input[0]);
    assert_eq!(fork_input[1..parent_input.len()], parent_input[1..]);
    assert!(fork_input[parent_input.len()].contains("\"assistant\""));
    assert!(
        fork_input
            .last()
            .unwrap()
            .contains("In the fork, print branch.")
    );
    // Nothing about a missing parent.
    let approximations = fork["approximations"].to_string();
    assert!(!approximations.contains("fork"), "{approximations}");
}

/// The fork alone, with no Codex home above it and an empty CODEX_HOME: the parent cannot be
/// found, and view, steps and compile say so instead of compiling a 1-item request silently.
#[test]
fn a_fork_without_its_parent_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = tempfile::tempdir().expect("temp dir");
    let copy = dir.path().join(FORK);
    std::fs::copy(path(FORK), &copy).expect("copy");
    let copy = copy.display().to_string();
    let env = [("CODEX_HOME", home.path().to_str().expect("utf-8"))];
    for command in ["steps", "view"] {
        let output = run_env(&[command, &copy], &env);
        assert_eq!(code(&output), 0, "{command}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout
                .contains("fork of 01a235fe-2931-7c83-aca7-0875ae32363a: parent rollout not found"),
            "{command}: {stdout}"
        );
    }
    let args = ["compile", "--json", &copy, "--turn", "1", "--step", "1"];
    let output = run_env(&args, &env);
    let document = stdout_json(&args, &output);
    // The base-instructions message (0.162+), then the fork's prompt.
    assert_eq!(
        document["request"]["input"].as_array().map(Vec::len),
        Some(2)
    );
    let approximations = document["approximations"].as_array().expect("list");
    assert!(
        approximations
            .iter()
            .any(|a| a["part"] == "input" && a["reason"].as_str().unwrap_or("").contains("fork")),
        "{approximations:?}"
    );

    // The same copy with CODEX_HOME naming the home that holds the parent: found there.
    let env = [("CODEX_HOME", "fixtures/fork-home")];
    let output = run_env(&args, &env);
    let document = stdout_json(&args, &output);
    assert_eq!(
        document["request"]["input"].as_array().map(Vec::len),
        Some(8)
    );
}

/// `diff parent fork`: nothing aligns (the fork's turns are new), B's first request extends the
/// parent's last request before the fork, and the new cache key is an expected fork.
#[test]
fn diff_parent_fork_names_an_expected_fork() {
    let args = ["diff", "--json", &path(PARENT), &path(FORK)];
    let output = run(&args);
    assert_eq!(code(&output), 0);
    let document = stdout_json(&args, &output);
    assert_eq!(document["verdict"], "expected_drift_only");
    let drifts = document["drifts"].as_array().expect("drifts");
    assert_eq!(drifts.len(), 1, "{drifts:?}");
    assert_eq!(drifts[0]["class"], "fork");
    assert_eq!(drifts[0]["expected"], true);
    // Held against the parent's turn 1 step 2, the last request before the fork point.
    assert_eq!(
        (drifts[0]["turn"].as_u64(), drifts[0]["step"].as_u64()),
        (Some(1), Some(2))
    );
}

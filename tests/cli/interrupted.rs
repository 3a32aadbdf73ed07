//! `check` on rollouts whose user interrupted (SIGINT) or killed (SIGKILL) a running tool call:
//! what promptc compiles there is what Codex sent (the recorded "aborted by user" output and
//! `<turn_aborted>` message, or the "aborted" output Codex synthesizes for the unanswered call),
//! so `input_extends_previous` must hold; a real rewrite of the history must still fail it.

use crate::support::{code, root, run, skip};

/// Every recorded `interrupted_call` and `killed_call` rollout of the conformance suite passes.
#[test]
fn interrupted_and_killed_calls_pass_check() {
    let base = root().join("tests/conformance");
    if !base.is_dir() {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    }
    let mut files = Vec::new();
    let mut stack = vec![base];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl")
                && path.components().any(|c| {
                    matches!(
                        c.as_os_str().to_str(),
                        Some("interrupted_call" | "killed_call")
                    )
                })
                && path.components().any(|c| c.as_os_str() == "sessions")
            {
                files.push(path.display().to_string());
            }
        }
    }
    files.sort();
    // 8 versions, 2 scenarios, one rollout each.
    assert_eq!(files.len(), 16, "{files:#?}");
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    let output = run(&args);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// A call's output recorded only after later items: the second request showed the call with the
/// synthetic "aborted" output at input item 2, the third shows the user's next prompt there and
/// the recorded output further on. That is a real rewrite of the request's history, and fails.
#[test]
fn a_call_answered_after_later_items_fails_input_extends_previous() {
    let dir = tempfile::tempdir().expect("temp dir");
    let item = |second: u32, payload: &str| {
        format!(
            r#"{{"timestamp":"2025-11-20T14:00:{second:02}.000Z","type":"response_item","payload":{payload}}}"#
        )
    };
    let message = |second: u32, role: &str, kind: &str, text: &str| {
        item(
            second,
            &format!(
                r#"{{"type":"message","role":"{role}","content":[{{"type":"{kind}","text":"{text}"}}]}}"#
            ),
        )
    };
    let lines = [
        message(1, "user", "input_text", "run it"),
        item(
            2,
            r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#,
        ),
        message(3, "user", "input_text", "next"),
        message(4, "assistant", "output_text", "ok"),
        item(
            5,
            r#"{"type":"function_call_output","call_id":"c1","output":"aborted by user"}"#,
        ),
        message(6, "user", "input_text", "again"),
        message(7, "assistant", "output_text", "done"),
    ];
    let path = dir.path().join("late_output.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    let path = path.display().to_string();
    let output = run(&["check", &path]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(code(&output), 1, "{stdout}");
    assert!(
        stdout.contains(
            "input_extends_previous: turn 3 step 1: the input does not extend the previous request: item 2 differs"
        ),
        "{stdout}"
    );
}

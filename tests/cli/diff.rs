//! `promptc diff`: snapshots of every case in `fixtures/diff`, text and JSON, with the exit code
//! (0 identical or expected drift only, 1 unexpected drift), the drift class and expected flag
//! fixtures/README.md gives for each case, and two properties: diff(A, A) is identical for every
//! fixture, and diff(A, B) and diff(B, A) agree on the first divergence.

use serde_json::Value;

use crate::support::{
    all_fixture_files, code, diff_cases, diff_pair, per_fixture, run, stdout_json, transcript_of,
};

/// What fixtures/README.md section B says each case must report.
struct Expected {
    /// The drift class and its expected flag, or `None` for no drift at all.
    drift: Option<(&'static str, bool)>,
    /// Where it is first seen in A: (turn, step).
    at: Option<(u64, u64)>,
    /// The first divergent input item, for input drift.
    input_index: Option<u64>,
    /// How many aligned steps it affects.
    steps_affected: Option<u64>,
}

fn expected(case: &str) -> Expected {
    let e = |drift, at, input_index, steps_affected| Expected {
        drift,
        at,
        input_index,
        steps_affected,
    };
    match case {
        "identical" | "resumed_appended" => e(None, None, None, None),
        "tools_reordered" => e(
            Some(("tools_reordered", false)),
            Some((1, 1)),
            None,
            Some(3),
        ),
        "tools_changed" => e(Some(("tools_changed", false)), Some((1, 1)), None, Some(3)),
        "instructions_changed" => e(
            Some(("instructions_changed", false)),
            Some((1, 1)),
            None,
            Some(3),
        ),
        "params_changed" => e(Some(("params_changed", false)), Some((2, 1)), None, Some(1)),
        "fork" => e(Some(("fork", true)), Some((1, 1)), None, Some(3)),
        "cache_key_changed" => e(
            Some(("cache_key_changed", false)),
            Some((1, 1)),
            None,
            Some(3),
        ),
        "history_rewritten" => e(
            Some(("history_rewritten", false)),
            Some((1, 2)),
            Some(6),
            Some(2),
        ),
        "context_reinjected" => e(
            Some(("context_reinjected", false)),
            Some((2, 1)),
            Some(8),
            Some(1),
        ),
        "context_appended" => e(
            Some(("context_appended", true)),
            Some((2, 1)),
            Some(8),
            Some(1),
        ),
        "compaction" => e(Some(("compaction", true)), Some((2, 1)), None, Some(1)),
        "rollback" => e(Some(("rollback", true)), Some((2, 1)), Some(8), Some(1)),
        "volatile_prefix" => e(
            Some(("volatile_prefix", false)),
            Some((1, 1)),
            None,
            Some(3),
        ),
        // Item ids are serialized by this latest-main build, so the call itself differs at #4.
        "synthetic_output_changed" => e(
            Some(("synthetic_output_changed", false)),
            Some((2, 1)),
            Some(4),
            Some(1),
        ),
        // B resumes A (recorded with Codex 0.141.0 / 0.171.0, trimmed): B's first request after
        // A's end is held against A's last one.
        "resumed_resume" => e(None, None, None, None),
        "resumed_model_switch" => e(Some(("params_changed", false)), Some((1, 2)), None, Some(1)),
        "resumed_sandbox_change" => e(Some(("tools_changed", false)), Some((1, 2)), None, Some(1)),
        "resumed_agents_md_edit" => e(
            Some(("context_appended", true)),
            Some((1, 2)),
            Some(6),
            Some(1),
        ),
        other => panic!("fixtures/diff/{other} has no expectation in tests/cli/diff.rs"),
    }
}

fn check_case(case: &str) {
    let (a, b) = diff_pair(case);
    let want = expected(case);
    let want_code = match want.drift {
        Some((_, false)) => 1,
        _ => 0,
    };

    let text_args = ["diff", a.as_str(), b.as_str()];
    let text = run(&text_args);
    insta::assert_snapshot!(
        format!("diff_text__{case}"),
        transcript_of(&format!("promptc {}", text_args.join(" ")), &text)
    );
    assert_eq!(code(&text), want_code, "{case}: text exit code");

    let json_args = ["diff", "--json", a.as_str(), b.as_str()];
    let output = run(&json_args);
    insta::assert_snapshot!(
        format!("diff_json__{case}"),
        transcript_of(&format!("promptc {}", json_args.join(" ")), &output)
    );
    assert_eq!(code(&output), want_code, "{case}: JSON exit code");
    let document = stdout_json(&json_args, &output);
    let drifts = document["drifts"].as_array().expect("drifts");
    match want.drift {
        None => {
            assert!(drifts.is_empty(), "{case}: {drifts:?}");
            assert_eq!(document["identical"], true, "{case}");
            assert_eq!(document["verdict"], "identical", "{case}");
        }
        Some((class, expected_flag)) => {
            assert_eq!(drifts.len(), 1, "{case}: exactly one drift: {drifts:?}");
            let drift = &drifts[0];
            assert_eq!(drift["class"], class, "{case}");
            assert_eq!(drift["expected"], expected_flag, "{case}");
            let (turn, step) = want.at.expect("a place");
            assert_eq!(
                (drift["turn"].as_u64(), drift["step"].as_u64()),
                (Some(turn), Some(step)),
                "{case}"
            );
            assert_eq!(drift["input_index"].as_u64(), want.input_index, "{case}");
            assert_eq!(
                drift["steps_affected"].as_u64(),
                want.steps_affected,
                "{case}"
            );
            assert_eq!(document["identical"], false, "{case}");
            let verdict = if expected_flag {
                "expected_drift_only"
            } else {
                "unexpected_drift"
            };
            assert_eq!(document["verdict"], verdict, "{case}");
        }
    }
}

per_fixture! {
    diff_cases(), check_case;
    cache_key_changed,
    compaction,
    context_appended,
    context_reinjected,
    fork,
    history_rewritten,
    identical,
    instructions_changed,
    params_changed,
    resumed_agents_md_edit,
    resumed_appended,
    resumed_model_switch,
    resumed_resume,
    resumed_sandbox_change,
    rollback,
    synthetic_output_changed,
    tools_changed,
    tools_reordered,
    volatile_prefix,
}

/// README: history_rewritten s2 and s3 "first diverge at input #6; the common prefix is 6 items";
/// context_reinjected and context_appended keep a prefix of 8; compaction shares no prefix.
#[test]
fn common_prefix_of_input_drift() {
    for (case, turn, step, items) in [
        ("history_rewritten", 1, 2, 6),
        ("context_reinjected", 2, 1, 8),
        ("context_appended", 2, 1, 8),
        ("compaction", 2, 1, 0),
        ("synthetic_output_changed", 2, 1, 4),
    ] {
        let document = diff_json(case, false);
        let prefix = &document["common_prefix"];
        assert_eq!(
            (
                prefix["turn"].as_u64(),
                prefix["step"].as_u64(),
                prefix["items"].as_u64()
            ),
            (Some(turn), Some(step), Some(items)),
            "{case}"
        );
    }
}

/// Appended and rolled-back sessions have one more step in B.
#[test]
fn extra_steps_of_b_are_listed() {
    for case in ["resumed_appended", "rollback"] {
        let document = diff_json(case, false);
        assert_eq!(document["aligned_steps"], 3, "{case}");
        assert_eq!(
            document["b_only_steps"],
            serde_json::json!([{"turn": 3, "step": 1}]),
            "{case}"
        );
        assert_eq!(document["a_only_steps"], serde_json::json!([]), "{case}");
    }
}

/// Given in the other order (B older than A), the step of A that B lacks is what makes the diff
/// unexpected, and the headline says that rather than "drift" (there is none to name).
#[test]
fn steps_of_a_missing_from_b_are_the_headline_when_nothing_drifted() {
    let (a, b) = diff_pair("resumed_appended");
    let output = run(&["diff", &b, &a]);
    assert_eq!(code(&output), 1);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("unexpected: B lacks 1 step(s) of A (give the earlier session as A)"),
        "{text}"
    );
    assert!(!text.contains("missing from B"), "said once: {text}");
    let document = stdout_json(
        &["diff", "--json", &b, &a],
        &run(&["diff", "--json", &b, &a]),
    );
    assert_eq!(document["verdict"], "unexpected_drift");
    assert_eq!(document["drifts"], serde_json::json!([]));
    assert_eq!(
        document["a_only_steps"],
        serde_json::json!([{"turn": 3, "step": 1}])
    );
    // In A-then-B order the same pair is a continuation.
    assert_eq!(code(&run(&["diff", &a, &b])), 0);
}

/// Two sessions that share no request, in either order: neither continues the other, and the
/// headline says so instead of that B lacks A's steps.
#[test]
fn sessions_that_share_no_request_are_named_as_two() {
    let (a, b) = (
        "fixtures/rollouts/era_c_turns.jsonl",
        "fixtures/rollouts/era_d_newer.jsonl",
    );
    for (a, b) in [(a, b), (b, a)] {
        let output = run(&["diff", a, b]);
        assert_eq!(code(&output), 1);
        let text = String::from_utf8(output.stdout).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(
                "unexpected: A and B share no request (two sessions, neither a resume nor a fork of the other)"
            ),
            "{text}"
        );
        assert!(text.contains("0 aligned steps"), "{text}");
        assert!(
            !text.contains("continues A") && !text.contains("lacks"),
            "{text}"
        );
    }
}

fn diff_json(case: &str, reversed: bool) -> Value {
    let (a, b) = diff_pair(case);
    let (first, second) = if reversed { (b, a) } else { (a, b) };
    let args = [
        "diff",
        "--json",
        "--no-tokens",
        first.as_str(),
        second.as_str(),
    ];
    let output = run(&args);
    assert!(matches!(code(&output), 0 | 1), "{case}: {output:?}");
    stdout_json(&args, &output)
}

fn assert_self_diff_identical(file: &str) {
    let args = ["diff", "--json", "--no-tokens", file, file];
    let output = run(&args);
    assert_eq!(
        code(&output),
        0,
        "{file}: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    let document = stdout_json(&args, &output);
    assert_eq!(document["identical"], true, "{file}");
    assert_eq!(document["verdict"], "identical", "{file}");
    assert_eq!(document["drifts"], serde_json::json!([]), "{file}");
    assert_eq!(document["a_only_steps"], serde_json::json!([]), "{file}");
    assert_eq!(document["b_only_steps"], serde_json::json!([]), "{file}");
}

/// diff(A, A) is identical, exit 0, for every fixture that loads (an unreadable file is an
/// error, exit 2, in diff as in view). Identical copies (the shared diff base) are diffed once.
#[test]
fn a_file_diffed_with_itself_is_identical() {
    let mut seen = std::collections::BTreeSet::new();
    for file in all_fixture_files() {
        let bytes = std::fs::read(crate::support::root().join(&file)).expect("fixture");
        if !seen.insert(bytes) {
            continue;
        }
        if code(&run(&["view", "--json", &file])) == 2 {
            let output = run(&["diff", "--json", "--no-tokens", &file, &file]);
            assert_eq!(code(&output), 2, "{file}: unreadable in view, so in diff");
            continue;
        }
        assert_self_diff_identical(&file);
    }
    let (a, _) = diff_pair("identical");
    let text = run(&["diff", &a, &a]);
    assert_eq!(code(&text), 0);
}

/// diff(A, B) and diff(B, A) report the same first divergence (turn, step, common items) and
/// the same step alignment.
#[test]
fn diff_is_symmetric_in_its_first_divergence() {
    for case in diff_cases() {
        let forward = diff_json(&case, false);
        let backward = diff_json(&case, true);
        let prefix = |d: &Value| {
            let p = &d["common_prefix"];
            (p["turn"].clone(), p["step"].clone(), p["items"].clone())
        };
        assert_eq!(prefix(&forward), prefix(&backward), "{case}");
        assert_eq!(
            forward["aligned_steps"], backward["aligned_steps"],
            "{case}"
        );
        assert_eq!(forward["a_only_steps"], backward["b_only_steps"], "{case}");
        assert_eq!(forward["b_only_steps"], backward["a_only_steps"], "{case}");
    }
}

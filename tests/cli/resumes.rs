//! `diff` and `steps` on resumes the real Codex CLI recorded (`tests/conformance`): A is the
//! rollout as the first run left it, B the same file after the resume (Codex appends to it).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{code, root, run, skip, stdout_json};

/// A case's one rollout, when the recordings are present.
fn rollout(case: &str) -> Option<PathBuf> {
    let sessions = root()
        .join("tests/conformance")
        .join(case)
        .join("home/sessions");
    if !sessions.is_dir() {
        skip("tests/conformance is not present (outside the repository checkout)");
        return None;
    }
    let mut stack = vec![sessions];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    assert_eq!(found.len(), 1, "{case}: one rollout: {found:?}");
    found.pop()
}

/// The first `lines` lines of a file, written to `dir`.
fn head(path: &Path, lines: usize, dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(path).expect("readable");
    let kept: Vec<&str> = text.lines().take(lines).collect();
    assert_eq!(kept.len(), lines, "{} has {lines} lines", path.display());
    let out = dir.join(name);
    std::fs::write(&out, kept.join("\n") + "\n").expect("writable");
    out.display().to_string()
}

/// `diff --json` of a case's rollout cut after `a` lines against it cut after `b` lines (the
/// whole file when `None`), with its exit code.
fn diff_cut(case: &str, a: usize, b: Option<usize>) -> Option<(Value, i32)> {
    let path = rollout(case)?;
    let dir = tempfile::tempdir().expect("temp dir");
    let a = head(&path, a, dir.path(), "a.jsonl");
    let b = match b {
        Some(b) => head(&path, b, dir.path(), "b.jsonl"),
        None => path.display().to_string(),
    };
    let args = ["diff", "--json", a.as_str(), b.as_str()];
    let output = run(&args);
    Some((stdout_json(&args, &output), code(&output)))
}

/// The line of the first run's `task_complete` (0.104+ write one per turn): where A ends.
fn first_run_lines(case: &str) -> Option<usize> {
    let text = std::fs::read_to_string(rollout(case)?).expect("readable");
    text.lines()
        .position(|l| l.contains(r#""type":"task_complete""#))
        .map(|i| i + 1)
}

fn drifts(document: &Value) -> Vec<(String, bool, String)> {
    document["drifts"]
        .as_array()
        .expect("drifts")
        .iter()
        .map(|d| {
            (
                d["class"].as_str().unwrap_or_default().to_string(),
                d["expected"].as_bool().unwrap_or_default(),
                d["detail"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Resumed with another model, 0.152+ first send a compaction request (the old model, no tools;
/// `mock_saw_compaction` on request 2 of each case), then the new model's request from the
/// summary (request 3). `diff` names both: the compaction as the expected reset it is, the model
/// switch as the break it is (it was "identical" before).
#[test]
fn a_resume_that_compacts_for_another_model_names_the_compaction_and_the_switch() {
    for (case, from, to) in [
        ("0.152.1/model_switch", "gpt-5.5", "gpt-5.6-sol"),
        ("0.162.1/model_switch_gpt-6-sol", "gpt-5.5", "gpt-6-sol"),
        ("0.171.0/model_switch", "gpt-5.5", "gpt-5.6-sol"),
        ("0.171.0/model_switch_gpt-6.1-sol", "gpt-5.5", "gpt-6.1-sol"),
    ] {
        let Some(a) = first_run_lines(case) else {
            return;
        };
        let Some((document, exit)) = diff_cut(case, a, None) else {
            return;
        };
        let found = drifts(&document);
        assert_eq!(found.len(), 2, "{case}: {found:#?}");
        let (class, expected, detail) = &found[0];
        assert_eq!((class.as_str(), *expected), ("compaction", true), "{case}");
        assert!(detail.contains("compaction request"), "{case}: {detail}");
        let first = &document["drifts"][0];
        assert_eq!((&first["b_turn"], &first["b_step"]), (&2.into(), &1.into()));
        let (class, expected, detail) = &found[1];
        assert_eq!(
            (class.as_str(), *expected),
            ("params_changed", false),
            "{case}"
        );
        assert!(
            detail.contains(&format!(r#"model switch: "{from}" → "{to}""#)),
            "{case}: {detail}"
        );
        let second = &document["drifts"][1];
        assert_eq!(
            (&second["b_turn"], &second["b_step"]),
            (&2.into(), &2.into())
        );
        assert_eq!(document["verdict"], "unexpected_drift", "{case}");
        assert_eq!(exit, 1, "{case}");
    }
}

/// `steps`' prediction for a compaction request follows its verdict: the request is sent without
/// the tools, so only what precedes them can be read. 0.171 sends its instructions in the input,
/// after the tools: nothing (the mock cached 0 of request 2); 0.152 sends them in `instructions`,
/// ahead of the tools: at most those (the mock cached 5248, the instructions, of request 2). Both
/// predicted 9216, the whole previous request, before.
#[test]
fn a_compaction_request_is_predicted_what_precedes_the_tools() {
    for (case, most) in [("0.171.0/model_switch", 0), ("0.152.1/model_switch", 5248)] {
        let Some(path) = rollout(case) else {
            return;
        };
        let path = path.display().to_string();
        let args = ["steps", "--format", "json", path.as_str()];
        let document = stdout_json(&args, &run(&args));
        let steps = document["steps"].as_array().expect("steps");
        let request = steps
            .iter()
            .find(|s| s["compaction"] == true)
            .expect("a compaction request");
        assert_eq!(request["verdict"], "compaction_request", "{case}");
        let predicted = request["predicted_cached_tokens"]
            .as_u64()
            .expect("predicted");
        let cached = request["observed_cached_tokens"]
            .as_u64()
            .expect("observed");
        assert_eq!(cached, most, "{case}: what the mock cached");
        assert!(predicted <= most, "{case}: predicted {predicted}");
        assert_eq!(predicted == 0, most == 0, "{case}: predicted {predicted}");
    }
}

/// A sandbox change on resume names a tools drift only where the build's tools follow it.
/// 0.58 and 0.77 sent one `tools` under all three policies (requests 0-3 of their
/// sandbox_change cases): no drift. 0.104 changed web_search's `external_web_access` from
/// danger-full-access to read-only (request 2's tools differ from request 1's): `tools_changed`
/// as before; not from read-only to workspace-write (requests 2 and 3 share them): no drift.
#[test]
fn a_sandbox_change_names_a_tools_drift_only_where_the_build_changes_them() {
    for (case, a, b, tools_changed) in [
        ("0.58.0/sandbox_change", 14, 21, false),
        ("0.58.0/sandbox_change", 21, 28, false),
        ("0.77.0/sandbox_change", 15, 22, false),
        ("0.77.0/sandbox_change", 22, 29, false),
        ("0.104.0/sandbox_change", 18, 30, true),
        ("0.104.0/sandbox_change", 30, 42, false),
    ] {
        let Some((document, exit)) = diff_cut(case, a, Some(b)) else {
            return;
        };
        let found = drifts(&document);
        let tools: Vec<_> = found.iter().filter(|d| d.0 == "tools_changed").collect();
        if tools_changed {
            assert_eq!(tools.len(), 1, "{case} {a}-{b}: {found:#?}");
            assert!(!tools[0].1, "{case} {a}-{b}: unexpected");
            assert!(
                tools[0].2.contains("danger-full-access → read-only"),
                "{case} {a}-{b}: {found:#?}"
            );
            assert_eq!(exit, 1, "{case} {a}-{b}");
        } else {
            assert!(tools.is_empty(), "{case} {a}-{b}: {found:#?}");
            assert!(found.iter().all(|d| d.1), "{case} {a}-{b}: {found:#?}");
            assert_eq!(exit, 0, "{case} {a}-{b}");
        }
    }
}

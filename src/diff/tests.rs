use crate::agents::codex::plan::plan;
use crate::fingerprint::PlanOptions;
use crate::test_support::{fixture, session};

/// A fork of A that made no request yet (its `session_meta` only) diffs against A without a
/// first request to hold to A's (the fuzzer found an index out of bounds here).
#[test]
fn a_fork_without_requests_diffs_without_a_continuation() {
    let a = fixture("rollouts/era_c_turns.jsonl");
    let id = a
        .rollout
        .meta
        .as_ref()
        .and_then(|m| m.id.clone())
        .expect("an id");
    let line = format!(
        r#"{{"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta","payload":{{"id":"019b8e20-0000-7000-8000-0000000000ff","forked_from_id":"{id}"}}}}"#
    );
    let b = session(&[&line]);
    assert!(b.replay.steps.is_empty() && !a.replay.steps.is_empty());
    let options = PlanOptions::default();
    let (pa, pb) = (plan(&a, &options), plan(&b, &options));
    let diff = super::diff(&a, &pa, &b, &pb, None);
    assert!(
        diff.drifts
            .iter()
            .all(|d| !d.detail.contains("a fork of A")),
        "{diff:?}"
    );
}

/// An approval-policy change on resume: no recording shows whether a build's tools follow it,
/// so the tools drift is only possible (not asserted, so not unexpected) and says "may change".
#[test]
fn an_approval_change_is_a_possible_tools_drift() {
    let context = |approval: &str| {
        format!(
            r#"{{"timestamp":"2026-01-05T10:00:00.000Z","type":"turn_context","payload":{{"turn_id":"t","cwd":"/w","model":"gpt-5.1-codex","approval_policy":"{approval}","sandbox_policy":{{"type":"read-only"}},"summary":"auto"}}}}"#
        )
    };
    let message = |role: &str, text: &str| {
        format!(
            r#"{{"timestamp":"2026-01-05T10:00:01.000Z","type":"response_item","payload":{{"type":"message","role":"{role}","content":[{{"type":"input_text","text":"{text}"}}]}}}}"#
        )
    };
    let first = [
        context("never"),
        message("user", "hi"),
        message("assistant", "a"),
    ];
    let mut second = first.to_vec();
    second.extend([
        context("on-request"),
        message("user", "next"),
        message("assistant", "b"),
    ]);
    fn lines(l: &[String]) -> Vec<&str> {
        l.iter().map(String::as_str).collect()
    }
    let (a, b) = (session(&lines(&first)), session(&lines(&second)));
    let options = PlanOptions::default();
    let (pa, pb) = (plan(&a, &options), plan(&b, &options));
    let diff = super::diff(&a, &pa, &b, &pb, None);
    let tools: Vec<_> = diff
        .drifts
        .iter()
        .filter(|d| d.class == super::DriftClass::ToolsChanged)
        .collect();
    assert_eq!(tools.len(), 1, "{diff:?}");
    assert!(tools[0].possible && tools[0].expected(), "{diff:?}");
    assert!(tools[0].detail.contains("may change"), "{diff:?}");
    assert!(!diff.has_unexpected(), "{diff:?}");
}

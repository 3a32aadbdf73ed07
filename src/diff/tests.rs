use crate::fingerprint::{PlanOptions, plan};
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

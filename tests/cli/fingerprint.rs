//! `promptc fingerprint`: snapshots of every step's fingerprints for every fixture in
//! `fixtures/rollouts`, text and JSON (fingerprints are a stability boundary), and properties of
//! the fingerprints themselves.

use serde_json::Value;

use crate::support::{fixture_names, json, per_fixture, transcript};

fn rollout(name: &str) -> String {
    format!("fixtures/rollouts/{name}.jsonl")
}

fn snapshot_text(name: &str) {
    insta::assert_snapshot!(
        format!("fingerprint_text__{name}"),
        transcript(&["fingerprint", &rollout(name)])
    );
}

fn snapshot_json(name: &str) {
    insta::assert_snapshot!(
        format!("fingerprint_json__{name}"),
        transcript(&["fingerprint", "--json", &rollout(name)])
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

fn steps(file: &str) -> Vec<Value> {
    json(&["fingerprint", "--json", file])["steps"]
        .as_array()
        .expect("steps")
        .clone()
}

/// One fingerprint per step, and the step count agrees with `view`.
#[test]
fn one_fingerprint_per_step() {
    for file in crate::support::fixtures("rollouts") {
        let view = json(&["view", "--json", &file]);
        assert_eq!(
            steps(&file).len() as u64,
            view["session"]["steps"].as_u64().expect("steps"),
            "{file}"
        );
    }
}

/// Within one session, the key, the instructions and the params stay the same from step to step
/// (no model switch in these fixtures), and the input fingerprint changes with every step.
#[test]
fn stable_components_stay_stable_within_a_session() {
    for name in [
        "era_b_steps",
        "era_c_turns",
        "rollback",
        "compaction_replacement",
    ] {
        let steps = steps(&rollout(name));
        let first = &steps[0]["fingerprint"];
        for step in &steps {
            for part in ["prompt_cache_key", "instructions", "params"] {
                assert_eq!(step["fingerprint"][part], first[part], "{name}: {part}");
            }
        }
        let inputs: std::collections::BTreeSet<String> = steps
            .iter()
            .map(|s| s["fingerprint"]["input"].to_string())
            .collect();
        assert_eq!(inputs.len(), steps.len(), "{name}: every input differs");
    }
}

/// The identical diff pair has identical fingerprints; a one-character change in a tool output
/// changes the input fingerprint of the steps that include it, and only those.
#[test]
fn fingerprints_follow_the_bytes() {
    let a = steps("fixtures/diff/identical/a.jsonl");
    let b = steps("fixtures/diff/identical/b.jsonl");
    assert_eq!(a, b);
    let rewritten = steps("fixtures/diff/history_rewritten/b.jsonl");
    assert_eq!(a[0]["fingerprint"], rewritten[0]["fingerprint"], "s1");
    for k in [1, 2] {
        assert_ne!(
            a[k]["fingerprint"]["input"],
            rewritten[k]["fingerprint"]["input"],
            "s{}",
            k + 1
        );
        assert_eq!(
            a[k]["fingerprint"]["instructions"],
            rewritten[k]["fingerprint"]["instructions"]
        );
    }
}

//! `promptc steps`: snapshots of the per-step cache table of every fixture in
//! `fixtures/rollouts`, text and JSON, and the usage observations the README assigns to steps.

use serde_json::Value;

use crate::support::{fixture_names, json, per_fixture, transcript};

fn rollout(name: &str) -> String {
    format!("fixtures/rollouts/{name}.jsonl")
}

fn snapshot_text(name: &str) {
    insta::assert_snapshot!(
        format!("steps_text__{name}"),
        transcript(&["steps", &rollout(name)])
    );
}

fn snapshot_json(name: &str) {
    insta::assert_snapshot!(
        format!("steps_json__{name}"),
        transcript(&["steps", "--json", &rollout(name)])
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

/// (observed input, observed cached) per step, `None` where no usage was recorded.
fn observed(file: &str) -> Vec<Option<(u64, u64)>> {
    json(&["steps", "--json", file])["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            s["observed_input_tokens"]
                .as_u64()
                .zip(s["observed_cached_tokens"].as_u64())
        })
        .collect()
}

/// README token tables: the observations after deduplication, attached to their steps.
#[test]
fn usage_is_attached_to_the_steps_the_readme_names() {
    assert_eq!(
        observed(&rollout("era_b_steps")),
        [Some((5200, 0)), Some((5600, 5120)), Some((5900, 5504))],
        "lines 8, 15, 21; line 6 (info null) ignored; lines 13 and 20 repeat"
    );
    assert_eq!(
        observed(&rollout("era_c_turns")),
        [
            Some((6100, 0)),
            Some((6300, 5888)),
            Some((6500, 6144)),
            None,
            None
        ],
        "lines 12, 16, 20 belong to steps 1–3; turn 2 has no token_count"
    );
    assert_eq!(
        observed(&rollout("ghost_snapshot")),
        [Some((4500, 0)), Some((4600, 4480))]
    );
    assert_eq!(
        observed("fixtures/diff/identical/a.jsonl"),
        [Some((5400, 0)), Some((5700, 5376)), Some((5900, 5632))]
    );
    let view = json(&["view", "--json", &rollout("era_b_steps")]);
    let lines: Vec<&Value> = view["turns"][0]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| &s["usage"]["line"])
        .collect();
    assert_eq!(lines, [8, 15, 21]);
}

/// The summary adds up the steps.
#[test]
fn summary_adds_up_the_steps() {
    for file in crate::support::fixtures("rollouts") {
        let document = json(&["steps", "--json", &file]);
        let steps = document["steps"].as_array().expect("steps");
        let summary = &document["summary"];
        assert_eq!(
            summary["steps"].as_u64(),
            Some(steps.len() as u64),
            "{file}"
        );
        let with_usage: Vec<&Value> = steps
            .iter()
            .filter(|s| !s["observed_input_tokens"].is_null())
            .collect();
        assert_eq!(
            summary["observed_steps"].as_u64(),
            Some(with_usage.len() as u64),
            "{file}"
        );
        let input: u64 = with_usage
            .iter()
            .map(|s| s["observed_input_tokens"].as_u64().expect("n"))
            .sum();
        let cached: u64 = with_usage
            .iter()
            .map(|s| s["observed_cached_tokens"].as_u64().expect("n"))
            .sum();
        assert_eq!(summary["input_tokens"].as_u64(), Some(input), "{file}");
        assert_eq!(summary["cached_tokens"].as_u64(), Some(cached), "{file}");
    }
}

/// caching-and-drift.md §5: a step whose cached tokens fall below floor128(previous input) with
/// an intact prefix is a provider-side miss; at or above it, a hit.
#[test]
fn verdicts_follow_the_floor128_band() {
    let document = json(&["steps", "--json", &rollout("era_c_turns")]);
    let verdicts: Vec<&Value> = document["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| &s["verdict"])
        .collect();
    // 5888 < floor128(6100) = 6016 and 6144 < floor128(6300) = 6272.
    assert_eq!(verdicts[1], "provider_miss");
    assert_eq!(verdicts[2], "provider_miss");
    let document = json(&["steps", "--json", &rollout("era_b_steps")]);
    let verdicts: Vec<&Value> = document["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| &s["verdict"])
        .collect();
    // 5120 = floor128(5200) and 5504 = floor128(5600).
    assert_eq!(verdicts[1], "hit");
    assert_eq!(verdicts[2], "hit");
}

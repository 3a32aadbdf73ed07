//! Replay, checked against the expectations written by hand in fixtures/README.md.

use crate::agents::codex::replay::Effect;
use crate::agents::codex::session::Session;
use crate::test_support::{fixture, real_sample, real_samples, session};

fn raw_lines(s: &Session) -> Vec<usize> {
    s.replay.history().iter().map(|e| e.line).collect()
}

/// `(step line, raw prefix length)` per step, grouped by turn.
fn steps(s: &Session) -> Vec<Vec<(usize, usize)>> {
    s.replay
        .turns
        .iter()
        .map(|t| {
            t.steps
                .iter()
                .map(|&k| (s.replay.steps[k].line, s.replay.steps[k].prefix_len))
                .collect()
        })
        .collect()
}

#[test]
fn era_b_turn_context_marks_each_step_and_duplicate_usage_is_ignored() {
    let s = fixture("rollouts/era_b_steps.jsonl");
    assert_eq!(raw_lines(&s), [2, 3, 9, 10, 11, 16, 17, 18, 23]);
    assert_eq!(steps(&s), [vec![(9, 2), (16, 5), (23, 8)]]);
    let usage: Vec<_> = s
        .replay
        .steps
        .iter()
        .map(|st| {
            st.usage
                .as_ref()
                .map(|u| (u.line, u.usage.input_tokens, u.usage.cached_input_tokens))
        })
        .collect();
    assert_eq!(
        usage,
        [
            Some((8, 5200, 0)),
            Some((15, 5600, 5120)),
            Some((21, 5900, 5504))
        ]
    );
    let duplicates: Vec<usize> = s
        .rollout
        .records
        .iter()
        .zip(&s.replay.effects)
        .filter(|(_, e)| **e == Effect::DuplicateUsage)
        .map(|(r, _)| r.line)
        .collect();
    assert_eq!(duplicates, [13, 20]);
}

#[test]
fn rollback_drops_the_last_turn_and_the_context_just_above_it() {
    let s = fixture("rollouts/rollback.jsonl");
    assert_eq!(raw_lines(&s), [2, 3, 4, 6, 8, 9, 10, 13, 15, 27, 28, 30]);
    let rolled_back: Vec<bool> = s.replay.turns.iter().map(|t| t.rolled_back).collect();
    assert_eq!(rolled_back, [false, false, true, false]);
    assert_eq!(s.replay.steps.len(), 6);
    assert_eq!(s.replay.rollbacks[0].dropped_turns, 1);
    // T4's request holds everything but its own output.
    assert_eq!(s.replay.steps[5].prefix_len, 11);
}

#[test]
fn rollback_of_more_turns_than_exist_keeps_the_prefix_before_the_first_turn() {
    let s = session(&[
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"perm"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}"#,
        r#"{"timestamp":"t","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":5}}"#,
    ]);
    assert_eq!(raw_lines(&s), [1]);
    assert_eq!(
        s.replay.approximations.len(),
        1,
        "says the rollback asked for more turns than exist"
    );
}

#[test]
fn compaction_with_replacement_history_replaces_the_history() {
    let s = fixture("rollouts/compaction_replacement.jsonl");
    assert_eq!(raw_lines(&s), [21, 21, 21, 21, 21, 24, 25]);
    // Line 21: the compaction request, sent after the tool output, is a step of its own.
    assert_eq!(
        steps(&s),
        [vec![(9, 4), (12, 7)], vec![(18, 9), (21, 12), (24, 5)]]
    );
    let kinds: Vec<bool> = s.replay.steps.iter().map(|s| s.compaction).collect();
    assert_eq!(kinds, [false, false, false, true, false]);
    assert!(s.replay.approximations.is_empty());
}

#[test]
fn compaction_without_replacement_is_rebuilt_and_flagged_approximate() {
    let s = fixture("rollouts/compaction_legacy.jsonl");
    // AGENTS and env, the two user messages and the summary, then the next turn.
    assert_eq!(raw_lines(&s), [2, 3, 17, 17, 17, 19, 22]);
    // The /compact request (turn_context line 16, answered by line 17) is a compaction step.
    let kinds: Vec<bool> = s.replay.steps.iter().map(|s| s.compaction).collect();
    assert_eq!(kinds, [false, false, false, true, false]);
    assert_eq!(s.replay.steps[3].line, 17);
    assert_eq!(s.replay.steps[3].prefix_len, 9);
    assert_eq!(s.replay.approximations.len(), 1);
    let summary = s.item_json(s.replay.history()[4].item);
    assert!(
        summary.contains("Another language model started to solve this problem"),
        "{summary}"
    );
    // Rebuilt items carry their hash, as loaded items do: fingerprinting hashes none of them.
    assert_eq!(s.replay.extra_items.len(), 3);
    for item in &s.replay.extra_items {
        let sent = item.wire_json().as_bytes();
        assert_eq!(item.digest, Some(crate::core::hash::hash("item", sent)));
    }
}

#[test]
fn turn_aborted_marker_is_contextual_and_not_a_turn() {
    let s = fixture("rollouts/turn_aborted.jsonl");
    assert_eq!(s.replay.turns.len(), 2);
    assert!(s.replay.turns[0].aborted);
    assert_eq!(raw_lines(&s), [2, 3, 4, 6, 9, 10, 11, 14, 17, 18, 19]);
}

#[test]
fn lifecycle_events_delimit_turns_and_keep_turn_ids() {
    let s = fixture("rollouts/era_c_turns.jsonl");
    assert_eq!(s.replay.turns.len(), 2);
    assert!(s.replay.turns.iter().all(|t| t.turn_id.is_some()));
}

#[test]
fn a_history_that_ends_on_inputs_has_a_pending_step() {
    let s = session(&[
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"do it"}]}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#,
        r#"{"type":"function_call_output","call_id":"c1","output":"done"}"#,
    ]);
    assert_eq!(s.replay.steps.len(), 2);
    let last = &s.replay.steps[1];
    assert!(last.pending);
    assert_eq!(last.prefix_len, 3);
}

#[test]
fn metadata_only_rollout_has_no_turns() {
    let s = fixture("rollouts/session_meta_only.jsonl");
    assert!(s.replay.turns.is_empty());
    assert!(s.replay.steps.is_empty());
}

#[test]
fn real_samples_attach_every_distinct_usage_to_a_request() {
    for (name, s) in real_samples() {
        let observed = s
            .replay
            .effects
            .iter()
            .filter(|e| **e == Effect::Usage)
            .count();
        let on_steps = s
            .replay
            .steps
            .iter()
            .filter(|st| st.usage.is_some())
            .count();
        let on_checkpoints = s
            .replay
            .checkpoints
            .iter()
            .filter(|c| c.usage.is_some())
            .count();
        assert_eq!(observed, on_steps + on_checkpoints, "{name}");
        assert!(s.replay.unattached_usage.is_empty(), "{name}");
    }
}

#[test]
fn real_058_sample_has_one_turn_of_40_steps() {
    let Some((_, s)) = real_sample("019a93b9") else {
        return;
    };
    assert_eq!(s.replay.turns.len(), 1);
    assert_eq!(s.replay.steps.len(), 40);
    assert_eq!(
        s.replay
            .steps
            .iter()
            .filter(|st| st.usage.is_some())
            .count(),
        39
    );
    let mut lines: Vec<usize> = s
        .replay
        .steps
        .iter()
        .filter_map(|st| st.usage.as_ref().map(|u| u.line))
        .collect();
    lines.dedup();
    assert_eq!(lines.len(), 39, "no observation is attached twice");
}

#[test]
fn a_rollback_that_removes_nothing_changes_nothing() {
    let s = session(&[
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}"#,
        r#"{"timestamp":"t","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":0}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"two"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}"#,
    ]);
    assert_eq!(s.replay.epochs.len(), 1, "no new epoch");
    assert_eq!(s.replay.rollbacks[0].dropped_turns, 0);
    assert!(s.replay.turns.iter().all(|t| !t.rolled_back));
}

/// 0.58-style lines (a `turn_context` before every request, without the keys of newer builds).
const TC_058: &str = r#"{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","approval_policy":"never","sandbox_policy":{"mode":"danger-full-access"},"model":"gpt-5.1-codex","summary":"auto"}}"#;
const USER: &str = r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}"#;
const USAGE: &str = r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0,"total_tokens":11},"last_token_usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0,"total_tokens":11}}}}"#;

fn call(id: &str) -> String {
    format!(
        r#"{{"timestamp":"t","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{}}","call_id":"{id}"}}}}"#
    )
}

fn output(id: &str) -> String {
    format!(
        r#"{{"timestamp":"t","type":"response_item","payload":{{"type":"function_call_output","call_id":"{id}","output":"ok"}}}}"#
    )
}

#[test]
fn parallel_calls_written_call_output_call_output_are_one_step_in_per_request_files() {
    // tests/conformance/0.58.0/parallel_calls: one request for both calls, the next one after the
    // second turn_context.
    let (c1, o1, c2, o2) = (call("a"), output("a"), call("b"), output("b"));
    let lines = [USER, TC_058, &c1, &o1, &c2, &o2, TC_058, &c1];
    let s = session(&lines);
    assert_eq!(steps(&s), [vec![(3, 1), (8, 5)]]);
    // A turn_context of a once-per-turn build (0.122+: `current_date`): each call after an
    // output is a new request (and the last output asks for the pending one).
    let tc_0122 = TC_058.replace(
        r#""summary":"auto""#,
        r#""summary":"auto","current_date":"d""#,
    );
    let lines = [USER, &tc_0122, &c1, &o1, &c2, &o2];
    assert_eq!(steps(&session(&lines)), [vec![(3, 1), (5, 3), (6, 5)]]);
}

#[test]
fn a_turn_ending_with_usage_and_no_answer_is_a_step() {
    // tests/conformance/0.58.0/killed_call: the request's token_count, then the next user message.
    let s = session(&[USER, TC_058, USAGE, USER, TC_058, &call("a")]);
    assert_eq!(steps(&s), [vec![(3, 1)], vec![(6, 2)]]);
    assert!(s.replay.steps[0].usage.is_some());
    // Without usage (a failed stream) nothing is listed.
    let s = session(&[USER, TC_058, USER, TC_058, &call("a")]);
    assert_eq!(steps(&s), [vec![], vec![(5, 2)]]);
}

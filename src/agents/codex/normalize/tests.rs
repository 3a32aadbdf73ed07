//! Normalization, checked against the behaviours pinned by Codex's `history_tests.rs`
//! (codex-rollout.md section 6.4).

use crate::agents::codex::model::Item;
use crate::agents::codex::normalize::{
    DropReason, Origin, ViewItem, first_violation, synthetic_output_id,
};
use crate::test_support::{all_fixtures, kinds, session};

const FC_C1: &str = r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#;
const FCO_C2: &str = r#"{"type":"function_call_output","call_id":"c2","output":"x"}"#;
const CTC_T1: &str =
    r#"{"type":"custom_tool_call","name":"apply_patch","input":"p","call_id":"t1"}"#;
const LSC_S1: &str = r#"{"type":"local_shell_call","call_id":"s1","status":"completed","action":{"type":"exec","command":["ls"]}}"#;

/// Normalize the final history of a plain item file; return the view's JSON texts.
fn view_of(lines: &[&str]) -> Vec<String> {
    let s = session(lines);
    let view = s.model_view(s.replay.history());
    view.entries
        .iter()
        .map(|e| s.view_json(e).to_string())
        .collect()
}

#[test]
fn mixed_inserts_and_removals() {
    // normalize_mixed_inserts_and_removals: [fc c1, orphan fco c2, ctc t1, lsc s1].
    let view = view_of(&[FC_C1, FCO_C2, CTC_T1, LSC_S1]);
    assert_eq!(
        view,
        [
            FC_C1,
            r#"{"type":"function_call_output","call_id":"c1","output":"aborted"}"#,
            CTC_T1,
            r#"{"type":"custom_tool_call_output","call_id":"t1","output":"aborted"}"#,
            LSC_S1,
            r#"{"type":"function_call_output","call_id":"s1","output":"aborted"}"#,
        ]
    );
}

#[test]
fn orphan_outputs_are_dropped_with_their_reason() {
    let s = session(&[
        FCO_C2,
        r#"{"type":"custom_tool_call_output","call_id":"z","output":"y"}"#,
    ]);
    let view = s.model_view(s.replay.history());
    assert!(view.entries.is_empty());
    let reasons: Vec<_> = view
        .dropped
        .iter()
        .map(|d| (d.raw_index, d.reason))
        .collect();
    assert_eq!(
        reasons,
        [(0, DropReason::OrphanOutput), (1, DropReason::OrphanOutput)]
    );
}

#[test]
fn local_shell_output_is_not_an_orphan() {
    // normalization_retains_local_shell_outputs
    let output = r#"{"type":"function_call_output","call_id":"s1","output":"ok"}"#;
    assert_eq!(view_of(&[LSC_S1, output]), [LSC_S1, output]);
}

#[test]
fn local_shell_call_without_call_id_gets_no_output() {
    let call = r#"{"type":"local_shell_call","status":"completed","action":{"type":"exec","command":["ls"]}}"#;
    assert_eq!(view_of(&[call]), [call]);
}

#[test]
fn ghost_snapshots_are_dropped() {
    // get_history_for_prompt_drops_ghost_commits
    let s = session(&[r#"{"type":"ghost_snapshot","ghost_commit":{"id":"g"}}"#]);
    let view = s.model_view(s.replay.history());
    assert!(view.entries.is_empty());
    assert_eq!(view.dropped[0].reason, DropReason::GhostSnapshot);
}

#[test]
fn output_anywhere_in_history_counts() {
    // Outputs are matched by call id anywhere in the list, not by position.
    let output = r#"{"type":"function_call_output","call_id":"c1","output":"late"}"#;
    let user = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#;
    assert_eq!(view_of(&[FC_C1, user, output]), [FC_C1, user, output]);
}

#[test]
fn tool_search_call_gets_an_empty_completed_output() {
    let call = r#"{"type":"tool_search_call","id":"ts_1","call_id":"q1","execution":"client","arguments":{}}"#;
    let view = view_of(&[call]);
    let expected_id = synthetic_output_id("tso", Some("ts_1")).expect("call has an id");
    assert_eq!(
        view[1],
        format!(
            r#"{{"type":"tool_search_output","id":"{expected_id}","call_id":"q1","status":"completed","execution":"client","tools":[]}}"#
        )
    );
    // A server-executed tool search output needs no call.
    let server = r#"{"type":"tool_search_output","call_id":"q9","status":"completed","execution":"server","tools":[]}"#;
    assert_eq!(view_of(&[server]), [server]);
}

/// Ids computed independently with Python's `uuid.uuid5` (fixtures/README.md), not by promptc.
#[test]
fn synthetic_ids_match_an_independent_uuid_v5() {
    assert_eq!(
        synthetic_output_id("fco", Some("fc_123")).as_deref(),
        Some("fco_e0cc7ac0-59ff-5ba8-b62a-c35acb7a855d")
    );
    assert_eq!(
        synthetic_output_id("ctco", Some("ctc_9")).as_deref(),
        Some("ctco_1cc632e8-d382-56cc-84e9-3b0163a358b6")
    );
    assert_eq!(synthetic_output_id("fco", None), None);
    assert_eq!(synthetic_output_id("fco", Some("")), None);
}

#[test]
fn synthetic_output_carries_the_call_item_id() {
    let call =
        r#"{"type":"function_call","id":"fc_123","name":"shell","arguments":"{}","call_id":"c9"}"#;
    let view = view_of(&[call]);
    assert_eq!(
        view[1],
        r#"{"type":"function_call_output","id":"fco_e0cc7ac0-59ff-5ba8-b62a-c35acb7a855d","call_id":"c9","output":"aborted"}"#
    );
}

/// The view keeps raw entries in their order and as they are (the item itself, not a copy);
/// every raw entry is either in the view or dropped with a reason, never both, never lost.
#[test]
fn every_raw_entry_is_kept_in_order_or_dropped() {
    for (name, s) in all_fixtures() {
        let history = s.replay.history();
        let view = s.model_view(history);
        let mut kept = Vec::new();
        for entry in &view.entries {
            if let Origin::Raw(raw) = entry.origin {
                let ViewItem::History(id) = &entry.item else {
                    panic!("{name}: raw entry {raw} is not the history's item");
                };
                assert_eq!(*id, history[raw].item, "{name}: raw entry {raw}");
                kept.push(raw);
            }
        }
        assert!(kept.is_sorted_by(|a, b| a < b), "{name}: {kept:?}");
        let mut all: Vec<usize> = kept
            .iter()
            .copied()
            .chain(view.dropped.iter().map(|d| d.raw_index))
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..history.len()).collect::<Vec<_>>(), "{name}");
    }
}

#[test]
fn normalizing_a_model_view_again_changes_nothing() {
    for (name, s) in all_fixtures() {
        let view = s.model_view(s.replay.history());
        let items: Vec<&Item> = view.entries.iter().map(|e| s.view_item(e)).collect();
        assert_eq!(first_violation(&items), None, "{name}");
        // Each synthetic entry sits right after the call it answers.
        for (index, entry) in view.entries.iter().enumerate() {
            if let Origin::Synthetic { call } = entry.origin {
                assert_eq!(view.entries[index - 1].origin, Origin::Raw(call), "{name}");
            }
        }
    }
}

#[test]
fn system_messages_and_unknown_items_never_enter_history() {
    // filters_non_api_messages
    let s = session(&[
        r#"{"type":"message","role":"system","content":[{"type":"input_text","text":"sys"}]}"#,
        r#"{"type":"hologram_call","call_id":"h"}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
    ]);
    let items: Vec<&Item> = s.replay.history().iter().map(|e| s.item(e.item)).collect();
    assert_eq!(kinds(&items), ["message/user"]);
}

//! Codex's own history rules, as `check` asks about them: whether the model view is in the
//! form Codex's normalization leaves, and whether call ids pair calls with their outputs.

use std::collections::BTreeMap;

use crate::agents::codex::model::Item;
use crate::agents::codex::normalize::first_violation;
use crate::agents::codex::session::Session;

/// Why the model view of the whole history is not in normalized form (normalizing it again
/// would change it), if it is not.
pub(super) fn model_view_violation(session: &Session) -> Option<String> {
    let history = session.replay.history();
    let view = session.model_view(history);
    let items: Vec<&Item> = view.entries.iter().map(|e| session.view_item(e)).collect();
    first_violation(&items)
}

/// Each call or output whose call id repeats an earlier one's (in the same namespace),
/// described: Codex pairs a call with its output by id, so a repeat pairs the wrong ones.
pub(super) fn repeated_call_ids(session: &Session) -> Vec<String> {
    let mut out = Vec::new();
    let mut calls: BTreeMap<(u8, String), usize> = BTreeMap::new();
    let mut outputs: BTreeMap<(u8, String), usize> = BTreeMap::new();
    for entry in session.replay.history() {
        let item = session.item(entry.item);
        let Some(call_id) = &item.call_id else {
            continue;
        };
        let Some((space, is_call)) = item.kind.pairing() else {
            continue;
        };
        let map = if is_call { &mut calls } else { &mut outputs };
        if let Some(first) = map.insert((space, call_id.clone()), entry.line) {
            out.push(format!(
                "{} {call_id} at line {} repeats the one at line {first}",
                if is_call { "call" } else { "output" },
                entry.line
            ));
        }
    }
    out
}

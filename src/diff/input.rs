//! The input items: where two requests' inputs part, and which drift explains the first item
//! that differs (a rollback, context appended or sent again, a repair of the model view, per-run
//! values, a rewrite).

use serde_json::Value;

use super::{Drift, DriftClass, Side, drift, shared_items};
use crate::Session;
use crate::agents::codex::model::Item;
use crate::agents::codex::normalize::{Origin, ViewEntry};
use crate::core::shared::Slice;
use crate::core::volatile;
use crate::fingerprint::canonical_item_hash;

/// The drift at the first input item two requests do not share, if any does differ.
pub(super) fn input_drift(a: &Side<'_>, b: &Side<'_>) -> Option<Drift> {
    let lcp = shared_items(a, b);
    let view_a = a.view();
    let view_b = b.view();
    let d = |class: DriftClass, detail: String| {
        let mut d = drift(class, "input", a, b, detail);
        d.input_index = Some(lcp);
        d
    };
    if rollbacks_before(a) != rollbacks_before(b) {
        return Some(d(
            DriftClass::Rollback,
            "turns were rolled back on one side: the history was cut, an expected reset".into(),
        ));
    }
    let entry_a = view_a.get(lcp);
    let entry_b = view_b.get(lcp);
    match (entry_a, entry_b) {
        (None, None) => None,
        (None, Some(_)) | (Some(_), None) => {
            let (longer, view, session, side) = if entry_b.is_some() {
                (view_b.len(), view_b, b.session, "B")
            } else {
                (view_a.len(), view_a, a.session, "A")
            };
            let extra = view.slice(lcp..);
            let all_context = extra.iter().all(|e| session.is_context_entry(e));
            let evidence_text: String = extra
                .iter()
                .map(|e| pretty(session.view_json(e)))
                .collect::<Vec<_>>()
                .join("\n");
            let mut drift = if all_context && side == "B" {
                d(
                    DriftClass::ContextAppended,
                    format!(
                        "B appends {} context item(s) at the end of the input",
                        longer - lcp
                    ),
                )
            } else {
                d(
                    DriftClass::HistoryRewritten,
                    format!(
                        "{side}'s input has {} more item(s) from index {lcp}",
                        longer - lcp
                    ),
                )
            };
            drift.evidence = Some(if side == "B" {
                (String::new(), evidence_text)
            } else {
                (evidence_text, String::new())
            });
            Some(drift)
        }
        (Some(ea), Some(eb)) => {
            let ja = a.session.view_json(ea);
            let jb = b.session.view_json(eb);
            let ia = a.session.view_item(ea);
            let ib = b.session.view_item(eb);
            let synthetic = |e: &ViewEntry| matches!(e.origin, Origin::Synthetic { .. });
            // A contextual item sent again: the same item already stands in the shared prefix.
            let reinjected = |side: &Side<'_>, k: usize| {
                side.session.is_context_entry(&side.view()[k])
                    && side.plan.first_occurrence(side.step, k) < lcp
            };
            let next_synthetic = |view: Slice<ViewEntry>| view.get(lcp + 1).is_some_and(synthetic);
            // B inserted context (an environment or permission update) and then goes on as A.
            let appended_context = {
                let mut k = lcp;
                while k < view_b.len()
                    && b.session.is_context_entry(&view_b[k])
                    && !reinjected(b, k)
                {
                    k += 1;
                }
                let goes_on_as_a = match view_b.get(k) {
                    None => true,
                    Some(next) => b.session.view_json(next) == ja,
                };
                (k > lcp && goes_on_as_a).then_some(k)
            };
            let mut drift = if synthetic(ea) || synthetic(eb) {
                d(
                    DriftClass::SyntheticOutputChanged,
                    format!(
                        "the model view's repair differs at input item {lcp}: {} vs {}",
                        describe(ia, synthetic(ea)),
                        describe(ib, synthetic(eb))
                    ),
                )
            } else if (next_synthetic(view_a) || next_synthetic(view_b)) && same_but_id(ja, jb) {
                let id_of = |view: Slice<ViewEntry>, session: &Session| {
                    view.get(lcp + 1)
                        .filter(|e| synthetic(e))
                        .and_then(|e| session.view_item(e).id.clone())
                        .unwrap_or_else(|| "none".into())
                };
                d(
                    DriftClass::SyntheticOutputChanged,
                    format!(
                        "the call at input item {lcp} changed only its item id, so its synthetic output's id changed: {} vs {}",
                        id_of(view_a, a.session),
                        id_of(view_b, b.session)
                    ),
                )
            } else if let Some(end) = appended_context {
                let mut drift = d(
                    DriftClass::ContextAppended,
                    format!(
                        "B appends context at input item {lcp} (an environment or permission update) and then goes on as A"
                    ),
                );
                drift.evidence = Some((
                    String::new(),
                    pretty_items(b.session, view_b.slice(lcp..end)),
                ));
                return Some(drift);
            } else if reinjected(b, lcp) || reinjected(a, lcp) {
                d(
                    DriftClass::ContextReinjected,
                    format!(
                        "context sent again at input item {lcp} (a copy of an earlier context message)"
                    ),
                )
            } else if volatile::mask(ja) == volatile::mask(jb) {
                let values: Vec<String> = volatile::find(ja).into_iter().map(|v| v.text).collect();
                d(
                    DriftClass::VolatilePrefix,
                    format!(
                        "input item {lcp} differs only in per-run values ({})",
                        values.join(", ")
                    ),
                )
            } else if canonical_item_hash(ja) == canonical_item_hash(jb) {
                d(
                    DriftClass::HistoryRewritten,
                    format!(
                        "input item {lcp} ({}) has the same content with its keys reordered",
                        ia.type_name
                    ),
                )
            } else {
                d(
                    DriftClass::HistoryRewritten,
                    format!(
                        "input item {lcp} differs: {} vs {}",
                        describe(ia, false),
                        describe(ib, false)
                    ),
                )
            };
            drift.evidence = Some((pretty(ja), pretty(jb)));
            Some(drift)
        }
    }
}

/// Rollbacks that dropped turns before a side's step.
fn rollbacks_before(side: &Side<'_>) -> usize {
    let epoch = side.epoch();
    side.session
        .replay
        .rollbacks
        .iter()
        .filter(|r| r.dropped_turns > 0 && r.epoch <= epoch)
        .count()
}

/// Two items that differ only in their `id` field.
fn same_but_id(a: &str, b: &str) -> bool {
    let strip = |text: &str| -> Option<Value> {
        let mut value: Value = serde_json::from_str(text).ok()?;
        value.as_object_mut()?.remove("id");
        Some(value)
    };
    match (strip(a), strip(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn describe(item: &Item, synthetic: bool) -> String {
    let mut text = item.type_name.to_string();
    if let Some(role) = &item.role {
        text.push('/');
        text.push_str(role);
    }
    if let Some(call_id) = &item.call_id {
        text.push_str(&format!(" {call_id}"));
    }
    if synthetic {
        text.push_str(&format!(
            " (synthetic{})",
            item.id
                .as_deref()
                .map(|id| format!(", id {id}"))
                .unwrap_or_default()
        ));
    }
    text
}

/// Model-view entries as pretty JSON, one after the other.
pub(super) fn pretty_items(session: &Session, entries: Slice<'_, ViewEntry>) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|e| pretty(session.view_json(e)))
        .collect();
    items.join("\n")
}

/// JSON text pretty-printed, or as it is when it does not parse.
pub(super) fn pretty(json: &str) -> String {
    serde_json::from_str::<Value>(json)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| json.to_string())
}

//! The input items: where two requests' inputs part, and which drift explains the first item
//! that differs (a rollback, context appended or sent again, a repair of the model view, per-run
//! values, a rewrite).

use serde_json::Value;

use super::{Drift, DriftClass, Side, drift, shared_items};
use crate::AgentSession;
use crate::agents::Entry;
use crate::core::volatile;
use crate::fingerprint::canonical_item_hash;

/// The drift at the first input item two requests do not share, if any does differ.
pub(super) fn input_drift<S: AgentSession>(a: &Side<'_, S>, b: &Side<'_, S>) -> Option<Drift> {
    let lcp = shared_items(a, b);
    let (len_a, len_b) = (a.input_len(), b.input_len());
    let d = |class: DriftClass, detail: String| {
        let mut d = drift(class, "input", a, b, detail);
        d.input_index = Some(lcp);
        d
    };
    if a.session.rollbacks_before(a.step) != b.session.rollbacks_before(b.step) {
        return Some(d(
            DriftClass::Rollback,
            "turns were rolled back on one side: the history was cut, an expected reset".into(),
        ));
    }
    match (lcp < len_a, lcp < len_b) {
        (false, false) => None,
        (false, true) | (true, false) => {
            let (longer, side, name) = if lcp < len_b {
                (len_b, b, "B")
            } else {
                (len_a, a, "A")
            };
            let all_context = (lcp..longer).all(|k| side.entry(k).context);
            let evidence_text = pretty_items(side, lcp..longer);
            let mut drift = if all_context && name == "B" {
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
                        "{name}'s input has {} more item(s) from index {lcp}",
                        longer - lcp
                    ),
                )
            };
            drift.evidence = Some(if name == "B" {
                (String::new(), evidence_text)
            } else {
                (evidence_text, String::new())
            });
            Some(drift)
        }
        (true, true) => {
            let (ea, eb) = (a.entry(lcp), b.entry(lcp));
            let (ja, jb) = (&*ea.json, &*eb.json);
            // A contextual item sent again: the same item already stands in the shared prefix.
            let reinjected = |side: &Side<'_, S>, k: usize| {
                side.entry(k).context && side.plan.first_occurrence(side.step, k) < lcp
            };
            let next_synthetic =
                |side: &Side<'_, S>| lcp + 1 < side.input_len() && side.entry(lcp + 1).synthetic;
            // B inserted context (an environment or permission update) and then goes on as A.
            let appended_context = {
                let mut k = lcp;
                while k < len_b && b.entry(k).context && !reinjected(b, k) {
                    k += 1;
                }
                let goes_on_as_a = k >= len_b || b.entry(k).json == ja;
                (k > lcp && goes_on_as_a).then_some(k)
            };
            let mut drift = if ea.synthetic || eb.synthetic {
                d(
                    DriftClass::SyntheticOutputChanged,
                    format!(
                        "the model view's repair differs at input item {lcp}: {} vs {}",
                        describe(&ea, ea.synthetic),
                        describe(&eb, eb.synthetic)
                    ),
                )
            } else if (next_synthetic(a) || next_synthetic(b)) && same_but_id(ja, jb) {
                let id_of = |side: &Side<'_, S>| {
                    (lcp + 1 < side.input_len())
                        .then(|| side.entry(lcp + 1))
                        .filter(|e| e.synthetic)
                        .and_then(|e| e.id.map(|id| id.into_owned()))
                        .unwrap_or_else(|| "none".to_string())
                };
                d(
                    DriftClass::SyntheticOutputChanged,
                    format!(
                        "the call at input item {lcp} changed only its item id, so its synthetic output's id changed: {} vs {}",
                        id_of(a),
                        id_of(b)
                    ),
                )
            } else if let Some(end) = appended_context {
                let mut drift = d(
                    DriftClass::ContextAppended,
                    format!(
                        "B appends context at input item {lcp} (an environment or permission update) and then goes on as A"
                    ),
                );
                drift.evidence = Some((String::new(), pretty_items(b, lcp..end)));
                return Some(drift);
            } else if let Some(what) = (ea.context && eb.context)
                .then(|| a.session.name_change(ja, jb))
                .flatten()
            {
                d(
                    DriftClass::ContextChanged,
                    format!("the context at input item {lcp} changed: {what}"),
                )
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
                        ea.kind
                    ),
                )
            } else {
                let plain = |e: &Entry<'_>| describe(e, false);
                d(
                    DriftClass::HistoryRewritten,
                    format!("input item {lcp} differs: {} vs {}", plain(&ea), plain(&eb)),
                )
            };
            drift.evidence = Some((pretty(ja), pretty(jb)));
            Some(drift)
        }
    }
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

/// An entry in a few words: its type, role and call, and whether the agent made it.
fn describe(entry: &Entry<'_>, synthetic: bool) -> String {
    let mut text = entry.kind.to_string();
    if let Some(role) = entry.role {
        text.push('/');
        text.push_str(role);
    }
    if let Some(call_id) = &entry.call_id {
        text.push_str(&format!(" {call_id}"));
    }
    if synthetic {
        text.push_str(&format!(
            " (synthetic{})",
            entry
                .id
                .as_ref()
                .map(|id| format!(", id {id}"))
                .unwrap_or_default()
        ));
    }
    text
}

/// Input entries of a side's request as pretty JSON, one after the other.
pub(super) fn pretty_items<S: AgentSession>(
    side: &Side<'_, S>,
    range: std::ops::Range<usize>,
) -> String {
    let items: Vec<String> = range.map(|k| pretty(&side.entry(k).json)).collect();
    items.join("\n")
}

/// JSON text pretty-printed, or as it is when it does not parse.
pub(super) fn pretty(json: &str) -> String {
    serde_json::from_str::<Value>(json)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| json.to_string())
}

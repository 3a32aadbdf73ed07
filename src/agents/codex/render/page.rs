//! What a Codex rollout gives the session page (`render::page`): an input item's title, a
//! step's request as `compile` prints it, `view`'s rows of the final history.

use crate::agents::HistoryRow;
use crate::agents::codex::content::preview;
use crate::agents::codex::normalize::{Origin, ViewEntry};
use crate::agents::codex::replay::EntryOrigin;
use crate::agents::codex::session::Session;
use crate::fingerprint::Plan;
use crate::render::RenderOptions;

/// A model-view entry in one line: its kind and the start of its text.
pub(crate) fn title(session: &Session, entry: &ViewEntry) -> String {
    let item = session.view_item(entry);
    let json = session.view_json(entry);
    let kind = match (item.type_name.as_ref(), item.role.as_deref()) {
        ("message", Some(role)) => format!("message/{role}"),
        (other, _) => other.to_string(),
    };
    let mut text: String = preview(item, json).chars().take(80).collect();
    if let Origin::Synthetic { .. } = entry.origin {
        text.insert_str(0, "(synthetic) ");
    }
    format!("{kind}  {}", text.replace('\n', " "))
}

/// `compile`'s text of a step, without colour, long strings folded.
pub(crate) fn body(session: &Session, plan: &Plan, step: usize) -> String {
    let mut out = Vec::new();
    let options = RenderOptions {
        color: false,
        width: 100,
        full: false,
    };
    let _ = super::compile::write_compile_text(&mut out, session, plan, step, &options);
    String::from_utf8_lossy(&out).into_owned()
}

/// `view`'s rows of the final history: each raw entry beside its model-view entry, the
/// synthetic outputs and dropped entries marked.
pub(crate) fn history(session: &Session) -> Vec<HistoryRow> {
    let Ok(scope) = super::view::scope(session, None, None) else {
        return Vec::new();
    };
    let n = scope.history.len();
    let mut by_raw: Vec<Option<usize>> = vec![None; n];
    let mut synthetic_after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (index, entry) in scope.view.entries.iter().enumerate() {
        match entry.origin {
            Origin::Raw(i) if i < n => by_raw[i] = Some(index),
            Origin::Synthetic { call } if call < n => synthetic_after[call].push(index),
            _ => {}
        }
    }
    let mut dropped: Vec<Option<&'static str>> = vec![None; n];
    for d in &scope.view.dropped {
        if d.raw_index < n {
            dropped[d.raw_index] = Some(d.reason.name());
        }
    }
    let mut rows = Vec::with_capacity(n);
    for raw in 0..n {
        let entry = scope.history[raw];
        let item = session.item(entry.item);
        let json = session.item_json(entry.item);
        let kind = match (item.type_name.as_ref(), item.role.as_deref()) {
            ("message", Some(role)) => format!("message/{role}"),
            (other, _) => other.to_string(),
        };
        let text: String = preview(item, json).chars().take(90).collect();
        let cell = format!(
            "{raw:>4} L{:<5} {kind}  {}",
            entry.line,
            text.replace('\n', " ")
        );
        let mark = match (dropped[raw], entry.origin) {
            (Some(reason), _) => Some(format!("dropped: {reason}")),
            (None, EntryOrigin::File) => None,
            (None, origin) => Some(format!("{origin:?}").to_lowercase()),
        };
        rows.push(HistoryRow {
            view: by_raw[raw].map(|v| format!("{v:>4} {kind}")),
            raw: Some(cell),
            mark,
        });
        for &v in &synthetic_after[raw] {
            rows.push(HistoryRow {
                raw: None,
                view: Some(format!("{v:>4} {}", title(session, &scope.view.entries[v]))),
                mark: Some("added: synthetic output".to_string()),
            });
        }
    }
    rows
}

//! What a Claude Code transcript gives the session page (`render::page`): its history table,
//! the transcript's lines marked sent or not by the last request.

use std::collections::HashSet;

use super::view::{kind, preview};
use crate::agents::HistoryRow;
use crate::agents::claude::session::Session;
use crate::agents::claude::thread::Role;

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

/// The main thread's lines, each marked when the last request did not send it.
pub(crate) fn history(session: &Session) -> Vec<HistoryRow> {
    let (t, c) = (&session.transcript, &session.conversation);
    let Some(last) = session.claude_steps.last() else {
        return Vec::new();
    };
    let messages = c.history(t, &c.requests[last.request]).messages;
    let mut message_of = std::collections::HashMap::new();
    for (k, m) in messages.iter().enumerate() {
        for &i in &m.lines {
            message_of.insert(i, k);
        }
    }
    let sent: HashSet<usize> = message_of.keys().copied().collect();
    (0..t.lines.len())
        .filter(|&i| {
            let line = &t.lines[i];
            line.duplicate_of.is_none() && !line.sidechain && kind(t, i).is_some()
        })
        .map(|i| {
            let what = kind(t, i).unwrap_or_default();
            HistoryRow {
                raw: Some(format!(
                    "L{:<5} {what}  {}",
                    t.lines[i].number,
                    preview(t, i)
                )),
                view: message_of
                    .get(&i)
                    .map(|k| format!("{k:>4} {}", role(messages[*k].role))),
                mark: (!sent.contains(&i)).then(|| "not sent".to_string()),
            }
        })
        .collect()
}

//! The sha256 each history message is named by in 2.1.3xx's replay records (as `replay` names
//! them), kept as the history grows, and which messages each replayed request changed: a
//! record's list resolved against an earlier history holds while the messages it used did not.

use foldhash::HashMap;

use super::super::content::message_sha256;
use super::super::load::{LineKind, Sha256Name, Transcript};
use super::super::replay::message_hash;
use super::super::thread::Role;
use super::history::{Builder, HASH};
use super::replayed::{role_name, sent_message};
use crate::core::changes::ChangeLog;

/// The history's message hashes as of the last replayed request.
#[derive(Debug, Default)]
pub(super) struct HistoryHashes {
    /// The hash of each history message, and the first message of each hash.
    hashes: Vec<Sha256Name>,
    first_of_hash: HashMap<Sha256Name, usize>,
    /// The first history message each replayed request changed.
    changes: ChangeLog,
    /// Replayed requests so far.
    stamp: usize,
}

impl HistoryHashes {
    /// Replayed requests so far: what a list resolved now is stamped with.
    pub fn stamp(&self) -> usize {
        self.stamp
    }

    /// The first history message named `hash`.
    pub fn first(&self, hash: &Sha256Name) -> Option<usize> {
        self.first_of_hash.get(hash).copied()
    }

    /// The first history message changed by a request after `stamp`.
    pub fn changed_after(&self, stamp: usize) -> usize {
        self.changes.after(stamp)
    }

    /// The hashes of the history's messages, from the first that changed since the last
    /// replayed request (a new stamp).
    pub fn update(&mut self, t: &Transcript, history: &mut Builder) {
        let changed = history.take_dirty(HASH);
        self.stamp += 1;
        self.changes.push(self.stamp, changed);
        while self.hashes.len() > changed {
            let position = self.hashes.len() - 1;
            if let Some(h) = self.hashes.pop()
                && self.first_of_hash.get(&h) == Some(&position)
            {
                self.first_of_hash.remove(&h);
            }
        }
        for m in self.hashes.len()..history.messages.len() {
            let (role, lines) = (history.messages[m].role, history.message_lines(m));
            // A message of one line: the hash its line was read with.
            let read_with_line = match *lines {
                [i] => match (role, &t.lines[i].kind) {
                    (Role::User, LineKind::User(u)) => u.message_sha256.as_deref().cloned(),
                    (Role::Assistant, LineKind::Assistant(a)) => a.message_sha256.clone(),
                    _ => None,
                },
                _ => None,
            };
            let h = read_with_line.unwrap_or_else(|| {
                let content = |i: usize| match &t.lines[i].kind {
                    LineKind::User(u) => Some(&*u.content),
                    LineKind::Assistant(a) => Some(&*a.content),
                    _ => None,
                };
                // No JSON text is empty: a content a lean load left out.
                if lines.iter().any(|&i| content(i) == Some("")) {
                    t.left_out_named.note_needed();
                }
                let contents = lines.iter().filter_map(|&i| content(i));
                message_sha256(role_name(role), contents)
                    .unwrap_or_else(|| message_hash(&sent_message(t, role, lines)))
            });
            self.first_of_hash.entry(h.clone()).or_insert(m);
            self.hashes.push(h);
        }
    }
}

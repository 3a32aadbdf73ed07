//! What a lean load ([`super::Loader::lean`]) left out, and whether `steps` needs it after
//! all.

use super::{Line, LineKind, Transcript};

/// What a lean load met: contents left out, and what may call for them.
#[derive(Debug, Default)]
pub(super) struct Lean {
    pub dropped: bool,
    /// The sessions of lines whose contents were left out, and of replay records (a record's
    /// messages may be older lines' of its session: one resumed by a newer build).
    dropped_sessions: foldhash::HashSet<std::sync::Arc<str>>,
    record_sessions: foldhash::HashSet<std::sync::Arc<str>>,
    /// Blocks no build writes (a `cache_control` of their own, a lone text block of another
    /// shape): such a request is compiled whole.
    odd: bool,
    /// A line whose parent is not a line before it (missing, later, itself): only then can
    /// following parents come back to a line, which the end of the load checks.
    pub parent_not_before: bool,
    /// An assistant line names the replay record of its request (`requestRef`): only then is
    /// there a replayed request whose ancestors the end of the load walks.
    replayed: bool,
}

impl Lean {
    /// Note what a line left out; whether it is a content its line names alone (see
    /// `neighbours`).
    pub fn see(&mut self, line: &Line) -> bool {
        let session = || line.context.session_id.clone().unwrap_or_default();
        // A lone text block of another shape matters in a user message only (an assistant's is
        // sent as written).
        let (content, blocks, user) = match &line.kind {
            LineKind::User(u) => (&u.content, &u.blocks, true),
            LineKind::Assistant(a) => {
                self.replayed |= a.request_ref.is_some();
                (&a.content, &a.blocks, false)
            }
            LineKind::ApiRequest(_) => {
                self.record_sessions.insert(session());
                return false;
            }
            _ => return false,
        };
        self.odd |= blocks.cache_control || (user && blocks.lone_text_not_plain);
        // No JSON text is empty: an empty content is one left out.
        if content.is_empty() && named(line) {
            return true;
        }
        if content.is_empty() {
            self.dropped = true;
            if !self
                .dropped_sessions
                .contains(line.context.session_id.as_deref().unwrap_or(""))
            {
                self.dropped_sessions.insert(session());
            }
        }
        false
    }

    /// Whether `steps` needs contents left out: replay records of a session some of whose
    /// contents were left out, or a replayed request with such a line among its ancestors (a
    /// fork's copied lines), blocks no build writes, a cycle of parents.
    pub fn needs_content(&self, t: &Transcript) -> bool {
        self.dropped
            && (self.odd
                || self
                    .record_sessions
                    .iter()
                    .any(|s| self.dropped_sessions.contains(s))
                || (self.replayed && replayed_after_dropped(t))
                || (self.parent_not_before && parent_cycle(t)))
    }
}

/// A 2.1.3xx line whose message its own content names (`message_sha256`).
fn named(line: &Line) -> bool {
    match &line.kind {
        LineKind::User(u) => u.message_sha256.is_some(),
        LineKind::Assistant(a) => a.message_sha256.is_some(),
        _ => false,
    }
}

/// Whether a line whose content was left out (not one named alone) is an ancestor of a
/// replayed request's response.
fn replayed_after_dropped(t: &Transcript) -> bool {
    let mut seen = vec![false; t.lines.len()];
    for (i, line) in t.lines.iter().enumerate() {
        let LineKind::Assistant(a) = &line.kind else {
            continue;
        };
        if a.request_ref.is_none() {
            continue;
        }
        let mut at = Some(i);
        while let Some(l) = at.filter(|&l| !seen[l]) {
            seen[l] = true;
            let dropped = match &t.lines[l].kind {
                LineKind::User(u) => u.content.is_empty() && u.message_sha256.is_none(),
                LineKind::Assistant(a) => a.content.is_empty() && a.message_sha256.is_none(),
                _ => false,
            };
            if dropped {
                return true;
            }
            at = t.lines[l].parent.as_ref().and_then(|p| t.uuids.get(p));
        }
    }
    false
}

/// Whether following `parentUuid`s from some line comes back to it (a hand-edited file): its
/// requests are compiled whole.
fn parent_cycle(t: &Transcript) -> bool {
    // 0: not seen, 1: on the walk under way, 2: done.
    let mut state = vec![0u8; t.lines.len()];
    let mut path = Vec::new();
    for start in 0..t.lines.len() {
        let mut at = Some(start);
        while let Some(i) = at {
            match state[i] {
                1 => return true,
                2 => break,
                _ => {}
            }
            state[i] = 1;
            path.push(i);
            at = t.lines[i].parent.as_ref().and_then(|p| t.uuids.get(p));
        }
        for l in path.drain(..) {
            state[l] = 2;
        }
    }
    false
}

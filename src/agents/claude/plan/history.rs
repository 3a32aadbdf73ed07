//! Each request's history ([`Conversation::history`]) grown from the previous request's: the
//! `parentUuid` walk from the new leaf stops where it meets the branch already built, the branch
//! is cut back to there, and only the new lines are read. The messages are kept as a stack with
//! what each line added, so a cut undoes exactly that.
//!
//! A line's part of the history depends on the request only through the lines written before it
//! (a response's lines and a call's results after the request are left out): a line whose part
//! left something out is read again by the next request, which may see more of it.

use foldhash::HashMap;

use super::super::load::{LineKind, Transcript};
use super::super::thread::{Conversation, Request, Role};

/// A message of the history: a run of lines of one role (`lines[start..]` up to the next one's).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Message {
    pub role: Role,
    pub start: usize,
}

/// One line of the branch and what reading it added.
#[derive(Debug, Clone, Copy)]
struct Slot {
    line: usize,
    messages_before: usize,
    lines_before: usize,
    /// It added lines to the message before it (same role), rather than a message of its own.
    merged: bool,
    /// The response it read (an assistant line): the branch's other lines of it add nothing.
    response: Option<usize>,
    /// `results_log[results_before..]` are the result lines it read.
    results_before: usize,
    /// `gathered_log[gathered_before..]` are the calls (by their id's hash) whose results it
    /// gathered.
    gathered_before: usize,
}

/// The walk from a request's leaf enters a cycle of `parentUuid`s (a hand-edited file): its
/// history is not a branch the builder can share.
#[derive(Debug)]
pub(crate) struct Cycle;

/// The history of the last request given, built from the one before.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    slots: Vec<Slot>,
    /// Per line: its slot + 1 when it is on the branch, else 0.
    on_branch: Vec<usize>,
    /// Per line: the walk that last saw it (cycle detection).
    seen: Vec<u32>,
    walk: u32,
    /// Per response: the slot + 1 that read it, else 0.
    response_slot: Vec<u32>,
    done_result: Vec<bool>,
    results_log: Vec<usize>,
    /// The slot + 1 that gathered the results of each call (by its id's hash).
    gathered: HashMap<u64, u32>,
    gathered_log: Vec<u64>,
    /// Lines of the transcript looked at for what they add to the slots read (a transcript
    /// read as it grows: `watch`).
    lines_seen: usize,
    /// Slots whose part left out lines written after the request (increasing).
    partial: Vec<usize>,
    pub messages: Vec<Message>,
    pub lines: Vec<usize>,
    /// The walk reached a parent the file does not have.
    pub missing_parent: Option<Box<str>>,
    /// The request the slots were read for (its `at`).
    at: usize,
    /// For each reader of the messages ([`RENDER`], [`HASH`]): the first message that changed
    /// since it last looked.
    dirty: [usize; 2],
}

/// The readers of [`Builder::take_dirty`].
pub(crate) const RENDER: usize = 0;
pub(crate) const HASH: usize = 1;

impl Builder {
    /// Lines appended since the last request: sized for, and a slot that read a part of a
    /// response or of a call's results they add to is read again by the next request (as a
    /// part that left lines out).
    fn grow(&mut self, t: &Transcript, c: &Conversation) {
        let lines = t.lines.len();
        self.on_branch.resize(lines, 0);
        self.seen.resize(lines, 0);
        self.done_result.resize(lines, false);
        self.response_slot.resize(c.responses.len(), 0);
        if self.slots.is_empty() {
            self.lines_seen = lines;
            return;
        }
        for l in self.lines_seen..lines {
            let line = &t.lines[l];
            if line.duplicate_of.is_some() {
                continue;
            }
            let mut added_to = |slot: u32| {
                if slot > 0 {
                    let index = slot as usize - 1;
                    if let Err(at) = self.partial.binary_search(&index) {
                        self.partial.insert(at, index);
                    }
                }
            };
            match &line.kind {
                LineKind::Assistant(_) => {
                    if let Some(r) = c.response_of(l) {
                        added_to(self.response_slot[r]);
                    }
                }
                LineKind::User(u) => {
                    for id in &u.tool_results {
                        let gathered = self.gathered.get(&super::super::thread::id_hash(id));
                        added_to(gathered.copied().unwrap_or(0));
                    }
                }
                _ => {}
            }
        }
        self.lines_seen = lines;
    }

    /// The lines of message `m`.
    pub fn message_lines(&self, m: usize) -> &[usize] {
        let end = self
            .messages
            .get(m + 1)
            .map_or(self.lines.len(), |n| n.start);
        &self.lines[self.messages[m].start..end]
    }

    /// The first message that changed since reader `reader` last asked (the number of messages
    /// when none did).
    pub fn take_dirty(&mut self, reader: usize) -> usize {
        let d = self.dirty[reader].min(self.messages.len());
        self.dirty[reader] = usize::MAX;
        d
    }

    /// Make the history `request`'s. Requests must come in file order (else the builder starts
    /// over).
    pub fn advance(
        &mut self,
        t: &Transcript,
        c: &Conversation,
        request: &Request,
    ) -> Result<(), Cycle> {
        self.grow(t, c);
        if request.at < self.at {
            self.cut(0);
            self.partial.clear();
        }
        // Walk back from the leaf until the branch is met (or a root, a boundary, a missing
        // parent).
        self.walk += 1;
        let mut new: Vec<usize> = Vec::new();
        let mut met: Option<usize> = None;
        let mut missing: Option<Box<str>> = None;
        let mut next = match c.leaf(t, request) {
            None => None,
            Some(Ok(i)) => Some(i),
            Some(Err(uuid)) => {
                missing = Some(uuid.to_string().into());
                None
            }
        };
        while let Some(i) = next {
            if self.on_branch[i] != 0 {
                met = Some(self.on_branch[i] - 1);
                break;
            }
            if self.seen[i] == self.walk {
                return Err(Cycle);
            }
            self.seen[i] = self.walk;
            if let LineKind::System(s) = &t.lines[i].kind
                && s.is_compact_boundary()
            {
                break;
            }
            new.push(i);
            next = match c.parent_of(i) {
                None => None,
                Some(Ok(p)) => Some(p),
                Some(Err(uuid)) => {
                    missing = Some(uuid.to_string().into());
                    None
                }
            };
        }
        let mut keep = met.map_or(0, |q| q + 1);
        if met.is_none() {
            self.missing_parent = missing;
        }
        // A part that left out lines after the previous request may hold more of them now.
        let first_partial = self.partial.first().copied();
        let redo_from = match first_partial {
            Some(p) if request.at > self.at && p < keep => p,
            _ => keep,
        };
        let redo: Vec<usize> = self.slots[redo_from..keep].iter().map(|s| s.line).collect();
        keep = redo_from;
        self.cut(keep);
        self.at = request.at;
        for i in redo.into_iter().chain(new.into_iter().rev()) {
            self.push(t, c, i);
        }
        Ok(())
    }

    /// Pop the slots from `keep` on, undoing what each added.
    fn cut(&mut self, keep: usize) {
        while self.slots.len() > keep {
            let Some(slot) = self.slots.pop() else { break };
            let index = self.slots.len();
            self.on_branch[slot.line] = 0;
            if let Some(r) = slot.response {
                self.response_slot[r] = 0;
            }
            for l in self.results_log.drain(slot.results_before..) {
                self.done_result[l] = false;
            }
            for h in self.gathered_log.drain(slot.gathered_before..) {
                self.gathered.remove(&h);
            }
            if self.partial.last() == Some(&index) {
                self.partial.pop();
            }
            self.messages.truncate(slot.messages_before);
            self.lines.truncate(slot.lines_before);
            let changed = if slot.merged {
                slot.messages_before.saturating_sub(1)
            } else {
                slot.messages_before
            };
            for d in &mut self.dirty {
                *d = (*d).min(changed);
            }
        }
    }

    /// Read line `i` onto the branch, as `Conversation::history` reads it.
    fn push(&mut self, t: &Transcript, c: &Conversation, i: usize) {
        let at = self.at;
        let mut slot = Slot {
            line: i,
            messages_before: self.messages.len(),
            lines_before: self.lines.len(),
            merged: false,
            response: None,
            results_before: self.results_log.len(),
            gathered_before: self.gathered_log.len(),
        };
        let index = self.slots.len() as u32 + 1;
        let mut partial = false;
        let line = &t.lines[i];
        let part: Option<(Role, Vec<usize>)> = match &line.kind {
            LineKind::Assistant(_) => match c.response_of(i) {
                Some(r) if self.response_slot[r] == 0 => {
                    self.response_slot[r] = index;
                    slot.response = Some(r);
                    let lines = &c.responses[r].lines;
                    partial = lines.iter().any(|&l| l >= at);
                    Some((
                        Role::Assistant,
                        lines.iter().copied().filter(|&l| l < at).collect(),
                    ))
                }
                _ => None,
            },
            LineKind::User(u) if !u.tool_results.is_empty() => {
                if self.done_result[i] {
                    None
                } else {
                    // Every result of the calls of the response this one answers, file order.
                    let mut run: Vec<usize> = Vec::new();
                    for id in &u.tool_results {
                        // Results of these calls read later are this slot's to read.
                        for h in c.gathered_ids(id) {
                            if let std::collections::hash_map::Entry::Vacant(e) =
                                self.gathered.entry(h)
                            {
                                e.insert(index);
                                self.gathered_log.push(h);
                            }
                        }
                        for l in c.sibling_results(t, i, id) {
                            if self.done_result[l] {
                                continue;
                            }
                            if l < at {
                                run.push(l);
                            } else {
                                partial = true;
                            }
                        }
                    }
                    run.sort_unstable();
                    run.dedup();
                    for &l in &run {
                        self.done_result[l] = true;
                    }
                    self.results_log.extend_from_slice(&run);
                    Some((Role::User, run))
                }
            }
            LineKind::User(u) if u.transcript_only && !u.compact_summary => None,
            LineKind::User(_) => Some((Role::User, vec![i])),
            LineKind::Attachment(a) => {
                let role = match a.rendered_role.as_deref() {
                    Some("system") => Role::System,
                    _ => Role::User,
                };
                Some((role, vec![i]))
            }
            _ => None,
        };
        if let Some((role, run)) = part {
            let merge = self
                .messages
                .last()
                .is_some_and(|m| m.role == role && role != Role::Assistant);
            if merge {
                slot.merged = true;
            } else {
                self.messages.push(Message {
                    role,
                    start: self.lines.len(),
                });
            }
            self.lines.extend(run);
            let changed = self.messages.len() - 1;
            for d in &mut self.dirty {
                *d = (*d).min(changed);
            }
        }
        if partial {
            self.partial.push(self.slots.len());
        }
        self.on_branch[i] = self.slots.len() + 1;
        self.slots.push(slot);
    }
}

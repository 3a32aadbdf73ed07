//! The conversation grown by the lines appended to its transcript ([`Conversation::extend`]):
//! each line costs what it adds, and a whole reading is one growth from no lines.

use foldhash::HashMap;

use super::super::load::{Assistant, LineKind, Transcript};
use super::{
    Conversation, Grown, Request, RequestKind, Response, ThreadKey, conversation, id_hash,
};

/// Values by a 64-bit key, each key's in the order pushed, without a list per key.
#[derive(Debug, Clone, Default)]
pub(super) struct IdIndex {
    /// The first and last node of each key.
    ends: HashMap<u64, (u32, u32)>,
    /// A value and the next node of its key (`u32::MAX`: none).
    nodes: Vec<(u32, u32)>,
}

impl IdIndex {
    /// Add `value` under `key`, unless it is the last value there already.
    pub(super) fn push(&mut self, key: u64, value: usize) {
        let node = self.nodes.len() as u32;
        match self.ends.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut ends) => {
                let (first, last) = *ends.get();
                if self.nodes[last as usize].0 as usize == value {
                    return;
                }
                self.nodes[last as usize].1 = node;
                ends.insert((first, node));
            }
            std::collections::hash_map::Entry::Vacant(ends) => {
                ends.insert((node, node));
            }
        }
        self.nodes.push((value as u32, u32::MAX));
    }

    /// The values under `key`, in the order pushed.
    pub(super) fn get(&self, key: u64) -> impl Iterator<Item = usize> + '_ {
        let mut next = self.ends.get(&key).map_or(u32::MAX, |&(first, _)| first);
        std::iter::from_fn(move || {
            let (value, after) = *self.nodes.get(next as usize)?;
            next = after;
            Some(value as usize)
        })
    }
}

impl Conversation {
    /// Read the lines of `t` appended since the last call (all of them the first time): each
    /// costs what it adds. Where a line read before would read otherwise now (its parent
    /// arrived after it, a response made a request before others), the whole is read again.
    pub fn extend(&mut self, t: &Transcript) -> Grown {
        let from = self.parent.len();
        let lines = &t.lines;
        if from == lines.len() {
            return Grown {
                new_requests: self.requests.len(),
                ..Grown::default()
            };
        }
        // A parent named before it was read: the lines naming it read otherwise now.
        if !self.awaited.is_empty()
            && lines[from..]
                .iter()
                .any(|l| l.uuid.as_ref().is_some_and(|u| self.awaited.contains(u)))
        {
            return self.read_again(t);
        }
        for line in &lines[from..] {
            let parent = line.parent.as_ref().map(|p| {
                t.uuids.get(p).ok_or_else(|| {
                    self.awaited.insert(p.clone());
                    p.clone()
                })
            });
            self.parent.push(parent);
            if let LineKind::System(s) = &line.kind
                && let Some(p) = &s.logical_parent
                && s.is_compact_boundary()
                && t.uuids.get(p).is_none()
            {
                self.awaited.insert(p.clone());
            }
        }
        self.sidechain_roots(t, from);
        let new_requests = self.requests.len();
        let mut grown_responses = Vec::new();
        let mut new = Vec::new();
        // Calls and results by id, noted after the lines are read: see `note_ids`.
        let (mut calls, mut results) = (Vec::new(), Vec::new());
        for (i, line) in lines.iter().enumerate().skip(from) {
            if line.duplicate_of.is_some() {
                self.response_of.push(u32::MAX);
                continue;
            }
            match &line.kind {
                LineKind::User(u) => {
                    results.extend(u.tool_results.iter().map(|id| (id_hash(id), i)));
                    if u.tool_results.is_empty() {
                        self.prompts += 1;
                    }
                    self.response_of.push(u32::MAX);
                }
                LineKind::Assistant(a) => {
                    let (r, became_sampling) = self.response_line(t, i, a, &mut calls);
                    self.response_of.push(r as u32);
                    if grown_responses.last() != Some(&r) {
                        grown_responses.push(r);
                    }
                    if became_sampling {
                        let response = &self.responses[r];
                        let at = response.lines[0];
                        new.push(Request {
                            kind: RequestKind::Sampling,
                            thread: response.thread.clone(),
                            response: Some(r),
                            at,
                            leaf: lines[at].parent.clone(),
                        });
                    }
                }
                LineKind::System(s) if s.is_compact_boundary() => {
                    self.response_of.push(u32::MAX);
                    new.push(Request {
                        kind: RequestKind::Compaction,
                        thread: self.thread_of(t, i),
                        response: None,
                        at: i,
                        leaf: s.logical_parent.clone(),
                    });
                }
                _ => self.response_of.push(u32::MAX),
            }
        }
        note_ids(&mut self.calls, calls);
        note_ids(&mut self.results, results);
        new.sort_by_key(|r| r.at);
        let last = self.requests.last().map(|r| r.at);
        if new
            .first()
            .is_some_and(|r| last.is_some_and(|last| r.at < last))
        {
            return self.read_again(t);
        }
        for request in new {
            match self
                .thread_requests
                .iter_mut()
                .find(|(k, _)| *k == request.thread)
            {
                Some((_, n)) => *n += 1,
                None => self.thread_requests.push((request.thread.clone(), 1)),
            }
            self.requests.push(request);
        }
        grown_responses.sort_unstable();
        grown_responses.dedup();
        Grown {
            new_requests,
            grown_responses,
            read_again: false,
        }
    }

    /// Read every line again, as a first reading of the whole.
    fn read_again(&mut self, t: &Transcript) -> Grown {
        *self = conversation(t);
        Grown {
            new_requests: 0,
            grown_responses: (0..self.responses.len()).collect(),
            read_again: true,
        }
    }

    /// The root of each inline sidechain line from `from` on: up through the sidechain's lines
    /// to the line whose parent is not one of them (a cycle ends like a root).
    fn sidechain_roots(&mut self, t: &Transcript, from: usize) {
        const NONE: u32 = u32::MAX;
        // On the path being walked.
        const WALKING: u32 = u32::MAX - 1;
        let inline = |i: usize| t.lines[i].sidechain && t.lines[i].context.agent_id.is_none();
        let root = &mut self.sidechain_root;
        root.resize(t.lines.len(), NONE);
        let mut path = Vec::new();
        for i in from..t.lines.len() {
            if !inline(i) || root[i] != NONE {
                continue;
            }
            let mut at = i;
            let found = loop {
                path.push(at);
                root[at] = WALKING;
                match self.parent[at] {
                    Some(Ok(p)) if inline(p) && root[p] == NONE => at = p,
                    Some(Ok(p)) if inline(p) && root[p] != WALKING => break root[p],
                    _ => break at as u32,
                }
            };
            for &j in &path {
                root[j] = found;
            }
            path.clear();
        }
    }

    /// Assistant line `i` into its response (a new one, or the open one of its key): the
    /// response, and whether it now answers a request it did not before (its first line that
    /// is not Claude Code's own).
    ///
    /// Its calls' ids go into `calls` (by their hash), each with the response's index.
    fn response_line(
        &mut self,
        t: &Transcript,
        i: usize,
        a: &Assistant,
        calls: &mut Vec<(u64, usize)>,
    ) -> (usize, bool) {
        let thread = self.thread_of(t, i);
        let key = a
            .message_id
            .as_deref()
            .map(|id| open_key(&thread, id, a.request_id.as_deref()));
        let existing = key.and_then(|k| self.open.get(&k).copied());
        let index = match existing {
            Some((index, seen)) if seen == self.prompts => index,
            _ => {
                self.responses.push(Response {
                    message_id: a.message_id.clone(),
                    request_id: a.request_id.clone(),
                    model: a.model.clone(),
                    // Most responses are one line: room for it alone.
                    lines: Vec::with_capacity(1),
                    usage: None,
                    tool_uses: Vec::with_capacity(a.tool_uses.len()),
                    synthetic: true,
                    thread,
                    reused_id: existing.is_some(),
                });
                self.responses.len() - 1
            }
        };
        if let Some(k) = key {
            self.open.insert(k, (index, self.prompts));
        }
        let response = &mut self.responses[index];
        response.lines.push(i);
        response.tool_uses.extend(a.tool_uses.iter().cloned());
        calls.extend(a.tool_uses.iter().map(|id| (id_hash(id), index)));
        let was_synthetic = response.synthetic;
        response.synthetic &= a.synthetic();
        if a.usage.is_some() {
            response.usage = a.usage;
        }
        (index, was_synthetic && !response.synthetic)
    }
}

/// Note ids in `index`, in order, in a loop of their own: notes independent of the work
/// between them, so that their cache misses can overlap (in a large file each note misses).
fn note_ids(index: &mut IdIndex, ids: Vec<(u64, usize)>) {
    for (key, value) in ids {
        index.push(key, value);
    }
}

/// The key of a response's (thread, message id, request id): a hash of them, each
/// length-prefixed.
fn open_key(thread: &ThreadKey, message_id: &str, request_id: Option<&str>) -> [u64; 2] {
    let (kind, name): (&[u8], &str) = match thread {
        ThreadKey::Main => (b"main", ""),
        ThreadKey::Subagent(agent) => (b"subagent", agent),
        ThreadKey::Sidechain(root) => (b"sidechain", root),
    };
    let (request, id): (&[u8], &str) = match request_id {
        Some(id) => (b"request", id),
        None => (b"none", ""),
    };
    crate::core::hash::key(&[
        kind,
        name.as_bytes(),
        message_id.as_bytes(),
        request,
        id.as_bytes(),
    ])
}

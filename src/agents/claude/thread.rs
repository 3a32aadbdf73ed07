//! The conversation a transcript records: its responses (one per `message.id`, however many
//! lines its blocks were written on), the threads they belong to (the main thread, each
//! subagent), and for each request the branch of the `parentUuid` tree it was sent with.
//!
//! Parallel tool calls branch the tree (each result's parent is its own call's line), so a walk
//! back from a request reaches only one of them: a response stands for all its lines, and its
//! calls' results are gathered from the whole file, in file order (the order sent).

// Keys are uuids, ids and indices from the file: foldhash, not SipHash (no HashDoS to fear
// from a file one reads oneself, and several times faster).
use foldhash::{HashMap, HashSet, HashSetExt};
use std::sync::Arc;

use super::load::{LineId, LineKind, Transcript, Usage, User};

mod extend;

use extend::IdIndex;

/// One response of the model.
#[derive(Debug, Clone)]
pub struct Response {
    pub message_id: Option<Arc<str>>,
    pub request_id: Option<Arc<str>>,
    pub model: Option<Arc<str>>,
    /// Its lines, indices into [`Transcript::lines`], in file order.
    pub lines: Vec<usize>,
    /// The usage of its last line that has one (each line repeats the message's usage; output
    /// grows to its final value on the last).
    pub usage: Option<Usage>,
    /// Its calls' ids, in order.
    pub tool_uses: Vec<Arc<str>>,
    /// Written by Claude Code itself (`<synthetic>`, API errors): it answered no request.
    pub synthetic: bool,
    pub thread: ThreadKey,
    /// The `message.id` was used by an earlier response too (other backends behind
    /// `ANTHROPIC_BASE_URL` reuse ids): this one is counted on its own.
    pub reused_id: bool,
}

/// Which thread a line belongs to: the main one, a subagent (`agentId`, 2.0.x+), or an inline
/// sidechain of a 1.0.x file (no `agentId`): each subagent's lines there are a tree of their
/// own, named by the `uuid` of its root (the line whose parent is not a sidechain line).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadKey {
    Main,
    Subagent(Arc<str>),
    Sidechain(Arc<str>),
}

impl Conversation {
    /// The thread of line `i`.
    pub fn thread_of(&self, t: &Transcript, i: usize) -> ThreadKey {
        let line = &t.lines[i];
        match (&line.context.agent_id, line.sidechain) {
            (Some(agent), true) => ThreadKey::Subagent(agent.clone()),
            (None, true) => {
                let root = self.sidechain_root.get(i).copied().unwrap_or(u32::MAX);
                let root = t.lines.get(root as usize).unwrap_or(line);
                let root = root.uuid.as_ref().map(|u| u.text()).unwrap_or_default();
                ThreadKey::Sidechain(root.as_ref().into())
            }
            _ => ThreadKey::Main,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A request the session's conversation made (its answer is a response of the file).
    Sampling,
    /// The request a compaction made: recorded by its boundary (or its summary), not by a
    /// response.
    Compaction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    /// 2.1.3xx: context sent as a `role: "system"` message.
    System,
}

/// A message as sent: a run of lines of one role.
#[derive(Debug, Clone)]
pub struct SentMessage {
    pub role: Role,
    pub lines: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub kind: RequestKind,
    pub thread: ThreadKey,
    /// The response it got ([`Conversation::responses`]); `None` for a compaction.
    pub response: Option<usize>,
    /// Where it is in the file: its response's first line, or the compaction's boundary line
    /// (an index into [`Transcript::lines`]).
    pub at: usize,
    /// The line its history ends at (the parent of `at`, or the boundary's logical parent).
    pub leaf: Option<LineId>,
}

/// The history a request was sent with ([`Conversation::history`]).
#[derive(Debug, Clone, Default)]
pub struct History {
    pub messages: Vec<SentMessage>,
    /// The walk back reached a parent this file does not have (a copied or partial file): the
    /// messages before it are unknown.
    pub missing_parent: Option<Box<str>>,
}

/// The conversation of the lines read so far; [`Conversation::extend`] reads the lines appended
/// since, at their cost.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    pub responses: Vec<Response>,
    /// Every request, in file order, of every thread.
    pub requests: Vec<Request>,
    /// Each line's parent line, where the file has it; `Err` names a parent it does not have.
    parent: Vec<Option<Result<usize, LineId>>>,
    /// The response of each assistant line.
    response_of: Vec<u32>,
    /// The root line of each inline sidechain line (`u32::MAX` for others).
    sidechain_root: Vec<u32>,
    /// The responses that made each call, by the call id's hash (the first response whose calls
    /// have the id is the one).
    calls: IdIndex,
    /// Every line answering a call, by the call id's hash, in file order.
    results: IdIndex,
    /// The open response of each (thread, message id, request id), by their hash, and the
    /// prompts seen when it last grew: a prompt in between means a new response under a reused
    /// id (`hash::key`).
    open: HashMap<[u64; 2], (usize, usize)>,
    prompts: usize,
    /// Requests per thread, in the order the threads first made one.
    thread_requests: Vec<(ThreadKey, usize)>,
    /// Parents (and a boundary's logical parent) named by lines read before the file had them.
    awaited: HashSet<LineId>,
}

/// What reading the lines appended changed ([`Conversation::extend`]).
#[derive(Debug, Clone, Default)]
pub struct Grown {
    /// The requests before it were there before (their responses may have grown).
    pub new_requests: usize,
    /// The responses that got lines (new ones too), in increasing order.
    pub grown_responses: Vec<usize>,
    /// Lines read before read otherwise now (a parent the file did not have arrived, a request
    /// comes before others): the conversation was read again from the first line.
    pub read_again: bool,
}

impl Conversation {
    /// Whether `request` answers a prompt (its history ends with a user line that is no tool
    /// result, past the attachments and bookkeeping written after it): it starts a turn.
    pub fn answers_prompt(&self, t: &Transcript, request: &Request) -> bool {
        self.last_user(t, request)
            .is_some_and(|u| u.tool_results.is_empty())
    }

    /// Whether `request`'s history ends with a call's results (past the attachments and
    /// bookkeeping written after them): the request after a tool turn.
    pub fn ends_with_tool_result(&self, t: &Transcript, request: &Request) -> bool {
        self.last_user(t, request)
            .is_some_and(|u| !u.tool_results.is_empty())
    }

    /// The user line `request`'s history ends with, past attachments and bookkeeping: none
    /// where it ends with an assistant line or a parent the file does not have.
    fn last_user<'a>(&self, t: &'a Transcript, request: &Request) -> Option<&'a User> {
        let mut next = self.leaf(t, request);
        // A cycle of parents (a broken file) ends the walk.
        for _ in 0..=t.lines.len() {
            let Some(Ok(i)) = next else {
                return None;
            };
            match &t.lines[i].kind {
                LineKind::User(u) => return Some(u),
                LineKind::Assistant(_) => return None,
                _ => {}
            }
            next = self.parent_of(i);
        }
        None
    }

    /// The line `request`'s history ends at: `Err` names a line the file does not have.
    pub(crate) fn leaf<'a>(
        &'a self,
        t: &Transcript,
        request: &'a Request,
    ) -> Option<Result<usize, &'a LineId>> {
        match request.kind {
            // The parent of its response's first line: already found.
            RequestKind::Sampling => self.parent_of(request.at),
            RequestKind::Compaction => {
                let uuid = request.leaf.as_ref()?;
                Some(t.uuids.get(uuid).ok_or(uuid))
            }
        }
    }

    /// The thread commands show: the main one, or in a subagent's own file (where the main
    /// thread makes no request) the thread with the most requests.
    pub fn shown_thread(&self) -> ThreadKey {
        let counts = &self.thread_requests;
        if counts.iter().any(|(k, _)| *k == ThreadKey::Main) {
            return ThreadKey::Main;
        }
        counts
            .iter()
            .fold(None::<&(ThreadKey, usize)>, |best, kn| match best {
                Some((_, m)) if *m >= kn.1 => best,
                _ => Some(kn),
            })
            .map_or(ThreadKey::Main, |(k, _)| k.clone())
    }

    /// The requests of one thread, in order.
    pub fn thread<'c>(&'c self, key: &'c ThreadKey) -> impl Iterator<Item = &'c Request> + 'c {
        self.requests.iter().filter(move |r| &r.thread == key)
    }
}

/// The conversation of `t`: one pass over its lines (a request's history is walked only when
/// asked for, [`Conversation::history`]).
pub fn conversation(t: &Transcript) -> Conversation {
    let mut c = Conversation::default();
    c.extend(t);
    c
}

impl Conversation {
    /// The messages `request` was sent with: the branch from the root (or the last compaction
    /// boundary) to its leaf, each response whole and its calls' results gathered, only lines
    /// written before the request. Costs the length of that history.
    pub fn history(&self, t: &Transcript, request: &Request) -> History {
        let lines = &t.lines;
        let mut chain = Vec::new();
        let mut missing_parent = None;
        let mut next = match self.leaf(t, request) {
            None => None,
            Some(Ok(i)) => Some(i),
            Some(Err(uuid)) => {
                missing_parent = Some(uuid.to_string().into());
                None
            }
        };
        while let Some(i) = next {
            // A cycle (a hand-edited file) ends the walk like a root.
            if chain.len() > lines.len() {
                break;
            }
            let line = &lines[i];
            if let LineKind::System(s) = &line.kind
                && s.is_compact_boundary()
            {
                break;
            }
            chain.push(i);
            next = match &self.parent[i] {
                None => None,
                Some(Ok(p)) => Some(*p),
                Some(Err(uuid)) => {
                    missing_parent = Some(uuid.to_string().into());
                    None
                }
            };
        }
        chain.reverse();
        let at = request.at;
        let mut messages: Vec<SentMessage> = Vec::new();
        let mut done_responses = HashSet::new();
        let mut done_results = HashSet::new();
        for i in chain {
            let line = &lines[i];
            let (role, run) = match &line.kind {
                LineKind::Assistant(_) => {
                    let Some(r) = self.response_of(i) else {
                        continue;
                    };
                    if !done_responses.insert(r) {
                        continue;
                    }
                    let run = self.responses[r]
                        .lines
                        .iter()
                        .copied()
                        .filter(|&l| l < at)
                        .collect();
                    (Role::Assistant, run)
                }
                LineKind::User(u) if !u.tool_results.is_empty() => {
                    if done_results.contains(&i) {
                        continue;
                    }
                    // Every result of the calls of the response this one answers, file order.
                    let mut run: Vec<usize> = u
                        .tool_results
                        .iter()
                        .flat_map(|id| self.sibling_results(t, i, id))
                        .filter(|&l| l < at && !done_results.contains(&l))
                        .collect();
                    run.sort_unstable();
                    run.dedup();
                    done_results.extend(run.iter().copied());
                    (Role::User, run)
                }
                // Shown to the user only, but a compaction's summary is what the model gets next.
                LineKind::User(u) if u.transcript_only && !u.compact_summary => continue,
                LineKind::User(_) => (Role::User, vec![i]),
                LineKind::Attachment(a) => {
                    let role = match a.rendered_role.as_deref() {
                        Some("system") => Role::System,
                        _ => Role::User,
                    };
                    (role, vec![i])
                }
                _ => continue,
            };
            match messages.last_mut() {
                Some(last) if last.role == role && role != Role::Assistant => {
                    last.lines.extend(run)
                }
                _ => messages.push(SentMessage { role, lines: run }),
            }
        }
        History {
            messages,
            missing_parent,
        }
    }

    /// Line `i`'s parent line, where the file has it; `Err` names a parent it does not have.
    pub(crate) fn parent_of(&self, i: usize) -> Option<Result<usize, &LineId>> {
        self.parent[i].as_ref().map(|p| p.as_ref().copied())
    }

    /// The response of assistant line `i`.
    pub(crate) fn response_of(&self, i: usize) -> Option<usize> {
        self.response_of
            .get(i)
            .filter(|&&r| r != u32::MAX)
            .map(|&r| r as usize)
    }

    /// The response whose calls result line `l` answers, by its parents: the assistant line
    /// above it, past the results before it (a parallel call's result is a child of its call's
    /// line, or of the result before it); `None` where its parents do not say.
    fn answered(&self, t: &Transcript, l: usize) -> Option<usize> {
        let mut i = l;
        for _ in 0..t.lines.len() {
            let p = self.parent_of(i)?.ok()?;
            match &t.lines[p].kind {
                LineKind::Assistant(_) => return self.response_of(p),
                LineKind::User(u) if !u.tool_results.is_empty() => i = p,
                _ => return None,
            }
        }
        None
    }

    /// The result lines of every call of the response that made call `id`, which result line
    /// `line` answers: from every branch (each parallel result is on a branch of its own), but
    /// only those that answer the same copy of the calls (2.0.31 rewrites old lines under new
    /// uuids into the same file: the original results answer the original response).
    pub(crate) fn sibling_results(&self, t: &Transcript, line: usize, id: &str) -> Vec<usize> {
        let mine = self.answered(t, line);
        let same_copy = |l: usize| {
            mine.is_none() || l == line || self.answered(t, l).is_none_or(|r| Some(r) == mine)
        };
        let one = [id];
        // The first response that made it: responses may get calls in any order as their
        // lines arrive.
        let caller = self
            .calls
            .get(id_hash(id))
            .filter(|&r| self.responses[r].tool_uses.iter().any(|u| **u == *id))
            .min();
        let ids: Vec<&str> = match caller {
            Some(r) => self.responses[r]
                .tool_uses
                .iter()
                .map(AsRef::as_ref)
                .collect(),
            None => one.to_vec(),
        };
        let answers = |l: usize, id: &str| matches!(&t.lines[l].kind, LineKind::User(u) if u.tool_results.iter().any(|r| **r == *id));
        ids.iter()
            .flat_map(|id| {
                self.results
                    .get(id_hash(id))
                    .filter(move |&l| answers(l, id))
            })
            .filter(|&l| same_copy(l))
            .collect()
    }
}

impl Conversation {
    /// The hashes of the ids whose results [`sibling_results`](Conversation::sibling_results)
    /// gathers for call `id`: every call of the response that made it (else `id` alone).
    pub(crate) fn gathered_ids(&self, id: &str) -> Vec<u64> {
        let caller = self
            .calls
            .get(id_hash(id))
            .filter(|&r| self.responses[r].tool_uses.iter().any(|u| **u == *id))
            .min();
        match caller {
            Some(r) => self.responses[r]
                .tool_uses
                .iter()
                .map(|u| id_hash(u))
                .collect(),
            None => vec![id_hash(id)],
        }
    }
}

/// A call id's key in [`Conversation`]'s lists (a hash: the lists keep no copy of the
/// ids; a match is checked against the lines).
pub(crate) fn id_hash(id: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(id.as_bytes())
}

//! A session's steps grown with its conversation: the lines read since the last time extend
//! the conversation ([`Conversation::extend`]), new requests of the shown thread are planned
//! after the earlier ones, and a step whose response got lines has its usage (and whether it
//! copies an earlier response) read again. `Session::new` is one growth from no lines, `watch`
//! one per appended piece: the steps are the same either way.
//!
//! A request's prompt depends only on lines written before it, so it never changes once made;
//! what can change is its response's (usage, a copy's counts). Where lines read later change
//! what an earlier request would have read (a parent, a replay record read after a line that
//! named it, a response that answers a request before others, another shown thread), every
//! step is made again.

use foldhash::{HashMap, HashMapExt};

use super::load::{LineKind, Recorder, Transcript};
use super::plan::{Planned, Planner, Prompt};
use super::session::{ClaudeStep, Session, neutral_usage};
use super::thread::{Conversation, RequestKind};
use super::wire::Build;
use crate::core::steps::{Observation, Step, Turn};

/// What growing a session keeps between two growths.
#[derive(Debug)]
pub(crate) struct Growth {
    pub planner: Planner,
    /// The thread was chosen by the caller (`Session::of_thread`), not by the conversation.
    fixed_thread: bool,
    /// Requests of the conversation looked at.
    requests: usize,
    /// Per request: its step + 1 when it is one of the shown thread's, else 0.
    step_of: Vec<u32>,
    /// Per response: its request + 1, else 0.
    request_of: Vec<u32>,
    /// Per step: the prompt planned while its response copies an earlier one (shown without).
    hidden: HashMap<usize, Prompt>,
    /// Per step: its record is in another file (a fork's copy).
    elsewhere: Vec<bool>,
    copies: Copies,
    epoch: usize,
    last_time: Option<i64>,
    /// The first line of the shown thread's first response.
    first_response: Option<usize>,
    /// Responses looked at for the first one.
    responses: usize,
    /// What recording lines keeps, for lines appended (`watch`).
    pub recorder: Option<Recorder>,
    /// The session will not grow: only the planned blocks were kept ([`Session::settle`]).
    settled: bool,
}

impl Growth {
    pub fn new(fixed_thread: bool, recorder: Option<Recorder>) -> Growth {
        Growth {
            planner: Planner::new(),
            fixed_thread,
            requests: 0,
            step_of: Vec::new(),
            request_of: Vec::new(),
            hidden: HashMap::new(),
            elsewhere: Vec::new(),
            copies: Copies::default(),
            epoch: 0,
            last_time: None,
            first_response: None,
            responses: 0,
            recorder,
            settled: false,
        }
    }
}

/// Which responses copy an earlier one of the same file (the same `message.id` and input counts:
/// 2.0.31 rewrites old lines under new uuids into the file), as `usage::copied_responses` says
/// of the whole: kept as responses grow, each change at the cost of its (id, counts) group
/// (a backend that reuses one `message.id` for every response makes one group of them all).
/// A session read once ([`Session::new`], a load growing piece by piece) finds them all when
/// it settles instead ([`Copies::at_settle`]).
#[derive(Debug, Default)]
struct Copies {
    /// Per response: its input counts at their largest, where it answers a sampling request
    /// and has a message id and a usage.
    counts: Vec<Option<[u64; 4]>>,
    copied: Vec<bool>,
    /// Such responses by message id and input counts, in request order (request, response):
    /// each but the first is a copy.
    by_key: HashMap<CopyKey, Members>,
    /// Responses are keyed as they grow but grouped only when the session settles: then all
    /// at once, by sorting their keys ([`Copies::at_settle`]), not in `by_key`.
    deferred: bool,
    /// Deferred: each response's key and request, as keyed when its counts last changed (as
    /// `by_key` keeps its members).
    keys: Vec<Option<(CopyKey, u32)>>,
}

/// The (request, response) members of a copy group, in order. Most groups are one response (no
/// copy): that one is kept without a list of its own.
#[derive(Debug)]
enum Members {
    One((usize, usize)),
    Many(Vec<(usize, usize)>),
}

impl Members {
    fn as_slice(&self) -> &[(usize, usize)] {
        match self {
            Members::One(member) => std::slice::from_ref(member),
            Members::Many(members) => members,
        }
    }

    fn insert(&mut self, at: usize, member: (usize, usize)) {
        match self {
            Members::One(one) => {
                let mut members = vec![*one];
                members.insert(at, member);
                *self = Members::Many(members);
            }
            Members::Many(members) => members.insert(at, member),
        }
    }

    /// Remove member `at`: whether none is left.
    fn remove(&mut self, at: usize) -> bool {
        match self {
            Members::One(_) => true,
            Members::Many(members) => {
                members.remove(at);
                members.is_empty()
            }
        }
    }
}

/// A response's `message.id` and input counts, what its copies repeat: a 128-bit hash of them
/// (as `thread::extend` keys open responses), not a copy of each id; in two halves, as a `u128`
/// would align each entry to 16 bytes.
type CopyKey = [u64; 2];

fn copy_key(id: &str, counts: [u64; 4]) -> CopyKey {
    let mut numbers = [0u8; 32];
    for (bytes, count) in numbers.chunks_exact_mut(8).zip(counts) {
        bytes.copy_from_slice(&count.to_le_bytes());
    }
    crate::core::hash::key(&[&numbers, id.as_bytes()])
}

impl Copies {
    /// Read responses `grown` again (their lines or request changed): the responses whose
    /// being a copy changed.
    fn update(
        &mut self,
        t: &Transcript,
        c: &Conversation,
        request_of: &[u32],
        grown: &[usize],
    ) -> Vec<usize> {
        self.counts.resize(c.responses.len(), None);
        self.copied.resize(c.responses.len(), false);
        if self.deferred {
            self.keys.resize(c.responses.len(), None);
        }
        let mut changed = Vec::new();
        let mut set = |copied: &mut Vec<bool>, r: usize, copy: bool| {
            if copied[r] != copy {
                copied[r] = copy;
                changed.push(r);
            }
        };
        for &r in grown {
            let response = &c.responses[r];
            let request = request_of.get(r).copied().unwrap_or(0);
            let sampling =
                request > 0 && c.requests[request as usize - 1].kind == RequestKind::Sampling;
            let (Some(id), Some(_), true) = (&response.message_id, response.usage, sampling) else {
                continue;
            };
            let counts = super::usage::input_counts(&super::usage::largest(t, &response.lines));
            let was = self.counts[r].replace(counts);
            if was == Some(counts) {
                continue;
            }
            if self.deferred {
                self.keys[r] = Some((copy_key(id, counts), request - 1));
                continue;
            }
            let member = (request as usize - 1, r);
            if let Some(was) = was {
                let key = copy_key(id, was);
                if let Some(group) = self.by_key.get_mut(&key)
                    && let Ok(at) = group.as_slice().binary_search(&member)
                {
                    if group.remove(at) {
                        self.by_key.remove(&key);
                    } else if at == 0 {
                        // The next one of the group is the first now.
                        let (_, first) = group.as_slice()[0];
                        set(&mut self.copied, first, false);
                    }
                }
            }
            let at = match self.by_key.entry(copy_key(id, counts)) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(Members::One(member));
                    0
                }
                std::collections::hash_map::Entry::Occupied(mut slot) => {
                    let group = slot.get_mut();
                    let at = group.as_slice().partition_point(|&g| g < member);
                    group.insert(at, member);
                    if at == 0 {
                        let (_, first) = group.as_slice()[1];
                        set(&mut self.copied, first, true);
                    }
                    at
                }
            };
            set(&mut self.copied, r, at > 0);
        }
        changed
    }

    /// Whether each response is a copy, from the keys its growth took, found at once (the
    /// copies' state is let go of next, [`Session::settle`]): the responses whose being a
    /// copy changed. Sorting the keys once costs less than keeping a map of them as they
    /// grow, one entry a response looked up at random (3.5 % of `steps` on a 1 GB 2.1.100
    /// transcript).
    fn at_settle(&mut self) -> Vec<usize> {
        self.deferred = false;
        let mut keyed: Vec<(CopyKey, u32, u32)> = std::mem::take(&mut self.keys)
            .into_iter()
            .enumerate()
            .filter_map(|(r, key)| key.map(|(key, request)| (key, request, r as u32)))
            .collect();
        // Most files copy no response: their keys' first halves, sorted alone (8 bytes each, a
        // third of the time), are all different. Deferred, no response was marked a copy yet.
        let mut halves: Vec<u64> = keyed.iter().map(|(key, _, _)| key[0]).collect();
        halves.sort_unstable();
        if halves.windows(2).all(|pair| pair[0] != pair[1]) {
            return Vec::new();
        }
        // In each group, the first (request, response) is the one the others copy.
        keyed.sort_unstable();
        let mut changed = Vec::new();
        for (k, &(key, _, r)) in keyed.iter().enumerate() {
            let copy = k > 0 && keyed[k - 1].0 == key;
            let r = r as usize;
            if self.copied[r] != copy {
                self.copied[r] = copy;
                changed.push(r);
            }
        }
        changed
    }
}

impl Session {
    /// Read the lines of the transcript appended since the last growth into the conversation
    /// and the steps. Returns how many of the first steps stayed as they were.
    pub(crate) fn grow(&mut self) -> usize {
        let grown = self.conversation.extend(&self.transcript);
        if grown.read_again || self.growth.settled {
            return self.make_steps_again();
        }
        if !self.growth.fixed_thread && self.conversation.shown_thread() != self.thread {
            return self.make_steps_again();
        }
        let c = &self.conversation;
        let g = &mut self.growth;
        g.request_of.resize(c.responses.len(), 0);
        let mut touched = grown.grown_responses;
        for index in g.requests..c.requests.len() {
            if let Some(r) = c.requests[index].response {
                g.request_of[r] = index as u32 + 1;
                touched.push(r);
            }
        }
        touched.sort_unstable();
        touched.dedup();
        let flipped = self.growth.copies.update(
            &self.transcript,
            &self.conversation,
            &self.growth.request_of,
            &touched,
        );
        let unchanged = self.refresh_responses(touched.into_iter().chain(flipped));
        for index in self.growth.requests..self.conversation.requests.len() {
            self.add_step(index);
        }
        self.growth.requests = self.conversation.requests.len();
        if self.growth.planner.stale(&self.transcript) {
            return self.make_steps_again();
        }
        self.follow_ttl(unchanged);
        unchanged
    }

    /// The steps of responses `responses` read again ([`Session::refresh_step`]): the first
    /// step that changed (the number of steps when none did).
    fn refresh_responses(&mut self, responses: impl IntoIterator<Item = usize>) -> usize {
        let mut unchanged = self.steps.len();
        for r in responses {
            let request = self.growth.request_of[r] as usize;
            let step = match request.checked_sub(1) {
                Some(q) if q < self.growth.requests => self.growth.step_of[q] as usize,
                _ => 0,
            };
            if let Some(k) = step.checked_sub(1)
                && self.refresh_step(k)
            {
                unchanged = unchanged.min(k);
            }
        }
        unchanged
    }

    /// A session read once, to settle after ([`Session::new`], a load growing piece by piece):
    /// its copies are found when it settles, not as it grows.
    pub(crate) fn copies_at_settle(&mut self) {
        self.growth.copies.deferred = true;
    }

    /// Each step's TTL from step `from` on, as the writes up to it say (a step's depends on
    /// those before, so a changed step changes those after it).
    fn follow_ttl(&mut self, from: usize) {
        let c = &self.conversation;
        let mut ttl = from
            .checked_sub(1)
            .and_then(|k| self.claude_steps.get(k))
            .and_then(|s| s.ttl);
        for s in self.claude_steps.iter_mut().skip(from) {
            let usage = c.requests[s.request]
                .response
                .and_then(|r| c.responses[r].usage.as_ref())
                .filter(|_| s.prompt.is_some());
            if let Some(u) = usage {
                match (
                    u.cache_creation_5m.unwrap_or(0),
                    u.cache_creation_1h.unwrap_or(0),
                ) {
                    (0, 0) => {}
                    (0, _) => ttl = Some(3600),
                    (_, 0) => ttl = Some(300),
                    _ => {}
                }
            }
            s.ttl = ttl;
        }
    }

    /// A session read whole, not to grow (`watch` keeps what growing needs): the planner's
    /// and the copies' state dropped, the planned blocks the prompts point into kept. On a
    /// 100 MB transcript, `steps`' peak heap 137 -> 118 MB. Should it grow after all, every
    /// step is planned again.
    pub(crate) fn settle(&mut self) {
        if self.growth.copies.deferred {
            let flipped = self.growth.copies.at_settle();
            let unchanged = self.refresh_responses(flipped);
            self.follow_ttl(unchanged);
        }
        let blocks = std::mem::take(&mut self.growth.planner.blocks);
        let fixed = self.growth.fixed_thread;
        self.growth = Growth::new(fixed, None);
        self.growth.planner.blocks = blocks;
        self.growth.settled = true;
    }

    /// Every step made again, from a new planner (the conversation is read): returns 0.
    fn make_steps_again(&mut self) -> usize {
        let recorder = self.growth.recorder.take();
        let fixed = self.growth.fixed_thread;
        let deferred = self.growth.copies.deferred;
        self.growth = Growth::new(fixed, recorder);
        self.growth.copies.deferred = deferred;
        if !fixed {
            self.thread = self.conversation.shown_thread();
        }
        self.claude_steps.clear();
        self.steps.clear();
        self.turns.clear();
        let requests = self.conversation.requests.len();
        let g = &mut self.growth;
        g.request_of.resize(self.conversation.responses.len(), 0);
        for (index, request) in self.conversation.requests.iter().enumerate() {
            if let Some(r) = request.response {
                g.request_of[r] = index as u32 + 1;
            }
        }
        let all: Vec<usize> = (0..self.conversation.responses.len()).collect();
        self.growth.copies.update(
            &self.transcript,
            &self.conversation,
            &self.growth.request_of,
            &all,
        );
        for index in 0..requests {
            self.add_step(index);
        }
        self.growth.requests = requests;
        self.follow_ttl(0);
        0
    }

    /// Request `index` of the conversation: a step when it is one of the shown thread's.
    fn add_step(&mut self, index: usize) {
        let (t, c) = (&self.transcript, &self.conversation);
        let g = &mut self.growth;
        g.step_of.resize(index + 1, 0);
        let request = &c.requests[index];
        // The first response of the thread: a request after it has history another sent.
        for response in &c.responses[g.responses..] {
            if g.first_response.is_none() && response.thread == self.thread {
                g.first_response = Some(response.lines[0]);
            }
        }
        g.responses = c.responses.len();
        if request.thread != self.thread {
            return;
        }
        let starts_turn = self.turns.is_empty()
            || (request.kind == RequestKind::Sampling && c.answers_prompt(t, request));
        let line = &t.lines[request.at];
        if starts_turn {
            self.turns.push(Turn {
                number: self.turns.len() + 1,
                turn_id: None,
                line: line.number,
                steps: Vec::new(),
                rolled_back: false,
                aborted: false,
            });
        }
        let version_line = match request.response {
            Some(r) => c.responses[r].lines[0],
            None => request.at,
        };
        let context = &t.lines[version_line].context;
        let (version, build) = (context.version.clone(), context.build);
        let compaction = request.kind == RequestKind::Compaction;
        // A copy of an earlier response is planned too (whether it is one can change as its
        // lines arrive), and shown without its prompt while it is one.
        let planned = g.planner.plan(t, c, index);
        let elsewhere = matches!(planned, Planned::RecordElsewhere) && !compaction;
        let prompt = match planned {
            Planned::Prompt(prompt) if !compaction => Some(prompt),
            _ => None,
        };
        let unix_seconds = line
            .timestamp
            .as_deref()
            .and_then(crate::core::lines::unix_seconds)
            .or(g.last_time);
        g.last_time = unix_seconds;
        let turn = self.turns.len() - 1;
        let k = self.steps.len();
        self.turns[turn].steps.push(k);
        self.steps.push(Step {
            turn,
            number: self.turns[turn].steps.len(),
            epoch: g.epoch,
            prefix_len: prompt.as_ref().map_or(0, |p| p.len),
            context: None,
            usage: None,
            line: line.number,
            unix_seconds,
            pending: false,
            compaction,
        });
        if compaction {
            g.epoch += 1;
        }
        let response = request.response.map(|r| &c.responses[r]);
        self.claude_steps.push(ClaudeStep {
            request: index,
            kind: request.kind,
            model: None,
            build,
            version,
            history_before: request.leaf.is_some()
                && g.first_response.is_some_and(|f| f < request.at),
            repeat_possible: build == Build::V1_0_30
                && !compaction
                && c.ends_with_tool_result(t, request),
            ttl: None,
            key: match response {
                Some(r) => r.message_id.clone(),
                None => line
                    .uuid
                    .as_ref()
                    .map(|u| std::sync::Arc::from(u.text().as_ref())),
            },
            prompt,
            copied: false,
        });
        g.elsewhere.push(elsewhere);
        g.step_of[index] = k as u32 + 1;
        self.refresh_step(k);
    }

    /// Step `k`'s reading of its response (its usage and model, whether it is a copy) made
    /// again: whether it changed.
    fn refresh_step(&mut self, k: usize) -> bool {
        let c = &self.conversation;
        let g = &mut self.growth;
        let s = &mut self.claude_steps[k];
        let response = c.requests[s.request].response;
        let copy = response.is_some_and(|r| g.copies.copied.get(r).copied().unwrap_or(false));
        match (copy, s.prompt.is_some()) {
            (true, true) => {
                if let Some(prompt) = s.prompt.take() {
                    g.hidden.insert(k, prompt);
                }
            }
            (false, false) => s.prompt = g.hidden.remove(&k),
            _ => {}
        }
        let compaction = s.kind == RequestKind::Compaction;
        let copied = (copy || g.elsewhere[k]) && !compaction;
        let response = response.map(|r| &c.responses[r]);
        let model = response
            .filter(|_| s.prompt.is_some())
            .map(|r| r.model.clone().unwrap_or_else(|| "".into()));
        let step = &mut self.steps[k];
        let usage = response
            .and_then(|r| r.usage.as_ref())
            .filter(|_| s.prompt.is_some())
            .map(|u| Observation {
                line: step.line,
                unix_seconds: step.unix_seconds,
                usage: neutral_usage(u),
            });
        let prefix_len = s.prompt.as_ref().map_or(0, |p| p.len);
        let changed = s.copied != copied
            || s.model != model
            || step.usage != usage
            || step.prefix_len != prefix_len;
        s.copied = copied;
        s.model = model;
        step.usage = usage;
        step.prefix_len = prefix_len;
        changed
    }

    /// Record complete lines appended to the transcript (each ended by a newline) and grow:
    /// the lines read in all, and how many of the first steps stayed as they were.
    pub(crate) fn read_appended(&mut self, bytes: &[u8]) -> (usize, usize) {
        let recorder = self.growth.recorder.get_or_insert_with(Recorder::default);
        recorder.read_lines(&mut self.transcript, bytes);
        let lines = recorder.lines();
        (lines, self.grow())
    }

    /// The compaction boundaries of the shown thread among lines `from..`, each with its line
    /// number.
    pub(crate) fn boundaries_from(&self, from: usize) -> impl Iterator<Item = usize> + '_ {
        self.transcript.lines[from.min(self.transcript.lines.len())..]
            .iter()
            .enumerate()
            .filter(move |(i, line)| {
                matches!(&line.kind, LineKind::System(s) if s.is_compact_boundary())
                    && line.duplicate_of.is_none()
                    && self.conversation.thread_of(&self.transcript, from + i) == self.thread
            })
            .map(|(_, line)| line.number)
    }
}

#[cfg(test)]
mod tests {
    use super::{Copies, Members};
    use crate::agents::claude::load::{LineKind, Transcript};
    use crate::agents::claude::thread::Conversation;

    /// A response stops being a copy when the first of its group leaves it (its counts grew),
    /// and becomes one again when an earlier response joins the group first.
    #[test]
    fn copies_follow_the_first_response_of_their_group() {
        let line = |json: serde_json::Value| format!("{json}\n");
        let user = |uuid: &str, text: &str| {
            line(
                serde_json::json!({"type": "user", "uuid": uuid, "version": "2.0.31",
                "message": {"role": "user", "content": text}}),
            )
        };
        let assistant = |uuid: &str, parent: &str| {
            line(
                serde_json::json!({"type": "assistant", "uuid": uuid, "parentUuid": parent,
                "version": "2.0.31", "message": {"id": "m1", "model": "m", "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": 3, "cache_read_input_tokens": 0,
                          "cache_creation_input_tokens": 10, "output_tokens": 1}}}),
            )
        };
        let text = [user("u1", "one"), assistant("a1", "u1")]
            .into_iter()
            .chain([user("u1b", "one"), assistant("a1b", "u1b")])
            .collect::<String>();
        let mut t = crate::agents::claude::load("copies.jsonl", text.as_bytes()).unwrap();
        let c: Conversation = crate::agents::claude::conversation(&t);
        assert_eq!(c.responses.len(), 2);
        let mut request_of = vec![0u32; 2];
        for (k, request) in c.requests.iter().enumerate() {
            if let Some(r) = request.response {
                request_of[r] = k as u32 + 1;
            }
        }
        let set_read = |t: &mut Transcript, read: u64| {
            let LineKind::Assistant(a) = &mut t.lines[1].kind else {
                panic!("line 2 is the first response's")
            };
            a.usage.as_mut().expect("a usage").cache_read_input_tokens = read;
        };
        let mut copies = Copies::default();
        assert_eq!(copies.update(&t, &c, &request_of, &[0, 1]), [1]);
        assert_eq!(copies.copied, [false, true]);
        set_read(&mut t, 5);
        assert_eq!(copies.update(&t, &c, &request_of, &[0]), [1]);
        assert_eq!(copies.copied, [false, false]);
        set_read(&mut t, 0);
        assert_eq!(copies.update(&t, &c, &request_of, &[0]), [1]);
        assert_eq!(copies.copied, [false, true]);
        // Deferred, nothing is looked at until the session settles, then all at once.
        let mut deferred = Copies {
            deferred: true,
            ..Copies::default()
        };
        assert!(deferred.update(&t, &c, &request_of, &[0, 1]).is_empty());
        assert_eq!(deferred.copied, [false, false]);
        // The first response's counts change and change back before it settles.
        set_read(&mut t, 5);
        assert!(deferred.update(&t, &c, &request_of, &[0]).is_empty());
        set_read(&mut t, 0);
        assert!(deferred.update(&t, &c, &request_of, &[0]).is_empty());
        assert_eq!(deferred.at_settle(), [1]);
        assert_eq!(deferred.copied, [false, true]);
        set_read(&mut t, 5);
        let mut deferred = Copies {
            deferred: true,
            ..Copies::default()
        };
        assert!(deferred.update(&t, &c, &request_of, &[0, 1]).is_empty());
        assert!(deferred.at_settle().is_empty());
        assert_eq!(deferred.copied, [false, false]);
    }

    /// A group kept without a list while it has one member reads, grows and shrinks as a sorted
    /// list would, and says when its last member goes.
    #[test]
    fn a_copy_group_is_a_sorted_list_of_its_members() {
        let mut group = Members::One((5, 50));
        assert_eq!(group.as_slice(), [(5, 50)]);
        group.insert(0, (2, 20));
        group.insert(2, (9, 90));
        assert_eq!(group.as_slice(), [(2, 20), (5, 50), (9, 90)]);
        assert!(!group.remove(1));
        assert_eq!(group.as_slice(), [(2, 20), (9, 90)]);
        assert!(!group.remove(0));
        assert!(group.remove(0));
        assert!(Members::One((1, 1)).remove(0));
    }
}

//! The billed requests a Claude Code transcript records, each counted once.
//!
//! - One request per response ([`super::thread`]): the lines of a streamed message share its
//!   `message.id` and `requestId` and repeat its usage, the last line holding the final output
//!   count, so a response counts each field at its largest over its lines (the last line's, with
//!   Anthropic), never a sum over lines. Files from other backends behind `ANTHROPIC_BASE_URL`
//!   may lack `requestId` (the `message.id` alone names the response), start with a line of
//!   all-zero usage or end with a placeholder input count (the largest counts), or reuse one
//!   `message.id` for several responses (a new prompt in between starts a new response: each is
//!   counted).
//! - In a file or across files (a resume's copy of the old lines: 1.0.x's new file, 2.0.31's
//!   rewrite into the same file under new uuids; a fork) a response is the same when its
//!   `message.id` and input counts are (1.0.x's copies drop the `requestId`; a copy may hold
//!   the final output count where the original's lines stopped at a partial one): the first
//!   file by time counts it, and the others are linked to it ([`super::home`]).
//! - 2.1.x `progress` lines embed a subagent's messages with their usage; the subagent's own file
//!   has them too. The loader reads no usage from `progress` lines, so they count once.
//! - What a transcript cannot show: the side requests of 1.x (Haiku file-path and title
//!   requests: no line at all; a `summary` line is the only trace of a title) and a compaction's
//!   request (a boundary or summary line, no usage). 2.0.x's subagent "Warmup" requests have
//!   their own `agent-*.jsonl` files: they are counted, as side requests.

use std::collections::HashMap;

use super::load::{LineKind, Transcript, Usage};
use super::session::Session;
use super::thread::{Conversation, RequestKind, ThreadKey};
use crate::cache::Verdict;
use crate::providers::anthropic::prices::{AnthropicPrices, Tokens};

/// What a request was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Purpose {
    /// The session's main thread.
    Conversation,
    /// A subagent's thread (a 2.0.x+ `agentId`, or 1.0.x's inline sidechain).
    Subagent,
    /// A side request the transcript records: 2.0.x's subagent "Warmup".
    Side,
}

impl Purpose {
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Conversation => "conversation",
            Purpose::Subagent => "subagent",
            Purpose::Side => "side",
        }
    }
}

/// One billed request.
#[derive(Debug, Clone, PartialEq)]
pub struct BilledRequest {
    /// The first line of its response (RFC 3339 as written, UTC).
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub message_id: Option<String>,
    pub request_id: Option<String>,
    pub thread: ThreadKey,
    pub purpose: Purpose,
    pub tokens: Tokens,
    /// The backend reported cache counts at all.
    pub has_cache_fields: bool,
    /// `steps`' verdict for it, when verdicts were asked for ([`judge`]).
    pub verdict: Option<Verdict>,
    /// With the verdict: the input the cache could have served but did not (what the request
    /// before left cached, less what this one read); for a cold start, what it wrote (not a
    /// loss).
    pub lost: u64,
    /// 1-based line of its response's first line in its file.
    pub line: usize,
    /// Lines its response was written on (each repeating the usage).
    pub lines: usize,
    /// Its `message.id` was an earlier response's too (a backend that reuses ids).
    pub reused_id: bool,
    /// It answers a prompt of the main thread: it starts a turn.
    pub answers_prompt: bool,
}

impl BilledRequest {
    /// The UTC day, `YYYY-MM-DD`.
    pub fn day(&self) -> Option<&str> {
        self.timestamp.as_deref().and_then(|t| t.get(..10))
    }

    /// What names it across files: a copy has the same `message.id` and input counts (1.0.x
    /// copies drop the `requestId`; a backend that reuses ids gives each response its own
    /// input). A hash of the two (XXH3-128: a collision is not a concern at a home's size).
    pub(crate) fn key(&self) -> Option<crate::core::hash::Hash> {
        use crate::core::hash::hash;
        let id = self.message_id.as_deref()?;
        // The id's hash and the four input counts, on the stack: one per request of a home.
        let mut bytes = [0u8; 48];
        bytes[..16].copy_from_slice(&hash("claude-message-id", id.as_bytes()));
        for (i, n) in input_counts(&self.tokens).into_iter().enumerate() {
            bytes[16 + 8 * i..24 + 8 * i].copy_from_slice(&n.to_le_bytes());
        }
        Some(hash("claude-response", &bytes))
    }
}

/// `steps`' verdict of a response and the input it lost ([`BilledRequest::lost`]), by the
/// response's index in `Conversation::responses`.
pub type Judged = HashMap<usize, (Verdict, u64)>;

/// The billed requests of one file, in file order: every response that is not Claude Code's
/// own (`<synthetic>`) and has usage, each with its verdict when `judged` has one.
pub fn billed_requests(t: &Transcript, c: &Conversation, mut judged: Judged) -> Vec<BilledRequest> {
    let mut threads: Vec<ThreadKey> = c.requests.iter().map(|r| r.thread.clone()).collect();
    threads.sort();
    threads.dedup();
    let side: Vec<ThreadKey> = threads
        .iter()
        .filter(|k| is_warmup(t, c, k))
        .cloned()
        .collect();
    let mut out = Vec::new();
    for request in &c.requests {
        let (RequestKind::Sampling, Some(r)) = (request.kind, request.response) else {
            continue;
        };
        let response = &c.responses[r];
        let Some(usage) = response.usage else {
            continue;
        };
        let tokens = largest(t, &response.lines);
        let purpose = match &response.thread {
            k if side.contains(k) => Purpose::Side,
            ThreadKey::Main => Purpose::Conversation,
            _ => Purpose::Subagent,
        };
        let first = &t.lines[response.lines[0]];
        let (verdict, lost) = judged.remove(&r).unzip();
        out.push(BilledRequest {
            timestamp: first.timestamp.as_deref().map(str::to_string),
            model: response.model.as_deref().map(str::to_string),
            message_id: response.message_id.as_deref().map(str::to_string),
            request_id: response.request_id.as_deref().map(str::to_string),
            thread: response.thread.clone(),
            purpose,
            tokens,
            has_cache_fields: usage.has_cache_fields,
            verdict,
            lost: lost.unwrap_or(0),
            line: first.number,
            lines: response.lines.len(),
            reused_id: response.reused_id,
            answers_prompt: response.thread == ThreadKey::Main && c.answers_prompt(t, request),
        });
    }
    // A response and its copies in this file are one response: its output is the largest any
    // of them holds (a copy may hold the final count where the original stopped).
    let mut output: HashMap<crate::core::hash::Hash, u64> = HashMap::new();
    for r in &out {
        if let Some(key) = r.key() {
            let o = output.entry(key).or_default();
            *o = (*o).max(r.tokens.output);
        }
    }
    for r in &mut out {
        if let Some(&o) = r.key().as_ref().and_then(|k| output.get(k)) {
            r.tokens.output = o;
        }
    }
    out
}

/// The verdicts `steps` gives the requests of the session's shown thread (the main one; in a
/// subagent's file, the subagent's; 1.0.x's sidechains inside a main file get none), with the
/// input each lost: what the request before left cached and this one did not read, and for a
/// cold start what it wrote (not a loss). The one place usage asks the cache stage.
pub fn judge(session: &Session) -> Judged {
    let plan = super::session::plan(
        session,
        super::wire::Given::default(),
        crate::core::parallel::Threads::default(),
    );
    let mut out = Judged::new();
    for row in crate::cache::analyze(session, &plan) {
        let request = &session.conversation.requests[session.claude_steps[row.step].request];
        let Some(r) = request.response else {
            continue;
        };
        let lost = match row.verdict {
            Verdict::First | Verdict::WarmStart => row.observed_cache_write.unwrap_or(0),
            _ => row.lost_tokens,
        };
        out.insert(r, (row.verdict, lost));
    }
    out
}

/// The responses of `c` that copy an earlier one of the same file (the same `message.id` and
/// input counts: 2.0.31 rewrites old lines under new uuids into the file), indexed as
/// `Conversation::responses`: counted once by [`billed_requests`]' keys, shown as copies by
/// `steps`.
pub fn copied_responses(t: &Transcript, c: &Conversation) -> Vec<bool> {
    let mut copied = vec![false; c.responses.len()];
    let mut seen: foldhash::HashSet<(&str, [u64; 4])> = foldhash::HashSet::default();
    for request in &c.requests {
        let (RequestKind::Sampling, Some(r)) = (request.kind, request.response) else {
            continue;
        };
        let response = &c.responses[r];
        let (Some(id), Some(_)) = (response.message_id.as_deref(), response.usage) else {
            continue;
        };
        copied[r] = !seen.insert((id, input_counts(&largest(t, &response.lines))));
    }
    copied
}

/// What a copy of a response repeats: its input counts. Not its output: a line written while
/// the response streamed holds a partial output count (1.0.51: 1), a resume's copy of it the
/// final one (99; happy-cli's `resumed-session.jsonl` sample).
pub(crate) fn input_counts(t: &Tokens) -> [u64; 4] {
    [t.input, t.cache_write_5m, t.cache_write_1h, t.cache_read]
}

/// A response's usage in Anthropic's billing terms, split by TTL: where the build wrote no split
/// (before 1.0.x) or the split does not add up, the rest of `cache_creation_input_tokens` is a
/// 5-minute write (the default TTL).
fn billed(u: &Usage) -> Tokens {
    let h1 = u
        .cache_creation_1h
        .unwrap_or(0)
        .min(u.cache_creation_input_tokens);
    Tokens {
        input: u.input_tokens,
        cache_write_5m: u.cache_creation_input_tokens - h1,
        cache_write_1h: h1,
        cache_read: u.cache_read_input_tokens,
        output: u.output_tokens,
    }
}

/// Each count at its largest over a response's lines. With Anthropic that is the last line's
/// (the input counts repeat, output only grows); some backends write a first line of zero usage,
/// or a last line whose input is a constant placeholder (a local Qwen proxy: 2050 on every final
/// line after a first line of the real, growing prompt): no line reports more than the response
/// used, so the largest is the count.
pub(crate) fn largest(t: &Transcript, lines: &[usize]) -> Tokens {
    let mut out = Tokens::default();
    for &i in lines {
        if let LineKind::Assistant(a) = &t.lines[i].kind
            && let Some(u) = &a.usage
        {
            let one = billed(u);
            out.input = out.input.max(one.input);
            out.cache_write_5m = out.cache_write_5m.max(one.cache_write_5m);
            out.cache_write_1h = out.cache_write_1h.max(one.cache_write_1h);
            out.cache_read = out.cache_read.max(one.cache_read);
            out.output = out.output.max(one.output);
        }
    }
    out
}

/// The compactions `t` records: each made a request whose usage no line holds.
pub fn compactions(c: &Conversation) -> usize {
    c.requests
        .iter()
        .filter(|r| r.kind == RequestKind::Compaction)
        .count()
}

/// A 2.0.x warmup thread: its first prompt is the text `Warmup`.
fn is_warmup(t: &Transcript, c: &Conversation, thread: &ThreadKey) -> bool {
    if *thread == ThreadKey::Main {
        return false;
    }
    let first = t
        .lines
        .iter()
        .enumerate()
        .find_map(|(i, line)| match &line.kind {
            LineKind::User(u)
                if line.duplicate_of.is_none()
                    && line.sidechain
                    && c.thread_of(t, i) == *thread =>
            {
                Some(u)
            }
            _ => None,
        });
    let Some(user) = first else { return false };
    match serde_json::from_str::<serde_json::Value>(&user.content) {
        Ok(serde_json::Value::String(s)) => s == "Warmup",
        Ok(serde_json::Value::Array(blocks)) => {
            blocks.len() == 1 && blocks[0]["text"].as_str() == Some("Warmup")
        }
        _ => false,
    }
}

/// Sums over billed requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub requests: usize,
    pub tokens: Tokens,
    /// USD at list prices of the priced requests.
    pub cost: f64,
    /// Requests whose model has no price (their tokens are in `tokens`, not in `cost`).
    pub unpriced_requests: usize,
}

impl Totals {
    pub fn add(&mut self, r: &BilledRequest, prices: &AnthropicPrices) {
        self.requests += 1;
        self.tokens.add(&r.tokens);
        match r
            .model
            .as_deref()
            .and_then(|m| prices.cost(m, r.day(), &r.tokens))
        {
            Some(c) => self.cost += c,
            None => self.unpriced_requests += 1,
        }
    }
}

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
//!   `message.id` and usage are (1.0.x's copies drop the `requestId`): the first file by time counts it, and the others
//!   are linked to it ([`super::home`]).
//! - 2.1.x `progress` lines embed a subagent's messages with their usage; the subagent's own file
//!   has them too. The loader reads no usage from `progress` lines, so they count once.
//! - What a transcript cannot show: the side requests of 1.x (Haiku file-path and title
//!   requests: no line at all; a `summary` line is the only trace of a title) and a compaction's
//!   request (a boundary or summary line, no usage). 2.0.x's subagent "Warmup" requests have
//!   their own `agent-*.jsonl` files: they are counted, as side requests.

use std::collections::HashMap;

use super::cache::{Verdict, steps};
use super::load::{LineKind, Transcript};
use super::prices::Tokens;
use super::thread::{Conversation, RequestKind, ThreadKey};

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
    /// `steps`' verdict for it, when verdicts were asked for.
    pub verdict: Option<Verdict>,
    /// 1-based line of its response's first line in its file.
    pub line: usize,
}

impl BilledRequest {
    /// The UTC day, `YYYY-MM-DD`.
    pub fn day(&self) -> Option<&str> {
        self.timestamp.as_deref().and_then(|t| t.get(..10))
    }

    /// What names it across files: a copy has the same `message.id` and usage (1.0.x copies drop
    /// the `requestId`; a backend that reuses ids gives each response its own usage).
    pub(crate) fn key(&self) -> Option<(String, Tokens)> {
        Some((self.message_id.clone()?, self.tokens))
    }
}

/// The billed requests of one file, in file order: every response that is not Claude Code's
/// own (`<synthetic>`) and has usage. With `verdicts`, each gets its `steps` verdict (costs a
/// compile of every request: the history walk).
pub fn billed_requests(t: &Transcript, c: &Conversation, verdicts: bool) -> Vec<BilledRequest> {
    let mut verdict_of: HashMap<usize, Verdict> = HashMap::new();
    let mut threads: Vec<ThreadKey> = c.requests.iter().map(|r| r.thread.clone()).collect();
    threads.sort();
    threads.dedup();
    if verdicts {
        for thread in &threads {
            for s in steps(t, c, thread) {
                let request = &c.requests[s.request];
                if let (Some(r), Some(v)) = (request.response, s.verdict) {
                    verdict_of.insert(r, v);
                }
            }
        }
    }
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
        out.push(BilledRequest {
            timestamp: first.timestamp.as_deref().map(str::to_string),
            model: response.model.as_deref().map(str::to_string),
            message_id: response.message_id.as_deref().map(str::to_string),
            request_id: response.request_id.as_deref().map(str::to_string),
            thread: response.thread.clone(),
            purpose,
            tokens,
            has_cache_fields: usage.has_cache_fields,
            verdict: verdict_of.remove(&r),
            line: first.number,
        });
    }
    out
}

/// The responses of `c` that copy an earlier one of the same file (the same `message.id` and
/// usage: 2.0.31 rewrites old lines under new uuids into the file), indexed as
/// `Conversation::responses`: counted once by [`billed_requests`]' keys, shown as copies by
/// `steps`.
pub fn copied_responses(t: &Transcript, c: &Conversation) -> Vec<bool> {
    let mut copied = vec![false; c.responses.len()];
    let mut seen: foldhash::HashSet<(&str, Tokens)> = foldhash::HashSet::default();
    for request in &c.requests {
        let (RequestKind::Sampling, Some(r)) = (request.kind, request.response) else {
            continue;
        };
        let response = &c.responses[r];
        let (Some(id), Some(_)) = (response.message_id.as_deref(), response.usage) else {
            continue;
        };
        copied[r] = !seen.insert((id, largest(t, &response.lines)));
    }
    copied
}

/// Each count at its largest over a response's lines. With Anthropic that is the last line's
/// (the input counts repeat, output only grows); some backends write a first line of zero usage,
/// or a last line whose input is a constant placeholder (a local Qwen proxy: 2050 on every final
/// line after a first line of the real, growing prompt): no line reports more than the response
/// used, so the largest is the count.
fn largest(t: &Transcript, lines: &[usize]) -> Tokens {
    let mut out = Tokens::default();
    for &i in lines {
        if let LineKind::Assistant(a) = &t.lines[i].kind
            && let Some(u) = &a.usage
        {
            let one = Tokens::of(u);
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
    pub fn add(&mut self, r: &BilledRequest, prices: &super::prices::AnthropicPrices) {
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

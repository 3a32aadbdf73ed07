//! Anthropic's prompt cache as a request's prefix predicts it, and the verdict of each request
//! of a Claude Code session: what the provider reported against what the prefix predicts, the
//! recorded cause named before the provider is blamed.
//!
//! The cache (Anthropic's prompt-caching documentation, CONFORMANCE.md "Usage model"): the
//! prompt is tools, then system blocks, then the parameters that invalidate the messages'
//! cache, then the messages' blocks; a block with `cache_control` is a breakpoint that writes an
//! entry for the prefix up to it (per model, for its TTL, refreshed by a hit); a request reads
//! the longest entry found at one of its breakpoints or up to 20 blocks before one.

use serde_json::Value;

use super::load::{LineKind, Transcript, Usage};
use super::thread::{Conversation, RequestKind, Role, ThreadKey};
use super::wire::{Build, Compiled, Given, compile};
use crate::hash::{Hash, hash};

/// Blocks the cache looks back from a breakpoint for an earlier entry.
pub const LOOKBACK_BLOCKS: usize = 20;

/// Where a block is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Tool(usize),
    /// The tools, which the build does not record.
    Tools,
    System(usize),
    /// The system prompt, which the build does not record.
    SystemWhole,
    Params,
    /// Message, block.
    Message(usize, usize),
}

impl Part {
    /// `tools[3]`, `system[1]`, `params`, `messages[2].content[0]`; `tools` or `system` alone
    /// for a part the transcript does not record.
    pub fn name(self) -> String {
        match self {
            Part::Tool(i) => format!("tools[{i}]"),
            Part::Tools => "tools".into(),
            Part::System(i) => format!("system[{i}]"),
            Part::SystemWhole => "system".into(),
            Part::Params => "params".into(),
            Part::Message(i, j) => format!("messages[{i}].content[{j}]"),
        }
    }

    /// The part a name in `Compiled::unknown` covers, by its name's prefix.
    fn within(self, prefix: &str) -> bool {
        match self {
            Part::Message(i, _) => prefix == format!("messages[{i}].content"),
            _ => false,
        }
    }

    fn is_system(self) -> bool {
        matches!(self, Part::System(_) | Part::SystemWhole)
    }
}

/// One block of a prompt, in the order the cache sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub part: Part,
    pub hash: Hash,
    /// The transcript records it (else it is assumed unchanged from one request to the next).
    pub known: bool,
    /// A breakpoint, with its TTL in seconds.
    pub breakpoint: Option<i64>,
}

/// The blocks of a compiled body. A part the build does not record is one unknown block (with
/// the breakpoint those builds put on their system blocks).
pub fn prompt_blocks(body: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    let block = |part: Part, value: &Value, tag: &str| Block {
        hash: hash(tag, canonical_without_cache_control(value).as_bytes()),
        known: !value.is_null(),
        breakpoint: ttl(value),
        part,
    };
    match &body["tools"] {
        Value::Array(tools) => {
            for (i, tool) in tools.iter().enumerate() {
                out.push(block(Part::Tool(i), tool, "claude-tool"));
            }
        }
        Value::Null if body.get("tools").is_some() => out.push(unknown(Part::Tools, None)),
        _ => {}
    }
    match &body["system"] {
        Value::Array(blocks) => {
            for (i, b) in blocks.iter().enumerate() {
                if b.is_null() {
                    // 2.1.3xx's billing block: not recorded, the same through a session.
                    out.push(unknown(Part::System(i), None));
                } else {
                    out.push(block(Part::System(i), b, "claude-system"));
                }
            }
        }
        Value::String(text) => out.push(block(
            Part::System(0),
            &Value::String(text.clone()),
            "claude-system",
        )),
        Value::Null if body.get("system").is_some() => {
            out.push(unknown(Part::SystemWhole, Some(300)))
        }
        _ => {}
    }
    let params = serde_json::json!({"thinking": body.get("thinking"), "tool_choice": body.get("tool_choice")});
    out.push(block(Part::Params, &params, "claude-params"));
    for (i, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let role = message["role"].as_str().unwrap_or("");
        let blocks = match &message["content"] {
            Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => Vec::new(),
        };
        for (j, b) in blocks.iter().enumerate() {
            out.push(Block {
                part: Part::Message(i, j),
                hash: block_hash(role, b),
                known: true,
                breakpoint: ttl(b),
            });
        }
    }
    out
}

/// A block's TTL in seconds, when it is a breakpoint.
fn ttl(b: &Value) -> Option<i64> {
    b.get("cache_control")
        .map(|cc| match cc.get("ttl").and_then(Value::as_str) {
            Some("1h") => 3600,
            _ => 300,
        })
}

/// A message block's identity: its role and its JSON without `cache_control`.
fn block_hash(role: &str, block: &Value) -> Hash {
    let keyed = serde_json::json!([role, block]);
    hash(
        "claude-block",
        canonical_without_cache_control(&keyed).as_bytes(),
    )
}

fn unknown(part: Part, breakpoint: Option<i64>) -> Block {
    Block {
        part,
        hash: hash("claude-unknown", part.name().as_bytes()),
        known: false,
        breakpoint,
    }
}

fn canonical_without_cache_control(value: &Value) -> String {
    fn strip(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| *k != "cache_control")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&strip(value)).expect("a JSON value serializes")
}

/// The provider's cache as the session's requests fill it.
#[derive(Debug, Default)]
pub struct Simulation {
    /// Prefix chain (model first) → expiry, in seconds since the epoch.
    entries: foldhash::HashMap<Hash, i64>,
    /// The last request's blocks and chain: the next one's shared blocks keep their links.
    blocks: Vec<(Hash, Hash)>,
    model: String,
}

/// What the cache holds for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup {
    /// The last block of the longest prefix found, if any.
    pub read_block: Option<usize>,
    /// An entry for a longer prefix existed but had expired.
    pub expired: bool,
}

impl Simulation {
    /// Look `blocks` up at `now`, then write its breakpoints' entries. The chain is taken on from
    /// the blocks it shares with the previous request, so a session costs its new blocks.
    pub fn request(&mut self, model: &str, blocks: &[Block], now: i64) -> Lookup {
        if model != self.model {
            self.blocks.clear();
            self.model = model.to_string();
        }
        let shared = self
            .blocks
            .iter()
            .zip(blocks)
            .take_while(|((h, _), b)| *h == b.hash)
            .count();
        self.blocks.truncate(shared);
        let mut link = self
            .blocks
            .last()
            .map_or_else(|| hash("claude-prefix", model.as_bytes()), |(_, c)| *c);
        for b in &blocks[shared..] {
            let mut bytes = [0u8; 32];
            bytes[..16].copy_from_slice(&link);
            bytes[16..].copy_from_slice(&b.hash);
            link = hash("claude-prefix", &bytes);
            self.blocks.push((b.hash, link));
        }
        let chain = |p: usize| self.blocks[p].1;
        let breakpoints: Vec<(usize, i64)> = blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.breakpoint.map(|t| (i, t)))
            .collect();
        let mut read_block = None;
        let mut expired = false;
        for &(bp, _) in &breakpoints {
            for p in (bp.saturating_sub(LOOKBACK_BLOCKS)..=bp).rev() {
                match self.entries.get(&chain(p)) {
                    Some(&expiry) if expiry > now => {
                        read_block = read_block.max(Some(p));
                        break;
                    }
                    Some(_) => expired = true,
                    None => {}
                }
            }
        }
        for &(bp, ttl) in &breakpoints {
            let entry = self.entries.entry(chain(bp)).or_insert(0);
            *entry = (*entry).max(now + ttl);
        }
        Lookup {
            read_block,
            expired: expired && read_block.is_none(),
        }
    }
}

/// Why a request read from the cache what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The thread's first request: nothing to read yet.
    ColdStart,
    /// The prefix the previous request wrote was read.
    Hit,
    /// A cache is per model: the model changed since the previous request.
    ModelSwitch { from: String, to: String },
    /// The idle gap was longer than the TTL in force.
    TtlExpired { gap_seconds: i64, ttl_seconds: i64 },
    /// A recorded part differs from the previous request's: the prefix breaks there.
    PrefixBroken { part: String },
    /// A compaction replaced the history since the previous request.
    Compaction,
    /// The previous request's entry is more than 20 blocks before every breakpoint.
    LookbackExceeded,
    /// The provider read less than the recorded prefix predicts, and a part the build does not
    /// record (system prompt, tools, injected context) comes before what it should have read:
    /// that part must have changed.
    UnrecordedChange { parts: Vec<String> },
    /// The provider read less than the prefix predicts, every part of it recorded.
    ProviderMiss,
    /// The backend reports no cache counts: nothing can be said of its cache.
    NoCacheFields,
    /// The thread's first request in this file, its history written by requests another file
    /// records (a resume copied it, or a fork): the prefix they wrote should be read, its size
    /// is not in this file.
    EarlierFile,
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::ColdStart => "cold_start",
            Verdict::Hit => "hit",
            Verdict::ModelSwitch { .. } => "model_switch",
            Verdict::TtlExpired { .. } => "ttl_expired",
            Verdict::PrefixBroken { .. } => "prefix_broken",
            Verdict::Compaction => "compaction",
            Verdict::LookbackExceeded => "lookback_exceeded",
            Verdict::UnrecordedChange { .. } => "unrecorded_change",
            Verdict::ProviderMiss => "provider_miss",
            Verdict::NoCacheFields => "no_cache_fields",
            Verdict::EarlierFile => "earlier_file",
        }
    }

    /// The verdict in a few words, for a table row.
    pub fn short(&self) -> String {
        match self {
            Verdict::ModelSwitch { from, to } => format!("model switch {from} -> {to}"),
            Verdict::TtlExpired {
                gap_seconds,
                ttl_seconds,
            } => format!("ttl expired ({gap_seconds} s > {ttl_seconds} s)"),
            Verdict::PrefixBroken { part } => format!("prefix broken at {part}"),
            Verdict::UnrecordedChange { parts } => {
                format!("unrecorded change: {}", parts.join(", "))
            }
            other => other.name().replace('_', " "),
        }
    }

    pub fn explain(&self) -> String {
        match self {
            Verdict::ColdStart => "first request: the prefix is written".into(),
            Verdict::Hit => "the prefix the previous request wrote was read".into(),
            Verdict::ModelSwitch { from, to } => format!("model changed from {from} to {to}: a cache is per model"),
            Verdict::TtlExpired { gap_seconds, ttl_seconds } => {
                format!("idle {gap_seconds} s, longer than the {ttl_seconds} s TTL: the entry expired")
            }
            Verdict::PrefixBroken { part } => format!("the prefix breaks at {part}: it differs from the previous request's"),
            Verdict::Compaction => "a compaction replaced the history: only what comes before the messages can be read".into(),
            Verdict::LookbackExceeded => format!("the previous entry is more than {LOOKBACK_BLOCKS} blocks before every breakpoint"),
            Verdict::UnrecordedChange { parts } => format!(
                "read less than the recorded prefix predicts; not recorded by this build and before it: {}",
                parts.join(", ")
            ),
            Verdict::ProviderMiss => "read less than the prefix predicts, every part of it recorded".into(),
            Verdict::NoCacheFields => "the backend reports no cache counts".into(),
            Verdict::EarlierFile => "the history was sent before by requests another file records: their prefix should be read".into(),
        }
    }
}

/// One row of `steps` for a Claude Code request.
#[derive(Debug, Clone)]
pub struct Step {
    /// 1-based: a turn starts at each request that answers a prompt.
    pub turn: usize,
    /// 1-based within its turn.
    pub step: usize,
    /// Index into [`Conversation::requests`].
    pub request: usize,
    pub kind: RequestKind,
    pub model: Option<String>,
    pub build: Build,
    /// The Claude Code version the request's lines were written by.
    pub version: Option<String>,
    pub timestamp: Option<String>,
    pub usage: Option<Usage>,
    /// Tokens the prefix predicts read: the previous request's read and written prefix where the
    /// whole of it is shared; `None` where the prediction is a part of it (tokens not estimated)
    /// or there is no usage to predict from.
    pub predicted_read: Option<u64>,
    /// The block the prediction reads up to.
    pub predicted_block: Option<usize>,
    pub breakpoints: usize,
    pub verdict: Option<Verdict>,
    /// A request of another session whose lines this file copied (a fork): shown, not judged.
    pub copied: bool,
}

/// The steps of one thread of `c`: each request with its usage, prediction and verdict. Each
/// line's blocks are hashed once and the cache's chain is taken on from the previous request,
/// so a session costs its lines, not its requests times its history (but for 2.1.3xx's replay
/// records, each followed on its own).
pub fn steps(t: &Transcript, c: &Conversation, thread: &ThreadKey) -> Vec<Step> {
    let mut sim = Simulation::default();
    let mut memo = LineBlocks::default();
    let mut out: Vec<Step> = Vec::new();
    // The previous sampling request: its blocks, model, usage and time.
    let mut previous: Option<(Vec<Block>, String, Option<Usage>, i64)> = None;
    let mut compacted = false;
    let (mut turn, mut step) = (0, 0);
    // The first response of the thread: a request after it has history another request sent.
    let first_response = c
        .responses
        .iter()
        .filter(|r| &r.thread == thread)
        .map(|r| r.lines[0])
        .min();
    for (index, request) in c.requests.iter().enumerate() {
        if &request.thread != thread {
            continue;
        }
        if out.is_empty() || (request.kind == RequestKind::Sampling && c.answers_prompt(t, request))
        {
            turn += 1;
            step = 0;
        }
        step += 1;
        let timestamp = t.lines[request.at].timestamp.as_deref().map(str::to_string);
        let version = request_version(t, c, request);
        let build = version.as_deref().map_or(Build::V1_0_30, Build::of);
        let replayed = request.kind == RequestKind::Sampling && has_replay_record(t, c, request);
        let fast = (request.kind == RequestKind::Sampling && !replayed)
            .then(|| rule_blocks(t, c, request, build, &mut memo));
        let (blocks, copied) = match fast {
            Some(blocks) => (blocks, false),
            None => {
                let compiled = compile(t, c, request, &Given::default());
                (compiled_blocks(&compiled), compiled.record_elsewhere)
            }
        };
        if request.kind == RequestKind::Compaction || copied {
            out.push(Step {
                turn,
                step,
                request: index,
                kind: request.kind,
                model: None,
                build,
                version,
                timestamp,
                usage: None,
                predicted_read: None,
                predicted_block: None,
                breakpoints: 0,
                verdict: None,
                copied,
            });
            compacted |= request.kind == RequestKind::Compaction;
            continue;
        }
        let response = &c.responses[request.response.expect("a sampling request has a response")];
        let model = response.model.as_deref().unwrap_or("").to_string();
        let now = timestamp
            .as_deref()
            .and_then(crate::parse::unix_seconds)
            .unwrap_or(0);
        let lookup = sim.request(&model, &blocks, now);
        let usage = response.usage;
        let history_before =
            request.leaf.is_some() && first_response.is_some_and(|f| f < request.at);
        let (predicted_read, verdict) = if previous.is_none() && history_before {
            (None, Verdict::EarlierFile)
        } else {
            judge(
                &blocks,
                &model,
                usage,
                now,
                lookup,
                previous.as_ref(),
                compacted,
            )
        };
        out.push(Step {
            turn,
            step,
            request: index,
            kind: request.kind,
            model: Some(model.clone()),
            build,
            version,
            timestamp,
            usage,
            predicted_read,
            predicted_block: lookup.read_block,
            breakpoints: blocks.iter().filter(|b| b.breakpoint.is_some()).count(),
            verdict: Some(verdict),
            copied: false,
        });
        previous = Some((blocks, model, usage, now));
        compacted = false;
    }
    out
}

fn request_version(
    t: &Transcript,
    c: &Conversation,
    request: &super::thread::Request,
) -> Option<String> {
    let line = match request.response {
        Some(r) => c.responses[r].lines[0],
        None => request.at,
    };
    t.lines[line].version.as_deref().map(str::to_string)
}

fn has_replay_record(t: &Transcript, c: &Conversation, request: &super::thread::Request) -> bool {
    request.response.is_some_and(|r| {
        c.responses[r]
            .lines
            .iter()
            .any(|&i| matches!(&t.lines[i].kind, LineKind::Assistant(a) if a.request_ref.is_some()))
    })
}

/// The blocks of a compiled body as the cache sees them: the billing block following the first
/// prompt, the parts the build records only in part unknown.
pub fn compiled_blocks(compiled: &Compiled) -> Vec<Block> {
    let mut blocks = prompt_blocks(&compiled.body);
    // From 2.1.x the first system block is a billing header with a code of the first prompt:
    // it changes with it (a compaction's summary, say), and so does every entry after it.
    // The code stayed when context blocks were added to that message (2.1.100's interrupt).
    if compiled.build >= Build::V2_1_100 {
        let prompt = first_prompt(&compiled.body);
        for b in blocks.iter_mut().filter(|b| b.part.is_system() && !b.known) {
            b.hash = hash("claude-billing", prompt.as_bytes());
        }
    }
    // A message whose content the build records only in part (injected context).
    for unknown in &compiled.unknown {
        for b in blocks.iter_mut().filter(|b| b.part.within(&unknown.part)) {
            b.known = false;
        }
    }
    blocks
}

/// Each line's content blocks, hashed once (with the role of the line).
#[derive(Default)]
pub struct LineBlocks {
    lines: foldhash::HashMap<usize, Vec<Hash>>,
}

impl LineBlocks {
    fn of(&mut self, t: &Transcript, i: usize) -> &[Hash] {
        self.lines.entry(i).or_insert_with(|| {
            let (role, text) = match &t.lines[i].kind {
                LineKind::User(u) => ("user", &u.content),
                LineKind::Assistant(a) => ("assistant", &a.content),
                _ => return Vec::new(),
            };
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(blocks)) => blocks.iter().map(|b| block_hash(role, b)).collect(),
                Ok(Value::String(s)) => vec![block_hash(
                    role,
                    &serde_json::json!({"type": "text", "text": s}),
                )],
                _ => Vec::new(),
            }
        })
    }
}

/// The blocks of a request whose build sends it by rule (before 2.1.3xx's replay records): the
/// same as `compiled_blocks(compile(..))`, from each line's blocks hashed once.
pub fn rule_blocks(
    t: &Transcript,
    c: &Conversation,
    request: &super::thread::Request,
    build: Build,
    memo: &mut LineBlocks,
) -> Vec<Block> {
    let history = c.history(t, request);
    // Messages as (blocks, role is user, starts an unrecorded context).
    let mut messages: Vec<(Vec<Hash>, bool, bool)> = Vec::new();
    for m in &history.messages {
        let mut blocks: Vec<Hash> = Vec::new();
        let user = m.role == Role::User;
        for (n, &i) in m.lines.iter().enumerate() {
            let line = memo.of(t, i).to_vec();
            // 2.1.100: a newline ends a text followed by another line's text in one message.
            if build == Build::V2_1_100
                && user
                && n > 0
                && !line.is_empty()
                && let Some(last) = blocks.last_mut()
                && let Some(fixed) = newline_fixed(t, &m.lines[..n], i)
            {
                *last = fixed;
            }
            blocks.extend(line);
        }
        if blocks.is_empty() {
            continue;
        }
        let context = (messages.is_empty() && user)
            || m.lines.iter().any(
                |&i| matches!(&t.lines[i].kind, LineKind::Attachment(a) if a.rendered.is_none()),
            );
        messages.push((blocks, user, context));
    }
    if build == Build::V1_0_30 && messages.len() >= 2 {
        let (call, result) = (&messages[messages.len() - 2], &messages[messages.len() - 1]);
        if !call.1 && result.1 && ends_tool_turn(t, &history) {
            let repeat = [
                (call.0.clone(), false, false),
                (result.0.clone(), true, false),
            ];
            messages.extend(repeat);
        }
    }
    let marked = if build >= Build::V2_1_100 { 1 } else { 2 };
    let first_marked = messages.len().saturating_sub(marked);
    let mut out = vec![
        unknown(Part::Tools, None),
        unknown(Part::SystemWhole, Some(300)),
    ];
    if build >= Build::V2_1_100 {
        out[1].hash = hash("claude-billing", first_prompt_of(t, &history).as_bytes());
    }
    // `{thinking, tool_choice}` of a body by rule: `null` both where `thinking` is sent (its
    // value unknown) and where it is not.
    out.push(Block {
        part: Part::Params,
        hash: hash(
            "claude-params",
            canonical_without_cache_control(
                &serde_json::json!({"thinking": null, "tool_choice": null}),
            )
            .as_bytes(),
        ),
        known: true,
        breakpoint: None,
    });
    for (i, (blocks, _, context)) in messages.iter().enumerate() {
        let last = blocks.len() - 1;
        for (j, h) in blocks.iter().enumerate() {
            out.push(Block {
                part: Part::Message(i, j),
                hash: *h,
                known: !context,
                breakpoint: (i >= first_marked && j == last).then_some(300),
            });
        }
    }
    out
}

/// The hash of the last text block before line `i` with a newline added, when line `i` starts
/// with text (2.1.100's merge of two lines of one message).
fn newline_fixed(t: &Transcript, before: &[usize], i: usize) -> Option<Hash> {
    let starts_with_text = match &t.lines[i].kind {
        LineKind::User(u) => match serde_json::from_str::<Value>(&u.content).ok()? {
            Value::String(_) => true,
            Value::Array(blocks) => blocks.first().is_some_and(|b| b["type"] == "text"),
            _ => false,
        },
        _ => false,
    };
    if !starts_with_text {
        return None;
    }
    let previous = before
        .iter()
        .rev()
        .find(|&&p| matches!(&t.lines[p].kind, LineKind::User(_)))?;
    let LineKind::User(u) = &t.lines[*previous].kind else {
        return None;
    };
    let mut last = match serde_json::from_str::<Value>(&u.content).ok()? {
        Value::String(s) => serde_json::json!({"type": "text", "text": s}),
        Value::Array(blocks) => blocks.last()?.clone(),
        _ => return None,
    };
    if last["type"] != "text" {
        return None;
    }
    let text = format!("{}\n", last["text"].as_str()?);
    last["text"] = Value::String(text);
    Some(block_hash("user", &last))
}

/// The history ends with a call's results (the request after a tool turn).
fn ends_tool_turn(t: &Transcript, history: &super::thread::History) -> bool {
    let [.., call, result] = history.messages.as_slice() else {
        return false;
    };
    let calls = call
        .lines
        .iter()
        .any(|&i| matches!(&t.lines[i].kind, LineKind::Assistant(a) if !a.tool_uses.is_empty()));
    let results = result
        .lines
        .iter()
        .any(|&i| matches!(&t.lines[i].kind, LineKind::User(u) if !u.tool_results.is_empty()));
    calls && results
}

/// [`first_prompt`] of a history, from its first message's lines.
fn first_prompt_of(t: &Transcript, history: &super::thread::History) -> String {
    let Some(first) = history.messages.first() else {
        return String::new();
    };
    for &i in &first.lines {
        if let LineKind::User(u) = &t.lines[i].kind {
            let value: Value = serde_json::from_str(&u.content).unwrap_or(Value::Null);
            let texts: Vec<&str> = match &value {
                Value::String(text) => vec![text],
                Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
                _ => Vec::new(),
            };
            if let Some(text) = texts
                .into_iter()
                .find(|t| !t.starts_with("<system-reminder>"))
            {
                return text.trim().to_string();
            }
        }
    }
    String::new()
}

/// The first text of the first message that is not injected context, trimmed.
fn first_prompt(body: &Value) -> String {
    let first = &body["messages"][0]["content"];
    let texts: Vec<&str> = match first {
        Value::String(text) => vec![text],
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => Vec::new(),
    };
    texts
        .into_iter()
        .find(|t| !t.starts_with("<system-reminder>"))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// A read within this many tokens of the prediction is the prediction (the provider counts in
/// its own tokenizer; the prediction is its own earlier count).
const SLACK: u64 = 8;

fn judge(
    blocks: &[Block],
    model: &str,
    usage: Option<Usage>,
    now: i64,
    lookup: Lookup,
    previous: Option<&(Vec<Block>, String, Option<Usage>, i64)>,
    compacted: bool,
) -> (Option<u64>, Verdict) {
    if usage.is_some_and(|u| !u.has_cache_fields) {
        return (None, Verdict::NoCacheFields);
    }
    let Some((prev_blocks, prev_model, prev_usage, prev_time)) = previous else {
        return (Some(0), Verdict::ColdStart);
    };
    let read = usage.map_or(0, |u| u.cache_read_input_tokens);
    let shared = blocks
        .iter()
        .zip(prev_blocks)
        .take_while(|(a, b)| a.hash == b.hash)
        .count();
    let prev_last_bp = prev_blocks.iter().rposition(|b| b.breakpoint.is_some());
    let full = prev_usage.map(|u| u.cache_read_input_tokens + u.cache_creation_input_tokens);
    let whole_prefix = prev_last_bp.is_some_and(|p| lookup.read_block.is_some_and(|r| r >= p));
    let predicted = match lookup.read_block {
        None => Some(0),
        Some(_) if whole_prefix => full,
        Some(_) => None,
    };
    if model != prev_model && lookup.read_block.is_none() {
        return (
            Some(0),
            Verdict::ModelSwitch {
                from: prev_model.clone(),
                to: model.to_string(),
            },
        );
    }
    if lookup.expired {
        let ttl = prev_blocks
            .iter()
            .filter_map(|b| b.breakpoint)
            .max()
            .unwrap_or(300);
        return (
            Some(0),
            Verdict::TtlExpired {
                gap_seconds: now - prev_time,
                ttl_seconds: ttl,
            },
        );
    }
    if compacted {
        return (predicted, Verdict::Compaction);
    }
    if !whole_prefix {
        if let Some(p) = prev_last_bp
            && shared > p
            && blocks
                .iter()
                .skip(p + 1)
                .position(|b| b.breakpoint.is_some())
                .is_some_and(|d| d + 1 > LOOKBACK_BLOCKS)
        {
            return (predicted, Verdict::LookbackExceeded);
        }
        let part = blocks
            .get(shared)
            .map_or_else(|| "the end of the prompt".to_string(), |b| b.part.name());
        return (predicted, Verdict::PrefixBroken { part });
    }
    match predicted {
        Some(p) if read + SLACK < p => {
            let upto = lookup.read_block.unwrap_or(0);
            let mut parts: Vec<String> = Vec::new();
            for b in blocks.iter().take(upto + 1).filter(|b| !b.known) {
                // One name per part: `messages[0].content` for its blocks.
                let part = b
                    .part
                    .name()
                    .split_once("].content[")
                    .map_or(b.part.name(), |(m, _)| format!("{m}].content"));
                if !parts.contains(&part) {
                    parts.push(part);
                }
            }
            if parts.is_empty() {
                (predicted, Verdict::ProviderMiss)
            } else {
                (predicted, Verdict::UnrecordedChange { parts })
            }
        }
        _ => (predicted, Verdict::Hit),
    }
}

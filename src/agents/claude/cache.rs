//! The verdict of each request of a Claude Code session: what the provider reported against
//! what the prefix predicts (Anthropic's cache, `providers::anthropic`), the recorded cause named
//! before the provider is blamed; and each request's blocks as Claude Code's build rules give
//! them, from each line's blocks hashed once.

use serde_json::Value;

use super::load::{LineKind, Transcript, Usage};
use super::plan::{Planned, Planner, Prompt, View};
use super::thread::{Conversation, RequestKind, Role, ThreadKey};
use super::wire::{Build, Compiled};
use crate::core::hash::{Hash, hash};
use crate::providers::anthropic::{
    Block, LOOKBACK_BLOCKS, Lookup, Part, Simulation, block_hash, canonical_without_cache_control,
    prompt_blocks, unknown,
};

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
    /// The response records no usage (or none that could be read): nothing to judge.
    NoUsage,
    /// 1.0.x under `claude -p` sends the previous request's last tool turn twice, and this
    /// request once: the prefix breaks at the first copy (recorded in 1.0.30's cases). The
    /// transcript does not say the session was run that way; the read says it.
    RepeatedToolTurn,
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
            Verdict::NoUsage => "no_usage",
            Verdict::RepeatedToolTurn => "repeated_tool_turn",
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
            Verdict::NoUsage => "the response records no usage".into(),
            Verdict::RepeatedToolTurn => "read less than the previous request wrote: 1.0.x run as `claude -p` sends the last tool turn twice, then once, which breaks the prefix at the first copy".into(),
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
    /// A request of another session whose lines this file copied (a fork), or an earlier one of
    /// this file copied again (2.0.31's rewrite): shown, not judged.
    pub copied: bool,
}

/// The steps of one thread of `c`: each request with its usage, prediction and verdict. The
/// prompts come from the planner ([`super::plan`]), each grown from the one before, and the
/// cache's entries are named by chains: a session costs its lines, not its requests times its
/// history.
pub fn steps(t: &Transcript, c: &Conversation, thread: &ThreadKey) -> Vec<Step> {
    let mut sim = Simulation::default();
    let mut planner = Planner::new(t, c);
    let copies = super::usage::copied_responses(t, c);
    let mut out: Vec<Step> = Vec::new();
    // The previous sampling request: its prompt, model, usage and time.
    let mut previous: Option<Previous> = None;
    let mut compacted = false;
    let (mut turn, mut step) = (0, 0);
    let mut last_time = 0;
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
        let answers_prompt = request.kind == RequestKind::Sampling && c.answers_prompt(t, request);
        if out.is_empty() || answers_prompt {
            turn += 1;
            step = 0;
        }
        step += 1;
        let timestamp = t.lines[request.at].timestamp.as_deref().map(str::to_string);
        let version = request_version(t, c, request);
        let build = version.as_deref().map_or(Build::V1_0_30, Build::of);
        let copy = request.response.is_some_and(|r| copies[r]);
        let prompt = match (copy, request.kind) {
            (false, RequestKind::Sampling) => match planner.plan(index) {
                Planned::Prompt(prompt) => Some(prompt),
                _ => None,
            },
            _ => None,
        };
        let Some(prompt) = prompt else {
            let copied = request.kind == RequestKind::Sampling;
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
        };
        let response = &c.responses[request.response.expect("a sampling request has a response")];
        let model = response.model.as_deref().unwrap_or("").to_string();
        // A line without a time is taken at the previous one's (never at the epoch).
        let now = timestamp
            .as_deref()
            .and_then(crate::core::lines::unix_seconds)
            .unwrap_or(last_time);
        last_time = now;
        let view = View {
            prompt: &prompt,
            blocks: &planner.blocks,
        };
        let lookup = sim.request_view(&model, &view, now);
        let usage = response.usage;
        let history_before =
            request.leaf.is_some() && first_response.is_some_and(|f| f < request.at);
        let (predicted_read, verdict) = if previous.is_none() && history_before {
            (None, Verdict::EarlierFile)
        } else {
            let before = previous.as_ref().map(|p| {
                (
                    p,
                    View {
                        prompt: &p.prompt,
                        blocks: &planner.blocks,
                    },
                )
            });
            judge(view, &model, usage, now, lookup, before, compacted)
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
            breakpoints: prompt.breakpoints.len(),
            verdict: Some(verdict),
            copied: false,
        });
        previous = Some(Previous {
            prompt,
            model,
            usage,
            time: now,
            // 1.0.x under `claude -p` may have sent this request's last tool turn twice.
            repeat_possible: build == Build::V1_0_30 && !answers_prompt,
        });
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

/// Each line's content blocks, hashed once (with the role of the line), and 2.1.100's
/// newline-ended block before a line, once per line.
#[derive(Default)]
pub struct LineBlocks {
    lines: foldhash::HashMap<usize, Vec<Hash>>,
    newline: foldhash::HashMap<(usize, usize), Option<Hash>>,
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
                && let Some(fixed) = *memo
                    .newline
                    .entry((m.lines[n - 1], i))
                    .or_insert_with(|| newline_fixed(t, &m.lines[..n], i))
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
pub fn ends_tool_turn(t: &Transcript, history: &super::thread::History) -> bool {
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

/// A read short of the prediction: a part the build does not record before where the read
/// should have gone changed, or, every part recorded, the provider missed.
fn unexplained(prompt: View<'_>, lookup: Lookup) -> Verdict {
    let parts = prompt.unknown_parts(lookup.read_block.unwrap_or(0));
    if parts.is_empty() {
        Verdict::ProviderMiss
    } else {
        Verdict::UnrecordedChange { parts }
    }
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

/// The request before, as the next one is judged against it.
struct Previous {
    prompt: Prompt,
    model: String,
    usage: Option<Usage>,
    time: i64,
    repeat_possible: bool,
}

/// A read within this many tokens of the prediction is the prediction (the provider counts in
/// its own tokenizer; the prediction is its own earlier count).
const SLACK: u64 = 8;

fn judge(
    prompt: View<'_>,
    model: &str,
    usage: Option<Usage>,
    now: i64,
    lookup: Lookup,
    previous: Option<(&Previous, View<'_>)>,
    compacted: bool,
) -> (Option<u64>, Verdict) {
    let Some(this) = usage else {
        return (None, Verdict::NoUsage);
    };
    if !this.has_cache_fields {
        return (None, Verdict::NoCacheFields);
    }
    let Some((
        Previous {
            model: prev_model,
            usage: prev_usage,
            time: prev_time,
            repeat_possible,
            ..
        },
        prev_prompt,
    )) = previous
    else {
        return (Some(0), Verdict::ColdStart);
    };
    let unexplained = |lookup: Lookup| {
        if *repeat_possible {
            Verdict::RepeatedToolTurn
        } else {
            unexplained(prompt, lookup)
        }
    };
    let read = this.cache_read_input_tokens;
    let shared = prompt.shared_with(&prev_prompt);
    let prev_breakpoints = &prev_prompt.prompt.breakpoints;
    let prev_last_bp = prev_breakpoints.last().map(|&(p, _)| p);
    let full = prev_usage.map(|u| {
        u.cache_read_input_tokens
            .saturating_add(u.cache_creation_input_tokens)
    });
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
        let ttl = prev_breakpoints
            .iter()
            .map(|&(_, ttl)| ttl)
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
            && prompt
                .prompt
                .breakpoints
                .iter()
                .find(|&&(b, _)| b > p)
                .is_some_and(|&(b, _)| b - p > LOOKBACK_BLOCKS)
        {
            return (predicted, Verdict::LookbackExceeded);
        }
        let part = if shared < prompt.len() {
            prompt.part(shared).name()
        } else {
            "the end of the prompt".to_string()
        };
        return (predicted, Verdict::PrefixBroken { part });
    }
    match predicted {
        // Less than predicted; with no tokens to predict (the previous request had no usage),
        // nothing at all where the whole prefix should be read.
        Some(p) if read.saturating_add(SLACK) < p || (read == 0 && p > 0) => {
            (predicted, unexplained(lookup))
        }
        None if read == 0 => (predicted, unexplained(lookup)),
        _ => (predicted, Verdict::Hit),
    }
}

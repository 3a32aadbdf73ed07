//! Each request's blocks as the Anthropic cache sees them, from a compiled body
//! ([`compiled_blocks`]) and by the build's rules from each line's blocks hashed once
//! ([`rule_blocks`]): the oracle the planner (`plan.rs`) is held to, request by request.

use serde_json::Value;

use super::load::{LineKind, Transcript};
use super::thread::{Conversation, Role};
use super::wire::{Build, Compiled};
use crate::core::hash::{Hash, hash};
use crate::providers::anthropic::{
    Block, Part, block_hash, canonical_without_cache_control, prompt_blocks, unknown,
};

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

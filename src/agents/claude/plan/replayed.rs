//! The parts of a replayed body the planner builds as `replay` does: the head (the shape's tools
//! and system blocks with the record's breakpoints, the params block) and a history message as
//! `replay` names it.

use std::sync::Arc;

use serde_json::Value;

use super::super::content::Content;
use super::super::load::{LineKind, Transcript};
use super::super::thread::Role;
use crate::providers::anthropic::{Block, Part, prompt_blocks};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ContentKind {
    /// A string, sent as one text block.
    Text,
    /// An array of this many blocks.
    Blocks(usize),
    Other,
}

/// An `api-request-blob` line's message.
#[derive(Debug)]
pub(super) struct Blob {
    pub content: Content,
    pub kind: ContentKind,
    /// Not sent as written: a lone text block of another shape, a `cache_control` of its own.
    pub odd: bool,
}

impl Blob {
    pub fn read(message: &str) -> Blob {
        let value: Value = serde_json::from_str(message).unwrap_or(Value::Null);
        let role = value["role"].as_str().unwrap_or("");
        let content = Content::of(role, &value["content"]);
        let kind = match &value["content"] {
            Value::String(_) => ContentKind::Text,
            Value::Array(items) => ContentKind::Blocks(items.len()),
            _ => ContentKind::Other,
        };
        let odd = content.cache_control || (role != "assistant" && content.lone_text_not_plain);
        Blob { content, kind, odd }
    }
}

/// A breakpoint's TTL in seconds.
pub(super) fn ttl(value: &Value) -> i64 {
    ttl_named(value.get("ttl").and_then(Value::as_str))
}

/// The TTL of a `value` whose `ttl` is this string.
pub(super) fn ttl_named(ttl: Option<&str>) -> i64 {
    match ttl {
        Some("1h") => 3600,
        _ => 300,
    }
}

/// The head of a replayed body, as `replay` builds it and `prompt_blocks` reads it; `None`
/// where a breakpoint's path is not in the body.
pub(super) fn head_blocks(
    shape: &Value,
    entries: &[&Value],
    params: &Value,
) -> Option<Arc<[Block]>> {
    let mut system = shape
        .get("system")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    let mut tools = shape.get("tools").cloned();
    for entry in entries {
        let path = entry["path"].as_array().cloned().unwrap_or_default();
        let root = match path.first().and_then(Value::as_str) {
            Some("system") => &mut system,
            _ => tools.get_or_insert(Value::Array(Vec::new())),
        };
        let block = path[1..]
            .iter()
            .try_fold(root, |v, step| match step {
                Value::Number(n) => n.as_u64().and_then(|i| v.get_mut(i as usize)),
                Value::String(k) => {
                    if k == "content" && v.get("content").is_some_and(Value::is_string) {
                        let text = v["content"].take();
                        v["content"] = serde_json::json!([{"type": "text", "text": text}]);
                    }
                    v.get_mut(k.as_str())
                }
                _ => None,
            })
            .and_then(Value::as_object_mut)?;
        block.insert("cache_control".into(), entry["value"].clone());
    }
    let mut system_blocks = vec![Value::Null];
    system_blocks.extend(system.as_array().cloned().unwrap_or_default());
    let mut body = serde_json::Map::new();
    body.insert("messages".into(), Value::Array(Vec::new()));
    body.insert("system".into(), Value::Array(system_blocks));
    if let Some(tools) = tools {
        body.insert("tools".into(), tools);
    }
    // `params` holds the two keys, `null` where the record has none: as `prompt_blocks` reads
    // an absent one.
    for key in ["thinking", "tool_choice"] {
        body.insert(key.into(), params[key].clone());
    }
    let blocks: Vec<Block> = prompt_blocks(&Value::Object(body))
        .into_iter()
        .filter(|b| !matches!(b.part, Part::Message(..)))
        .collect();
    Some(blocks.into())
}

/// A message of the history as `replay` names it: the content blocks of its lines, in order.
pub(super) fn sent_message(t: &Transcript, role: Role, lines: &[usize]) -> Value {
    let mut content = Vec::new();
    for &i in lines {
        let text = match &t.lines[i].kind {
            LineKind::User(u) => &u.content,
            LineKind::Assistant(a) => &a.content,
            _ => continue,
        };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(blocks)) => content.extend(blocks),
            Ok(Value::String(s)) => content.push(serde_json::json!({"type": "text", "text": s})),
            _ => {}
        }
    }
    serde_json::json!({"role": role_name(role), "content": content})
}

/// A role as a message names it.
pub(super) fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

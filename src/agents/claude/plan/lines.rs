//! What the planner reads of a line's content: its blocks (hashed by the loader), the first
//! prompt's text, a text block ended with 2.1.100's newline.

use serde_json::Value;

use super::super::content::Content;
use super::super::load::{LineKind, Transcript};
use crate::core::hash::Hash;
use crate::providers::anthropic::block_hash;

/// Line `i`'s content blocks (none for a line that is not a user or assistant message).
pub(crate) fn content(t: &Transcript, i: usize) -> &Content {
    static NONE: std::sync::LazyLock<Content> = std::sync::LazyLock::new(|| Content {
        all_objects: true,
        ..Content::default()
    });
    match &t.lines[i].kind {
        LineKind::User(u) => &u.blocks,
        LineKind::Assistant(a) => &a.blocks,
        _ => &NONE,
    }
}

/// The texts a first message's lines hold, as `wire`'s `first_prompt` reads a body's first
/// message: the first that is not injected context (`<system-reminder>`), trimmed.
pub(crate) fn first_prompt(t: &Transcript, lines: &[usize]) -> String {
    for &i in lines {
        let text = match &t.lines[i].kind {
            LineKind::User(u) => &u.content,
            LineKind::Assistant(a) => &a.content,
            _ => continue,
        };
        if let Some(found) = first_prompt_of(&serde_json::from_str(text).unwrap_or(Value::Null)) {
            return found;
        }
    }
    String::new()
}

/// [`first_prompt`] of one content value, if it holds one.
pub(crate) fn first_prompt_of(content: &Value) -> Option<String> {
    let texts: Vec<&str> = match content {
        Value::String(text) => vec![text],
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => Vec::new(),
    };
    texts
        .into_iter()
        .find(|t| !t.starts_with("<system-reminder>"))
        .map(|t| t.trim().to_string())
}

/// The hash of block `block` of line `line` with `newlines` newlines added to its text (2.1.100
/// merging lines of one message).
pub(crate) fn with_newlines(t: &Transcript, line: usize, block: usize, newlines: usize) -> Hash {
    let (role, text): (&str, &str) = match &t.lines[line].kind {
        LineKind::User(u) => ("user", &u.content),
        LineKind::Assistant(a) => ("assistant", &a.content),
        _ => ("user", ""),
    };
    let mut value = match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => serde_json::json!({"type": "text", "text": s}),
        Ok(Value::Array(mut blocks)) if block < blocks.len() => blocks.swap_remove(block),
        _ => Value::Null,
    };
    if let Some(Value::String(text)) = value.get_mut("text") {
        for _ in 0..newlines {
            text.push('\n');
        }
    }
    block_hash(role, &value)
}

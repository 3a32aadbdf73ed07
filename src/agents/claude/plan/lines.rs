//! What the planner reads of each line's content, once per line: each block's hash (as
//! `providers::anthropic::prompt_blocks` hashes a body's block) and the few facts the build's
//! rules look at (a leading text block, a trailing one, a lone text block).

use serde_json::Value;

use super::super::load::{LineKind, Transcript};
use crate::core::hash::Hash;
use crate::providers::anthropic::block_hash;

/// One line's (or one replay blob's) content blocks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Content {
    pub hashes: Box<[Hash]>,
    /// Its first block is a text block (`"type": "text"`): 2.1.100 ends the text before it with
    /// a newline.
    pub first_is_text: bool,
    /// Its last block is a text block whose `text` is a string (the one 2.1.100 may end with a
    /// newline).
    pub last_is_text: bool,
    /// Its last block is a JSON object (a breakpoint can be put on it).
    pub last_is_object: bool,
    /// Every block is a JSON object.
    pub all_objects: bool,
    /// A block carries a `cache_control` of its own (no build writes one into a transcript).
    pub cache_control: bool,
    /// One block, a text block that would not read back as written when its message is sent as
    /// a string (other keys, another order, a text that is not a string).
    pub lone_text_not_plain: bool,
}

impl Content {
    /// The blocks of a `content` value as a body sends them, hashed as blocks of a `role`
    /// message.
    pub fn of(role: &str, content: &Value) -> Content {
        let text_block;
        let blocks: &[Value] = match content {
            Value::Array(blocks) => blocks,
            Value::String(s) => {
                text_block = [serde_json::json!({"type": "text", "text": s})];
                &text_block
            }
            _ => &[],
        };
        let is_text = |b: &Value| b["type"] == "text";
        Content {
            hashes: blocks.iter().map(|b| block_hash(role, b)).collect(),
            first_is_text: blocks.first().is_some_and(is_text),
            last_is_text: blocks
                .last()
                .is_some_and(|b| is_text(b) && b.get("text").is_some_and(Value::is_string)),
            last_is_object: blocks.last().is_some_and(Value::is_object),
            all_objects: blocks.iter().all(Value::is_object),
            cache_control: blocks.iter().any(|b| b.get("cache_control").is_some()),
            lone_text_not_plain: blocks.len() == 1
                && is_text(&blocks[0])
                && !plain_text(&blocks[0]),
        }
    }
}

/// `{"type": "text", "text": "…"}` exactly, keys in that order: what a lone text block becomes
/// when a message is sent as a string and read back as a block.
fn plain_text(block: &Value) -> bool {
    let Value::Object(map) = block else {
        return false;
    };
    let mut keys = map.iter();
    matches!(keys.next(), Some((k, _)) if k == "type")
        && matches!(keys.next(), Some((k, Value::String(_))) if k == "text")
        && keys.next().is_none()
}

/// Each line's [`Content`], read when first asked for.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    memo: Vec<Option<Content>>,
}

impl Lines {
    pub fn new(t: &Transcript) -> Lines {
        Lines {
            memo: vec![None; t.lines.len()],
        }
    }

    /// Line `i`'s blocks (none for a line that is not a user or assistant message, or whose
    /// content is neither a string nor an array).
    pub fn of(&mut self, t: &Transcript, i: usize) -> &Content {
        self.memo[i].get_or_insert_with(|| {
            let (role, text) = match &t.lines[i].kind {
                LineKind::User(u) => ("user", &u.content),
                LineKind::Assistant(a) => ("assistant", &a.content),
                _ => return Content::default(),
            };
            match serde_json::from_str::<Value>(text) {
                Ok(value) => Content::of(role, &value),
                Err(_) => Content::default(),
            }
        })
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

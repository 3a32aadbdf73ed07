//! A message's `content` as the prompt holds it, read once per line by the loader: each block's
//! hash (`providers::anthropic::block_hash`), the calls and results it pairs, and the few facts
//! the builds' rules look at.
//!
//! Claude Code writes JSON as `JSON.stringify` does: compact, keys in insertion order, only `"`,
//! `\` and control characters escaped. That text is already what serde_json writes back from a
//! parsed value, so a block's hash is taken over the bytes as written, in one scan, without
//! building a value. Whatever is not in that form (whitespace, other escapes, a float, a
//! repeated key, a `cache_control`, a block that is not an object) is read through
//! `serde_json::Value` instead, exactly as before; a test holds the two to each other.

use serde_json::Value;

use crate::core::hash::Hash;
use crate::providers::anthropic::block_hash;

mod scan;
mod sha256;
pub use scan::value_end;
use scan::{fast, fast_at};
pub use sha256::message_sha256;

/// A line's (or a replay blob's) content blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Content {
    /// Each block's `block_hash(role, block)`.
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
    /// The billing code of the first text of its blocks that is not injected context
    /// (`<system-reminder>`), trimmed: what a body's first prompt is, when this line holds it.
    pub first_prompt: Option<Hash>,
    /// A user line whose last block is a text block: that block's hash with a newline added to
    /// its text (2.1.100 merging two lines of one message).
    pub newline_last: Option<Hash>,
}

/// The billing code of a first prompt's text (`claude-billing`).
pub fn billing(text: &str) -> Hash {
    crate::core::hash::hash("claude-billing", text.trim().as_bytes())
}

/// A text that is injected context, not a prompt.
fn injected(text: &str) -> bool {
    text.starts_with("<system-reminder>")
}

/// What pairs calls with results and marks thinking: the `id` of each `tool_use` block, the
/// `tool_use_id` of each `tool_result` block, a `thinking` or `redacted_thinking` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Heads {
    /// Shared with the responses that gather them.
    pub tool_uses: Vec<std::sync::Arc<str>>,
    pub tool_results: Vec<Box<str>>,
    pub thinking: bool,
    /// Blocks that are not block objects promptc reads (not an object, or a `type`, `id` or
    /// `tool_use_id` that is not a string): kept as written, pairing nothing.
    pub unread: Vec<usize>,
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
        let first_prompt = blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .find(|t| !injected(t))
            .map(billing);
        let newline_last = blocks
            .last()
            .filter(|b| role == "user" && is_text(b))
            .and_then(|b| {
                let mut b = b.clone();
                let Some(Value::String(text)) = b.get_mut("text") else {
                    return None;
                };
                text.push('\n');
                Some(block_hash(role, &b))
            });
        Content {
            first_prompt,
            newline_last,
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

/// The blocks and heads of `content` (a JSON string or array as written) of a `role` line.
pub fn read(role: &str, content: &str) -> (Content, Heads) {
    // A role serde would escape (only a replay blob's can be any string) is hashed its way.
    let plain_role = !role.bytes().any(|c| c == b'"' || c == b'\\' || c < 0x20);
    if plain_role && let Some(fast) = fast(role, content.as_bytes()) {
        return fast;
    }
    let value: Value = serde_json::from_str(content).unwrap_or(Value::Null);
    (Content::of(role, &value), heads(content))
}

/// [`read`] of the content at the start of `text`, not yet checked as JSON (the loader reads a
/// line's content apart from the rest of it), with where it ends: `None` unless it is a string
/// or an array of block objects in serde's form, which the one scan reads and so checks.
/// `role` is `user` or `assistant`. With `sha256`, also [`message_sha256`] of the content
/// alone, taken in the same scan.
pub fn read_unchecked(role: &str, text: &str, sha256: bool) -> Option<ContentScanned> {
    let (content, heads, end, message_sha256) = fast_at(role, text.as_bytes(), sha256)?;
    // Text in serde's form has no byte below a space: none outside strings (no whitespace),
    // none inside them (JSON escapes control characters). The scan does not look for them.
    let no_control = text.as_bytes()[..end]
        .chunks(32)
        .all(|chunk| chunk.iter().fold(b' ', |low, &c| low.min(c)) == b' ');
    no_control.then_some(ContentScanned {
        content,
        heads,
        end,
        message_sha256,
    })
}

/// What [`read_unchecked`] read.
pub struct ContentScanned {
    pub content: Content,
    pub heads: Heads,
    /// Where the content ends.
    pub end: usize,
    /// [`message_sha256`] of the content alone, when asked for (`Some(None)`: asked for, and
    /// that is `None`).
    pub message_sha256: Option<Option<super::record::Sha256Name>>,
}

/// The heads as serde reads them, block by block: a block that is not an object whose `type`,
/// `id` and `tool_use_id` are strings is named in `unread` and the others are read.
fn heads(content: &str) -> Heads {
    #[derive(serde::Deserialize)]
    struct BlockHead<'a> {
        #[serde(borrow, rename = "type")]
        type_: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        id: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        tool_use_id: Option<std::borrow::Cow<'a, str>>,
    }
    let mut out = Heads::default();
    // A string content has no blocks.
    let Ok(raw) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(content) else {
        return out;
    };
    let mut blocks = Vec::new();
    for (k, block) in raw.iter().enumerate() {
        let head = block
            .get()
            .starts_with('{')
            .then(|| serde_json::from_str::<BlockHead<'_>>(block.get()).ok())
            .flatten();
        match head {
            Some(head) => blocks.push(head),
            None => out.unread.push(k),
        }
    }
    for b in blocks {
        match b.type_.as_deref() {
            Some("tool_use") => out.tool_uses.extend(b.id.map(std::sync::Arc::from)),
            Some("tool_result") => out.tool_results.extend(b.tool_use_id.map(|s| s.into())),
            Some("thinking" | "redacted_thinking") => out.thinking = true,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;

//! Token estimates with the o200k tokenizer, offline: its tables are made at build time from
//! `bpe-openai`'s vocabulary (`build.rs`, `tokens/o200k.rs`). Estimates, not
//! the provider's count: the server wraps items in a template promptc does not know.

use std::cell::RefCell;

use foldhash::{HashMap, HashMapExt};
use serde_json::Value;

use crate::model::{Item, ItemKind};
use crate::parse::{for_each_element, for_each_member, unescaped_len};

use json_text::count_string;

/// Tokens the server's template adds per input item (role and separators), an estimate.
pub const ITEM_OVERHEAD: usize = 4;

/// Texts up to this many bytes are counted exactly.
const EXACT_LIMIT: usize = 8 * 1024;

/// o200k token count of a text. Texts longer than 8 KB (large tool outputs) are estimated
/// from their first and last 4 KB, scaled by length: counting is the slowest part of
/// `steps`, and the estimate is an estimate anyway.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    if text.len() <= EXACT_LIMIT {
        return count_exact(text);
    }
    count_samples(text.len(), text, text)
}

/// [`count`] of a text of `len` bytes, more than [`EXACT_LIMIT`], from `start`, a prefix of
/// it longer than half the limit, and `end`, a suffix of at least half of it: what the
/// estimate reads of a text is all that need be at hand.
fn count_samples(len: usize, start: &str, end: &str) -> usize {
    let half = EXACT_LIMIT / 2;
    let mut head_end = half.min(start.len());
    while !start.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = end.len().saturating_sub(half);
    while !end.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let sampled = head_end + (end.len() - tail_start);
    let tokens = count_exact(&start[..head_end]) + count_exact(&end[tail_start..]);
    // Scale by bytes: tokens per byte of the samples times the whole length.
    (tokens as u128 * len as u128 / sampled.max(1) as u128) as usize
}

/// Pieces (the pre-tokenizer's words) up to this long are remembered per thread: with their
/// length in the last byte they fit a `u128`, which hashes and compares in a few instructions.
const CACHED_PIECE_BYTES: usize = 15;
/// At most this many pieces are remembered per thread (a few MB).
const CACHED_PIECES: usize = 1 << 16;

thread_local! {
    /// Token counts of short pieces already seen, by [`piece_key`]. Logs and code repeat the
    /// same words, and encoding a piece allocates; a lookup does not.
    static PIECE_TOKENS: RefCell<HashMap<u128, u8>> = RefCell::new(HashMap::new());
}

/// Call `piece` with each piece of `text` in order, split as `bpe_openai`'s `Tokenizer::split`
/// splits it.
fn for_each_piece<'t>(text: &'t str, mut piece: impl FnMut(&'t str)) {
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        let end = start + ascii::piece_end(rest).unwrap_or_else(|| pieces::piece_end(rest));
        piece(&text[start..end]);
        start = end;
    }
}

/// Exactly `o200k_base().count(text)`: the same pre-tokenizer split and per-piece encoding
/// (o200k does no normalization), with short pieces' counts remembered.
fn count_exact(text: &str) -> usize {
    let mut total = 0;
    PIECE_TOKENS.with_borrow_mut(|remembered| {
        for_each_piece(text, |piece| {
            let piece = piece.as_bytes();
            total += if let Some(key) = piece_key(piece) {
                if let Some(&tokens) = remembered.get(&key) {
                    usize::from(tokens)
                } else {
                    let tokens = o200k::count(piece);
                    if remembered.len() < CACHED_PIECES {
                        // At most one token a byte.
                        remembered.insert(key, tokens as u8);
                    }
                    tokens
                }
            } else {
                o200k::count(piece)
            };
        });
    });
    total
}

/// A piece of up to [`CACHED_PIECE_BYTES`] as one number: its bytes, then zeros, then its
/// length in the last byte, so that no two pieces share a key.
fn piece_key(piece: &[u8]) -> Option<u128> {
    if piece.len() > CACHED_PIECE_BYTES {
        return None;
    }
    let mut bytes = [0; 16];
    bytes[..piece.len()].copy_from_slice(piece);
    bytes[15] = piece.len() as u8;
    Some(u128::from_le_bytes(bytes))
}

/// Estimated input tokens of an item: its model-visible text plus a per-item overhead.
/// Encrypted reasoning is decrypted by the provider; its size is estimated from the payload
/// length (base64, about 3/4 bytes per character, about 4 bytes per token, less framing).
pub fn item_tokens(item: &Item, json: &str) -> usize {
    walked_item_tokens(item, json).unwrap_or_else(|| parsed_item_tokens(item, json))
}

/// A rough fixed cost per image.
fn image_tokens() -> usize {
    count(&"x ".repeat(256))
}

/// The tokens of encrypted reasoning of `len` bytes.
fn encrypted_tokens(len: usize) -> usize {
    len * 3 / 4 / 4 / 2
}

/// serde_json reads an object whose first key is this as the JSON text of its value (the
/// `raw_value` feature's private wrapper), so a `Value` may hold a string where the walk sees
/// an object.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// The raw JSON of the last member of each of `keys` in the object `json`, as serde_json
/// keeps the last of a repeated key. `None` when some key has escapes (unescaped it might be
/// one of `keys`) or is serde_json's raw-value key, or `json` is not an object.
fn members<'a, const N: usize>(json: &'a str, keys: [&str; N]) -> Option<[Option<&'a str>; N]> {
    let mut found = [None; N];
    for_each_member(json, |key, value| {
        if key.contains('\\') || key == RAW_VALUE_KEY {
            return Err(());
        }
        if let Some(k) = keys.iter().position(|wanted| *wanted == key) {
            found[k] = Some(value);
        }
        Ok(())
    })?
    .ok()?;
    Some(found)
}

/// What a counted field holds, from its raw JSON.
enum Field<'a> {
    /// A JSON string, quotes included.
    Text(&'a str),
    /// An object: counted or not as its `Value` says (see [`RAW_VALUE_KEY`]).
    Unsure,
    /// Absent, or any other value: counted as no text.
    Nothing,
}

fn field(raw: Option<&str>) -> Field<'_> {
    match raw {
        Some(raw) if raw.starts_with('"') => Field::Text(raw),
        Some(raw) if raw.starts_with('{') => Field::Unsure,
        _ => Field::Nothing,
    }
}

/// The tokens of a counted field's text, `None` when unsure.
fn field_tokens(raw: Option<&str>) -> Option<usize> {
    match field(raw) {
        Field::Text(text) => Some(count_string(text)),
        Field::Unsure => None,
        Field::Nothing => Some(0),
    }
}

/// The sum of `tokens` over the objects among the elements of `parts`, a JSON array (its
/// other elements count nothing, as in the `Value` reading); `None` when one is unsure.
fn parts_tokens(parts: &str, mut tokens: impl FnMut(&str) -> Option<usize>) -> Option<usize> {
    let mut total = Some(0);
    for_each_element(parts, |part| {
        if let (true, Some(sum)) = (part.starts_with('{'), total) {
            total = tokens(part).map(|more| sum + more);
        }
    })?;
    total
}

/// [`item_tokens`] from the raw JSON of the fields it counts, found by walking the item's
/// members (the item is checked JSON): no `Value` is built, and a long text is unescaped only
/// where [`count`] samples it. `None` where the walk is unsure (a key with escapes, an object
/// where a text is counted, an output that is not a string); the `Value` then decides.
///
/// One difference on purpose: an item that serde_json cannot make a `Value` of (a number out
/// of `f64`'s range, nesting deeper than 128), which the loader accepts, counts its texts like
/// any other item, not its whole JSON.
fn walked_item_tokens(item: &Item, json: &str) -> Option<usize> {
    let mut total = ITEM_OVERHEAD;
    match item.kind {
        ItemKind::Message => {
            let [content] = members(json, ["content"])?;
            match content {
                Some(parts) if parts.starts_with('[') => {
                    total += parts_tokens(parts, |part| {
                        let [text, image] = members(part, ["text", "image_url"])?;
                        match field(text) {
                            Field::Text(text) => Some(count_string(text)),
                            Field::Unsure => None,
                            Field::Nothing => Some(image.map_or(0, |_| image_tokens())),
                        }
                    })?;
                }
                content => total += field_tokens(content)?,
            }
        }
        ItemKind::Reasoning => {
            let [summary, encrypted] = members(json, ["summary", "encrypted_content"])?;
            match summary {
                Some(parts) if parts.starts_with('[') => {
                    total += parts_tokens(parts, |part| {
                        let [text] = members(part, ["text"])?;
                        field_tokens(text)
                    })?;
                }
                Some(summary) if summary.starts_with('{') => return None,
                _ => {}
            }
            match field(encrypted) {
                Field::Text(encrypted) => {
                    total += encrypted_tokens(unescaped_len(json_text::content(encrypted)));
                }
                Field::Unsure => return None,
                Field::Nothing => {}
            }
        }
        ItemKind::FunctionCall | ItemKind::CustomToolCall => {
            let key = if item.kind == ItemKind::FunctionCall {
                "arguments"
            } else {
                "input"
            };
            let [text] = members(json, [key])?;
            total += count(item.name.as_deref().unwrap_or(""));
            total += field_tokens(text)?;
        }
        ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput => {
            match members(json, ["output"])? {
                [Some(output)] if output.starts_with('"') => total += count_string(output),
                // Counted as serde_json writes it.
                [Some(_)] => return None,
                [None] => {}
            }
        }
        _ => total += count(json),
    }
    Some(total)
}

/// [`item_tokens`] from the item's `Value`.
fn parsed_item_tokens(item: &Item, json: &str) -> usize {
    let Ok(value) = serde_json::from_str::<Value>(json) else {
        return count(json);
    };
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    let part_texts = |key: &str| {
        let parts = value.get(key).and_then(Value::as_array);
        parts.into_iter().flatten()
    };
    let name = || count(item.name.as_deref().unwrap_or(""));
    ITEM_OVERHEAD
        + match item.kind {
            ItemKind::Message => match value.get("content") {
                Some(Value::String(s)) => count(s),
                Some(Value::Array(_)) => part_texts("content")
                    .map(|part| match part.get("text").and_then(Value::as_str) {
                        Some(text) => count(text),
                        None if part.get("image_url").is_some() => image_tokens(),
                        None => 0,
                    })
                    .sum(),
                _ => 0,
            },
            ItemKind::Reasoning => {
                let summary: usize = part_texts("summary")
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .map(count)
                    .sum();
                summary + text("encrypted_content").map_or(0, |e| encrypted_tokens(e.len()))
            }
            ItemKind::FunctionCall => name() + count(text("arguments").unwrap_or("")),
            ItemKind::CustomToolCall => name() + count(text("input").unwrap_or("")),
            ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput => {
                match value.get("output") {
                    Some(Value::String(s)) => count(s),
                    Some(other) => count(&other.to_string()),
                    None => 0,
                }
            }
            _ => count(json),
        }
}

mod ascii;
mod json_text;
mod o200k;
mod pieces;

#[cfg(test)]
mod tests;

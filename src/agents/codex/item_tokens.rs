//! Token estimates of Codex's response items: which texts of an item the model reads, each
//! counted with the core's estimator.

use serde_json::Value;

use crate::agents::codex::model::{Item, ItemKind};
use crate::core::tokens::count;

/// Tokens the server's template adds per input item (role and separators), an estimate.
pub const ITEM_OVERHEAD: usize = 4;

/// Estimated input tokens of an item: its model-visible text plus a per-item overhead.
/// Encrypted reasoning is decrypted by the provider; its size is estimated from the payload
/// length (base64, about 3/4 bytes per character, about 4 bytes per token, less framing).
pub fn item_tokens(item: &Item, json: &str) -> usize {
    parsed_item_tokens(item, json)
}

/// A rough fixed cost per image.
fn image_tokens() -> usize {
    count(&"x ".repeat(256))
}

/// The tokens of encrypted reasoning of `len` bytes.
fn encrypted_tokens(len: usize) -> usize {
    len * 3 / 4 / 4 / 2
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

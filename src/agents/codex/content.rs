//! Reading inside an item's JSON: the texts of a message, whether a user message is contextual
//! (injected by the harness rather than typed by the user), and a one-line preview.

use serde_json::Value;

use crate::agents::codex::model::{Item, ItemKind};

/// Start of the text Codex puts before a local compaction summary (`summary_prefix.md`).
pub const SUMMARY_PREFIX: &str = "Another language model started to solve this problem";

/// Openings of contextual user fragments (codex-rollout.md section 5 and Codex's
/// `contextual_user_message.rs`); matched case-insensitively after leading white space.
const CONTEXTUAL_PREFIXES: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions for",
    "<turn_aborted>",
    "<user_shell_command>",
    "<skill>",
    "<subagent_notification>",
    "<subagents>",
    "<plugins>",
];

/// The `text` of every text part of a message's `content` (a string content counts as one part).
pub fn message_texts(json: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    content_texts(value.get("content"))
}

fn content_texts(content: Option<&Value>) -> Vec<String> {
    match content {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// True when a text is one of the harness's contextual fragments or a compaction summary.
pub fn is_contextual_text(text: &str) -> bool {
    let start = text.trim_start();
    let head: String = start.chars().take(40).collect::<String>().to_lowercase();
    CONTEXTUAL_PREFIXES.iter().any(|p| head.starts_with(p)) || start.starts_with(SUMMARY_PREFIX)
}

/// A user message is contextual when any of its text parts is a contextual fragment; such a
/// message never starts a turn.
pub fn is_contextual_user_message(json: &str) -> bool {
    message_texts(json).iter().any(|t| is_contextual_text(t))
}

/// A message the harness injects rather than one a person or the model wrote: a developer
/// message (permissions, instructions) or a contextual user message. `json` gives the item's
/// text, asked for only when its kind and role leave the answer open.
pub fn is_context_message<'a>(item: &Item, json: impl FnOnce() -> &'a str) -> bool {
    item.kind == ItemKind::Message
        && (item.role.as_deref() == Some("developer")
            || (item.is_user_message() && is_contextual_user_message(json())))
}

/// True for a user message typed by the user: a turn boundary. `json` as for
/// [`is_context_message`].
pub fn is_turn_boundary<'a>(item: &Item, json: impl FnOnce() -> &'a str) -> bool {
    item.is_user_message() && !is_contextual_user_message(json())
}

/// Characters of a preview; tables show less.
const PREVIEW_CHARS: usize = 300;

/// A one-line description of the item's content for tables: the start of its text, the tool
/// name and arguments, or the output. At most a few hundred characters. Not escaped: the
/// renderer escapes.
pub fn preview(item: &Item, json: &str) -> String {
    let text = full_preview(item, json);
    if text.len() <= PREVIEW_CHARS * 4 {
        return text;
    }
    text.chars().take(PREVIEW_CHARS).collect()
}

fn full_preview(item: &Item, json: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(json) else {
        return String::new();
    };
    match item.kind {
        ItemKind::Message => content_texts(value.get("content")).join(" "),
        ItemKind::Reasoning => {
            let summary = value
                .get("summary")
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            let encrypted = value
                .get("encrypted_content")
                .and_then(Value::as_str)
                .map_or(0, str::len);
            if encrypted > 0 {
                format!("{summary} [encrypted {encrypted} B]")
            } else {
                summary
            }
        }
        ItemKind::FunctionCall => format!(
            "{}({})",
            item.name.as_deref().unwrap_or("?"),
            value
                .get("arguments")
                .map(string_or_json)
                .unwrap_or_default()
        ),
        ItemKind::CustomToolCall => format!(
            "{}: {}",
            item.name.as_deref().unwrap_or("?"),
            value.get("input").map(string_or_json).unwrap_or_default()
        ),
        ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput => {
            match value.get("output") {
                Some(Value::Array(parts)) => {
                    content_texts(Some(&Value::Array(parts.clone()))).join(" ")
                }
                Some(Value::Object(o)) => o
                    .get("content")
                    .map(string_or_json)
                    .unwrap_or_else(|| Value::Object(o.clone()).to_string()),
                Some(other) => string_or_json(other),
                None => String::new(),
            }
        }
        ItemKind::LocalShellCall => value
            .get("action")
            .and_then(|a| a.get("command"))
            .map(string_or_json)
            .unwrap_or_default(),
        ItemKind::WebSearchCall => value.get("action").map(string_or_json).unwrap_or_default(),
        ItemKind::GhostSnapshot => value
            .get("ghost_commit")
            .and_then(|g| g.get("id"))
            .map(string_or_json)
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn string_or_json(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

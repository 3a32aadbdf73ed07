//! `event_msg` payloads: the lifecycle events replay reads, and token counts.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::line::{LineError, Str, name};
use crate::agents::codex::model::{Event, EventKind, TokenInfo, Usage};

/// Event types, most frequent first (the real samples' counts), then the others replay reads:
/// their names are shared, not copied.
const EVENT_TYPES: &[&str] = &[
    "token_count",
    "agent_reasoning",
    "agent_message",
    "user_message",
    "task_started",
    "task_complete",
    "turn_started",
    "turn_complete",
    "turn_aborted",
    "thread_rolled_back",
    "context_compacted",
    "thread_settings_applied",
];

/// The fields of an `event_msg` payload promptc reads; the rest is skipped.
#[derive(Deserialize)]
struct EventPayload<'a> {
    #[serde(rename = "type", borrow)]
    type_: Str<'a>,
    #[serde(borrow, default)]
    turn_id: Option<Str<'a>>,
    #[serde(default)]
    num_turns: Option<u64>,
    #[serde(borrow, default)]
    info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    thread_settings: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct TokenInfoPayload {
    total_token_usage: Usage,
    last_token_usage: Usage,
    #[serde(default)]
    model_context_window: Option<u64>,
}

/// An `event_msg` payload (an object, checked as JSON with its line).
pub(super) fn read(payload: &str) -> Result<Event, LineError> {
    let event: EventPayload<'_> = serde_json::from_str(payload)
        .map_err(|e| LineError::json("`event_msg` payload of the wrong shape: ", &e))?;
    let kind = match event.type_.0.as_ref() {
        "task_started" | "turn_started" => EventKind::TaskStarted,
        "task_complete" | "turn_complete" => EventKind::TaskComplete,
        "turn_aborted" => EventKind::TurnAborted,
        "thread_rolled_back" => EventKind::ThreadRolledBack {
            num_turns: event
                .num_turns
                .ok_or_else(|| LineError::new("`thread_rolled_back` without `num_turns`"))?,
        },
        "context_compacted" => EventKind::ContextCompacted,
        "user_message" => EventKind::UserMessage,
        // Read leniently, as before the field was needed: a settings shape Codex may change
        // leaves the summary unknown, never the line unread.
        "thread_settings_applied" => EventKind::ThreadSettingsApplied {
            reasoning_summary: event
                .thread_settings
                .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
                .and_then(|settings| Some(settings.get("reasoning_summary")?.as_str()?.into())),
        },
        "token_count" => EventKind::TokenCount(match event.info {
            Some(info) => Some(Arc::new(token_info(info.get())?)),
            None => None,
        }),
        _ => EventKind::Other,
    };
    Ok(Event {
        type_name: name(event.type_.0, EVENT_TYPES),
        kind,
        turn_id: event.turn_id.map(|id| id.0.into_owned().into_boxed_str()),
    })
}

/// `token_count.info`.
fn token_info(raw: &str) -> Result<TokenInfo, LineError> {
    let info: TokenInfoPayload = serde_json::from_str(raw)
        .map_err(|e| LineError::json("`token_count.info` of the wrong shape: ", &e))?;
    Ok(TokenInfo {
        total: info.total_token_usage,
        last: info.last_token_usage,
        context_window: info.model_context_window,
    })
}

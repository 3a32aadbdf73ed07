//! `turn_context` payloads: the settings of a turn (model, effort, cwd, policies, …).

use serde_json::{Map, Value};

use super::line::{LineError, object};
use crate::agents::codex::model::TurnContext;

/// A `turn_context` payload (an object, checked as JSON with its line). Fields of another type
/// than expected read as absent: Codex has changed several of them from strings to objects.
pub(super) fn read(payload: &str) -> Result<TurnContext, LineError> {
    Ok(from_map(&object("turn_context", payload)?))
}

fn from_map(map: &Map<String, Value>) -> TurnContext {
    let string = |key: &str| text(map.get(key));
    // `sandbox_policy`: a string (older builds) or an object tagged by `type` (or `mode`).
    let sandbox = match map.get("sandbox_policy") {
        Some(Value::Object(policy)) => {
            text(policy.get("type")).or_else(|| text(policy.get("mode")))
        }
        policy => text(policy),
    };
    // Newer builds keep the effort in `collaboration_mode.settings.reasoning_effort`.
    let collaboration_effort = member(map.get("collaboration_mode"), "settings")
        .and_then(|settings| text(member(Some(settings), "reasoning_effort")));
    // A string, or (0.171+) an object with the text in `text`.
    let base_instructions = match map.get("base_instructions") {
        Some(Value::Object(base)) => text(base.get("text")),
        base => text(base),
    };
    TurnContext {
        turn_id: string("turn_id"),
        cwd: string("cwd"),
        model: string("model"),
        effort: string("effort").or(collaboration_effort),
        summary: string("summary"),
        verbosity: string("verbosity"),
        base_instructions,
        output_schema: map
            .get("final_output_json_schema")
            .filter(|schema| !schema.is_null())
            .map(Value::to_string),
        approval_policy: string("approval_policy"),
        sandbox,
        current_date: string("current_date"),
        build_keys: TurnContext::BUILD_KEYS
            .iter()
            .enumerate()
            .filter(|(_, key)| map.contains_key(**key))
            .fold(0, |keys, (k, _)| keys | 1 << k),
    }
}

/// A string value's text.
fn text(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_string)
}

/// Member `key` of an object value.
fn member<'v>(value: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    value?.as_object()?.get(key)
}

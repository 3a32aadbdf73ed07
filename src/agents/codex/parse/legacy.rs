//! The eras before `{type, payload}` lines (codex-rollout.md section 2): era A's meta line and
//! `record_type` state lines, era A′'s flattened `record_type` lines; and the `session_meta`
//! fields every era shares.

use serde_json::{Map, Value};

use super::Part;
use super::line::LineError;
use crate::agents::codex::model::{Generation, RecordKind, SessionMeta};

impl Part {
    /// Era A′: `{timestamp, record_type, ...flattened payload}`.
    pub(super) fn tagged_line(
        &mut self,
        record_type: &str,
        line: &str,
        line_number: usize,
    ) -> Result<RecordKind, LineError> {
        if record_type == "state" {
            // Bare legacy files interleave these; do not let them decide the generation.
            return Ok(RecordKind::State);
        }
        self.note_generation(Generation::Tagged);
        let mut map: Map<String, Value> =
            serde_json::from_str(line).map_err(|e| LineError::json("", &e))?;
        map.shift_remove("timestamp");
        map.shift_remove("record_type");
        Ok(match record_type {
            "session_meta" | "prev_session_meta" => {
                RecordKind::SessionMeta(Box::new(session_meta(&map)))
            }
            "response" => {
                RecordKind::Item(self.item(&Value::Object(map).to_string(), line_number)?)
            }
            "event" => RecordKind::Event(super::event::read(&Value::Object(map).to_string())?),
            other => RecordKind::Unknown {
                type_name: format!("record_type:{other}"),
            },
        })
    }
}

/// Era A's first line, `{id, timestamp, instructions}`.
pub(super) fn bare_meta(line: &str) -> Result<SessionMeta, LineError> {
    let map: Map<String, Value> =
        serde_json::from_str(line).map_err(|e| LineError::json("", &e))?;
    Ok(session_meta(&map))
}

/// The `session_meta` fields promptc reads, from any era's map of them.
pub(super) fn session_meta(map: &Map<String, Value>) -> SessionMeta {
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
    let base_instructions = match map.get("base_instructions") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(o)) => o.get("text").and_then(Value::as_str).map(str::to_string),
        _ => None,
    };
    let dynamic_tools = map
        .get("dynamic_tools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter().map(Value::to_string).collect());
    let number = |v: Option<&Value>| {
        v.and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let history_base = map.get("history_base");
    SessionMeta {
        id: text("id"),
        forked_from_id: text("forked_from_id"),
        timestamp: text("timestamp"),
        cwd: text("cwd"),
        originator: text("originator"),
        cli_version: text("cli_version"),
        model_provider: text("model_provider"),
        user_instructions: text("instructions"),
        base_instructions,
        dynamic_tools,
        fork_ordinal_exclusive: number(map.get("forked_from_ordinal_exclusive"))
            .or_else(|| number(history_base.and_then(|b| b.get("end_ordinal_exclusive")))),
        fork_end_byte_offset: number(history_base.and_then(|b| b.get("end_byte_offset"))),
    }
}

//! The envelope of a line (which kind of line it is, its timestamp) and what every reader
//! shares: line errors and their excerpts, strings read in place, known names.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub(super) use crate::core::lines::json_kind;

/// Line types of eras B to D that carry history, context or events: each has an arm in
/// [`super::Part::rollout_line`].
const ROLLOUT_LINE_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "compacted",
    "turn_context",
    "event_msg",
];

/// Line types written by newer Codex builds that never touch history (codex-rollout.md
/// section 3): kept as [`crate::agents::codex::model::RecordKind::Other`], with no note.
pub(super) const KNOWN_OTHER_LINE_TYPES: &[&str] = &[
    "inter_agent_communication",
    "inter_agent_communication_metadata",
    "world_state",
    "token_usage_record",
    "security_risk_score",
    "retained_context",
    "realtime_item",
];

/// A line problem: reason and, for JSON errors, the 1-based column.
pub(super) struct LineError {
    pub reason: String,
    pub column: Option<usize>,
}

impl LineError {
    pub fn new(reason: impl Into<String>) -> LineError {
        LineError {
            reason: reason.into(),
            column: None,
        }
    }

    pub fn json(context: &str, err: &serde_json::Error) -> LineError {
        LineError {
            reason: format!("{context}{}", strip_position(err)),
            column: Some(err.column()),
        }
    }
}

/// serde_json appends " at line L column C"; the caller reports the position itself.
pub(super) fn strip_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The envelope fields of any generation, as raw JSON; everything else in the line is checked
/// and skipped.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(rename = "type", borrow, default)]
    type_: Option<&'a RawValue>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(borrow, default)]
    record_type: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ordinal: Option<&'a RawValue>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

/// A line, checked as JSON, with its envelope fields.
pub(super) struct Envelope<'a> {
    line: &'a str,
    fields: Fields<'a>,
}

/// Which reader a line goes to.
pub(super) enum LineKind<'a> {
    /// Eras B to D: `{timestamp, [ordinal], type, payload}`, the payload an object.
    Rollout {
        type_name: Cow<'a, str>,
        payload: &'a str,
    },
    /// Era A′: `{timestamp, record_type, ...flattened payload}`.
    Tagged(Cow<'a, str>),
    /// A Responses item on its own (era A after the meta line, or a plain item file).
    BareItem,
    /// Era A's first line, `{id, timestamp, instructions}`.
    BareMeta,
    /// An object with none of the above: kept, with a note.
    NoType,
}

impl<'a> Envelope<'a> {
    /// Check `line` as JSON and read its envelope.
    pub fn read(line: &'a str) -> Result<Envelope<'a>, LineError> {
        let trimmed = line.trim_start();
        if !trimmed.starts_with('{') {
            return Err(match serde_json::from_str::<IgnoredAny>(line) {
                Ok(_) => LineError::new(format!(
                    "JSON {}, not an object",
                    json_kind(trimmed.as_bytes().first().copied())
                )),
                Err(e) => LineError::json("not JSON: ", &e),
            });
        }
        let fields: Fields<'_> =
            serde_json::from_str(line).map_err(|e| LineError::json("not JSON: ", &e))?;
        // Skipping a string does not check that its `\u` surrogates pair up; a lone one makes
        // the line unreadable to Codex. Parse fully only when one may be there.
        if may_hold_surrogate_escape(line.as_bytes()) {
            serde_json::from_str::<Value>(line).map_err(|e| LineError::json("not JSON: ", &e))?;
        }
        Ok(Envelope { line, fields })
    }

    /// The timestamp's text, when it is a string.
    pub fn timestamp(&self) -> Option<Cow<'a, str>> {
        self.fields.timestamp.and_then(string_text)
    }

    /// The line carries an `ordinal` or a `metadata` sibling (era D).
    pub fn is_newer(&self) -> bool {
        self.fields.ordinal.is_some() || self.fields.metadata.is_some()
    }

    /// Which kind of line this is, from the fields it has.
    pub fn kind(&self) -> Result<LineKind<'a>, LineError> {
        let f = &self.fields;
        if let (Some(type_raw), Some(payload)) = (f.type_, f.payload) {
            let type_name =
                string_text(type_raw).ok_or_else(|| LineError::new("`type` is not a string"))?;
            let payload = payload.get();
            let trimmed = payload.trim_start();
            if !trimmed.starts_with('{') {
                let column = payload.as_ptr() as usize - self.line.as_ptr() as usize + 1;
                return Err(LineError {
                    reason: format!(
                        "`{type_name}` payload is a JSON {}, not an object",
                        json_kind(trimmed.as_bytes().first().copied())
                    ),
                    column: Some(column),
                });
            }
            return Ok(LineKind::Rollout { type_name, payload });
        }
        if let Some(record_type) = f.record_type {
            let record_type = string_text(record_type)
                .ok_or_else(|| LineError::new("`record_type` is not a string"))?;
            return Ok(LineKind::Tagged(record_type));
        }
        if let Some(type_raw) = f.type_ {
            if let Some(line_type) = string_text(type_raw)
                && (ROLLOUT_LINE_TYPES.contains(&line_type.as_ref())
                    || KNOWN_OTHER_LINE_TYPES.contains(&line_type.as_ref()))
            {
                return Err(LineError::new(format!(
                    "`{line_type}` line without a `payload`"
                )));
            }
            return Ok(LineKind::BareItem);
        }
        if f.id.is_some() && f.timestamp.is_some() {
            return Ok(LineKind::BareMeta);
        }
        Ok(LineKind::NoType)
    }
}

/// A payload read as a map (`type_name` for the message).
pub(super) fn object(type_name: &str, payload: &str) -> Result<Map<String, Value>, LineError> {
    serde_json::from_str(payload)
        .map_err(|e| LineError::json(&format!("`{type_name}` payload is not an object: "), &e))
}

/// A JSON string's text: borrowed from the input when it has no escapes, as serde_json hands
/// it out (`borrow` does that for a `Cow` field; `Cow<str>`'s own `Deserialize` always copies).
#[derive(Deserialize)]
pub(super) struct Str<'a>(#[serde(borrow)] pub Cow<'a, str>);

/// The text of `raw` when it is a JSON string; `None` for any other value.
pub(super) fn string_text(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Str<'_>>(raw.get()).ok().map(|s| s.0)
}

/// `text` as a [`crate::agents::codex::model::Name`]: the static copy from `known` when it is
/// one, without allocating.
pub(super) fn name(
    text: Cow<'_, str>,
    known: &[&'static str],
) -> crate::agents::codex::model::Name {
    match known.iter().find(|candidate| **candidate == text) {
        Some(candidate) => Cow::Borrowed(candidate),
        None => Cow::Owned(text.into_owned()),
    }
}

/// A `\u` escape of a UTF-16 surrogate (`\uD800`–`\uDFFF`) may be in `line`: serde_json's
/// skipping of a value does not pair them up, its full parse does.
fn may_hold_surrogate_escape(line: &[u8]) -> bool {
    memchr::memmem::find_iter(line, b"\\u").any(|i| {
        matches!(line.get(i + 2), Some(b'd' | b'D'))
            && matches!(
                line.get(i + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    })
}

pub(crate) use crate::core::lines::excerpt;

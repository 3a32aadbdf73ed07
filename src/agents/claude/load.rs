//! Reading a Claude Code transcript: one record per line, every line accounted for.
//!
//! Each line is checked as JSON once and read through one borrowed envelope of the fields any
//! line type uses; the kind comes from `type`. A line that is not a JSON object, or a known
//! line of the wrong shape, becomes a [`SkippedLine`] naming its number, column and reason; a
//! line of a type promptc does not know is kept as [`LineKind::Unknown`] and named in the
//! transcript's notes. Input arrives in pieces ([`Loader::push`]), so a file is never held
//! whole and `watch` can feed appended bytes.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::core::lines::SkippedLine;

pub use super::record::{
    ApiRequest, Assistant, Attachment, Line, LineKind, System, Transcript, Usage, User,
};

/// Line types that carry nothing promptc reads: accounted for, never a note.
pub const BOOKKEEPING_LINE_TYPES: &[&str] = &[
    "queue-operation",
    "file-history-snapshot",
    "file-history-delta",
    "ai-title",
    "custom-title",
    "permission-mode",
    "agent-name",
    "agent-setting",
    "pr-link",
    "worktree-state",
    "cost-state",
    "tools-used",
    "atis-latch",
    "mode",
];

/// Line types with a reader of their own.
const READ_LINE_TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "attachment",
    "last-prompt",
    "progress",
    "api-request",
    "api-request-blob",
    "api-request-shape",
];

/// Whether the first lines of a file are a Claude Code transcript's: a JSON object whose
/// `type` is one of Claude Code's line types and that has none of a Codex line's `payload`.
/// Lines that are not JSON objects are passed over; `None` when no line tells.
pub fn is_transcript(head: &[u8]) -> Option<bool> {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow, rename = "type")]
        type_: Option<Str<'a>>,
        #[serde(borrow)]
        payload: Option<&'a RawValue>,
    }
    for line in head.split(|b| *b == b'\n').take(64) {
        let Ok(probe) = serde_json::from_slice::<Probe<'_>>(line) else {
            continue;
        };
        let Some(type_) = probe.type_ else {
            return Some(false);
        };
        let type_ = type_.0.as_ref();
        if probe.payload.is_some() {
            return Some(false);
        }
        return Some(READ_LINE_TYPES.contains(&type_) || BOOKKEEPING_LINE_TYPES.contains(&type_));
    }
    None
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{name}: empty file, not a Claude Code transcript")]
    Empty { name: String },
    #[error(
        "{name}: not a Claude Code transcript: no line is a JSON object (line {line}: {reason})"
    )]
    NotATranscript {
        name: String,
        line: usize,
        reason: String,
    },
}

/// Load a whole transcript held in memory.
pub fn load(name: &str, bytes: &[u8]) -> Result<Transcript, LoadError> {
    let mut loader = Loader::new(name);
    loader.push(bytes);
    loader.finish()
}

/// A transcript read a piece at a time: [`push`](Loader::push) any cut of the bytes, then
/// [`finish`](Loader::finish). Only the unfinished last line is held between pieces.
pub struct Loader {
    transcript: Transcript,
    partial: Vec<u8>,
    line_number: usize,
    uuids: HashMap<Box<str>, usize>,
    /// Unknown line types: how many, and the first line.
    unknown: BTreeMap<Box<str>, (usize, usize)>,
}

impl Loader {
    pub fn new(name: &str) -> Loader {
        Loader {
            transcript: Transcript {
                name: name.to_string(),
                ..Transcript::default()
            },
            partial: Vec::new(),
            line_number: 0,
            uuids: HashMap::new(),
            unknown: BTreeMap::new(),
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            if self.partial.is_empty() {
                self.line(&bytes[..end], false);
            } else {
                self.partial.extend_from_slice(&bytes[..end]);
                let line = std::mem::take(&mut self.partial);
                self.line(&line, false);
            }
            bytes = &bytes[end + 1..];
        }
        self.partial.extend_from_slice(bytes);
    }

    pub fn finish(mut self) -> Result<Transcript, LoadError> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, true);
        }
        let mut t = self.transcript;
        for (name, (count, first)) in &self.unknown {
            t.notes.push(format!(
                "{count} line(s) of unknown type `{name}` kept, not read (first at line {first})"
            ));
        }
        if t.lines.is_empty() {
            return Err(match t.skipped.first() {
                None => LoadError::Empty { name: t.name },
                Some(s) => LoadError::NotATranscript {
                    name: t.name,
                    line: s.line,
                    reason: s.reason.clone(),
                },
            });
        }
        Ok(t)
    }

    fn line(&mut self, bytes: &[u8], last_without_newline: bool) {
        self.line_number += 1;
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.transcript.non_blank_lines += 1;
        let number = self.line_number;
        match read_line(bytes, number) {
            Ok(mut line) => {
                if let Some(uuid) = &line.uuid {
                    let index = self.transcript.lines.len();
                    match self.uuids.get(uuid) {
                        Some(&first) => line.duplicate_of = Some(first),
                        None => {
                            self.uuids.insert(uuid.clone(), index);
                        }
                    }
                }
                if let LineKind::Unknown(name) = &line.kind {
                    self.unknown.entry(name.clone()).or_insert((0, number)).0 += 1;
                }
                if let LineKind::Assistant(a) = &line.kind
                    && a.unreadable_usage
                {
                    self.transcript.notes.push(format!(
                        "line {number}: `usage` of an unexpected shape, counted as none"
                    ));
                }
                self.transcript.lines.push(line);
            }
            Err(err) => {
                let reason = if last_without_newline {
                    format!("last line cut short (no newline): {}", err.reason)
                } else {
                    err.reason
                };
                self.transcript.skipped.push(SkippedLine {
                    line: number,
                    column: err.column,
                    reason,
                    excerpt: crate::core::lines::excerpt(bytes, err.column),
                });
            }
        }
    }
}

struct LineError {
    reason: String,
    column: Option<usize>,
}

impl LineError {
    fn new(reason: impl Into<String>) -> LineError {
        LineError {
            reason: reason.into(),
            column: None,
        }
    }

    fn json(context: &str, err: &serde_json::Error) -> LineError {
        let text = err.to_string();
        let text = text.rfind(" at line ").map_or(&text[..], |i| &text[..i]);
        LineError {
            reason: format!("{context}{text}"),
            column: Some(err.column()),
        }
    }
}

/// A JSON string's text, borrowed from the line when it has no escapes.
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

fn boxed(s: Option<Str<'_>>) -> Option<Box<str>> {
    s.map(|s| s.0.into())
}

/// The fields any line type uses, borrowed from the line.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    #[serde(borrow, rename = "type")]
    type_: Option<Str<'a>>,
    #[serde(borrow)]
    uuid: Option<Str<'a>>,
    #[serde(borrow)]
    parent_uuid: Option<Str<'a>>,
    #[serde(borrow)]
    logical_parent_uuid: Option<Str<'a>>,
    #[serde(borrow)]
    session_id: Option<Str<'a>>,
    #[serde(borrow)]
    agent_id: Option<Str<'a>>,
    #[serde(default)]
    is_sidechain: Option<bool>,
    #[serde(borrow)]
    timestamp: Option<Str<'a>>,
    #[serde(borrow)]
    version: Option<Str<'a>>,
    #[serde(borrow)]
    cwd: Option<Str<'a>>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    request_id: Option<Str<'a>>,
    #[serde(borrow)]
    request_ref: Option<Str<'a>>,
    is_meta: Option<bool>,
    is_compact_summary: Option<bool>,
    is_visible_in_transcript_only: Option<bool>,
    is_api_error_message: Option<bool>,
    #[serde(borrow)]
    subtype: Option<Str<'a>>,
    compact_metadata: Option<CompactMetadata<'a>>,
    #[serde(borrow)]
    summary: Option<Str<'a>>,
    #[serde(borrow)]
    leaf_uuid: Option<Str<'a>>,
    #[serde(borrow)]
    attachment: Option<&'a RawValue>,
    #[serde(borrow)]
    rendered: Option<&'a RawValue>,
    #[serde(borrow)]
    rendered_role: Option<Str<'a>>,
    // api-request, api-request-blob, api-request-shape (2.1.3xx)
    #[serde(borrow)]
    id: Option<Str<'a>>,
    #[serde(borrow)]
    base: Option<Str<'a>>,
    keep: Option<usize>,
    #[serde(borrow)]
    tail: Option<Vec<Str<'a>>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    cache_control: Option<&'a RawValue>,
    #[serde(borrow)]
    request_digest: Option<Str<'a>>,
    #[serde(borrow)]
    shape_hash: Option<Str<'a>>,
    #[serde(borrow)]
    query_source: Option<Str<'a>>,
    #[serde(borrow)]
    hash: Option<Str<'a>>,
    #[serde(borrow)]
    shape: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CompactMetadata<'a> {
    #[serde(borrow)]
    trigger: Option<Str<'a>>,
    pre_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<Str<'a>>,
    #[serde(borrow)]
    model: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    #[serde(borrow)]
    stop_reason: Option<Str<'a>>,
}

/// The head of a content block: enough to pair calls with results.
#[derive(Deserialize)]
struct BlockHead<'a> {
    #[serde(borrow, rename = "type")]
    type_: Option<Str<'a>>,
    #[serde(borrow)]
    id: Option<Str<'a>>,
    #[serde(borrow)]
    tool_use_id: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct UsageFields {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation: Option<CacheCreation>,
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_5m_input_tokens: Option<u64>,
    ephemeral_1h_input_tokens: Option<u64>,
}

fn read_line(bytes: &[u8], number: usize) -> Result<Line, LineError> {
    let text = std::str::from_utf8(bytes).map_err(|e| LineError {
        reason: format!("not UTF-8 text (byte {})", e.valid_up_to() + 1),
        column: Some(e.valid_up_to() + 1),
    })?;
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => LineError::new(format!(
                "JSON {}, not an object",
                json_kind(trimmed.as_bytes().first().copied())
            )),
            Err(e) => LineError::json("not JSON: ", &e),
        });
    }
    let e: Envelope<'_> =
        serde_json::from_str(text).map_err(|err| LineError::json("not JSON: ", &err))?;
    let type_name = e
        .type_
        .as_ref()
        .map(|t| t.0.as_ref())
        .ok_or_else(|| LineError::new("a JSON object without a `type`"))?;
    let kind = match type_name {
        "user" => LineKind::User(user(&e)?),
        "assistant" => LineKind::Assistant(assistant(&e)?),
        "system" => LineKind::System(System {
            subtype: boxed(e.subtype),
            compact_trigger: e
                .compact_metadata
                .as_ref()
                .and_then(|m| m.trigger.as_ref().map(|t| Box::<str>::from(t.0.as_ref()))),
            compact_pre_tokens: e.compact_metadata.as_ref().and_then(|m| m.pre_tokens),
        }),
        "summary" => LineKind::Summary {
            summary: e.summary.map(|s| s.0.into()).unwrap_or_default(),
            leaf: boxed(e.leaf_uuid),
        },
        "attachment" => LineKind::Attachment(Attachment {
            attachment_type: e.attachment.and_then(|a| {
                #[derive(Deserialize)]
                struct Head<'a> {
                    #[serde(borrow, rename = "type")]
                    type_: Option<Str<'a>>,
                }
                serde_json::from_str::<Head<'_>>(a.get())
                    .ok()
                    .and_then(|h| boxed(h.type_))
            }),
            rendered: e.rendered.map(|r| r.get().into()),
            rendered_role: boxed(e.rendered_role),
        }),
        "last-prompt" => LineKind::LastPrompt {
            leaf: boxed(e.leaf_uuid),
        },
        "progress" => LineKind::Progress,
        "api-request" => LineKind::ApiRequest(ApiRequest {
            id: e
                .id
                .map(|s| s.0.into())
                .ok_or_else(|| LineError::new("`api-request` line without an `id`"))?,
            base: boxed(e.base),
            keep: e.keep.unwrap_or(0),
            tail: e
                .tail
                .unwrap_or_default()
                .into_iter()
                .map(|s| s.0.into())
                .collect(),
            params: e.params.map_or("null".into(), |p| p.get().into()),
            cache_control: e.cache_control.map_or("[]".into(), |c| c.get().into()),
            shape_hash: boxed(e.shape_hash),
            request_digest: boxed(e.request_digest),
            query_source: boxed(e.query_source),
        }),
        "api-request-blob" => LineKind::ApiRequestBlob {
            hash: e
                .hash
                .map(|s| s.0.into())
                .ok_or_else(|| LineError::new("`api-request-blob` line without a `hash`"))?,
            message: e
                .message
                .map(|m| m.get().into())
                .ok_or_else(|| LineError::new("`api-request-blob` line without a `message`"))?,
        },
        "api-request-shape" => LineKind::ApiRequestShape {
            hash: e
                .shape_hash
                .map(|s| s.0.into())
                .ok_or_else(|| LineError::new("`api-request-shape` line without a `shapeHash`"))?,
            shape: e
                .shape
                .map(|m| m.get().into())
                .ok_or_else(|| LineError::new("`api-request-shape` line without a `shape`"))?,
        },
        other => match BOOKKEEPING_LINE_TYPES.iter().find(|t| **t == other) {
            Some(name) => LineKind::Bookkeeping(name),
            None => LineKind::Unknown(other.into()),
        },
    };
    Ok(Line {
        number,
        kind,
        uuid: boxed(e.uuid),
        parent: boxed(e.parent_uuid),
        logical_parent: boxed(e.logical_parent_uuid),
        session_id: boxed(e.session_id),
        agent_id: boxed(e.agent_id),
        sidechain: e.is_sidechain.unwrap_or(false),
        timestamp: boxed(e.timestamp),
        version: boxed(e.version),
        cwd: boxed(e.cwd),
        duplicate_of: None,
    })
}

fn message<'a>(e: &Envelope<'a>, type_name: &str) -> Result<Message<'a>, LineError> {
    let raw = e
        .message
        .ok_or_else(|| LineError::new(format!("`{type_name}` line without a `message`")))?;
    serde_json::from_str(raw.get()).map_err(|err| {
        LineError::json(&format!("`{type_name}` message of the wrong shape: "), &err)
    })
}

fn blocks<'a>(content: &'a RawValue) -> Vec<BlockHead<'a>> {
    // A string content has no blocks; an array of another shape is kept as written and pairs
    // no call (the model view shows it as recorded).
    serde_json::from_str(content.get()).unwrap_or_default()
}

fn user(e: &Envelope<'_>) -> Result<User, LineError> {
    let m = message(e, "user")?;
    let content = m
        .content
        .ok_or_else(|| LineError::new("`user` message without `content`"))?;
    let tool_results = blocks(content)
        .into_iter()
        .filter(|b| b.type_.as_ref().is_some_and(|t| t.0 == "tool_result"))
        .filter_map(|b| boxed(b.tool_use_id))
        .collect();
    Ok(User {
        content: content.get().into(),
        tool_results,
        meta: e.is_meta.unwrap_or(false),
        compact_summary: e.is_compact_summary.unwrap_or(false),
        transcript_only: e.is_visible_in_transcript_only.unwrap_or(false),
    })
}

fn assistant(e: &Envelope<'_>) -> Result<Assistant, LineError> {
    let m = message(e, "assistant")?;
    let content = m
        .content
        .ok_or_else(|| LineError::new("`assistant` message without `content`"))?;
    let heads = blocks(content);
    let thinking = heads.iter().any(|b| {
        b.type_
            .as_ref()
            .is_some_and(|t| t.0 == "thinking" || t.0 == "redacted_thinking")
    });
    let tool_uses = heads
        .into_iter()
        .filter(|b| b.type_.as_ref().is_some_and(|t| t.0 == "tool_use"))
        .filter_map(|b| boxed(b.id))
        .collect();
    let fields = m
        .usage
        .filter(|u| u.get() != "null")
        .map(|u| serde_json::from_str::<UsageFields>(u.get()));
    let unreadable_usage = matches!(fields, Some(Err(_)));
    let usage = fields.and_then(Result::ok).map(|f| Usage {
        input_tokens: f.input_tokens.unwrap_or(0),
        cache_creation_input_tokens: f.cache_creation_input_tokens.unwrap_or(0),
        cache_read_input_tokens: f.cache_read_input_tokens.unwrap_or(0),
        cache_creation_5m: f
            .cache_creation
            .as_ref()
            .and_then(|c| c.ephemeral_5m_input_tokens),
        cache_creation_1h: f
            .cache_creation
            .as_ref()
            .and_then(|c| c.ephemeral_1h_input_tokens),
        output_tokens: f.output_tokens.unwrap_or(0),
        has_cache_fields: f.cache_creation_input_tokens.is_some()
            || f.cache_read_input_tokens.is_some(),
    });
    Ok(Assistant {
        message_id: boxed(m.id),
        request_id: e.request_id.as_ref().map(|s| s.0.as_ref().into()),
        model: boxed(m.model),
        content: content.get().into(),
        tool_uses,
        thinking,
        usage,
        stop_reason: boxed(m.stop_reason),
        api_error: e.is_api_error_message.unwrap_or(false),
        request_ref: e.request_ref.as_ref().map(|s| s.0.as_ref().into()),
        unreadable_usage,
    })
}

fn json_kind(first: Option<u8>) -> &'static str {
    match first {
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

//! One line read: checked as JSON once, through one borrowed envelope of the fields any line
//! type uses (the message too, in the same pass), its kind from `type`.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::core::lines::json_kind;

use super::super::wire::Build;
use super::{
    ApiRequest, Attachment, BOOKKEEPING_LINE_TYPES, Line, LineContext, LineKind, Sha256Name, System,
};

pub(crate) struct LineError {
    pub reason: String,
    pub column: Option<usize>,
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
#[derive(Deserialize, Clone)]
pub(super) struct Str<'a>(#[serde(borrow)] pub Cow<'a, str>);

fn boxed(s: Option<Str<'_>>) -> Option<Box<str>> {
    s.map(|s| s.0.into())
}

fn line_id(s: Option<Str<'_>>) -> Option<super::LineId> {
    s.map(|s| super::LineId::new(&s.0))
}

/// The texts most lines repeat (session, subagent, version, working directory, model), shared
/// with the line before that carried the same: one copy for a run of lines, not one a line.
#[derive(Debug, Default)]
pub(crate) struct Repeated {
    context: Arc<LineContext>,
    /// The last text of each of a context's fields (a line that writes none of it, as some
    /// bookkeeping lines, does not make the next line copy it again).
    texts: [Option<Arc<str>>; 4],
    model: Option<Arc<str>>,
    /// The last shape line's text: a build writes the same shape again (at each resume, each
    /// compaction), tens of kB each time.
    shape: Option<Arc<str>>,
    /// The last replay record's `params`: the same from one request to the next, mostly.
    params: Option<Arc<str>>,
    /// Room for a line without its content ([`read_split`]), kept from one line to the next.
    rest: String,
    /// A lean load's reader of runs, which looks at a line's neighbours, reads this thread's
    /// lines: a 2.1.3xx content named alone is left out ([`Keep::Unnamed`]), and where it lay
    /// in the last line read is `left_out`.
    pub leave_out_named: bool,
    pub left_out: Option<std::ops::Range<usize>>,
}

impl Repeated {
    /// The context of a line: the last line's when it says the same.
    fn context(&mut self, e: &Envelope<'_, impl Sized>) -> Arc<LineContext> {
        let written = [&e.session_id, &e.agent_id, &e.version, &e.cwd];
        let last = &self.context;
        let same = |shared: &Option<Arc<str>>, text: &Option<Str<'_>>| {
            shared.as_deref() == text.as_ref().map(|t| t.0.as_ref())
        };
        if [&last.session_id, &last.agent_id, &last.version, &last.cwd]
            .into_iter()
            .zip(written)
            .all(|(shared, text)| same(shared, text))
        {
            return last.clone();
        }
        let [session_id, agent_id, version, cwd] = std::array::from_fn(|field| {
            let text = written[field].as_ref()?;
            let kept = &mut self.texts[field];
            Some(match kept {
                Some(shared) if **shared == *text.0 => shared.clone(),
                _ => kept.insert(Arc::from(text.0.as_ref())).clone(),
            })
        });
        self.context = Arc::new(LineContext {
            session_id,
            agent_id,
            build: version.as_deref().map_or(Build::default(), Build::of),
            version,
            cwd,
        });
        self.context.clone()
    }

    fn model(&mut self, text: Option<Str<'_>>) -> Option<Arc<str>> {
        text.map(|t| shared(&mut self.model, &t.0))
    }

    /// A shape's text: the last shape line's when it is the same.
    fn shape(&mut self, text: &str) -> Arc<str> {
        shared(&mut self.shape, text)
    }

    /// A record's `params`: the last record's when they are the same.
    fn params(&mut self, text: &str) -> Arc<str> {
        shared(&mut self.params, text)
    }
}

/// `text`, shared with `last` when it is the same; else the new `last`.
fn shared(last: &mut Option<Arc<str>>, text: &str) -> Arc<str> {
    match last {
        Some(shared) if **shared == *text => shared.clone(),
        _ => last.insert(Arc::from(text)).clone(),
    }
}

/// The fields any line type uses, borrowed from the line. `M` is how `message` is read: as
/// [`Message`] in the same pass (user and assistant lines), or kept as written (a replay blob's,
/// and a line whose message is of another shape, to name what is wrong with it).
#[derive(Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound(deserialize = "'de: 'a, M: Deserialize<'de>")
)]
struct Envelope<'a, M> {
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
    message: Option<M>,
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

#[derive(Deserialize, Clone)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<Str<'a>>,
    #[serde(borrow)]
    model: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
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

/// Read one line. `lean`: a message's content as written is left out (its blocks' hashes are
/// kept), but where a build that writes replay records (2.1.3xx) wrote it: their messages are
/// named by its sha256. There too, for the reader of a run ([`Repeated::leave_out_named`]), a
/// content that names its line's message alone is left out, and where it lay noted
/// (`Repeated::left_out`), for that reader to put back (see `neighbours`).
pub(crate) fn read_line(
    bytes: &[u8],
    number: usize,
    lean: bool,
    repeated: &mut Repeated,
) -> Result<Line, LineError> {
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
    match read_split(text, number, lean, repeated) {
        Some(line) => line,
        None => read_whole(text, number, lean, repeated),
    }
}

/// A line that is a JSON object read by serde whole.
fn read_whole(
    text: &str,
    number: usize,
    lean: bool,
    repeated: &mut Repeated,
) -> Result<Line, LineError> {
    // One pass reads the message too; a blob's message is kept as written, and a line that does
    // not read so is read again to say why.
    match serde_json::from_str::<Envelope<'_, Message<'_>>>(text) {
        Ok(e) if e.type_.as_ref().is_none_or(|t| t.0 != "api-request-blob") => {
            line_of(e, text, number, lean, repeated, None)
        }
        _ => {
            let e: Envelope<'_, &RawValue> =
                serde_json::from_str(text).map_err(|err| LineError::json("not JSON: ", &err))?;
            line_of(e, text, number, lean, repeated, None)
        }
    }
}

/// A message's content read apart from its line.
struct ContentRead<'a> {
    /// As written.
    text: &'a str,
    blocks: super::super::content::Content,
    heads: super::super::content::Heads,
    /// `message_sha256` of the text alone, when the scan took it.
    message_sha256: Option<Option<Sha256Name>>,
}

/// The most room [`read_split`] keeps between lines for a line without its content.
const KEPT_REST: usize = 1 << 20;

/// A user or assistant line read in two parts: its `message.content` by the content's one scan,
/// which checks it as serde would, and the rest by serde with a `0` in the content's place.
/// serde reading the whole line would scan the content, most of its bytes, only to step over
/// it. `None` where the line is not of that shape, or serde does not find the content where the
/// scan did: the caller reads the line whole (and says what is wrong with it).
fn read_split(
    text: &str,
    number: usize,
    lean: bool,
    repeated: &mut Repeated,
) -> Option<Result<Line, LineError>> {
    let (role, start) = content_at(text.as_bytes())?;
    // Whether the line names its message by sha256 is in its `version`, which serde reads
    // after the content: the line before's is the guess (a wrong one costs a second scan).
    let sha256 = repeated.context.build >= Build::V2_1_332;
    let scanned = super::super::content::read_unchecked(role, &text[start..], sha256)?;
    let len = scanned.end;
    let mut rest = std::mem::take(&mut repeated.rest);
    rest.clear();
    rest.push_str(&text[..start]);
    rest.push('0');
    rest.push_str(&text[start + len..]);
    let read = ContentRead {
        text: &text[start..start + len],
        blocks: scanned.content,
        heads: scanned.heads,
        message_sha256: scanned.message_sha256,
    };
    let line = serde_json::from_str::<Envelope<'_, Message<'_>>>(&rest)
        .ok()
        .filter(|e| {
            // The rest is JSON with the content's place a value of its message, so the line is
            // JSON: serde finding its content elsewhere would be a misreading of the keys.
            // The `0` alone: one that what follows the content continues (`0.5`, `0e5`) would
            // take text that is not JSON after a value for part of a number.
            let held = e.message.as_ref().and_then(|m| m.content);
            held.is_some_and(|h| {
                std::ptr::eq(h.get().as_ptr(), rest[start..].as_ptr()) && h.get() == "0"
            }) && e.type_.as_ref().is_some_and(|t| t.0 == role)
        })
        .map(|e| line_of(e, text, number, lean, repeated, Some(read)));
    // Kept for the next line, unless one long line grew it (a large `toolUseResult`).
    if rest.capacity() <= KEPT_REST {
        repeated.rest = rest;
    }
    line
}

/// Where `message.content` starts in a line, and the role its blocks are hashed under: the
/// message's `role` or the line's `type`, the last of them before the content. `None` where
/// neither says `user` or `assistant` before it, or the keys before it do not read as the
/// content's scan reads them.
fn content_at(b: &[u8]) -> Option<(&'static str, usize)> {
    use super::super::content::value_end;
    let role_of = |value: &[u8]| match value {
        b"\"user\"" => Some("user"),
        b"\"assistant\"" => Some("assistant"),
        _ => None,
    };
    // The key at `at` and where its value starts.
    let key_at = |at: usize| {
        let end = value_end(b, at)?;
        (b[at] == b'"' && b.get(end) == Some(&b':')).then(|| (&b[at + 1..end - 1], end + 1))
    };
    let first_key = |open: usize| (b.get(open) == Some(&b'{')).then_some(open + 1);
    let next_key = |end: usize| (b.get(end) == Some(&b',')).then_some(end + 1);
    let mut role = None;
    let mut at = first_key(0)?;
    let mut in_message = false;
    loop {
        let (key, value) = key_at(at)?;
        if in_message && key == b"content" {
            return Some((role?, value));
        }
        if !in_message && key == b"message" {
            in_message = true;
            at = first_key(value)?;
            continue;
        }
        let end = value_end(b, value)?;
        let says_role = if in_message {
            key == b"role"
        } else {
            key == b"type"
        };
        if says_role {
            role = Some(role_of(&b[value..end])?);
        }
        at = next_key(end)?;
    }
}

/// How a line's `message` was read.
trait MessageField<'a> {
    fn read(&self, type_name: &str) -> Result<Message<'a>, LineError>;
    /// The message as written, where it was kept.
    fn raw(&self) -> Option<&'a str>;
}

impl<'a> MessageField<'a> for Message<'a> {
    fn read(&self, _: &str) -> Result<Message<'a>, LineError> {
        Ok(self.clone())
    }
    fn raw(&self) -> Option<&'a str> {
        None
    }
}

impl<'a> MessageField<'a> for &'a RawValue {
    fn read(&self, type_name: &str) -> Result<Message<'a>, LineError> {
        serde_json::from_str(self.get()).map_err(|err| {
            LineError::json(&format!("`{type_name}` message of the wrong shape: "), &err)
        })
    }
    fn raw(&self) -> Option<&'a str> {
        Some(self.get())
    }
}

fn line_of<'a, M: MessageField<'a>>(
    e: Envelope<'a, M>,
    text: &str,
    number: usize,
    lean: bool,
    repeated: &mut Repeated,
    read: Option<ContentRead<'a>>,
) -> Result<Line, LineError> {
    let context = repeated.context(&e);
    // Builds that write replay records name their messages by sha256 of the content.
    let replayed = context.build >= Build::V2_1_332;
    let keep = match (lean, replayed) {
        (false, _) => Keep::All,
        (true, false) => Keep::None,
        (true, true) if repeated.leave_out_named => Keep::Unnamed,
        (true, true) => Keep::All,
    };
    let mut left_out = None;
    let type_name = e
        .type_
        .as_ref()
        .map(|t| t.0.as_ref())
        .ok_or_else(|| LineError::new("a JSON object without a `type`"))?;
    let kind = match type_name {
        "user" => LineKind::User(user(&e, read, keep, replayed, &mut left_out)?),
        "assistant" => LineKind::Assistant(Box::new(assistant(
            &e,
            read,
            keep,
            replayed,
            repeated,
            &mut left_out,
        )?)),
        "system" => LineKind::System(System {
            subtype: boxed(e.subtype),
            compact_trigger: e
                .compact_metadata
                .as_ref()
                .and_then(|m| m.trigger.as_ref().map(|t| Box::<str>::from(t.0.as_ref()))),
            compact_pre_tokens: e.compact_metadata.as_ref().and_then(|m| m.pre_tokens),
            logical_parent: line_id(e.logical_parent_uuid),
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
        "api-request" => LineKind::ApiRequest(Box::new(ApiRequest {
            id: line_id(e.id)
                .ok_or_else(|| LineError::new("`api-request` line without an `id`"))?,
            base: line_id(e.base),
            keep: e.keep.unwrap_or(0),
            tail: e
                .tail
                .unwrap_or_default()
                .iter()
                .map(|s| Sha256Name::new(&s.0))
                .collect(),
            params: repeated.params(e.params.map_or("null", RawValue::get)),
            cache_control: e.cache_control.map_or("[]".into(), |c| c.get().into()),
            shape_hash: e.shape_hash.as_ref().map(|s| Sha256Name::new(&s.0)),
            request_digest: e.request_digest.as_ref().map(|s| Sha256Name::new(&s.0)),
            query_source: boxed(e.query_source),
        })),
        "api-request-blob" => LineKind::ApiRequestBlob {
            hash: e
                .hash
                .map(|s| Sha256Name::new(&s.0))
                .ok_or_else(|| LineError::new("`api-request-blob` line without a `hash`"))?,
            message: e
                .message
                .as_ref()
                .and_then(MessageField::raw)
                .map(Into::into)
                .ok_or_else(|| LineError::new("`api-request-blob` line without a `message`"))?,
        },
        "api-request-shape" => LineKind::ApiRequestShape {
            hash: e
                .shape_hash
                .map(|s| Sha256Name::new(&s.0))
                .ok_or_else(|| LineError::new("`api-request-shape` line without a `shapeHash`"))?,
            shape: e
                .shape
                .map(|m| repeated.shape(m.get()))
                .ok_or_else(|| LineError::new("`api-request-shape` line without a `shape`"))?,
        },
        other => match BOOKKEEPING_LINE_TYPES.iter().find(|t| **t == other) {
            Some(name) => LineKind::Bookkeeping(name),
            None => LineKind::Unknown(other.into()),
        },
    };
    // Where it lies in the line, for the reader of the run to put back.
    repeated.left_out = left_out.map(|content| span_in(text, content));
    Ok(Line {
        number,
        kind,
        uuid: line_id(e.uuid),
        parent: line_id(e.parent_uuid),
        context,
        sidechain: e.is_sidechain.unwrap_or(false),
        timestamp: boxed(e.timestamp),
        duplicate_of: None,
    })
}

mod message;

use message::{Keep, assistant, span_in, user};

#[cfg(test)]
mod tests;

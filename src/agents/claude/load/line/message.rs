//! A user or assistant line's message: its content kept or left out, its usage read.

use super::super::{Assistant, Usage, User};
use super::{
    ContentRead, Envelope, LineError, Message, MessageField, Repeated, UsageFields, line_id,
};
use crate::agents::claude::load::Sha256Name;

fn message<'a, M: MessageField<'a>>(
    e: &Envelope<'a, M>,
    type_name: &str,
) -> Result<Message<'a>, LineError> {
    e.message
        .as_ref()
        .ok_or_else(|| LineError::new(format!("`{type_name}` line without a `message`")))?
        .read(type_name)
}

/// Which messages' contents a line keeps.
#[derive(Clone, Copy)]
pub(super) enum Keep {
    All,
    None,
    /// All but where the line's message is named by its content alone (`message_sha256`).
    Unnamed,
}

/// A message's content as written, or left out (empty: no JSON text is); `left_out` is its
/// text where a content named alone was left out.
fn kept<'a>(content: &'a str, keep: Keep, named: bool, left_out: &mut Option<&'a str>) -> Box<str> {
    match keep {
        Keep::All => content.into(),
        Keep::Unnamed if !named => content.into(),
        Keep::Unnamed => {
            *left_out = Some(content);
            Box::default()
        }
        Keep::None => Box::default(),
    }
}

/// Where `part`, borrowed from `whole`, lies in it: both are the line's text, which a content
/// read apart from the line or by serde borrows (an empty range, which no content is, should
/// it not).
pub(super) fn span_in(whole: &str, part: &str) -> std::ops::Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    let range = start..start.wrapping_add(part.len());
    match whole.get(range.clone()) {
        Some(found) if std::ptr::eq(found, part) => range,
        _ => 0..0,
    }
}

/// The sha256 replay records name a message of this line alone by.
fn one_line_sha256(
    role: &str,
    content: &str,
    scanned: Option<Option<Sha256Name>>,
) -> Option<Sha256Name> {
    scanned.unwrap_or_else(|| {
        super::super::super::content::message_sha256(role, std::iter::once(content))
    })
}

/// A user or assistant line's message read: its content kept or left out, its blocks and heads,
/// and where the line is `replayed` (2.1.3xx) the sha256 its records name it by alone.
struct Read<'a> {
    m: Message<'a>,
    content: Box<str>,
    blocks: super::super::super::content::Content,
    heads: super::super::super::content::Heads,
    message_sha256: Option<Sha256Name>,
}

fn read_message<'a, M: MessageField<'a>>(
    e: &Envelope<'a, M>,
    read: Option<ContentRead<'a>>,
    role: &str,
    keep: Keep,
    replayed: bool,
    left_out: &mut Option<&'a str>,
) -> Result<Read<'a>, LineError> {
    let m = message(e, role)?;
    let ContentRead {
        text,
        blocks,
        heads,
        message_sha256,
    } = content_of(&m, read, role)?;
    let message_sha256 = replayed
        .then(|| one_line_sha256(role, text, message_sha256))
        .flatten();
    Ok(Read {
        content: kept(text, keep, message_sha256.is_some(), left_out),
        m,
        blocks,
        heads,
        message_sha256,
    })
}

/// The message's content as written, and its blocks and heads: as read apart from the line, or
/// read now.
fn content_of<'a>(
    m: &Message<'a>,
    read: Option<ContentRead<'a>>,
    role: &str,
) -> Result<ContentRead<'a>, LineError> {
    if let Some(read) = read {
        return Ok(read);
    }
    let text = m
        .content
        .ok_or_else(|| LineError::new(format!("`{role}` message without `content`")))?
        .get();
    let (blocks, heads) = super::super::super::content::read(role, text);
    Ok(ContentRead {
        text,
        blocks,
        heads,
        message_sha256: None,
    })
}

pub(super) fn user<'a, M: MessageField<'a>>(
    e: &Envelope<'a, M>,
    read: Option<ContentRead<'a>>,
    keep: Keep,
    replayed: bool,
    left_out: &mut Option<&'a str>,
) -> Result<User, LineError> {
    // An array of another shape is kept as written and pairs no call (the model view shows it
    // as recorded).
    let Read {
        content,
        blocks,
        heads,
        message_sha256,
        ..
    } = read_message(e, read, "user", keep, replayed, left_out)?;
    Ok(User {
        content,
        tool_results: heads.tool_results,
        blocks,
        unread_blocks: heads.unread.into(),
        meta: e.is_meta.unwrap_or(false),
        compact_summary: e.is_compact_summary.unwrap_or(false),
        transcript_only: e.is_visible_in_transcript_only.unwrap_or(false),
        message_sha256: message_sha256.map(Box::new),
    })
}

pub(super) fn assistant<'a, M: MessageField<'a>>(
    e: &Envelope<'a, M>,
    read: Option<ContentRead<'a>>,
    keep: Keep,
    replayed: bool,
    repeated: &mut Repeated,
    left_out: &mut Option<&'a str>,
) -> Result<Assistant, LineError> {
    let Read {
        m,
        content,
        blocks,
        heads,
        message_sha256,
    } = read_message(e, read, "assistant", keep, replayed, left_out)?;
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
        message_id: m.id.map(|s| s.0.into()),
        request_id: e.request_id.as_ref().map(|s| s.0.as_ref().into()),
        model: repeated.model(m.model),
        content,
        tool_uses: heads.tool_uses,
        blocks,
        unread_blocks: heads.unread.into(),
        thinking: heads.thinking,
        usage,
        api_error: e.is_api_error_message.unwrap_or(false),
        request_ref: line_id(e.request_ref.clone()),
        unreadable_usage,
        message_sha256,
    })
}

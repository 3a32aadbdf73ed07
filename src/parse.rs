//! Loading: bytes of a rollout (any generation) into a [`Rollout`]. Every non-blank line ends up
//! either as a record or as a skipped line with a reason; nothing is dropped silently and nothing
//! here panics on input. No I/O: the caller reads the file (or stdin) and passes the bytes.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::model::{
    Bytes, Chunked, Compacted, Event, EventKind, Generation, Item, ItemKind, Name, Record,
    RecordKind, Rollout, SessionMeta, SkippedLine, Text, TokenInfo, TurnContext, Usage,
};
use crate::parallel::Threads;

/// How strict loading is, and how many threads may parse.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Any skipped line is an error.
    pub strict: bool,
    /// Threads that may parse parts of the input at once (0 or 1: the calling thread only).
    /// The result does not depend on it.
    pub threads: Threads,
}

/// Why a file could not be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{name}: empty file, not a rollout")]
    Empty { name: String },
    #[error("{name}: not a rollout: no line is a JSON object (line {line}: {reason})")]
    NotARollout {
        name: String,
        line: usize,
        reason: String,
    },
    #[error("{name}:{line}{}: {reason} (--strict)", column.map(|c| format!(":{c}")).unwrap_or_default())]
    Strict {
        name: String,
        line: usize,
        column: Option<usize>,
        reason: String,
    },
}

/// Zstandard frame magic, for a friendly message when a compressed file reaches the parser.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// How much a loader reads between releases of what it read: a map's pages are given back a
/// few hundred at a time, each release one system call.
pub(crate) const RELEASE_BYTES: usize = if cfg!(test) { 256 } else { 1 << 20 };

/// Parts per thread: more parts than threads balance uneven parts.
const PARTS_PER_THREAD: usize = 16;

/// A part of the input smaller than this is not worth a thread of its own (but for the
/// quarters of [`TAIL_CUTS`], cut to even out the end). Tests cut parts a few lines long, to
/// check that parts join exactly.
const MIN_PART_BYTES: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// Load a rollout from its bytes. `name` is used in records and messages.
///
/// Lines are independent once the file's generation is known (it decides how era A items are
/// read, and never changes after the first line that shows it), so after those first lines the
/// rest is cut at newlines into parts parsed on `options.threads` threads, then joined in order.
/// What depends on earlier lines (which `session_meta` decides the thread id) is settled while
/// joining.
pub fn load(
    name: &str,
    bytes: impl Into<Bytes>,
    options: LoadOptions,
) -> Result<Rollout, LoadError> {
    let bytes: Bytes = bytes.into();
    if bytes.starts_with(&ZSTD_MAGIC) {
        return Err(LoadError::NotARollout {
            name: name.to_string(),
            line: 1,
            reason: "zstd-compressed data; decompress it first".into(),
        });
    }
    let mut head = Loader::new(None, options.strict);
    let head_end = head.read_lines(&bytes, 0..bytes.len(), Until::GenerationKnown);
    let first_kind = head.first_kind;
    // Parts start from the head's last `turn_context`, which usually repeats through the file.
    let last_turn_context = head.last_turn_context.clone();
    let rest = head_end..bytes.len();
    let mut parts = vec![head];
    let stopped = options.strict && parts[0].failed();
    if !stopped && !rest.is_empty() {
        let threads = options.threads.count.max(1);
        // One thread reads the rest as one part: the reference the parts must join to.
        let wanted = if threads == 1 {
            1
        } else {
            threads * PARTS_PER_THREAD
        };
        let ranges = split_at_newlines(&bytes, rest, wanted, threads);
        parts.extend(crate::parallel::map(
            ranges.len(),
            options.threads,
            |index| {
                let mut part = Loader::new(first_kind, options.strict);
                part.last_turn_context.clone_from(&last_turn_context);
                part.reserve_for(ranges[index].len());
                part.read_lines(&bytes, ranges[index].clone(), Until::End);
                part
            },
        ));
    }
    let mut rollout = join(name, parts, options.threads);
    if options.strict
        && let Some(skipped) = rollout.skipped.first()
    {
        return Err(LoadError::Strict {
            name: name.to_string(),
            line: skipped.line,
            column: skipped.column,
            reason: skipped.reason.clone(),
        });
    }
    if rollout.records.is_empty() {
        let Some(first) = rollout.skipped.first() else {
            return Err(LoadError::Empty {
                name: name.to_string(),
            });
        };
        return Err(LoadError::NotARollout {
            name: name.to_string(),
            line: first.line,
            reason: first.reason.clone(),
        });
    }
    rollout.bytes = bytes;
    Ok(rollout)
}

/// The last parts, one per thread, are cut in this many: threads take parts in turn and so
/// finish a fraction of a part apart instead of up to a whole part. With whole 1 MB parts the
/// two threads of a 17 MB parse finished 2.5 ms apart on average, with quarters 0.8 ms.
const TAIL_CUTS: usize = 4;

/// Cut `range` (which starts at a line start) into at most `count` parts of at least
/// [`MIN_PART_BYTES`], of which the last `threads` (all of them, when there are no more) are
/// cut again in [`TAIL_CUTS`]: up to `count + threads * (TAIL_CUTS - 1)` parts. Each part ends
/// just after a newline except the last.
fn split_at_newlines(
    bytes: &[u8],
    range: std::ops::Range<usize>,
    count: usize,
    threads: usize,
) -> Vec<std::ops::Range<usize>> {
    let count = count.min(range.len() / MIN_PART_BYTES).max(1);
    let size = range.len() / count;
    let tail = if count > 1 { threads.min(count) } else { 0 };
    // Offsets from `range.start` where a part should end: whole parts, then quarter parts.
    let whole = (1..count - tail).map(|k| k * size);
    let cut = ((count - tail) * TAIL_CUTS).max(1)..count * TAIL_CUTS;
    let targets = whole.chain(cut.map(|q| q * size / TAIL_CUTS));
    let mut parts = Vec::with_capacity(count + tail * TAIL_CUTS);
    let mut start = range.start;
    for offset in targets {
        let target = (range.start + offset).max(start);
        let Some(newline) = memchr::memchr(b'\n', &bytes[target..range.end]) else {
            break;
        };
        let end = target + newline + 1;
        if end >= range.end {
            break;
        }
        parts.push(start..end);
        start = end;
    }
    parts.push(start..range.end);
    parts
}

/// Records and items below which [`join`] renumbers on one thread (tests join on several
/// threads from the first few).
const JOIN_THREAD_ENTRIES: usize = if cfg!(test) { 4 } else { 32_768 };

/// Join parts in file order: line numbers and item ids become file-wide, and the first
/// `session_meta` decides the thread id. Each part's records and items are renumbered in place,
/// the parts on `threads` threads, and then kept as they are, one list after the other
/// ([`Chunked`]): nothing is copied.
fn join(name: &str, mut parts: Vec<Loader>, threads: Threads) -> Rollout {
    // Where each part's lines and items start, file-wide.
    let mut bases = Vec::with_capacity(parts.len());
    let (mut line_base, mut item_base) = (0, 0);
    for part in &parts {
        bases.push((line_base, item_base));
        line_base += part.lines;
        item_base += part.items.len();
    }
    // Renumbering a 10 MB file's records and items takes 0.12 ms on one thread; a helper
    // took 0.26 ms with its start. From 100 MB on, two threads are faster (1.0 against 1.5 ms).
    let entries: usize = parts.iter().map(|p| p.records.len() + p.items.len()).sum();
    let threads = if entries < JOIN_THREAD_ENTRIES {
        Threads::new(1)
    } else {
        threads
    };
    crate::parallel::for_each_mut(&mut parts, threads, |index, part| {
        let (line_base, item_base) = bases[index];
        part.rebase(line_base, item_base);
    });
    let first_kind = parts.iter().find_map(|part| part.first_kind);
    let mut rollout = Rollout {
        name: name.to_string(),
        bytes: Vec::new().into(),
        generation: first_kind.unwrap_or(Generation::Unknown),
        records: Chunked::default(),
        skipped: Vec::new(),
        items: Chunked::default(),
        meta: None,
        notes: Vec::new(),
    };
    let (mut record_lists, mut item_lists) = (Vec::new(), Vec::new());
    for part in parts {
        rollout.skipped.extend(part.skipped);
        rollout.notes.extend(part.notes);
        record_lists.push(part.records);
        item_lists.push(part.items);
    }
    rollout.records = Chunked::from_chunks(record_lists);
    rollout.items = Chunked::from_chunks(item_lists);
    settle_meta(&mut rollout);
    rollout
}

/// The first `session_meta` (or bare legacy meta line) decides the thread id; later ones, and a
/// first one that is not the first line, get a note.
fn settle_meta(rollout: &mut Rollout) {
    let first_skipped = rollout.skipped.first().map(|s| s.line);
    let mut meta_notes = Vec::new();
    for (index, record) in rollout.records.iter().enumerate() {
        let RecordKind::SessionMeta(meta) = &record.kind else {
            continue;
        };
        match &rollout.meta {
            None => {
                if index > 0 || first_skipped.is_some_and(|line| line < record.line) {
                    meta_notes.push((
                        record.line,
                        "session_meta is not the first line; it still decides the thread id"
                            .to_string(),
                    ));
                }
                rollout.meta = Some(meta.as_ref().clone());
            }
            Some(first) => {
                let note = if meta.forked_from_id.is_some() && meta.id != first.id {
                    format!(
                        "another session_meta (forked from {}); the first one decides the thread id",
                        meta.forked_from_id.as_deref().unwrap_or("?")
                    )
                } else {
                    "another session_meta; the first one decides the thread id".to_string()
                };
                meta_notes.push((record.line, note));
            }
        }
    }
    if !meta_notes.is_empty() {
        rollout.notes.extend(meta_notes);
        // Stable: notes of one line keep the order they were made in.
        rollout.notes.sort_by_key(|(line, _)| *line);
    }
}

/// The envelope fields of any generation; everything else in the line is ignored here.
#[derive(Deserialize)]
struct Envelope<'a> {
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

impl<'a> Envelope<'a> {
    fn text(&self) -> scan::EnvelopeText<'a> {
        scan::EnvelopeText {
            type_: self.type_.map(RawValue::get),
            payload: self.payload.map(RawValue::get),
            record_type: self.record_type.map(RawValue::get),
            timestamp: self.timestamp.map(RawValue::get),
            id: self.id.map(RawValue::get),
            ordinal: self.ordinal.map(RawValue::get),
            metadata: self.metadata.map(RawValue::get),
        }
    }
}

#[derive(Deserialize)]
struct EventHead<'a> {
    #[serde(rename = "type", borrow)]
    type_: Cow<'a, str>,
    #[serde(borrow, default)]
    turn_id: Option<Cow<'a, str>>,
    #[serde(default)]
    num_turns: Option<u64>,
    #[serde(borrow, default)]
    info: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CompactedPayload<'a> {
    #[serde(default)]
    message: Option<String>,
    #[serde(borrow, default)]
    replacement_history: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct TokenInfoPayload {
    total_token_usage: UsagePayload,
    last_token_usage: UsagePayload,
    #[serde(default)]
    model_context_window: Option<u64>,
}

#[derive(Deserialize)]
struct UsagePayload {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cached_input_tokens: u64,
    #[serde(default)]
    cache_write_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    reasoning_output_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
}

impl From<TokenInfoPayload> for TokenInfo {
    fn from(info: TokenInfoPayload) -> TokenInfo {
        TokenInfo {
            total: info.total_token_usage.into(),
            last: info.last_token_usage.into(),
            context_window: info.model_context_window,
        }
    }
}

impl From<UsagePayload> for Usage {
    fn from(u: UsagePayload) -> Usage {
        Usage {
            input_tokens: u.input_tokens,
            cached_input_tokens: u.cached_input_tokens,
            cache_write_input_tokens: u.cache_write_input_tokens,
            output_tokens: u.output_tokens,
            reasoning_output_tokens: u.reasoning_output_tokens,
            total_tokens: u.total_tokens,
        }
    }
}

/// The line types of eras B to D that carry history, context or events.
const ROLLOUT_LINE_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "compacted",
    "turn_context",
    "event_msg",
];

/// Line types written by newer Codex builds that never touch history (codex-rollout.md section 3).
const KNOWN_OTHER_LINE_TYPES: &[&str] = &[
    "inter_agent_communication",
    "inter_agent_communication_metadata",
    "world_state",
    "token_usage_record",
    "security_risk_score",
    "retained_context",
    "realtime_item",
];

/// The parse of one part of the input. Line numbers are counted from the part's start and item
/// ids index the part's own items until [`join`] makes them file-wide.
struct Loader {
    records: Vec<Record>,
    skipped: Vec<SkippedLine>,
    items: Vec<Item>,
    notes: Vec<(usize, String)>,
    first_kind: Option<Generation>,
    /// Lines read, blank ones included.
    lines: usize,
    /// Stop at the first skipped line.
    strict: bool,
    /// What follows `info` in the last `token_count` line read in full that starts as Codex
    /// writes them (see [`codex_token_count`]), and what that line read as besides its count:
    /// `rate_limits` change less often than the counts (3 887 of the samples' 4 212 repeat the
    /// line before).
    last_token_count: Option<LastTokenCount>,
    /// The last `turn_context` payload read, and what it read as. Codex writes the same one at
    /// nearly every step (2 090 of the 2 107 in the 25 samples repeat the one before), and a
    /// repeat is taken from here instead of being read again.
    last_turn_context: Option<(Box<str>, Arc<TurnContext>)>,
    /// The counts of the last `token_count` with counts, which a repeat shares.
    last_token_info: Option<Arc<TokenInfo>>,
}

/// Where [`Loader::read_lines`] stops.
#[derive(PartialEq, Eq)]
enum Until {
    End,
    /// After the first line that shows the file's generation.
    GenerationKnown,
}

/// A line problem: reason and, for JSON errors, the 1-based column.
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
        LineError {
            reason: format!("{context}{}", strip_position(err)),
            column: Some(err.column()),
        }
    }
}

/// serde_json appends " at line L column C"; the caller reports the position itself.
fn strip_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

const EXCERPT_CHARS: usize = 60;

/// A short excerpt of a line around `column` (1-based byte column), for messages. Works on a
/// window of the line, so a 100 MB line costs no more than a short one.
fn excerpt(line: &[u8], column: Option<usize>) -> String {
    const WINDOW: usize = EXCERPT_CHARS * 4;
    let center = column.unwrap_or(1).saturating_sub(1).min(line.len());
    let start = center.saturating_sub(WINDOW / 2);
    let end = (start + WINDOW).min(line.len());
    let window = String::from_utf8_lossy(&line[start..end]);
    let chars: Vec<char> = window.chars().collect();
    // Keep EXCERPT_CHARS characters around the column's position in the window.
    let center_chars = String::from_utf8_lossy(&line[start..center])
        .chars()
        .count();
    let from = if column.is_some() {
        center_chars.saturating_sub(EXCERPT_CHARS / 2)
    } else {
        0
    };
    let to = (from + EXCERPT_CHARS).min(chars.len());
    let from = to.saturating_sub(EXCERPT_CHARS).min(from);
    let mut out = String::new();
    if start > 0 || from > 0 {
        out.push('…');
    }
    out.extend(&chars[from..to]);
    if end < line.len() || to < chars.len() {
        out.push('…');
    }
    out
}

/// A `\u` escape of a UTF-16 surrogate (`\uD800`–`\uDFFF`, the range the line scan declines)
/// may be in `line`: one pass of memmem for `\u`, which is rarer in rollouts than a lone `\`.
fn may_hold_surrogate_escape(line: &[u8]) -> bool {
    memchr::memmem::find_iter(line, b"\\u").any(|i| {
        matches!(line.get(i + 2), Some(b'd' | b'D'))
            && matches!(
                line.get(i + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    })
}

/// `text` as a [`Name`]: the static copy from `known` when it is one, without allocating.
fn name(text: Cow<'_, str>, known: &[&'static str]) -> Name {
    match known.iter().find(|candidate| **candidate == text) {
        Some(candidate) => Cow::Borrowed(candidate),
        None => Cow::Owned(text.into_owned()),
    }
}

/// Item types, most frequent first (the real samples' counts).
const ITEM_TYPES: &[&str] = &[
    "reasoning",
    "function_call",
    "function_call_output",
    "message",
    "custom_tool_call",
    "custom_tool_call_output",
    "ghost_snapshot",
    "web_search_call",
    "local_shell_call",
    "tool_search_call",
    "tool_search_output",
    "image_generation_call",
    "compaction",
    "compaction_summary",
    "context_compaction",
    "agent_message",
    "additional_tools",
    "compaction_trigger",
];

/// Message roles.
const ROLES: &[&str] = &["assistant", "user", "developer", "system"];

/// Event types, most frequent first (the real samples' counts), then the others replay reads.
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
];

/// The text of `raw`, checked JSON, when it is a string (borrowed unless it has escapes);
/// `None` for any other value. Envelope fields of every line: serde_json's `Cow<str>` would
/// allocate each time.
fn json_string(raw: &str) -> Option<Cow<'_, str>> {
    if raw.starts_with('"') {
        head::string_text(raw).ok()
    } else {
        None
    }
}

/// Whether `line`, whose plain timestamp [`codex_timestamp`] found at `timestamp`, is
/// exactly `{"timestamp":"…","type":"turn_context","payload":` `payload` `}`, Codex's form.
fn is_codex_turn_context(line: &str, timestamp: &std::ops::Range<usize>, payload: &str) -> bool {
    line[timestamp.end..]
        .strip_prefix(r#"","type":"turn_context","payload":"#)
        .and_then(|tail| tail.strip_prefix(payload))
        == Some("}")
}

/// Where the timestamp's text is in a line that starts `{"timestamp":"`, as Codex's lines
/// do, when it is free of backslashes and control characters (a JSON string as written).
fn codex_timestamp(line: &str) -> Option<std::ops::Range<usize>> {
    const START: &str = r#"{"timestamp":""#;
    let rest = line.strip_prefix(START)?;
    let end = memchr::memchr(b'"', rest.as_bytes())?;
    if rest.as_bytes()[..end]
        .iter()
        .any(|&byte| byte == b'\\' || byte < 0x20)
    {
        return None;
    }
    Some(START.len()..START.len() + end)
}

/// The start of a `token_count` line as Codex writes it:
/// `{"timestamp":"…","type":"event_msg","payload":{"type":"token_count","info":` then `null` or
/// an `info` in Codex's form ([`token_info_as_codex_writes_it`]; its counts, as JSON's
/// numbers, have no leading zeros).
#[derive(Debug, PartialEq)]
struct CodexTokenCount {
    timestamp: std::ops::Range<usize>,
    info: Option<TokenInfo>,
    /// Where the rest of the line, after `info`, starts.
    rest: usize,
}

/// The start of `line`, whose plain timestamp [`codex_timestamp`] found at `timestamp`, read
/// as a [`CodexTokenCount`].
fn codex_token_count(line: &str, timestamp: std::ops::Range<usize>) -> Option<CodexTokenCount> {
    let info = line[timestamp.end..]
        .strip_prefix(r#"","type":"event_msg","payload":{"type":"token_count","info":"#)?;
    let info_start = line.len() - info.len();
    if info.starts_with("null") {
        return Some(CodexTokenCount {
            timestamp,
            info: None,
            rest: info_start + 4,
        });
    }
    let mut cursor = InfoCursor::new(info);
    let read = cursor.info_as_codex_writes_it()?;
    Some(CodexTokenCount {
        timestamp,
        info: Some(read),
        rest: info_start + cursor.at,
    })
}

/// Whole seconds since the Unix epoch of an RFC 3339 timestamp as Codex writes them
/// (`2025-11-17T21:32:46.911Z`): the date and the time to the second, read as UTC.
pub fn unix_seconds(timestamp: &str) -> Option<i64> {
    let b = timestamp.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> { timestamp.get(range)?.parse().ok() };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// The record of a line read as a repeat of an earlier one, with its own timestamp
/// (`timestamp`: where its plain text is in the line).
fn repeat_record(
    line: usize,
    span: &std::ops::Range<usize>,
    text: &str,
    timestamp: std::ops::Range<usize>,
    newer_envelope: bool,
    kind: RecordKind,
) -> Record {
    Record {
        line,
        span: span.clone(),
        unix_seconds: text.get(timestamp.clone()).and_then(unix_seconds),
        timestamp: Some(Text::Span(
            span.start + timestamp.start..span.start + timestamp.end,
        )),
        newer_envelope,
        kind,
    }
}

/// See [`Loader::last_token_count`].
struct LastTokenCount {
    rest: Box<str>,
    newer_envelope: bool,
    turn_id: Option<Box<str>>,
}

fn value_str(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Loader {
    fn new(first_kind: Option<Generation>, strict: bool) -> Loader {
        Loader {
            records: Vec::new(),
            skipped: Vec::new(),
            items: Vec::new(),
            notes: Vec::new(),
            first_kind,
            lines: 0,
            strict,
            last_turn_context: None,
            last_token_count: None,
            last_token_info: None,
        }
    }

    /// Room for the records and items that `bytes` of lines usually hold, so that the lists
    /// are not copied while they grow (growing them was 2.5 % of the instructions on the real
    /// samples, and one page fault in ten at 100 MB). Sessions' lines run 0.3-2 KB, with an
    /// item every 0.5-4 KB (the samples); room left unused is never touched, so it costs
    /// address space (about a fifth of the part's size), not memory. It stays with the
    /// rollout: a strict overcommit policy counts it.
    fn reserve_for(&mut self, bytes: usize) {
        self.records.reserve(bytes / 1024);
        self.items.reserve(bytes / 2048);
    }

    fn failed(&self) -> bool {
        !self.skipped.is_empty()
    }

    /// Make line numbers and item ids file-wide: this part starts after `line_base` lines and
    /// `item_base` items.
    fn rebase(&mut self, line_base: usize, item_base: usize) {
        for record in &mut self.records {
            record.line += line_base;
            match &mut record.kind {
                RecordKind::Item(id) => *id += item_base,
                RecordKind::Compacted(Compacted {
                    replacement: Some(ids),
                    ..
                }) => ids.iter_mut().for_each(|id| *id += item_base),
                _ => {}
            }
        }
        for item in &mut self.items {
            item.line += line_base;
        }
        for skipped in &mut self.skipped {
            skipped.line += line_base;
        }
        for (line, _) in &mut self.notes {
            *line += line_base;
        }
    }

    /// Read the lines of `bytes[range]`; `range` starts at a line start and ends at the end of
    /// the input or just after a newline. Returns where reading stopped. Releases what it has
    /// read ([`Bytes::with_release`]) every [`RELEASE_BYTES`] and at the end.
    fn read_lines(&mut self, input: &Bytes, range: std::ops::Range<usize>, until: Until) -> usize {
        let bytes: &[u8] = input;
        let mut start = range.start;
        let mut unreleased = range.start;
        while start < range.end {
            if start - unreleased >= RELEASE_BYTES {
                input.release(unreleased..start);
                unreleased = start;
            }
            if until == Until::GenerationKnown && self.first_kind.is_some()
                || self.strict && self.failed()
            {
                break;
            }
            // memchr finds newlines with SIMD.
            let end =
                memchr::memchr(b'\n', &bytes[start..range.end]).map_or(range.end, |i| start + i);
            self.lines += 1;
            let raw_line = &bytes[start..end];
            let line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.line(self.lines, start..start + line.len(), line);
            }
            start = (end + 1).min(range.end);
        }
        input.release(unreleased..start);
        start
    }

    fn line(&mut self, line_number: usize, span: std::ops::Range<usize>, line: &[u8]) {
        match self.record(line_number, span.clone(), line) {
            Ok(mut record) => {
                self.share_token_info(&mut record);
                self.records.push(record)
            }
            Err(err) => {
                let excerpt = excerpt(line, err.column);
                self.skipped.push(SkippedLine {
                    line: line_number,
                    column: err.column,
                    reason: err.reason,
                    excerpt,
                })
            }
        }
    }

    /// A `token_count` whose counts are the last one's takes them from it.
    fn share_token_info(&mut self, record: &mut Record) {
        if let RecordKind::Event(Event {
            kind: EventKind::TokenCount(Some(info)),
            ..
        }) = &mut record.kind
        {
            match &self.last_token_info {
                Some(last) if **last == **info => *info = Arc::clone(last),
                _ => self.last_token_info = Some(Arc::clone(info)),
            }
        }
    }

    fn record(
        &mut self,
        line_number: usize,
        span: std::ops::Range<usize>,
        line: &[u8],
    ) -> Result<Record, LineError> {
        let text = simdutf8::compat::from_utf8(line).map_err(|e| LineError {
            reason: "invalid UTF-8".into(),
            column: Some(e.valid_up_to() + 1),
        })?;
        let timestamp = codex_timestamp(text);
        if let Some(timestamp) = &timestamp
            && let Some(record) = self.repeated_turn_context(text, timestamp, line_number, &span)
        {
            return Ok(record);
        }
        let token_count = timestamp.and_then(|timestamp| codex_token_count(text, timestamp));
        if let Some(head) = &token_count
            && let Some(record) = self.repeated_token_count(head, text, line_number, &span)
        {
            return Ok(record);
        }
        let record = self.read_record(line_number, span, line, text)?;
        if let Some(head) = token_count
            && let RecordKind::Event(event) = &record.kind
            && matches!(event.kind, EventKind::TokenCount(_))
        {
            self.last_token_count = Some(LastTokenCount {
                rest: text[head.rest..].into(),
                newer_envelope: record.newer_envelope,
                turn_id: event.turn_id.clone(),
            });
        }
        Ok(record)
    }

    /// A line read in full: the scan, or serde_json where the scan declines.
    fn read_record(
        &mut self,
        line_number: usize,
        span: std::ops::Range<usize>,
        line: &[u8],
        text: &str,
    ) -> Result<Record, LineError> {
        let trimmed = text.trim_start();
        if !trimmed.starts_with('{') {
            return Err(match serde_json::from_str::<IgnoredAny>(text) {
                Ok(_) => LineError::new(format!(
                    "JSON {}, not an object",
                    json_kind(trimmed.as_bytes().first().copied())
                )),
                Err(e) => LineError::json("not JSON: ", &e),
            });
        }
        // One fast pass reads most lines; serde_json reads the rest and says what is wrong.
        let (envelope, payload_head) = match scan::scan(text) {
            Some(scanned) => (scanned.envelope, scanned.payload_head),
            None => {
                let envelope: Envelope<'_> =
                    serde_json::from_str(text).map_err(|e| LineError::json("not JSON: ", &e))?;
                // Skipping a value does not check that `\u` surrogates pair up; a lone one would
                // make the line unreadable to Codex (and to serde_json's full parse). Check fully
                // only when one may be there. (The scan declines every line with a surrogate
                // escape, so the lines it reads need no such check.)
                if may_hold_surrogate_escape(line) {
                    serde_json::from_str::<serde_json::Value>(text)
                        .map_err(|e| LineError::json("not JSON: ", &e))?;
                }
                (envelope.text(), None)
            }
        };
        let newer_envelope = envelope.ordinal.is_some() || envelope.metadata.is_some();
        let base = span.start;
        let offset_of = |raw: &str| -> std::ops::Range<usize> {
            let start = base + (raw.as_ptr() as usize - text.as_ptr() as usize);
            start..start + raw.len()
        };
        let timestamp = envelope.timestamp.and_then(json_string);
        let seconds = timestamp.as_deref().and_then(unix_seconds);
        let timestamp = timestamp.map(|timestamp| match timestamp {
            Cow::Borrowed(within) => Text::Span(offset_of(within)),
            Cow::Owned(unescaped) => Text::Owned(unescaped.into_boxed_str()),
        });

        let kind = if let (Some(type_raw), Some(payload)) = (envelope.type_, envelope.payload) {
            let type_name =
                json_string(type_raw).ok_or_else(|| LineError::new("`type` is not a string"))?;
            self.note_generation(Generation::RolloutLines);
            let payload_span = offset_of(payload);
            let column_base = payload_span.start - span.start;
            let trimmed_payload = payload.trim_start();
            if !trimmed_payload.starts_with('{') {
                return Err(LineError {
                    reason: format!(
                        "`{type_name}` payload is a JSON {}, not an object",
                        json_kind(trimmed_payload.as_bytes().first().copied())
                    ),
                    column: Some(column_base + 1),
                });
            }
            self.rollout_line(&type_name, payload, payload_head, payload_span, line_number)
                .map_err(|mut e| {
                    // Errors inside the payload count columns from the payload's start.
                    e.column = e.column.map(|c| c + column_base);
                    e
                })?
        } else if let Some(record_type) = envelope.record_type {
            let record_type = json_string(record_type)
                .ok_or_else(|| LineError::new("`record_type` is not a string"))?;
            self.tagged_line(&record_type, text, line_number)?
        } else if let Some(type_raw) = envelope.type_
            && let Some(line_type) = json_string(type_raw)
            && (ROLLOUT_LINE_TYPES.contains(&line_type.as_ref())
                || KNOWN_OTHER_LINE_TYPES.contains(&line_type.as_ref()))
        {
            return Err(LineError::new(format!(
                "`{line_type}` line without a `payload`"
            )));
        } else if envelope.type_.is_some() {
            // A bare Responses item: era A after the meta line, or a plain item file.
            self.note_generation(Generation::PlainItems);
            let id = self.item(text, None, Text::Span(span.clone()), line_number)?;
            RecordKind::Item(id)
        } else if envelope.id.is_some() && envelope.timestamp.is_some() {
            self.note_generation(Generation::BareLegacy);
            let map: Map<String, Value> =
                serde_json::from_str(text).map_err(|e| LineError::json("", &e))?;
            let meta = session_meta(&map);
            self.meta(meta)
        } else {
            self.notes.push((
                line_number,
                "a JSON object with no `type`: kept, not replayed".to_string(),
            ));
            RecordKind::Unknown {
                type_name: "(no type)".into(),
            }
        };
        Ok(Record {
            line: line_number,
            span,
            timestamp,
            unix_seconds: seconds,
            newer_envelope,
            kind,
        })
    }

    /// A `turn_context` line as Codex writes it whose payload is, byte for byte, the last one
    /// read: what the full read of the line would give, without reading the payload again. It
    /// was checked as JSON with its own line, in the same place in the same envelope, so the
    /// line is JSON when its timestamp is a string, here one without escapes.
    fn repeated_turn_context(
        &self,
        text: &str,
        timestamp: &std::ops::Range<usize>,
        line_number: usize,
        span: &std::ops::Range<usize>,
    ) -> Option<Record> {
        let (payload, context) = self.last_turn_context.as_ref()?;
        if !is_codex_turn_context(text, timestamp, payload) {
            return None;
        }
        Some(repeat_record(
            line_number,
            span,
            text,
            timestamp.clone(),
            false,
            RecordKind::TurnContext(Arc::clone(context)),
        ))
    }

    /// A `token_count` line that starts as Codex writes them ([`codex_token_count`]) and ends
    /// as the last one read in full did: it reads as that one did, with its own timestamp and
    /// count. The two lines differ only in a plain timestamp string and an `info` of the same
    /// keys (or `null`), so this one is JSON as that one was, with the same members.
    fn repeated_token_count(
        &self,
        head: &CodexTokenCount,
        text: &str,
        line_number: usize,
        span: &std::ops::Range<usize>,
    ) -> Option<Record> {
        let last = self.last_token_count.as_ref()?;
        if *last.rest != text[head.rest..] {
            return None;
        }
        Some(repeat_record(
            line_number,
            span,
            text,
            head.timestamp.clone(),
            last.newer_envelope,
            RecordKind::Event(Event {
                type_name: Cow::Borrowed("token_count"),
                kind: EventKind::TokenCount(head.info.clone().map(Arc::new)),
                turn_id: last.turn_id.clone(),
            }),
        ))
    }

    /// The `turn_context` read from `json`: the last one again when `json` repeats its payload.
    fn turn_context(
        &mut self,
        json: &str,
        object: impl FnOnce() -> Result<Map<String, Value>, LineError>,
    ) -> Result<Arc<TurnContext>, LineError> {
        if let Some((payload, context)) = &self.last_turn_context
            && **payload == *json
        {
            return Ok(Arc::clone(context));
        }
        let context = Arc::new(match turn_context_fields(json) {
            Some(context) => context,
            None => {
                let map = object()?;
                // A map's keys are unescaped: the read cannot fail.
                turn_context(|key| map.get(key).map(Field::Value)).unwrap_or_default()
            }
        });
        self.last_turn_context = Some((json.into(), Arc::clone(&context)));
        Ok(context)
    }

    fn note_generation(&mut self, generation: Generation) {
        if self.first_kind.is_none() {
            self.first_kind = Some(generation);
        }
    }

    /// Which `session_meta` decides the thread id is settled when parts are joined.
    fn meta(&mut self, meta: SessionMeta) -> RecordKind {
        RecordKind::SessionMeta(Box::new(meta))
    }

    fn rollout_line(
        &mut self,
        type_name: &str,
        json: &str,
        head: Option<head::Head<'_>>,
        payload_span: std::ops::Range<usize>,
        line_number: usize,
    ) -> Result<RecordKind, LineError> {
        let object = || -> Result<Map<String, Value>, LineError> {
            serde_json::from_str(json).map_err(|e| {
                LineError::json(&format!("`{type_name}` payload is not an object: "), &e)
            })
        };
        Ok(match type_name {
            "session_meta" => {
                let map = object()?;
                self.meta(session_meta(&map))
            }
            "response_item" => {
                let text = Text::Span(payload_span);
                RecordKind::Item(self.item(json, head, text, line_number)?)
            }
            "turn_context" => RecordKind::TurnContext(self.turn_context(json, object)?),
            "compacted" => {
                let payload: CompactedPayload<'_> = serde_json::from_str(json)
                    .map_err(|e| LineError::json("`compacted` payload of the wrong shape: ", &e))?;
                let replacement = match payload.replacement_history {
                    None => None,
                    Some(entries) => {
                        let mut ids = Vec::with_capacity(entries.len());
                        let base = payload_span.start;
                        for raw in entries {
                            let start =
                                base + (raw.get().as_ptr() as usize - json.as_ptr() as usize);
                            let span = start..start + raw.get().len();
                            let text = Text::Span(span);
                            ids.push(self.item(raw.get(), None, text, line_number)?);
                        }
                        Some(ids)
                    }
                };
                RecordKind::Compacted(Compacted {
                    message: payload.message.unwrap_or_default(),
                    replacement,
                })
            }
            "event_msg" => RecordKind::Event(event(json, head)?),
            other if KNOWN_OTHER_LINE_TYPES.contains(&other) => RecordKind::Other {
                type_name: other.to_string(),
            },
            other => {
                self.notes.push((
                    line_number,
                    format!("unknown line type `{other}`: kept, not replayed"),
                ));
                RecordKind::Unknown {
                    type_name: other.to_string(),
                }
            }
        })
    }

    /// Era A′: `{timestamp, record_type, ...flattened payload}`.
    fn tagged_line(
        &mut self,
        record_type: &str,
        text: &str,
        line_number: usize,
    ) -> Result<RecordKind, LineError> {
        if record_type == "state" {
            // Bare legacy files interleave these; do not let them decide the generation.
            return Ok(RecordKind::State);
        }
        self.note_generation(Generation::Tagged);
        let mut map: Map<String, Value> =
            serde_json::from_str(text).map_err(|e| LineError::json("", &e))?;
        map.shift_remove("timestamp");
        map.shift_remove("record_type");
        Ok(match record_type {
            "session_meta" | "prev_session_meta" => {
                let meta = session_meta(&map);
                self.meta(meta)
            }
            "response" => {
                let json = Value::Object(map).to_string();
                let text = Text::Owned(json.clone().into_boxed_str());
                RecordKind::Item(self.item(&json, None, text, line_number)?)
            }
            "event" => {
                let json = Value::Object(map).to_string();
                RecordKind::Event(event(&json, None)?)
            }
            other => RecordKind::Unknown {
                type_name: format!("record_type:{other}"),
            },
        })
    }

    /// `head`: the item's head when the line's scan read it already.
    fn item(
        &mut self,
        json: &str,
        head: Option<head::Head<'_>>,
        text: Text,
        line_number: usize,
    ) -> Result<usize, LineError> {
        if !json.trim_start().starts_with('{') {
            return Err(LineError::new("response item is not a JSON object"));
        }
        // The text was validated as JSON with its line; read its head (unless the line's scan
        // did) without parsing the (often large) rest again.
        let head = match head {
            Some(head) => head,
            None => head::read(json)
                .map_err(|e| LineError::new(format!("response item of the wrong shape: {e}")))?,
        };
        let type_name = head
            .type_
            .ok_or_else(|| LineError::new("response item without a `type`"))?;
        let kind = ItemKind::from_type(&type_name);
        if kind == ItemKind::Message {
            self.check_content(head.content, line_number)?;
        }
        if kind == ItemKind::Unknown {
            self.notes.push((
                line_number,
                format!("unknown item type `{type_name}`: kept, not replayed"),
            ));
        }
        // Era A files record server ids that Codex deserializes but never sends back.
        let wire = match (self.first_kind, &head.id, kind) {
            (
                Some(Generation::BareLegacy | Generation::Tagged),
                Some(_),
                ItemKind::Message
                | ItemKind::Reasoning
                | ItemKind::LocalShellCall
                | ItemKind::FunctionCall
                | ItemKind::CustomToolCall
                | ItemKind::WebSearchCall
                | ItemKind::ToolSearchCall,
            ) => serde_json::from_str::<Map<String, Value>>(json)
                .ok()
                .map(|mut map| {
                    map.shift_remove("id");
                    Value::Object(map).to_string().into_boxed_str()
                }),
            _ => None,
        };
        // The bytes `Item::wire_bytes` gives: a span's text is `json`.
        let sent = wire.as_deref().unwrap_or(match &text {
            Text::Span(_) => json,
            Text::Owned(owned) => owned,
        });
        let item = Item {
            digest: Some(crate::hash::hash("item", sent.as_bytes())),
            text,
            kind,
            wire,
            type_name: name(type_name, ITEM_TYPES),
            role: head.role.map(|role| name(role, ROLES)),
            call_id: head.call_id.map(Cow::into_owned),
            id: head.id.map(Cow::into_owned),
            name: head.name.map(Cow::into_owned),
            execution: head.execution.map(Cow::into_owned),
            line: line_number,
        };
        self.items.push(item);
        Ok(self.items.len() - 1)
    }
}

/// Content part types Codex knows (`ContentItem`, codex-rollout.md section 5).
const KNOWN_CONTENT_PARTS: &[&str] = &[
    "input_text",
    "input_image",
    "output_text",
    "input_audio",
    "input_file",
    "refusal",
];

impl Loader {
    /// A message's `content` must be a list of parts (Codex cannot read the line otherwise);
    /// parts of unknown types are kept as recorded and noted.
    fn check_content(
        &mut self,
        content: Option<&str>,
        line_number: usize,
    ) -> Result<(), LineError> {
        let Some(content) = content else {
            return Ok(());
        };
        #[derive(Deserialize)]
        struct Part<'a> {
            #[serde(rename = "type", borrow, default)]
            type_: Option<Cow<'a, str>>,
        }
        let parts: Vec<Part<'_>> =
            serde_json::from_str(content).map_err(|e| match content.as_bytes().first() {
                Some(b'[') => LineError::new(format!(
                    "message `content` is not a list of parts: {}",
                    strip_position(&e)
                )),
                first => LineError::new(format!(
                    "message `content` is a JSON {}, not a list of parts",
                    json_kind(first.copied())
                )),
            })?;
        for part in parts {
            let type_name = part.type_.unwrap_or(Cow::Borrowed("(none)"));
            if !KNOWN_CONTENT_PARTS.contains(&type_name.as_ref()) {
                self.notes.push((
                    line_number,
                    format!("unknown content part `{type_name}` in a message: kept as recorded"),
                ));
            }
        }
        Ok(())
    }
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

/// The fields of an `event_msg` payload promptc reads.
struct EventFields<'a> {
    type_: Cow<'a, str>,
    turn_id: Option<Cow<'a, str>>,
    num_turns: Option<u64>,
    info: Option<&'a str>,
}

/// The event fields as the line scan's head of the payload holds them, when they are what
/// [`EventHead`] would read: no event field written twice and no escaped key, `type` a string,
/// `turn_id` absent, `null` or a string, `num_turns` absent, `null` or a plain integer. Other
/// payloads (`None`) are read by serde_json, which says what is wrong with them. Event
/// payloads are over 40 % of a rollout's lines and often long (reasoning and message text): this
/// spares a second parse of each.
fn event_fields_from_head(head: head::Head<'_>) -> Option<EventFields<'_>> {
    if head.event_fields_unsure {
        return None;
    }
    let turn_id = match head.turn_id_raw {
        None | Some("null") => None,
        Some(raw) if raw.starts_with('"') => Some(head::string_text(raw).ok()?),
        Some(_) => return None,
    };
    let num_turns = match head.num_turns_raw {
        None | Some("null") => None,
        // The scan checked the number: digits alone are an integer, parsed as serde_json does.
        Some(raw) if raw.bytes().all(|b| b.is_ascii_digit()) => Some(raw.parse().ok()?),
        Some(_) => return None,
    };
    Some(EventFields {
        type_: head.type_?,
        turn_id,
        num_turns,
        info: head.info_raw.filter(|raw| *raw != "null"),
    })
}

fn event<'a>(json: &'a str, head: Option<head::Head<'a>>) -> Result<Event, LineError> {
    let head = match head.and_then(event_fields_from_head) {
        Some(fields) => fields,
        None => {
            let head: EventHead<'_> = serde_json::from_str(json)
                .map_err(|e| LineError::json("`event_msg` payload of the wrong shape: ", &e))?;
            EventFields {
                type_: head.type_,
                turn_id: head.turn_id,
                num_turns: head.num_turns,
                info: head.info.map(RawValue::get).filter(|raw| *raw != "null"),
            }
        }
    };
    let kind = match head.type_.as_ref() {
        "task_started" | "turn_started" => EventKind::TaskStarted,
        "task_complete" | "turn_complete" => EventKind::TaskComplete,
        "turn_aborted" => EventKind::TurnAborted,
        "thread_rolled_back" => EventKind::ThreadRolledBack {
            num_turns: head
                .num_turns
                .ok_or_else(|| LineError::new("`thread_rolled_back` without `num_turns`"))?,
        },
        "context_compacted" => EventKind::ContextCompacted,
        "user_message" => EventKind::UserMessage,
        "token_count" => {
            let info = match head.info {
                Some(raw) => Some(Arc::new(match token_info_plain(raw) {
                    Some(info) => info,
                    None => serde_json::from_str::<TokenInfoPayload>(raw)
                        .map_err(|e| {
                            LineError::json("`token_count.info` of the wrong shape: ", &e)
                        })?
                        .into(),
                })),
                None => None,
            };
            EventKind::TokenCount(info)
        }
        _ => EventKind::Other,
    };
    Ok(Event {
        type_name: name(head.type_, EVENT_TYPES),
        kind,
        turn_id: head.turn_id.map(|id| id.into_owned().into_boxed_str()),
    })
}

/// `token_count.info`, already checked to be valid JSON, read without serde_json when it is
/// written plainly: first in the one form Codex writes ([`token_info_as_codex_writes_it`]),
/// else member by member ([`token_info_by_members`]). `None` otherwise, and serde_json's typed
/// read ([`TokenInfoPayload`]) decides and words any error. A third of a rollout's lines are
/// token counts, and that read was most of their cost.
fn token_info_plain(raw: &str) -> Option<TokenInfo> {
    token_info_as_codex_writes_it(raw).or_else(|| token_info_by_members(raw))
}

/// `token_count.info` read member by member, in one pass, when its objects' keys are unescaped
/// and each given once and its counts non-negative integers that fit a `u64` (or `null` where
/// a count may be absent); `None` otherwise.
fn token_info_by_members(raw: &str) -> Option<TokenInfo> {
    let mut cursor = InfoCursor::new(raw);
    let (mut total, mut last, mut window) = (None, None, None);
    cursor.object(|cursor, key| match key {
        b"total_token_usage" => set_once(&mut total, cursor.usage()?),
        b"last_token_usage" => set_once(&mut last, cursor.usage()?),
        b"model_context_window" => set_once(&mut window, cursor.optional_count()?),
        _ => cursor.skip_value(),
    })?;
    Some(TokenInfo {
        total: total?,
        last: last?,
        context_window: window.flatten(),
    })
}

/// `token_count.info` in the one form Codex writes (every recorded count in the samples):
/// its keys in Codex's order, no spaces, digits or `null` for the window. Comparing whole keys
/// reads it in a fifth of the instructions of [`token_info_by_members`]; any other form
/// (`None`) is read that way.
fn token_info_as_codex_writes_it(raw: &str) -> Option<TokenInfo> {
    let mut cursor = InfoCursor::new(raw);
    let info = cursor.info_as_codex_writes_it()?;
    (cursor.at == raw.len()).then_some(info)
}

/// Set a field read once; a second value of it is serde_json's to judge (a duplicate field).
fn set_once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

/// A reader over valid JSON for [`token_info_plain`]: each method reads what it names at the
/// cursor and moves past it, or gives `None` where the text is not that plain form.
struct InfoCursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> InfoCursor<'a> {
    fn new(raw: &'a str) -> InfoCursor<'a> {
        InfoCursor {
            bytes: raw.as_bytes(),
            at: 0,
        }
    }

    fn skip_ws(&mut self) {
        self.at = head::skip_ws(self.bytes, self.at);
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_ws();
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// An object: `member(cursor, key)` reads each member's value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.key()?;
            self.eat(b':')?;
            self.skip_ws();
            member(self, key)?;
            if self.eat(b'}').is_some() {
                return Some(());
            }
            self.eat(b',')?;
        }
    }

    /// A key without escapes.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let rest = self.bytes.get(self.at..)?;
        let end = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[end] != b'"' {
            return None;
        }
        self.at += end + 1;
        Some(&rest[..end])
    }

    fn skip_value(&mut self) -> Option<()> {
        self.at = head::skip_value(self.bytes, self.at);
        Some(())
    }

    /// Digits alone that fit a `u64`: what serde_json reads as one without a doubt (it reads
    /// `-0` and `1e2` its own way, and they go to it). Never with a leading zero, which JSON
    /// does not allow: [`codex_token_count`] reads counts of lines not yet checked.
    fn count(&mut self) -> Option<u64> {
        if self.bytes.get(self.at) == Some(&b'0')
            && self.bytes.get(self.at + 1).is_some_and(u8::is_ascii_digit)
        {
            return None;
        }
        let mut value: u64 = 0;
        let start = self.at;
        while let Some(digit) = self.bytes.get(self.at).filter(|b| b.is_ascii_digit()) {
            value = value
                .checked_mul(10)?
                .checked_add(u64::from(digit - b'0'))?;
            self.at += 1;
        }
        let ends = matches!(
            self.bytes.get(self.at),
            None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
        );
        (self.at > start && ends).then_some(value)
    }

    /// [`InfoCursor::count`], or `null`.
    fn optional_count(&mut self) -> Option<Option<u64>> {
        if self.bytes.get(self.at..self.at + 4) == Some(b"null") {
            self.at += 4;
            return Some(None);
        }
        self.count().map(Some)
    }

    /// `text`, exactly.
    fn literal(&mut self, text: &[u8]) -> Option<()> {
        let rest = self.bytes.get(self.at..)?;
        rest.starts_with(text).then(|| self.at += text.len())
    }

    /// An info as Codex writes it, see [`token_info_as_codex_writes_it`]; the cursor stops
    /// after it.
    fn info_as_codex_writes_it(&mut self) -> Option<TokenInfo> {
        self.literal(b"{\"total_token_usage\":")?;
        let total = self.usage_as_codex_writes_it()?;
        self.literal(b",\"last_token_usage\":")?;
        let last = self.usage_as_codex_writes_it()?;
        self.literal(b",\"model_context_window\":")?;
        let context_window = self.optional_count()?;
        self.literal(b"}")?;
        Some(TokenInfo {
            total,
            last,
            context_window,
        })
    }

    /// A usage object as Codex writes it, see [`token_info_as_codex_writes_it`].
    fn usage_as_codex_writes_it(&mut self) -> Option<Usage> {
        const KEYS: [&[u8]; 5] = [
            b"{\"input_tokens\":",
            b",\"cached_input_tokens\":",
            b",\"output_tokens\":",
            b",\"reasoning_output_tokens\":",
            b",\"total_tokens\":",
        ];
        let mut counts = [0; 5];
        for (count, key) in counts.iter_mut().zip(KEYS) {
            self.literal(key)?;
            *count = self.count()?;
        }
        self.literal(b"}")?;
        Some(usage_of(counts, None))
    }

    /// A usage object, with [`UsagePayload`]'s defaults.
    fn usage(&mut self) -> Option<Usage> {
        let mut counts: [Option<u64>; 5] = [None; 5];
        let mut cache_write = None;
        self.object(|cursor, key| {
            let slot = match key {
                b"input_tokens" => 0,
                b"cached_input_tokens" => 1,
                b"output_tokens" => 2,
                b"reasoning_output_tokens" => 3,
                b"total_tokens" => 4,
                b"cache_write_input_tokens" => {
                    return set_once(&mut cache_write, cursor.optional_count()?);
                }
                _ => return cursor.skip_value(),
            };
            set_once(&mut counts[slot], cursor.count()?)
        })?;
        Some(usage_of(
            counts.map(|c| c.unwrap_or(0)),
            cache_write.flatten(),
        ))
    }
}

/// A usage from its counts in Codex's key order: input, cached input, output, reasoning
/// output, total.
fn usage_of(counts: [u64; 5], cache_write_input_tokens: Option<u64>) -> Usage {
    let [input, cached, output, reasoning, total] = counts;
    Usage {
        input_tokens: input,
        cached_input_tokens: cached,
        cache_write_input_tokens,
        output_tokens: output,
        reasoning_output_tokens: reasoning,
        total_tokens: total,
    }
}

fn session_meta(map: &Map<String, Value>) -> SessionMeta {
    let base_instructions = match map.get("base_instructions") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(o)) => value_str(o, "text"),
        _ => None,
    };
    let dynamic_tools = map
        .get("dynamic_tools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter().map(Value::to_string).collect());
    SessionMeta {
        id: value_str(map, "id"),
        forked_from_id: value_str(map, "forked_from_id"),
        timestamp: value_str(map, "timestamp"),
        cwd: value_str(map, "cwd"),
        originator: value_str(map, "originator"),
        cli_version: value_str(map, "cli_version"),
        model_provider: value_str(map, "model_provider"),
        user_instructions: value_str(map, "instructions"),
        base_instructions,
        dynamic_tools,
    }
}

/// The `turn_context` fields [`turn_context`] reads.
const TURN_CONTEXT_FIELDS: [&str; 12] = [
    "turn_id",
    "cwd",
    "model",
    "effort",
    "collaboration_mode",
    "summary",
    "verbosity",
    "base_instructions",
    "final_output_json_schema",
    "approval_policy",
    "sandbox_policy",
    "current_date",
];

/// A `turn_context` payload read as [`turn_context`] reads its map, without building the map:
/// members are found by skipping values, strings are read as text, and objects promptc reads
/// a member of stay raw JSON, checked as the map would check them ([`Checked`]) but not built
/// (a `collaboration_mode` holds kilobytes of instructions). `None`, and the caller builds the
/// whole map, which reads it or says why not, whenever the two reads could differ: a key
/// promptc looks up written with escapes (unescaped by the map) or twice (the map checks both
/// values), a read value nested deeply or holding serde_json's raw-value key, or one the map's
/// parse would reject (a number out of range; a lone surrogate never gets here, its line was
/// skipped). Fields promptc does not read are checked as every line's are (as JSON, not for
/// number range or depth), which is also how Codex reads them.
fn turn_context_fields(json: &str) -> Option<TurnContext> {
    // The payload was checked with its line: its members are found by skipping values, not
    // parsing them. A read key written twice is left to the map, which checks both values.
    let mut raws: [Option<&str>; TURN_CONTEXT_FIELDS.len()] = Default::default();
    head::for_each_member(json, |key, value| {
        if key.contains('\\') {
            return Err(());
        }
        if let Some(index) = TURN_CONTEXT_FIELDS.iter().position(|field| *field == key)
            && raws[index].replace(value).is_some()
        {
            return Err(());
        }
        Ok(())
    })?
    .ok()?;
    let mut fields: [Option<Field<'_>>; TURN_CONTEXT_FIELDS.len()] = Default::default();
    let mut schema: Option<Value> = None;
    for (index, raw) in raws.iter().enumerate() {
        let Some(raw) = *raw else {
            continue;
        };
        fields[index] = Some(if raw.starts_with('"') {
            Field::Text(head::string_text(raw).ok()?)
        } else if TURN_CONTEXT_FIELDS[index] == "final_output_json_schema" {
            // Kept as a value: it is printed back as JSON, in the map's form.
            schema = Some(field_value(raw)?);
            continue;
        } else {
            // Checked here, read member by member below. Deep values are left to the map.
            if head::nesting_depth(raw) >= SHALLOW {
                return None;
            }
            serde_json::from_str::<Checked>(raw).ok()?;
            Field::Raw(raw)
        });
    }
    // Taken, not cloned: each field is asked for once, and texts can be long.
    let fields = std::cell::RefCell::new(fields);
    turn_context(|key| {
        let index = TURN_CONTEXT_FIELDS.iter().position(|field| *field == key)?;
        match &schema {
            Some(value) if key == "final_output_json_schema" => Some(Field::Value(value)),
            _ => fields.borrow_mut()[index].take(),
        }
    })
    .ok()
}

/// Values nested less deeply than this cannot reach serde_json's recursion limit (128) inside
/// a payload, so checking them alone gives the map's verdict; deeper ones go to the map.
const SHALLOW: usize = 100;

/// A read field's value as the map builds it, the depth limit falling at the same place:
/// inside the payload's braces.
fn field_value(raw: &str) -> Option<Value> {
    if raw.starts_with(['{', '[']) {
        match serde_json::from_str::<Value>(&format!("[{raw}]")).ok()? {
            Value::Array(mut wrapped) => wrapped.pop(),
            _ => None,
        }
    } else {
        serde_json::from_str(raw).ok()
    }
}

/// Any JSON value, accepted exactly when a `serde_json::Value` would be (numbers in range,
/// nesting within the limit, escapes valid), with nothing built. Objects with serde_json's
/// raw-value key are not accepted: `Value` reads them otherwise (their one member's string as
/// JSON), so they are left to the map.
struct Checked;

/// serde_json's marker key for raw values (the `raw_value` feature), which `Value` reads
/// specially.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// An object key, unescaped, rejected when it is [`RAW_VALUE_KEY`].
struct PlainKey;

impl<'de> Deserialize<'de> for PlainKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<PlainKey, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PlainKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<PlainKey, E> {
                if key == RAW_VALUE_KEY {
                    Err(E::custom("serde_json's raw-value key"))
                } else {
                    Ok(PlainKey)
                }
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Checked, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Checked;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_unit<E>(self) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Checked, A::Error> {
                while map.next_entry::<PlainKey, Checked>()?.is_some() {}
                Ok(Checked)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A key written with escapes where promptc looks a member up: only the map read unescapes it.
#[derive(Debug)]
struct EscapedKey;

/// A `turn_context` field's value: a string's text, a checked value's raw JSON, or a value of
/// the map read.
enum Field<'v> {
    Text(Cow<'v, str>),
    Raw(&'v str),
    Value(&'v Value),
}

impl<'v> Field<'v> {
    fn is_object(&self) -> bool {
        match self {
            Field::Text(_) => false,
            Field::Raw(raw) => raw.starts_with('{'),
            Field::Value(value) => value.is_object(),
        }
    }

    fn into_string(self) -> Option<String> {
        match self {
            Field::Text(text) => Some(text.into_owned()),
            Field::Raw(_) => None,
            Field::Value(value) => value.as_str().map(str::to_string),
        }
    }

    /// Member `key` of an object (the last one written, as in the map); `None` for other
    /// values.
    fn member(&self, key: &str) -> Result<Option<Field<'v>>, EscapedKey> {
        match self {
            Field::Text(_) => Ok(None),
            Field::Value(value) => Ok(value.as_object().and_then(|o| o.get(key)).map(Field::Value)),
            Field::Raw(raw) => {
                let mut found = None;
                let walked = head::for_each_member(raw, |name, value| {
                    if name.contains('\\') {
                        return Err(EscapedKey);
                    }
                    if name == key {
                        found = Some(value);
                    }
                    Ok(())
                });
                match walked {
                    None => return Ok(None),
                    Some(walked) => walked?,
                }
                Ok(match found {
                    Some(raw) if raw.starts_with('"') => {
                        head::string_text(raw).ok().map(Field::Text)
                    }
                    Some(raw) => Some(Field::Raw(raw)),
                    None => None,
                })
            }
        }
    }

    /// The text of string member `key`.
    fn member_string(&self, key: &str) -> Result<Option<String>, EscapedKey> {
        Ok(self.member(key)?.and_then(Field::into_string))
    }
}

/// A `turn_context` from its fields (`field` looks one up by name; only
/// [`TURN_CONTEXT_FIELDS`] are asked for, each once).
fn turn_context<'v>(field: impl Fn(&str) -> Option<Field<'v>>) -> Result<TurnContext, EscapedKey> {
    let string = |key: &str| field(key).and_then(Field::into_string);
    let sandbox = match field("sandbox_policy") {
        Some(policy) if policy.is_object() => match policy.member_string("type")? {
            Some(kind) => Some(kind),
            None => policy.member_string("mode")?,
        },
        policy => policy.and_then(Field::into_string),
    };
    let collaboration_effort = match field("collaboration_mode") {
        Some(mode) => match mode.member("settings")? {
            Some(settings) => settings.member_string("reasoning_effort")?,
            None => None,
        },
        None => None,
    };
    let base_instructions = match field("base_instructions") {
        Some(base) if base.is_object() => base.member_string("text")?,
        base => base.and_then(Field::into_string),
    };
    Ok(TurnContext {
        turn_id: string("turn_id"),
        cwd: string("cwd"),
        model: string("model"),
        effort: string("effort").or(collaboration_effort),
        summary: string("summary"),
        verbosity: string("verbosity"),
        base_instructions,
        output_schema: field("final_output_json_schema").and_then(|schema| match schema {
            Field::Text(text) => Some(Value::String(text.into_owned()).to_string()),
            // Never raw: the schema is read as a value.
            Field::Value(Value::Null) | Field::Raw(_) => None,
            Field::Value(value) => Some(value.to_string()),
        }),
        approval_policy: string("approval_policy"),
        sandbox,
        current_date: string("current_date"),
    })
}

mod head;
mod scan;

// For reading items' texts again (`tokens`): the same walk over checked JSON.
pub(crate) use head::{escaped_at, for_each_element, for_each_member};
pub(crate) use scan::{hex4, unescaped_len};

#[cfg(test)]
mod tests;

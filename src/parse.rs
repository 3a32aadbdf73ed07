//! Loading: bytes of a rollout (any generation) into a [`Rollout`]. Every non-blank line ends up
//! either as a record or as a skipped line with a reason; nothing is dropped silently and nothing
//! here panics on input. No I/O: the caller reads the file (or stdin) and passes the bytes.
//!
//! One reading path per line, serde_json's: [`line`] reads the envelope (which line kind it is),
//! then the module of that kind reads its payload ([`event`], [`turn_context`], [`item`],
//! [`legacy`] for eras A and A′). Adding a Codex line type or field touches one of them.

use std::ops::Range;
use std::sync::Arc;

use crate::model::{
    Bytes, Compacted, Generation, Item, Record, RecordKind, Rollout, SessionMeta, SkippedLine,
    Text, TurnContext,
};
use crate::parallel::Threads;

mod event;
mod item;
mod legacy;
mod line;
mod turn_context;

use line::{Envelope, LineError, LineKind};

pub use line::unix_seconds;

/// How strict loading is, and how many threads may read lines.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// Any skipped line is an error.
    pub strict: bool,
    /// Threads that may read parts of the input at once (0 or 1: the calling thread only).
    /// The result does not depend on it.
    pub threads: Threads,
    /// The fewest bytes worth a thread of their own (default 1 MiB): the input is cut into at
    /// most one part per this many bytes. Tests set it small, to cut small inputs.
    pub min_part_bytes: usize,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            strict: false,
            threads: Threads::default(),
            min_part_bytes: 1 << 20,
        }
    }
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

/// Load a rollout from its bytes. `name` is used in records and messages.
///
/// Lines are independent once the file's generation is known (it decides how era A items are
/// read): the lines up to the first one that shows it are read first, then the rest is cut at
/// newlines into one part per thread, the parts read side by side and joined in order.
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
    let mut head = Loader::default();
    let rest = head.read(&bytes, 0..bytes.len(), options.strict, true);
    let stopped = options.strict && !head.skipped.is_empty();
    let generation = head.generation;
    let mut parts = vec![head];
    if !stopped {
        let ranges = split_at_newlines(
            &bytes,
            rest..bytes.len(),
            options.threads.count,
            options.min_part_bytes,
        );
        parts.extend(crate::parallel::map(ranges.len(), options.threads, |k| {
            let mut part = Loader {
                generation,
                ..Loader::default()
            };
            part.read(&bytes, ranges[k].clone(), options.strict, false);
            part
        }));
    }
    let loader = Loader::join(parts);
    if options.strict
        && let Some(skipped) = loader.skipped.first()
    {
        return Err(LoadError::Strict {
            name: name.to_string(),
            line: skipped.line,
            column: skipped.column,
            reason: skipped.reason.clone(),
        });
    }
    if loader.records.is_empty() {
        let Some(first) = loader.skipped.first() else {
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
    let mut rollout = Rollout {
        name: name.to_string(),
        bytes,
        generation: loader.generation.unwrap_or(Generation::Unknown),
        records: loader.records,
        skipped: loader.skipped,
        items: loader.items,
        meta: None,
        notes: loader.notes,
    };
    settle_meta(&mut rollout, 0);
    Ok(rollout)
}

/// Read more of a growing file (for `watch`): `bytes` is the whole input so far, `rollout` what
/// [`load`] (not strict) or this function made of its first `from` bytes, which end just after
/// a newline and hold `lines` lines, blank ones included. The lines of `bytes[from..]` are read
/// into `rollout` as `load` would have read them with the rest, so the result is `load`'s of
/// `bytes`; costs the new lines only. Returns the lines read in all.
pub fn load_more(rollout: &mut Rollout, bytes: Bytes, from: usize, lines: usize) -> usize {
    let mut part = Loader {
        generation: (rollout.generation != Generation::Unknown).then_some(rollout.generation),
        ..Loader::default()
    };
    part.read(&bytes, from..bytes.len(), false, false);
    part.rebase(lines, rollout.items.len());
    let records = rollout.records.len();
    rollout.bytes = bytes;
    rollout.generation = part.generation.unwrap_or(Generation::Unknown);
    rollout.records.append(&mut part.records);
    rollout.items.append(&mut part.items);
    rollout.skipped.append(&mut part.skipped);
    rollout.notes.append(&mut part.notes);
    settle_meta(rollout, records);
    lines + part.lines
}

/// Cut `range`, which starts at a line start, into up to `count` parts of about the same size
/// and at least `min_bytes` each, each but the last ending just after a newline.
fn split_at_newlines(
    bytes: &[u8],
    range: Range<usize>,
    count: usize,
    min_bytes: usize,
) -> Vec<Range<usize>> {
    let count = count.min(range.len() / min_bytes.max(1)).max(1);
    let size = range.len() / count;
    let mut parts = Vec::with_capacity(count);
    let mut start = range.start;
    for k in 1..count {
        let target = (range.start + k * size).max(start);
        match memchr::memchr(b'\n', &bytes[target..range.end]) {
            Some(newline) if target + newline + 1 < range.end => {
                parts.push(start..target + newline + 1);
                start = target + newline + 1;
            }
            _ => break,
        }
    }
    parts.push(start..range.end);
    parts
}

/// The first `session_meta` (or bare legacy meta line) decides the thread id; later ones, and a
/// first one that is not the first line, get a note. Records before `from` are settled already.
fn settle_meta(rollout: &mut Rollout, from: usize) {
    let first_skipped = rollout.skipped.first().map(|s| s.line);
    let mut meta_notes = Vec::new();
    for (index, record) in rollout.records.iter().enumerate().skip(from) {
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

/// What has been read so far, of the whole input or of a part of it. Line numbers and item
/// ids count from the part's start until [`Loader::join`] makes them file-wide.
#[derive(Default)]
struct Loader {
    records: Vec<Record>,
    skipped: Vec<SkippedLine>,
    items: Vec<Item>,
    notes: Vec<(usize, String)>,
    /// Lines read, blank ones included.
    lines: usize,
    /// Decided by the first line that shows it; it decides how era A items are read.
    generation: Option<Generation>,
    /// The last `turn_context` payload read, and what it read as: Codex writes the same one at
    /// nearly every step, and a repeat shares it instead of holding a copy.
    last_turn_context: Option<(Box<str>, Arc<TurnContext>)>,
}

impl Loader {
    /// Read the lines of `bytes[range]` (which starts at a line start and ends at the end of
    /// the input or just after a newline), stopping at the first skipped line when `strict`,
    /// and when `until_generation`, after the first line that shows the file's generation.
    /// Returns where it stopped.
    fn read(
        &mut self,
        bytes: &[u8],
        range: Range<usize>,
        strict: bool,
        until_generation: bool,
    ) -> usize {
        let mut start = range.start;
        while start < range.end {
            if strict && !self.skipped.is_empty() || until_generation && self.generation.is_some() {
                break;
            }
            let end =
                memchr::memchr(b'\n', &bytes[start..range.end]).map_or(range.end, |i| start + i);
            self.lines += 1;
            let line = &bytes[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.line(self.lines, start..start + line.len(), line);
            }
            start = (end + 1).min(range.end);
        }
        start
    }

    /// The parts, read in file order, as one: line numbers and item ids made file-wide. The
    /// largest part's lists are kept and the others moved into them, so that joining copies
    /// only the smaller parts (the records and items of a copied part are held twice meanwhile).
    fn join(mut parts: Vec<Loader>) -> Loader {
        let generation = parts.iter().find_map(|part| part.generation);
        let (mut lines, mut items) = (0, 0);
        for part in &mut parts {
            part.rebase(lines, items);
            lines += part.lines;
            items += part.items.len();
        }
        let largest = (0..parts.len())
            .max_by_key(|&k| parts[k].records.len() + parts[k].items.len())
            .unwrap_or(0);
        let after = parts.split_off(largest + 1);
        let Some(mut all) = parts.pop() else {
            return Loader::default();
        };
        let mut before = parts;
        all.records.splice(
            0..0,
            before
                .iter_mut()
                .flat_map(|p| std::mem::take(&mut p.records)),
        );
        all.items.splice(
            0..0,
            before.iter_mut().flat_map(|p| std::mem::take(&mut p.items)),
        );
        all.skipped.splice(
            0..0,
            before
                .iter_mut()
                .flat_map(|p| std::mem::take(&mut p.skipped)),
        );
        all.notes.splice(
            0..0,
            before.iter_mut().flat_map(|p| std::mem::take(&mut p.notes)),
        );
        for mut part in after {
            all.records.append(&mut part.records);
            all.items.append(&mut part.items);
            all.skipped.append(&mut part.skipped);
            all.notes.append(&mut part.notes);
        }
        all.lines = lines;
        all.generation = generation;
        all
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

    fn line(&mut self, number: usize, span: Range<usize>, line: &[u8]) {
        match self.record(number, span, line) {
            Ok(record) => self.records.push(record),
            Err(err) => {
                let excerpt = line::excerpt(line, err.column);
                self.skipped.push(SkippedLine {
                    line: number,
                    column: err.column,
                    reason: err.reason,
                    excerpt,
                })
            }
        }
    }

    fn record(
        &mut self,
        number: usize,
        span: Range<usize>,
        line: &[u8],
    ) -> Result<Record, LineError> {
        let text = std::str::from_utf8(line).map_err(|e| LineError {
            reason: "invalid UTF-8".into(),
            column: Some(e.valid_up_to() + 1),
        })?;
        let envelope = Envelope::read(text)?;
        // Where a borrowed piece of the line is in the file.
        let span_of = |part: &str| -> Range<usize> {
            let start = span.start + (part.as_ptr() as usize - text.as_ptr() as usize);
            start..start + part.len()
        };
        let (timestamp, unix_seconds) = match envelope.timestamp() {
            Some(timestamp) => {
                let seconds = unix_seconds(&timestamp);
                let text = match timestamp {
                    std::borrow::Cow::Borrowed(within) => Text::Span(span_of(within)),
                    std::borrow::Cow::Owned(unescaped) => Text::Owned(unescaped.into()),
                };
                (Some(text), seconds)
            }
            None => (None, None),
        };
        let kind = match envelope.kind()? {
            LineKind::Rollout { type_name, payload } => {
                self.note_generation(Generation::RolloutLines);
                let payload_span = span_of(payload);
                let column_base = payload_span.start - span.start;
                self.rollout_line(&type_name, payload, payload_span, number)
                    .map_err(|mut e| {
                        // Errors inside the payload count columns from the payload's start.
                        e.column = e.column.map(|c| c + column_base);
                        e
                    })?
            }
            LineKind::Tagged(record_type) => self.tagged_line(&record_type, text, number)?,
            LineKind::BareItem => {
                self.note_generation(Generation::PlainItems);
                RecordKind::Item(self.item(text, Text::Span(span.clone()), number)?)
            }
            LineKind::BareMeta => {
                self.note_generation(Generation::BareLegacy);
                RecordKind::SessionMeta(Box::new(legacy::bare_meta(text)?))
            }
            LineKind::NoType => {
                self.notes.push((
                    number,
                    "a JSON object with no `type`: kept, not replayed".to_string(),
                ));
                RecordKind::Unknown {
                    type_name: "(no type)".into(),
                }
            }
        };
        Ok(Record {
            line: number,
            span,
            timestamp,
            unix_seconds,
            newer_envelope: envelope.is_newer(),
            kind,
        })
    }

    /// A line of eras B to D, `{timestamp, [ordinal], type, payload}`, by its `type`. A new
    /// line type that carries nothing promptc reads goes in [`line::KNOWN_OTHER_LINE_TYPES`]; one
    /// that does gets an arm here and a module that reads its payload.
    fn rollout_line(
        &mut self,
        type_name: &str,
        payload: &str,
        payload_span: Range<usize>,
        number: usize,
    ) -> Result<RecordKind, LineError> {
        Ok(match type_name {
            "session_meta" => RecordKind::SessionMeta(Box::new(session_meta(type_name, payload)?)),
            "response_item" => {
                RecordKind::Item(self.item(payload, Text::Span(payload_span), number)?)
            }
            "turn_context" => RecordKind::TurnContext(self.turn_context(payload)?),
            "compacted" => RecordKind::Compacted(self.compacted(payload, payload_span, number)?),
            "event_msg" => RecordKind::Event(event::read(payload)?),
            other if line::KNOWN_OTHER_LINE_TYPES.contains(&other) => RecordKind::Other {
                type_name: other.to_string(),
            },
            other => {
                self.notes.push((
                    number,
                    format!("unknown line type `{other}`: kept, not replayed"),
                ));
                RecordKind::Unknown {
                    type_name: other.to_string(),
                }
            }
        })
    }

    /// The `turn_context` of `payload`: the last one again when `payload` repeats it.
    fn turn_context(&mut self, payload: &str) -> Result<Arc<TurnContext>, LineError> {
        if let Some((last, context)) = &self.last_turn_context
            && **last == *payload
        {
            return Ok(Arc::clone(context));
        }
        let context = Arc::new(turn_context::read(payload)?);
        self.last_turn_context = Some((payload.into(), Arc::clone(&context)));
        Ok(context)
    }

    fn note_generation(&mut self, generation: Generation) {
        self.generation.get_or_insert(generation);
    }
}

/// A `session_meta` payload (its `type_name` for messages).
fn session_meta(type_name: &str, payload: &str) -> Result<SessionMeta, LineError> {
    let map = line::object(type_name, payload)?;
    Ok(legacy::session_meta(&map))
}

#[cfg(test)]
mod tests;

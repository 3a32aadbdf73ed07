//! Loading: bytes of a rollout (any generation) into a [`Rollout`]. Every non-blank line ends up
//! either as a record or as a skipped line with a reason; nothing is dropped silently and nothing
//! here panics on input. No I/O of its own: the caller passes the bytes, or a positioned read.
//!
//! One reading path per line, serde_json's: [`line`] reads the envelope (which line kind it is),
//! then the module of that kind reads its payload ([`event`], [`turn_context`], [`item`],
//! [`legacy`] for eras A and A′). Adding a Codex line type or field touches one of them.

use std::ops::Range;
use std::sync::Arc;

use crate::agents::codex::model::{
    Compacted, Generation, Item, Record, RecordKind, Rollout, SkippedLine, TurnContext,
};
use crate::core::parallel::Threads;

mod event;
mod item;
mod legacy;
mod line;
mod turn_context;

pub use crate::core::lines::unix_seconds;
use line::{Envelope, LineError, LineKind};

/// How strict loading is, and how many threads may read lines.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// Any skipped line is an error.
    pub strict: bool,
    /// Threads that may read parts of the input at once (0 or 1: the calling thread only).
    /// The result does not depend on it.
    pub threads: Threads,
    /// The fewest bytes worth a thread of their own (default 1 MiB): the input is cut into at
    /// most one range per this many bytes, read in pieces of twice as many. Tests set it small,
    /// to cut small inputs.
    pub min_part_bytes: usize,
    /// Keep every item's JSON (the default). Off, only messages keep theirs (replay reads them):
    /// for commands that show no other item's text, which then hold a fraction of the file.
    pub keep_item_json: bool,
    /// Estimate each item's tokens as it is read (`Item::tokens`), for plans without its JSON.
    pub estimate_tokens: bool,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            strict: false,
            threads: Threads::default(),
            min_part_bytes: 1 << 20,
            keep_item_json: true,
            estimate_tokens: false,
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
    #[error("{name}: cannot read: {source}")]
    Read {
        name: String,
        source: std::io::Error,
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

/// Load a rollout from its bytes: [`load_at`] reading them from memory.
pub fn load(
    name: &str,
    bytes: impl AsRef<[u8]>,
    options: LoadOptions,
) -> Result<Rollout, LoadError> {
    let bytes = bytes.as_ref();
    load_at(name, bytes.len() as u64, &read_from(bytes), options)
}

/// Positioned reads of `bytes` in memory: a read at or past their end gives 0.
fn read_from(bytes: &[u8]) -> impl Fn(u64, &mut [u8]) -> std::io::Result<usize> + Sync + '_ {
    move |offset, buffer| {
        let start = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
        let read = buffer.len().min(bytes.len() - start);
        buffer[..read].copy_from_slice(&bytes[start..start + read]);
        Ok(read)
    }
}

/// Positioned reads of an input: `read_at(offset, buffer)` reads the bytes at `offset` into
/// `buffer` and returns how many it read, 0 at the end, as `pread` does.
pub type ReadAt<'a> = dyn Fn(u64, &mut [u8]) -> std::io::Result<usize> + Sync + 'a;

/// Load a rollout from an input read at any offset (a file, `len` bytes long when asked),
/// never held whole: a line is dropped once read, and only what it says is kept (items keep a
/// copy of their JSON). Lines are independent once the file's generation is known (it decides
/// how era A items are read): the lines up to the one that shows it are read first, the rest
/// cut at line starts into one range per thread, each read a piece at a time by its thread
/// (which never waits for another), and the parts appended in order. Bytes past `len` (a file
/// that grew meanwhile) come last; a file that shrank or changed gives the lines read.
pub fn load_at(
    name: &str,
    len: u64,
    read_at: &ReadAt,
    options: LoadOptions,
) -> Result<Rollout, LoadError> {
    let failed = |source| LoadError::Read {
        name: name.to_string(),
        source,
    };
    let mut magic = [0; ZSTD_MAGIC.len()];
    let mut got = 0;
    while got < magic.len()
        && let read @ 1.. = read_at(got as u64, &mut magic[got..]).map_err(failed)?
    {
        got += read;
    }
    if magic == ZSTD_MAGIC {
        return Err(LoadError::NotARollout {
            name: name.to_string(),
            line: 1,
            reason: "zstd-compressed data; decompress it first".into(),
        });
    }
    // Bytes a thread reads at a time: two of the smallest parts (2 MiB by default: little memory
    // beside the rollout; the tests' small parts cut lines across pieces), at most the input.
    let piece = (options.min_part_bytes.max(1).saturating_mul(2))
        .min(usize::try_from(len).unwrap_or(usize::MAX).max(64 << 10));
    let mut lines = Part::new(None, options);
    lines.at_file_start = true;
    // The lines up to the one that tells the generation (nearly always the first: in small
    // pieces), then the ranges after them, then what the file gained meanwhile.
    let mut at = 0;
    let head = piece.min(64 << 10);
    let more = lines.push_from((&mut at, u64::MAX), head, read_at, true);
    if more.map_err(failed)? && !lines.stopped() {
        let start = at - lines.partial.len() as u64;
        lines.partial.clear();
        let end = len.max(start);
        let bounds = range_bounds(read_at, start..end, options).map_err(failed)?;
        let generation = lines.generation;
        let parts = crate::core::parallel::map(bounds.len() - 1, options.threads, |k| {
            let mut range = Part::new(generation, options);
            let (mut from, to) = (bounds[k], bounds[k + 1]);
            let whole = range.push_from((&mut from, to), piece, read_at, false)?;
            if whole && to != end {
                // A line cut by a change of the file, read as it is.
                range.finish_line();
            }
            Ok((range, whole))
        });
        for part in parts {
            let (mut range, whole) = part.map_err(failed)?;
            let partial = std::mem::take(&mut range.partial);
            lines.append(range);
            // Only the first range to reach `end`, or the one the input ended in, ends mid-line.
            if !partial.is_empty() {
                lines.partial = partial;
            }
            if !whole {
                // The file shrank: the ranges after this one read what is no longer there.
                lines.finish_line();
                return finish(name, lines);
            }
        }
        at = end;
        let tail = lines.push_from((&mut at, u64::MAX), piece, read_at, false);
        tail.map_err(failed)?;
    }
    lines.finish_line();
    finish(name, lines)
}

impl Part {
    fn new(generation: Option<Generation>, options: LoadOptions) -> Part {
        let mut part = Part::default();
        (part.generation, part.options) = (generation, options);
        part
    }

    /// Read from `*at` up to `end` in pieces of `piece` bytes, until a skipped line when strict,
    /// and when `head`, until the generation is known: `true` when it stopped for one of these,
    /// `false` at the input's end.
    fn push_from(
        &mut self,
        (at, end): (&mut u64, u64),
        piece: usize,
        read_at: &ReadAt,
        head: bool,
    ) -> std::io::Result<bool> {
        let left = |at: u64| usize::try_from(end - at).unwrap_or(usize::MAX);
        let mut piece = vec![0; piece.min(left(*at))];
        while *at < end && !self.stopped() && !(head && self.generation.is_some()) {
            let wanted = piece.len().min(left(*at));
            match read_at(*at, &mut piece[..wanted])? {
                0 => return Ok(false),
                read => {
                    self.push(&piece[..read]);
                    *at += read as u64;
                }
            }
        }
        Ok(true)
    }

    /// Read the lines `bytes`, the input's next bytes, complete.
    fn push(&mut self, mut bytes: &[u8]) {
        if !self.partial.is_empty() {
            let Some(newline) = memchr::memchr(b'\n', bytes) else {
                self.partial.extend_from_slice(bytes);
                return;
            };
            self.partial.extend_from_slice(&bytes[..=newline]);
            bytes = &bytes[newline + 1..];
            let line = std::mem::take(&mut self.partial);
            self.read(&line);
        }
        let complete = memchr::memrchr(b'\n', bytes).map_or(0, |newline| newline + 1);
        self.read(&bytes[..complete]);
        self.partial.extend_from_slice(&bytes[complete..]);
    }

    /// Read the unfinished line as it is (the input ended without its newline).
    fn finish_line(&mut self) {
        let line = std::mem::take(&mut self.partial);
        self.read(&line);
    }

    /// Strict loading stops at the first skipped line.
    fn stopped(&self) -> bool {
        self.options.strict && !self.skipped.is_empty()
    }
}

/// Where the ranges of `range` start, one per thread (each at least `min_part_bytes` long),
/// then `range.end`: about equal cuts, each moved to the next line start.
fn range_bounds(
    read_at: &ReadAt,
    range: Range<u64>,
    options: LoadOptions,
) -> std::io::Result<Vec<u64>> {
    let length = range.end - range.start;
    let count = (options.threads.count as u64)
        .min(length / options.min_part_bytes.max(1) as u64)
        .max(1);
    let mut bounds = vec![range.start];
    for k in 1..count {
        let cut = (range.start + length * k / count).max(bounds[bounds.len() - 1]);
        bounds.push(next_line_start(read_at, cut, range.end)?);
    }
    bounds.push(range.end);
    Ok(bounds)
}

/// The first line start at or after `at` (which is past the input's start), or `end` when
/// there is none before it.
fn next_line_start(read_at: &ReadAt, at: u64, end: u64) -> std::io::Result<u64> {
    let mut window = vec![0; 64 << 10];
    // A newline just before `at` makes it a line start.
    let mut from = at - 1;
    while from < end {
        let read = read_at(from, &mut window)?;
        if read == 0 {
            break;
        }
        if let Some(newline) = memchr::memchr(b'\n', &window[..read]) {
            return Ok((from + newline as u64 + 1).min(end));
        }
        from += read as u64;
    }
    Ok(end)
}

/// The rollout of the lines read, or why there is none.
fn finish(name: &str, read: Part) -> Result<Rollout, LoadError> {
    let name = name.to_string();
    if read.options.strict
        && let Some(skipped) = read.skipped.first()
    {
        return Err(LoadError::Strict {
            name,
            line: skipped.line,
            column: skipped.column,
            reason: skipped.reason.clone(),
        });
    }
    if read.records.is_empty() {
        let Some(first) = read.skipped.first() else {
            return Err(LoadError::Empty { name });
        };
        return Err(LoadError::NotARollout {
            name,
            line: first.line,
            reason: first.reason.clone(),
        });
    }
    let mut rollout = Rollout {
        name,
        generation: read.generation.unwrap_or(Generation::Unknown),
        records: read.records,
        skipped: read.skipped,
        items: read.items,
        meta: None,
        notes: read.notes,
    };
    settle_meta(&mut rollout, 0);
    Ok(rollout)
}

/// Read more of a growing file (`watch`): `bytes`, whole lines after the `lines` lines read by
/// [`load`] (default options) or by this function, as `load` of the whole would. Returns the
/// lines read in all.
pub fn load_more(rollout: &mut Rollout, bytes: &[u8], lines: usize) -> usize {
    let generation = (rollout.generation != Generation::Unknown).then_some(rollout.generation);
    let mut part = Part::new(generation, LoadOptions::default());
    part.at_file_start = lines == 0;
    part.read(bytes);
    part.rebase(lines, rollout.items.len());
    let records = rollout.records.len();
    rollout.generation = part.generation.unwrap_or(Generation::Unknown);
    rollout.records.append(&mut part.records);
    rollout.items.append(&mut part.items);
    rollout.skipped.append(&mut part.skipped);
    rollout.notes.append(&mut part.notes);
    settle_meta(rollout, records);
    lines + part.lines
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

/// What has been read of some lines: of the whole input so far, or of a range.
/// Line numbers and item ids count from the part's start until [`Part::append`] makes them
/// file-wide.
#[derive(Default)]
struct Part {
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
    /// Strictness, and whether items keep their JSON.
    options: LoadOptions,
    /// The start of a line whose newline has not come.
    partial: Vec<u8>,
    /// The next line read is the file's first (a byte order mark is passed over there).
    at_file_start: bool,
}

impl Part {
    /// Read the lines of `bytes` (which start at a line start and end at the end of the input
    /// or just after a newline), stopping at the first skipped line when `strict`.
    fn read(&mut self, bytes: &[u8]) {
        let mut start = 0;
        while start < bytes.len() && !self.stopped() {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
            self.lines += 1;
            let line = &bytes[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let (line, bom) = match std::mem::take(&mut self.at_file_start) {
                true => crate::core::lines::without_bom(line),
                false => (line, 0),
            };
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.line(self.lines, line);
                if let Some(skipped) = self.skipped.last_mut().filter(|s| s.line == self.lines) {
                    skipped.column = skipped.column.map(|c| c + bom);
                }
            }
            start = end + 1;
        }
    }

    /// `part`, read from the lines after these, appended: its line numbers and item ids made
    /// file-wide.
    fn append(&mut self, mut part: Part) {
        part.rebase(self.lines, self.items.len());
        self.lines += part.lines;
        self.records.append(&mut part.records);
        self.items.append(&mut part.items);
        self.skipped.append(&mut part.skipped);
        self.notes.append(&mut part.notes);
        self.generation = self.generation.or(part.generation);
        self.last_turn_context = part.last_turn_context.or(self.last_turn_context.take());
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
        self.items
            .iter_mut()
            .for_each(|item| item.line += line_base);
        self.skipped
            .iter_mut()
            .for_each(|skipped| skipped.line += line_base);
        self.notes
            .iter_mut()
            .for_each(|(line, _)| *line += line_base);
    }

    fn line(&mut self, number: usize, line: &[u8]) {
        match self.record(number, line) {
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

    fn record(&mut self, number: usize, line: &[u8]) -> Result<Record, LineError> {
        let text = std::str::from_utf8(line).map_err(|e| LineError {
            reason: "invalid UTF-8".into(),
            column: Some(e.valid_up_to() + 1),
        })?;
        let envelope = Envelope::read(text)?;
        let unix_seconds = envelope.timestamp().and_then(|t| unix_seconds(&t));
        let kind = match envelope.kind()? {
            LineKind::Rollout { type_name, payload } => {
                self.note_generation(Generation::RolloutLines);
                let column_base = payload.as_ptr() as usize - text.as_ptr() as usize;
                self.rollout_line(&type_name, text, payload, number)
                    .map_err(|mut e| {
                        // Errors inside the payload count columns from the payload's start.
                        e.column = e.column.map(|c| c + column_base);
                        e
                    })?
            }
            LineKind::Tagged(record_type) => self.tagged_line(&record_type, text, number)?,
            LineKind::BareItem => {
                self.note_generation(Generation::PlainItems);
                RecordKind::Item(self.item(text, number)?)
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
        line: &str,
        payload: &str,
        number: usize,
    ) -> Result<RecordKind, LineError> {
        Ok(match type_name {
            "session_meta" => {
                let map = line::object(type_name, payload)?;
                RecordKind::SessionMeta(Box::new(legacy::session_meta(&map)))
            }
            "response_item" => RecordKind::Item(self.item(payload, number)?),
            "turn_context" => RecordKind::TurnContext(self.turn_context(payload)?),
            "compacted" => RecordKind::Compacted(self.compacted(line, payload, number)?),
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

#[cfg(test)]
mod tests;

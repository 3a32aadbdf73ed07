//! Reading a Claude Code transcript: one record per line, every line accounted for.
//!
//! Each line is checked as JSON once and read through one borrowed envelope of the fields any
//! line type uses; the kind comes from `type`. A line that is not a JSON object, or a known
//! line of the wrong shape, becomes a [`SkippedLine`] naming its number, column and reason; a
//! line of a type promptc does not know is kept as [`LineKind::Unknown`] and named in the
//! transcript's notes. Input arrives in pieces ([`Loader::push`]), so a file is never held
//! whole and `watch` can feed appended bytes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::core::lines::SkippedLine;
use crate::core::parallel::Threads;

mod lean;
mod line;
mod neighbours;
mod pieces;

use lean::Lean;
use line::{Str, read_line};

pub use super::record::{
    ApiRequest, Assistant, Attachment, Line, LineContext, LineId, LineKind, Sha256Name, System,
    Transcript, Usage, User,
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
    let (head, _) = crate::core::lines::without_bom(head);
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

/// The note naming the blocks of line `number` promptc does not read.
fn unread_note(number: usize, unread: &[usize]) -> Option<String> {
    let list = unread
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    match unread.len() {
        0 => None,
        1 => Some(format!(
            "line {number}: `message.content` block {list} is not a content block promptc reads (kept and sent as written; it pairs no call)"
        )),
        _ => Some(format!(
            "line {number}: `message.content` blocks {list} are not content blocks promptc reads (kept and sent as written; they pair no call)"
        )),
    }
}

/// Load a whole transcript held in memory.
pub fn load(name: &str, bytes: &[u8]) -> Result<Transcript, LoadError> {
    let mut loader = Loader::new(name);
    loader.push(bytes);
    loader.finish()
}

/// What recording lines into a transcript keeps from one line to the next: the lines seen, the
/// unknown line types met, what a lean load left out. A transcript read whole keeps it, so that
/// lines appended later (`watch`) are recorded as a whole load would have recorded them.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    /// Lines seen (blank ones too).
    line_number: usize,
    /// Unknown line types: how many, and the first line.
    unknown: BTreeMap<Box<str>, (usize, usize)>,
    /// Contents left out (see [`Loader::lean`]), and what may call for them.
    lean: Option<Lean>,
    /// The transcript's notes that lines made (the unknown types' notes follow them).
    line_notes: usize,
    /// The texts shared with the lines read before on this thread (boxed: a watch holds it).
    repeated: Box<line::Repeated>,
    /// The versions in [`Transcript::versions`].
    versions: foldhash::HashSet<Arc<str>>,
}

impl Recorder {
    /// Record complete lines (each ended by a newline) read after those seen, on this thread.
    pub fn read_lines(&mut self, t: &mut Transcript, mut bytes: &[u8]) {
        self.reopen(t);
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            if let Some((number, parsed)) = self.read_next(&bytes[..end], false) {
                self.record(t, number, parsed);
            }
            bytes = &bytes[end + 1..];
        }
        self.close(t);
    }

    /// Read the line after those seen (without its newline), on this thread; `None` for a
    /// blank line.
    fn read_next(&mut self, bytes: &[u8], last_without_newline: bool) -> Option<pieces::Parsed> {
        self.line_number += 1;
        let lean = self.lean.is_some();
        pieces::parse_one(
            bytes,
            self.line_number,
            last_without_newline,
            lean,
            &mut self.repeated,
        )
    }

    /// Lines seen (blank ones too).
    pub fn lines(&self) -> usize {
        self.line_number
    }

    /// The notes of the unknown types come off, so that lines' notes go before them.
    fn reopen(&self, t: &mut Transcript) {
        t.notes.truncate(self.line_notes);
    }

    /// The unknown types' notes, after the lines'.
    fn close(&self, t: &mut Transcript) {
        t.notes.truncate(self.line_notes);
        for (name, (count, first)) in &self.unknown {
            t.notes.push(format!(
                "{count} line(s) of unknown type `{name}` kept, not read (first at line {first})"
            ));
        }
    }

    /// Account for the non-blank lines of a run read, in order. The run's `uuid`s are noted
    /// first, in a loop of their own: notes independent of the work between them, so that
    /// their cache misses can overlap (in a large file each note misses; noted one a line
    /// between the rest of recording, they were most of its time). The lines' parents are
    /// looked up after: a parent noted for a later line of the run reads as not before its
    /// child, as one not yet noted does.
    fn record_run(&mut self, t: &mut Transcript, run: Vec<pieces::Parsed>) {
        // The index each line read takes in `t.lines` (skipped lines take none).
        let mut next = t.lines.len();
        let firsts: Vec<Option<usize>> = run
            .iter()
            .map(|(_, parsed)| {
                let line = parsed.as_ref().ok()?;
                let index = next;
                next += 1;
                t.uuids.first(line.uuid.as_ref()?, index)
            })
            .collect();
        for ((number, parsed), first) in run.into_iter().zip(firsts) {
            self.record_line(t, number, parsed.map(|line| (line, first)));
        }
        debug_assert_eq!(next, t.lines.len(), "each line noted under its index");
    }

    /// Account for a non-blank line read.
    fn record(&mut self, t: &mut Transcript, number: usize, parsed: Result<Line, SkippedLine>) {
        let parsed = parsed.map(|line| {
            let first = line
                .uuid
                .as_ref()
                .and_then(|u| t.uuids.first(u, t.lines.len()));
            (line, first)
        });
        self.record_line(t, number, parsed);
    }

    /// Account for a non-blank line read, its `uuid` noted: with the line, the earlier line of
    /// that uuid (its `duplicate_of`), `None` when it is the first.
    fn record_line(
        &mut self,
        t: &mut Transcript,
        number: usize,
        parsed: Result<(Line, Option<usize>), SkippedLine>,
    ) {
        t.non_blank_lines += 1;
        match parsed {
            Ok((mut line, first)) => {
                line.duplicate_of = first;
                if let LineKind::Unknown(name) = &line.kind {
                    self.unknown.entry(name.clone()).or_insert((0, number)).0 += 1;
                }
                if let LineKind::Assistant(a) = &line.kind
                    && a.unreadable_usage
                {
                    t.notes.push(format!(
                        "line {number}: `usage` of an unexpected shape, counted as none"
                    ));
                }
                let unread = match &line.kind {
                    LineKind::User(u) => &u.unread_blocks,
                    LineKind::Assistant(a) => &a.unread_blocks,
                    _ => &[][..],
                };
                if let Some(note) = unread_note(number, unread) {
                    t.notes.push(note);
                }
                self.line_notes = t.notes.len();
                if let Some(lean) = &mut self.lean {
                    t.left_out_named.any |= lean.see(&line);
                    let index = t.lines.len();
                    // `at > index`: not yet read, or noted for a later line of this run.
                    lean.parent_not_before |= line
                        .parent
                        .as_ref()
                        .is_some_and(|p| t.uuids.get(p).is_none_or(|at| at >= index));
                }
                let new_context = t
                    .lines
                    .last()
                    .is_none_or(|last| !Arc::ptr_eq(&last.context, &line.context));
                if new_context
                    && let Some(version) = &line.context.version
                    && self.versions.insert(version.clone())
                {
                    t.versions.push(version.clone());
                }
                t.lines.push(line);
            }
            Err(skipped) => t.skipped.push(skipped),
        }
    }
}

/// The most bytes of lines handed to the helper at a time (a push of more is cut): the pieces
/// the binary reads.
const PIECE: usize = 1 << 20;

/// A transcript read a piece at a time: [`push`](Loader::push) any cut of the bytes, then
/// [`finish`](Loader::finish). Only the unfinished last line (and, with a helper thread, the
/// lines of the last piece) is held between pieces.
pub struct Loader {
    transcript: Transcript,
    partial: Vec<u8>,
    recorder: Recorder,
    /// With a second thread: each piece's lines are read there, or here where this thread
    /// needs them first (see [`pieces`]).
    helper: Option<pieces::Helper>,
    /// A second thread may be started: the helper at the first push (a source read to its end
    /// is read on a thread of its own instead).
    two_threads: bool,
    queue: std::collections::VecDeque<pieces::Batch>,
}

impl Loader {
    pub fn new(name: &str) -> Loader {
        Loader::with_threads(name, Threads::default())
    }

    /// A loader that reads each piece's lines on a helper thread too when `threads` allows
    /// two (the result does not depend on it).
    pub fn with_threads(name: &str, threads: Threads) -> Loader {
        Loader::with(name, threads, false)
    }

    /// A loader for what `steps` reads: the messages' contents as written are left out (their
    /// blocks' hashes are kept), but where a build that writes replay records (2.1.3xx) wrote
    /// them and a neighbouring line may be part of the same message (see `neighbours`).
    /// [`Transcript::needs_content`] says when the lines or planning the steps call for them
    /// after all (replay records that may name older lines' messages, blocks no build writes,
    /// a cycle of parents, a message of lines apart): load the file again with
    /// [`Loader::with_threads`]. Memory then holds a little more than the lines' fields, not
    /// the file.
    pub fn lean(name: &str, threads: Threads) -> Loader {
        Loader::with(name, threads, true)
    }

    fn with(name: &str, threads: Threads, lean: bool) -> Loader {
        Loader {
            transcript: Transcript {
                name: name.to_string(),
                ..Transcript::default()
            },
            partial: Vec::new(),
            recorder: Recorder {
                lean: lean.then(Lean::default),
                ..Recorder::default()
            },
            helper: None,
            two_threads: threads.count >= 2,
            queue: std::collections::VecDeque::new(),
        }
    }

    /// The lines recorded so far (with a helper thread, those of the pieces before the last).
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// [`Loader::transcript`], to grow steps from while the loader reads on: lines may be
    /// added to it, nothing else changed.
    pub(crate) fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.two_threads && self.helper.is_none() {
            self.helper = pieces::Helper::start(self.recorder.lean.is_some());
            // None started: read here from now on.
            self.two_threads = self.helper.is_some();
        }
        if self.helper.is_none() {
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
            return;
        }
        if !self.partial.is_empty() {
            let Some(end) = memchr::memchr(b'\n', bytes) else {
                self.partial.extend_from_slice(bytes);
                return;
            };
            self.partial.extend_from_slice(&bytes[..end]);
            let line = std::mem::take(&mut self.partial);
            self.queue_line(&line, false);
            bytes = &bytes[end + 1..];
        }
        let Some(last) = memchr::memrchr(b'\n', bytes) else {
            self.partial.extend_from_slice(bytes);
            return;
        };
        let (mut whole, rest) = bytes.split_at(last + 1);
        // A whole file pushed at once (standard input, `watch`'s first read) goes to the helper
        // a piece at a time too, so that only the pieces in flight are copied.
        while !whole.is_empty() {
            let cut = (PIECE - 1).min(whole.len() - 1);
            let end = memchr::memchr(b'\n', &whole[cut..]).map_or(whole.len(), |k| cut + k + 1);
            let (piece, after) = whole.split_at(end);
            if let Some(helper) = &mut self.helper {
                let (batch, lines) = helper.send(piece, self.recorder.line_number + 1);
                self.queue.push_back(batch);
                self.recorder.line_number += lines;
            }
            whole = after;
            if !whole.is_empty() {
                self.merge(false);
            }
        }
        self.partial.extend_from_slice(rest);
        self.merge(false);
    }

    /// Read `source` to its end as [`push`](Loader::push)ing all its bytes would, `recorded`
    /// called after each piece's lines are recorded. With a second thread, the bytes are read
    /// there, each piece's lines with them, so that this thread records and grows steps (and
    /// reads the runs the other has not reached when it needs them): reading a 100 MB file
    /// here was a fifth of this thread's time, and copying its bytes for the helper a tenth.
    pub fn read_from(
        &mut self,
        source: &mut (dyn std::io::Read + Send),
        mut recorded: impl FnMut(&mut Transcript),
    ) -> std::io::Result<()> {
        self.read_pieces_from(source, PIECE, &mut recorded)
    }

    /// [`read_from`](Loader::read_from) in pieces of about `piece_bytes` (tests cut them small).
    pub(crate) fn read_pieces_from(
        &mut self,
        source: &mut (dyn std::io::Read + Send),
        piece_bytes: usize,
        recorded: &mut dyn FnMut(&mut Transcript),
    ) -> std::io::Result<()> {
        let piece_bytes = piece_bytes.max(1);
        if self.two_threads && self.partial.is_empty() && self.queue.is_empty() {
            // `None`: no thread could be started, and the bytes are read here.
            if let Some(read) = self.read_on_a_thread(source, piece_bytes, recorded) {
                return read;
            }
        }
        let mut buffer = vec![0; piece_bytes];
        loop {
            let read = match source.read(&mut buffer) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => other?,
            };
            if read == 0 {
                return Ok(());
            }
            self.push(&buffer[..read]);
            recorded(&mut self.transcript);
        }
    }

    /// [`read_from`](Loader::read_from) with the bytes read on a thread of their own; `None`
    /// when it cannot be started.
    fn read_on_a_thread(
        &mut self,
        source: &mut (dyn std::io::Read + Send),
        piece_bytes: usize,
        recorded: &mut dyn FnMut(&mut Transcript),
    ) -> Option<std::io::Result<()>> {
        use pieces::Handed;
        let lean = self.recorder.lean.is_some();
        let first = self.recorder.line_number + 1;
        let stopped = &std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let (out, handed) = std::sync::mpsc::sync_channel(1);
            let (spare, spares) = std::sync::mpsc::channel();
            let reader = std::thread::Builder::new()
                .name("claude-read".into())
                .spawn_scoped(scope, move || {
                    pieces::read_source(source, piece_bytes, first, lean, &out, &spares, stopped);
                })
                .ok()?;
            // The piece the reading thread reads on: recorded once the next one comes.
            let mut in_flight = None;
            let mut record = |this: &mut Loader, piece| {
                let repeated = &mut this.recorder.repeated;
                let Some(runs) = pieces::receive_handed(piece, lean, repeated, stopped, &spare)
                else {
                    // The reading thread panicked: resumed below.
                    return false;
                };
                for run in runs {
                    this.recorder.record_run(&mut this.transcript, run);
                }
                recorded(&mut this.transcript);
                true
            };
            let read = loop {
                // Disconnected: the reading thread panicked before handing over its end.
                let Ok(item) = handed.recv() else {
                    break Ok(());
                };
                match item {
                    Handed::Piece(piece, lines) => {
                        self.recorder.line_number += lines;
                        if let Some(before) = in_flight.replace(piece)
                            && !record(self, before)
                        {
                            break Ok(());
                        }
                    }
                    Handed::End(rest) => {
                        if let Some(last) = in_flight.take() {
                            record(self, last);
                        }
                        self.partial = rest;
                        break Ok(());
                    }
                    Handed::Failed(e, rest) => {
                        // The lines read before the error are recorded, as on one thread.
                        if let Some(last) = in_flight.take() {
                            record(self, last);
                        }
                        self.push(&rest);
                        break Err(e);
                    }
                }
            };
            // A reading thread waiting to hand over a piece stops.
            drop(handed);
            // Its panic, as it was raised (the scope's own says only that a thread panicked).
            if let Err(panic) = reader.join() {
                std::panic::resume_unwind(panic);
            }
            Some(read)
        })
    }

    pub fn finish(self) -> Result<Transcript, LoadError> {
        self.finish_recorded().map(|(t, _)| t)
    }

    /// [`finish`](Loader::finish), and what recording lines kept: lines appended later are
    /// recorded with it as this load would have recorded them.
    pub(crate) fn finish_recorded(mut self) -> Result<(Transcript, Recorder), LoadError> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.queue_line(&line, true);
        }
        self.merge(true);
        let mut t = std::mem::take(&mut self.transcript);
        if let Some(lean) = &self.recorder.lean {
            t.content_left_out = lean.dropped || t.left_out_named.any;
            t.needs_content = lean.needs_content(&t);
        }
        self.recorder.close(&mut t);
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
        Ok((t, std::mem::take(&mut self.recorder)))
    }

    /// Record the batches read, in file order; unless `all`, the last piece handed to the
    /// helper (and what follows it) stays in flight, so the helper always has lines to read.
    fn merge(&mut self, all: bool) {
        let mut left = self
            .queue
            .iter()
            .filter(|b| matches!(b, pieces::Batch::Shared(_)))
            .count();
        while let Some(batch) = self.queue.front() {
            if !all && left == 1 && matches!(batch, pieces::Batch::Shared(_)) {
                break;
            }
            let runs = match self.queue.pop_front() {
                Some(pieces::Batch::Shared(piece)) => {
                    left -= 1;
                    let repeated = &mut self.recorder.repeated;
                    match &mut self.helper {
                        Some(helper) => helper.receive(piece, repeated),
                        None => pieces::read_here(&piece, self.recorder.lean.is_some(), repeated),
                    }
                }
                Some(pieces::Batch::Local(lines)) => vec![lines],
                None => break,
            };
            for run in runs {
                self.recorder.record_run(&mut self.transcript, run);
            }
        }
    }

    /// Read and record a line here (without a helper, nothing is in flight).
    fn line(&mut self, bytes: &[u8], last_without_newline: bool) {
        if let Some((number, parsed)) = self.recorder.read_next(bytes, last_without_newline) {
            self.recorder.record(&mut self.transcript, number, parsed);
        }
    }

    /// Read a line here and queue it after the batches in flight, to be recorded in file order.
    fn queue_line(&mut self, bytes: &[u8], last_without_newline: bool) {
        let parsed = self.recorder.read_next(bytes, last_without_newline);
        self.queue
            .push_back(pieces::Batch::Local(parsed.into_iter().collect()));
    }
}

//! Lines read on a helper thread while the calling thread records and grows steps from the lines
//! before them. Each piece's complete lines are cut into runs of about [`RUN`] bytes; the helper
//! reads the runs of a piece in order, and when the calling thread needs a piece's lines before
//! the helper is through, it reads the runs left itself. So neither thread waits for the other
//! longer than one run takes, however the work of reading and growing splits between them (a
//! fixed share of each piece left one of them idle: the real samples' lines are long in one file
//! and short in the next). The helper is woken once a piece, not once a run (a thread woken
//! often starts late on a busy machine). Every line is read by the same function whichever
//! thread reads it, and recorded in file order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::line::Repeated;
use super::neighbours::Neighbours;
use super::{Line, SkippedLine, read_line};

/// A line read: its number and its record, or why it is skipped.
pub(super) type Parsed = (usize, Result<Line, SkippedLine>);

/// The bytes of a run: the calling thread waits at most for one run, and each costs a lock and
/// a wake-up (about 16 runs a megabyte).
const RUN: usize = 64 << 10;

/// Read line `number` (without its newline); `None` for a blank line. `lean`: see
/// [`super::Loader::lean`].
pub(super) fn parse_one(
    bytes: &[u8],
    number: usize,
    last_without_newline: bool,
    lean: bool,
    repeated: &mut Repeated,
) -> Option<Parsed> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let (bytes, bom) = match number {
        1 => crate::core::lines::without_bom(bytes),
        _ => (bytes, 0),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let parsed = read_line(bytes, number, lean, repeated);
    if let Some(content) = &mut repeated.left_out {
        *content = content.start + bom..content.end + bom;
    }
    let parsed = parsed.map_err(|err| {
        let reason = if last_without_newline {
            format!("last line cut short (no newline): {}", err.reason)
        } else {
            err.reason
        };
        SkippedLine {
            line: number,
            column: err.column.map(|c| c + bom),
            reason,
            excerpt: crate::core::lines::excerpt(bytes, err.column),
        }
    });
    Some((number, parsed))
}

/// Read the lines of `bytes` (each ended by a newline), the first numbered `first`, into `out`.
fn parse_lines(
    mut bytes: &[u8],
    first: usize,
    lean: bool,
    repeated: &mut Repeated,
    out: &mut Vec<Parsed>,
) {
    let run = bytes;
    let mut number = first;
    let mut at = 0;
    // A lean load looks at each line's neighbours (see `neighbours`).
    let mut neighbours = lean.then(Neighbours::default);
    repeated.leave_out_named = lean;
    while let Some(end) = memchr::memchr(b'\n', bytes) {
        let parsed = parse_one(&bytes[..end], number, false, lean, repeated);
        let left_out = repeated.left_out.take();
        if let Some(parsed) = parsed {
            out.push(parsed);
            if let Some(n) = &mut neighbours {
                n.read(out, run, left_out.map(|c| at + c.start..at + c.end));
            }
        }
        number += 1;
        at += end + 1;
        bytes = &bytes[end + 1..];
    }
    if let Some(n) = neighbours {
        n.end(out, run);
    }
    repeated.leave_out_named = false;
}

/// A piece's lines, cut into runs that either thread may read.
pub(super) struct Piece {
    bytes: Vec<u8>,
    runs: Vec<Run>,
    /// The next run nobody took yet.
    next: AtomicUsize,
    done: Mutex<Done>,
    run_done: Condvar,
}

/// The runs' lines, and whether the calling thread waits for one.
struct Done {
    runs: Vec<RunLines>,
    /// Set while the calling thread waits: only then does a thread that read a run wake it (a
    /// wake-up is a system call).
    waiting: bool,
}

/// A run's lines. The list they go into is made by the thread that made the piece. For the
/// pieces the calling thread hands the helper, that is the thread that frees it: a list the
/// helper made and the calling thread freed went back to the helper's allocator arena under its
/// lock, contended while the helper allocated (2 869 of the 2 994 `futex` calls of `steps` on a
/// 100 MB file). A source read to its end has its pieces made on the reading thread, and the
/// calling thread frees their lists: 487 `futex` calls on that file, against 186 before it was
/// read there, for 0.93x the time.
enum RunLines {
    Unread(Vec<Parsed>),
    Reading,
    Read(Vec<Parsed>),
}

/// Lines of a piece one thread reads at a time.
struct Run {
    bytes: std::ops::Range<usize>,
    first_line: usize,
    lines: usize,
}

impl Piece {
    /// The complete lines `bytes` (ended by a newline), the first numbered `first`, copied into
    /// `buffer`: the piece, and how many lines it has.
    fn new(bytes: &[u8], first: usize, mut buffer: Vec<u8>) -> (Piece, usize) {
        buffer.clear();
        buffer.extend_from_slice(bytes);
        let end = buffer.len();
        Piece::of(buffer, end, first)
    }

    /// The complete lines `bytes[..end]` (ended by a newline), the first numbered `first`: the
    /// piece, and how many lines it has. The bytes after `end` are not read.
    fn of(bytes: Vec<u8>, end: usize, first: usize) -> (Piece, usize) {
        debug_assert!(end == 0 || bytes[end - 1] == b'\n');
        let mut runs = Vec::new();
        let (mut start, mut number) = (0, first);
        while start < end {
            let cut = (start + RUN).min(end - 1);
            let run_end = memchr::memchr(b'\n', &bytes[cut..end]).map_or(end, |k| cut + k + 1);
            let lines = memchr::memchr_iter(b'\n', &bytes[start..run_end]).count();
            runs.push(Run {
                bytes: start..run_end,
                first_line: number,
                lines,
            });
            number += lines;
            start = run_end;
        }
        let piece = Piece {
            bytes,
            done: Mutex::new(Done {
                runs: runs
                    .iter()
                    .map(|r| RunLines::Unread(Vec::with_capacity(r.lines)))
                    .collect(),
                waiting: false,
            }),
            runs,
            next: AtomicUsize::new(0),
            run_done: Condvar::new(),
        };
        (piece, number - first)
    }

    /// Read the runs nobody took yet, one at a time.
    fn read_runs(&self, lean: bool, repeated: &mut Repeated) {
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k >= self.runs.len() {
                return;
            }
            self.read_run(k, lean, repeated);
        }
    }

    fn read_run(&self, k: usize, lean: bool, repeated: &mut Repeated) {
        let run = &self.runs[k];
        let mut out = match std::mem::replace(&mut lock(&self.done).runs[k], RunLines::Reading) {
            RunLines::Unread(list) => list,
            // Read again after the helper's panic.
            RunLines::Reading | RunLines::Read(_) => Vec::new(),
        };
        let bytes = &self.bytes[run.bytes.clone()];
        parse_lines(bytes, run.first_line, lean, repeated, &mut out);
        let mut done = lock(&self.done);
        done.runs[k] = RunLines::Read(out);
        if done.waiting {
            drop(done);
            self.run_done.notify_all();
        }
    }

    /// Read the runs nobody took here, then wait for those another thread is reading; `None`
    /// when that thread stopped on a panic (`stopped`) with a run unread.
    fn wait(&self, lean: bool, repeated: &mut Repeated, stopped: &AtomicBool) -> Option<()> {
        self.read_runs(lean, repeated);
        let mut done = lock(&self.done);
        while done.runs.iter().any(|r| !matches!(r, RunLines::Read(_))) {
            if stopped.load(Ordering::Acquire) {
                done.waiting = false;
                return None;
            }
            done.waiting = true;
            done = self
                .run_done
                .wait(done)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        done.waiting = false;
        Some(())
    }

    /// Read here the runs a thread that stopped on a panic took and left unread.
    fn read_taken(&self, lean: bool, repeated: &mut Repeated) {
        let unread: Vec<usize> = lock(&self.done)
            .runs
            .iter()
            .enumerate()
            .filter(|(_, r)| !matches!(r, RunLines::Read(_)))
            .map(|(k, _)| k)
            .collect();
        for k in unread {
            self.read_run(k, lean, repeated);
        }
    }

    /// The runs' lines, in order, once all are read.
    fn take(&self) -> Vec<Vec<Parsed>> {
        let mut done = lock(&self.done);
        done.runs
            .iter_mut()
            .map(|r| match std::mem::replace(r, RunLines::Reading) {
                RunLines::Read(lines) => lines,
                RunLines::Unread(_) | RunLines::Reading => Vec::new(),
            })
            .collect()
    }
}

/// The lock of a piece's runs: a thread that panicked holding it left whole runs or none.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Wakes the calling thread if the thread holding it panics in a run of the piece it names.
struct WakeOnPanic<'a>(&'a AtomicBool, Option<Arc<Piece>>);

impl Drop for WakeOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
            if let Some(piece) = &self.1 {
                // Taken and let go: the calling thread is waiting, or will see the flag
                // before it waits.
                drop(lock(&piece.done));
                piece.run_done.notify_all();
            }
        }
    }
}

/// A piece's lines, in the order they are recorded.
pub(super) enum Batch {
    /// Handed to the helper: read there, or here for the runs it has not taken when the
    /// lines are needed (all of them, may be).
    Shared(Arc<Piece>),
    Local(Vec<Parsed>),
}

/// The helper thread.
pub(super) struct Helper {
    jobs: Option<Sender<Arc<Piece>>>,
    thread: Option<JoinHandle<()>>,
    /// Set when the helper stops on a panic, so that a run it took is not waited for.
    panicked: Arc<AtomicBool>,
    lean: bool,
    /// The bytes of a piece read, for the next (new memory costs a page fault per page).
    spare_bytes: Vec<u8>,
}

impl Helper {
    /// A helper thread, or `None` where one cannot be started.
    pub fn start(lean: bool) -> Option<Helper> {
        let (jobs, receive_jobs) = channel::<Arc<Piece>>();
        let panicked = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&panicked);
        let thread = std::thread::Builder::new()
            .name("claude-load".into())
            .spawn(move || {
                let mut wake = WakeOnPanic(&flag, None);
                let mut repeated = Repeated::default();
                while let Ok(piece) = receive_jobs.recv() {
                    wake.1 = Some(Arc::clone(&piece));
                    piece.read_runs(lean, &mut repeated);
                    wake.1 = None;
                }
            })
            .ok()?;
        Some(Helper {
            jobs: Some(jobs),
            thread: Some(thread),
            panicked,
            lean,
            spare_bytes: Vec::new(),
        })
    }

    /// Hand lines `bytes` (ended by a newline, the first numbered `first`) to the helper: the
    /// batch, and how many lines it has.
    pub fn send(&mut self, bytes: &[u8], first: usize) -> (Batch, usize) {
        let (piece, lines) = Piece::new(bytes, first, std::mem::take(&mut self.spare_bytes));
        let piece = Arc::new(piece);
        if let Some(jobs) = &self.jobs
            && jobs.send(Arc::clone(&piece)).is_err()
        {
            self.resume_panic();
        }
        (Batch::Shared(piece), lines)
    }

    /// The lines of `piece`, run by run: the runs the helper has not taken are read here, then
    /// those it is reading are waited for.
    pub fn receive(&mut self, piece: Arc<Piece>, repeated: &mut Repeated) -> Vec<Vec<Parsed>> {
        while piece.wait(self.lean, repeated, &self.panicked).is_none() {
            self.resume_panic();
            // The panic was caught before (the helper is gone): its runs are read here.
            piece.read_taken(self.lean, repeated);
        }
        let runs = piece.take();
        // The helper may not have let go of the piece yet: then its bytes go with it.
        if let Ok(piece) = Arc::try_unwrap(piece) {
            self.spare_bytes = piece.bytes;
        }
        runs
    }

    /// The helper ended without being asked to: only a panic does that, resumed here.
    fn resume_panic(&mut self) {
        if let Some(thread) = self.thread.take()
            && let Err(panic) = thread.join()
        {
            std::panic::resume_unwind(panic);
        }
    }
}

/// What the thread reading a source hands the calling thread, in order.
pub(super) enum Handed {
    /// A piece of complete lines, and how many it has: its runs are read on the reading thread
    /// after its next read, or on the calling thread where it needs them first.
    Piece(Arc<Piece>, usize),
    /// The end of the source, and the bytes after its last newline.
    End(Vec<u8>),
    /// The source's error, and the bytes read since the last piece handed over.
    Failed(std::io::Error, Vec<u8>),
}

/// Read `source` to its end on this thread, pieces of about `piece_bytes` bytes cut after a
/// newline (a longer line makes a longer piece), the first line numbered `first`. Each piece is
/// handed over (`out`) as soon as its bytes are read; its runs are read here after the next
/// piece's bytes, so that the calling thread, which records one piece while this thread reads
/// the next, has the bytes of the next at hand and a run or none left to read itself. Buffers
/// come back through `spare` (new memory costs a page fault per page). `stopped` is set if this
/// thread panics in a run, and the calling thread woken.
pub(super) fn read_source(
    source: &mut (dyn std::io::Read + Send),
    piece_bytes: usize,
    first: usize,
    lean: bool,
    out: &std::sync::mpsc::SyncSender<Handed>,
    spare: &std::sync::mpsc::Receiver<Vec<u8>>,
    stopped: &AtomicBool,
) {
    let mut wake = WakeOnPanic(stopped, None);
    let mut repeated = Repeated::default();
    let mut number = first;
    // The bytes after the last newline read: the start of the next piece.
    let mut carry: Vec<u8> = Vec::new();
    let mut unread: Option<Arc<Piece>> = None;
    // A piece's bytes this thread let go of last.
    let mut own_spare: Option<Vec<u8>> = None;
    loop {
        // A buffer keeps its length between uses: only what grows it is zeroed. One a long
        // line grew is let go.
        let mut bytes = own_spare
            .take()
            .or_else(|| spare.try_recv().ok())
            .filter(|b| b.len() <= 2 * piece_bytes)
            .unwrap_or_default();
        let mut filled = carry.len();
        if bytes.len() < filled {
            bytes.resize(filled, 0);
        }
        bytes[..filled].copy_from_slice(&carry);
        carry.clear();
        let mut end = 0;
        let mut at_end = false;
        while end == 0 || filled < piece_bytes {
            // Up to a piece's bytes (a buffer a long line grew reads no more at once), then a
            // piece's more at a time while no newline has come (what a buffer grows by is
            // zeroed, so not doubled ahead of the bytes).
            let want = if filled < piece_bytes {
                piece_bytes - filled
            } else {
                piece_bytes
            };
            if bytes.len() < filled + want {
                bytes.resize(filled + want, 0);
            }
            match source.read(&mut bytes[filled..filled + want]) {
                Ok(0) => {
                    at_end = true;
                    break;
                }
                Ok(n) => {
                    if let Some(k) = memchr::memrchr(b'\n', &bytes[filled..filled + n]) {
                        end = filled + k + 1;
                    }
                    filled += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    bytes.truncate(filled);
                    let _ = out.send(Handed::Failed(e, bytes));
                    return;
                }
            }
        }
        if end == 0 {
            // The end, and no newline since the last piece: the buffer is what is left.
            bytes.truncate(filled);
            if let Some(piece) = unread.take() {
                read_handed(piece, lean, &mut repeated, &mut wake, &mut own_spare);
            }
            let _ = out.send(Handed::End(bytes));
            return;
        }
        carry.extend_from_slice(&bytes[end..filled]);
        let (piece, lines) = Piece::of(bytes, end, number);
        number += lines;
        let piece = Arc::new(piece);
        if out.send(Handed::Piece(Arc::clone(&piece), lines)).is_err() {
            // The calling thread stopped waiting (an error, a panic).
            return;
        }
        if let Some(piece) = unread.take() {
            read_handed(piece, lean, &mut repeated, &mut wake, &mut own_spare);
        }
        unread = Some(piece);
        if at_end {
            if let Some(piece) = unread.take() {
                read_handed(piece, lean, &mut repeated, &mut wake, &mut own_spare);
            }
            let _ = out.send(Handed::End(carry));
            return;
        }
    }
}

/// Read the runs of a piece handed over that the calling thread has not taken. Whichever
/// thread lets go of the piece last keeps its bytes for another (freed, 1 MB of memory is given
/// back to the system, and the next piece's takes a page fault per page).
fn read_handed(
    piece: Arc<Piece>,
    lean: bool,
    repeated: &mut Repeated,
    wake: &mut WakeOnPanic<'_>,
    spare: &mut Option<Vec<u8>>,
) {
    wake.1 = Some(Arc::clone(&piece));
    piece.read_runs(lean, repeated);
    wake.1 = None;
    if let Ok(piece) = Arc::try_unwrap(piece) {
        *spare = Some(piece.bytes);
    }
}

/// The lines of a piece handed over by [`read_source`]'s thread: the runs it has not taken
/// are read here, then those it is reading are waited for; `None` if it stopped on a panic.
/// Its bytes go back to that thread (`spare`).
pub(super) fn receive_handed(
    piece: Arc<Piece>,
    lean: bool,
    repeated: &mut Repeated,
    stopped: &AtomicBool,
    spare: &Sender<Vec<u8>>,
) -> Option<Vec<Vec<Parsed>>> {
    piece.wait(lean, repeated, stopped)?;
    let runs = piece.take();
    if let Ok(piece) = Arc::try_unwrap(piece) {
        let _ = spare.send(piece.bytes);
    }
    Some(runs)
}

/// The lines of a piece no helper reads (there is none): read here.
pub(super) fn read_here(piece: &Piece, lean: bool, repeated: &mut Repeated) -> Vec<Vec<Parsed>> {
    piece.read_runs(lean, repeated);
    piece.take()
}

impl Drop for Helper {
    fn drop(&mut self) {
        // Closing the channel ends the helper's loop.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Batch, Helper, Piece, RUN};
    use crate::agents::claude::load::line::Repeated;
    use std::sync::atomic::Ordering;

    /// However the runs of a piece split between the helper and the calling thread, every line
    /// comes back once, in file order, numbered, a bad one skipped at its own number: when the
    /// calling thread asks at once (both read: which runs each reads depends on timing), and
    /// when it asks once the helper took every run (it waits for the helper's).
    #[test]
    fn a_piece_read_by_both_threads_comes_back_whole_in_order() {
        let good = |i: usize| {
            format!(
                r#"{{"type":"user","uuid":"u{i}","message":{{"role":"user","content":"{}"}}}}"#,
                "x".repeat(i % 700)
            )
        };
        let lines: Vec<String> = (0..3000)
            .map(|i| {
                if i == 1234 {
                    "{not json".to_string()
                } else {
                    good(i)
                }
            })
            .collect();
        let bytes = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let (piece, count) = Piece::new(bytes.as_bytes(), 41, Vec::new());
        assert_eq!(count, 3000);
        assert!(
            piece.runs.len() > 8,
            "{} runs of {RUN} bytes",
            piece.runs.len()
        );
        for lean in [false, true] {
            let mut helper = Helper::start(lean).expect("a thread");
            for helper_first in [false, true, false, true] {
                let (batch, count) = helper.send(bytes.as_bytes(), 41);
                assert_eq!(count, 3000);
                let Batch::Shared(piece) = batch else {
                    panic!("a piece for the helper")
                };
                if helper_first {
                    while piece.next.load(Ordering::Relaxed) < piece.runs.len() {
                        std::thread::yield_now();
                    }
                }
                let read: Vec<_> = helper
                    .receive(piece, &mut Repeated::default())
                    .into_iter()
                    .flatten()
                    .collect();
                let numbers: Vec<usize> = read.iter().map(|(n, _)| *n).collect();
                assert_eq!(numbers, (41..3041).collect::<Vec<_>>(), "{helper_first}");
                for (n, parsed) in &read {
                    assert_eq!(parsed.is_err(), *n == 41 + 1234, "line {n}");
                }
            }
        }
    }
}

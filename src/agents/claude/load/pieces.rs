//! Lines read on a helper thread while the calling thread reads others: each piece's complete
//! lines are cut in two at a newline, the first part (the loader's share for the helper) goes
//! to the helper, the rest is read here, and the two are recorded in file order. The helper's
//! part of a piece is taken back only when the next piece has been handed to it, so it is never
//! left waiting for work (a thread woken for each piece starts late on a busy machine). Every
//! line is read by the same function either way: the result does not depend on the thread that
//! read it.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use super::line::Repeated;
use super::{Line, SkippedLine, read_line};

/// A line read: its number and its record, or why it is skipped.
pub(super) type Parsed = (usize, Result<Line, SkippedLine>);

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
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let parsed = read_line(bytes, number, lean, repeated).map_err(|err| {
        let reason = if last_without_newline {
            format!("last line cut short (no newline): {}", err.reason)
        } else {
            err.reason
        };
        SkippedLine {
            line: number,
            column: err.column,
            reason,
            excerpt: crate::core::lines::excerpt(bytes, err.column),
        }
    });
    Some((number, parsed))
}

/// Read the lines of `bytes` (each ended by a newline), the first numbered `first`, into `out`;
/// how many lines there were.
pub(super) fn parse_lines(
    mut bytes: &[u8],
    first: usize,
    lean: bool,
    repeated: &mut Repeated,
    out: &mut Vec<Parsed>,
) -> usize {
    let mut number = first;
    while let Some(end) = memchr::memchr(b'\n', bytes) {
        out.extend(parse_one(&bytes[..end], number, false, lean, repeated));
        number += 1;
        bytes = &bytes[end + 1..];
    }
    number - first
}

/// A piece's lines, in the order they are recorded.
pub(super) enum Batch {
    /// Read by the helper: its oldest batch not taken back yet.
    Helper,
    Local(Vec<Parsed>),
}

struct Job {
    bytes: Vec<u8>,
    first: usize,
    out: Vec<Parsed>,
}

struct Done {
    bytes: Vec<u8>,
    out: Vec<Parsed>,
}

/// The helper thread and its buffers (handed back and forth, so no piece costs new memory).
pub(super) struct Helper {
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    thread: Option<JoinHandle<()>>,
    spare_bytes: Vec<Vec<u8>>,
    spare_out: Vec<Vec<Parsed>>,
    /// Batches read and not taken back yet, oldest first.
    finished: std::collections::VecDeque<Vec<Parsed>>,
}

impl Helper {
    /// A helper thread, or `None` where one cannot be started.
    pub fn start(lean: bool) -> Option<Helper> {
        let (jobs, receive_jobs) = channel::<Job>();
        let (send_done, done) = channel::<Done>();
        let thread = std::thread::Builder::new()
            .name("claude-load".into())
            .spawn(move || {
                let mut repeated = Repeated::default();
                while let Ok(mut job) = receive_jobs.recv() {
                    parse_lines(&job.bytes, job.first, lean, &mut repeated, &mut job.out);
                    let done = Done {
                        bytes: job.bytes,
                        out: job.out,
                    };
                    if send_done.send(done).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Helper {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
            spare_bytes: Vec::new(),
            spare_out: Vec::new(),
            finished: std::collections::VecDeque::new(),
        })
    }

    /// Hand lines `bytes` (the first numbered `first`) to the helper.
    pub fn send(&mut self, bytes: &[u8], first: usize) {
        let mut buffer = self.spare_bytes.pop().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(bytes);
        let job = Job {
            bytes: buffer,
            first,
            out: self.spare(),
        };
        if let Some(jobs) = &self.jobs
            && jobs.send(job).is_err()
        {
            self.stopped();
        }
    }

    /// How many of the batches handed over are read, without waiting.
    pub fn finished(&mut self) -> usize {
        while let Ok(done) = self.done.try_recv() {
            self.spare_bytes.push(done.bytes);
            self.finished.push_back(done.out);
        }
        self.finished.len()
    }

    /// The lines of the oldest batch handed over, waiting for them if need be.
    pub fn receive(&mut self) -> Vec<Parsed> {
        if let Some(out) = self.finished.pop_front() {
            return out;
        }
        match self.done.recv() {
            Ok(done) => {
                self.spare_bytes.push(done.bytes);
                done.out
            }
            Err(_) => {
                self.stopped();
                Vec::new()
            }
        }
    }

    /// An empty list to read lines into.
    pub fn spare(&mut self) -> Vec<Parsed> {
        self.spare_out.pop().unwrap_or_default()
    }

    /// A list whose lines were recorded, for reuse. Two are in use per piece and a piece's
    /// first line, when it continues the last piece, gets a list of its own: keeping them all
    /// would hold a piece's worth of records for every piece read.
    pub fn recycle(&mut self, out: Vec<Parsed>) {
        debug_assert!(out.is_empty());
        if self.spare_out.len() < 2 && out.capacity() > 1 {
            self.spare_out.push(out);
        }
    }

    /// The helper ended without being asked to: only a panic does that, resumed here.
    fn stopped(&mut self) {
        if let Some(thread) = self.thread.take()
            && let Err(panic) = thread.join()
        {
            std::panic::resume_unwind(panic);
        }
    }
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

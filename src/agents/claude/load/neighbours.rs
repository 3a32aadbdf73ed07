//! A lean load leaves out a 2.1.3xx line's content where it names the line's message alone
//! and no line next to it in the file is a part of a message of its role: the history forms a
//! message of several lines (an assistant's blocks, a call's results, a prompt and what was
//! attached to it) of lines next to each other, and names it by the sha256 of all their
//! blocks. Each run is read in order; a content left out waits for the next line that is part
//! of a message, and goes back where that line or the one before it is of its role. Where a
//! neighbour is not known (the run's first and last such lines) it goes back too. A content
//! planning needs after all is noted ([`super::super::record::LeftOutNamed`]).

use std::ops::Range;

use super::pieces::Parsed;
use super::{Line, LineKind};

/// The role of the message a line is a part of, where it is one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    User,
    Assistant,
}

fn side(line: &Line) -> Option<Side> {
    match line.kind {
        LineKind::User(_) | LineKind::Attachment(_) => Some(Side::User),
        LineKind::Assistant(_) => Some(Side::Assistant),
        _ => None,
    }
}

/// A line whose content was left out, until the next part of a message is read.
struct Pending {
    index: usize,
    /// Where the content lies in the run.
    content: Range<usize>,
    side: Side,
    /// The part of a message before it is of its side, or not known.
    after_its_side: bool,
}

/// The lines of a run read so far.
#[derive(Default)]
pub(super) struct Neighbours {
    /// The side of the last part of a message read in the run.
    last: Option<Side>,
    pending: Option<Pending>,
}

impl Neighbours {
    /// The last line of `out` was read from `run`; `left_out` is where its content lies in the
    /// run when it was left out.
    pub fn read(&mut self, out: &mut [Parsed], run: &[u8], left_out: Option<Range<usize>>) {
        let Some((_, Ok(line))) = out.last() else {
            return;
        };
        let Some(side) = side(line) else {
            return;
        };
        if let Some(p) = self.pending.take()
            && (p.after_its_side || p.side == side)
        {
            put_back(out, run, p);
        }
        if let Some(content) = left_out {
            self.pending = Some(Pending {
                index: out.len() - 1,
                content,
                side,
                after_its_side: self.last.is_none_or(|last| last == side),
            });
        }
        self.last = Some(side);
    }

    /// The run is read: what follows its last line is not known.
    pub fn end(self, out: &mut [Parsed], run: &[u8]) {
        if let Some(p) = self.pending {
            put_back(out, run, p);
        }
    }
}

fn put_back(out: &mut [Parsed], run: &[u8], p: Pending) {
    // The line was read as UTF-8, and a content starts and ends on ASCII.
    let Some(text) = run.get(p.content).and_then(|b| std::str::from_utf8(b).ok()) else {
        return;
    };
    match &mut out[p.index].1 {
        Ok(Line {
            kind: LineKind::User(u),
            ..
        }) => u.content = text.into(),
        Ok(Line {
            kind: LineKind::Assistant(a),
            ..
        }) => a.content = text.into(),
        _ => {}
    }
}

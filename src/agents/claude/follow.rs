//! What following a transcript while Claude Code writes it (`watch`) needs from Claude Code:
//! which appended lines can bring an event, reading complete appended lines into the session
//! (its conversation and steps grown: `steps.rs`), the neutral plan grown with it, and when a
//! step's row is final.
//!
//! Claude Code writes a response a line per content block, each line with the message's usage
//! (its output growing to the last): a step's row is final once the next request of its thread
//! came, or the watch ended.

use super::session::{Session, empty_plan, plan_more};
use super::wire::Given;
use crate::core::lines::SkippedLine;
use crate::core::parallel::Threads;
use crate::fingerprint::Plan;
use crate::watch::{Event, Growing};

/// A session's neutral plan, grown with the session.
pub struct Planner {
    plan: Plan,
}

impl Planner {
    /// A plan of no steps yet: `given` stands for the parts the builds do not record.
    pub fn new(given: Given, threads: Threads) -> Planner {
        Planner {
            plan: empty_plan(given, threads),
        }
    }
}

impl Growing for Session {
    type Planner = Planner;

    /// A response's line (a request, its usage), a compaction's boundary. Any other line waits
    /// for the next one of these.
    const TRIGGERS: &'static [&'static [u8]] = &[b"\"assistant\"", b"compact_boundary"];

    /// The appended lines recorded as a whole load records them (line numbers, duplicates of
    /// earlier uuids, notes), then the conversation and the steps grown.
    fn load_appended(&mut self, bytes: &[u8], _lines: usize) -> (usize, usize) {
        self.read_appended(bytes)
    }

    fn record_events(&self, from: usize) -> Vec<(usize, Event)> {
        self.boundaries_from(from)
            .map(|line| (line, Event::Compaction { line }))
            .collect()
    }

    fn records(&self) -> usize {
        self.transcript.lines.len()
    }

    fn skipped_lines(&self) -> &[SkippedLine] {
        &self.transcript.skipped
    }

    /// The steps from `unchanged` on planned again (their prompt or model may have changed: a
    /// response found to copy an earlier one), the new ones planned.
    fn extend_plan(planner: &mut Planner, session: &Session, unchanged: usize) -> usize {
        plan_more(session, &mut planner.plan, unchanged);
        unchanged.min(planner.plan.fingerprints.len())
    }

    fn plan(planner: &Planner) -> &Plan {
        &planner.plan
    }

    /// All but the last step, whose response may still be written; every step once the watch
    /// ended.
    fn settled(&self, finished: bool) -> usize {
        let steps = self.steps.len();
        if finished {
            steps
        } else {
            steps.saturating_sub(1)
        }
    }

    /// The next request of the thread's line: its response's lines ended before it.
    fn final_row(&self, k: usize, finished: bool) -> Option<usize> {
        match self.steps.get(k + 1) {
            Some(next) => Some(next.line),
            None => finished.then(|| self.steps[k].line),
        }
    }
}

#[cfg(test)]
mod tests;

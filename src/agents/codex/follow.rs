//! What following a rollout while Codex writes it (`watch`) needs from Codex: which appended
//! lines can bring an event, reading complete appended lines into the session, and the events
//! its new records bring.

use crate::agents::codex::model::{EventKind, RecordKind};
use crate::agents::codex::plan::Planner;
use crate::agents::codex::replay::Effect;
use crate::agents::codex::session::Session;
use crate::core::lines::SkippedLine;
use crate::fingerprint::Plan;
use crate::watch::{Event, Growing};

impl Growing for Session {
    type Planner = Planner;

    /// Line types that can bring an event; any other line waits for the next one of these.
    const TRIGGERS: &'static [&'static [u8]] = &[
        b"token_count",
        b"_started",
        b"_complete",
        b"turn_aborted",
        b"compacted",
        b"thread_rolled_back",
    ];

    /// Parse the lines on from where the last load stopped, then replay from where replay
    /// stopped: the steps before the last one stay.
    fn load_appended(&mut self, bytes: &[u8], lines: usize) -> (usize, usize) {
        let lines = crate::agents::codex::parse::load_more(&mut self.rollout, bytes, lines);
        let unchanged = crate::agents::codex::replay::replay_more(&self.rollout, &mut self.replay);
        (lines, unchanged)
    }

    fn records(&self) -> usize {
        self.rollout.records.len()
    }

    fn skipped_lines(&self) -> &[SkippedLine] {
        &self.rollout.skipped
    }

    fn extend_plan(planner: &mut Planner, session: &Session, unchanged: usize) -> usize {
        planner.extend(session, unchanged)
    }

    fn plan(planner: &Planner) -> &Plan {
        planner.plan()
    }

    fn record_events(&self, from: usize) -> Vec<(usize, Event)> {
        let replay = &self.replay;
        let records = &self.rollout.records;
        let mut events = Vec::new();
        for (record, effect) in records.iter().zip(&replay.effects).skip(from) {
            let line = record.line;
            let event = match (effect, &record.kind) {
                (Effect::Compaction, _) => Event::Compaction { line },
                (Effect::Rollback, _) => {
                    // Rollbacks are in line order: a search, not a scan per rollback.
                    let turns = replay
                        .rollbacks
                        .binary_search_by_key(&line, |r| r.line)
                        .map_or(0, |i| replay.rollbacks[i].dropped_turns);
                    Event::Rollback { line, turns }
                }
                (Effect::TurnLifecycle, RecordKind::Event(e))
                    if matches!(e.kind, EventKind::TaskComplete | EventKind::TurnAborted) =>
                {
                    Event::TurnEnded {
                        line,
                        aborted: e.kind == EventKind::TurnAborted,
                    }
                }
                _ => continue,
            };
            events.push((line, event));
        }
        events
    }
}

//! Where Codex made a request: replay's handling of items and usage that opens request slots,
//! holds usage until a step takes it and cuts steps, and, at the end of the records, the request
//! a resume would send (taken back when more records come).

use super::{
    Effect, EntryOrigin, HistoryEntry, Observation, State, Step, Turn, Unfinished, filter, is_input,
};
use crate::agents::codex::content::is_turn_boundary;
use crate::agents::codex::model::{ItemId, Record, RecordKind, TokenInfo};

impl State<'_> {
    /// A turn ends with a request whose usage was recorded but whose answer was never written
    /// (`tests/conformance/0.58.0/killed_call`: the process was killed while the call ran, and
    /// 0.58 had not written the call): Codex sent it, so it is a step, its input the history so
    /// far. A request without usage (a failed stream, retried) is not listed.
    pub(super) fn unwritten_request(&mut self) {
        if self.progress.slot_open
            && self.progress.slot_step.is_none()
            && self.progress.current_turn.is_some()
            && self.epoch_len() > 0
            && let Some(line) = self.progress.slot_usage.as_ref().map(|u| u.line)
        {
            self.new_step(line, false);
        }
    }

    pub(super) fn open_slot(&mut self) {
        if let Some(usage) = self.progress.slot_usage.take() {
            // A request that produced no output (a retry): keep its usage for the next one.
            self.carry(usage);
        }
        self.progress.slot_open = true;
        self.progress.slot_step = None;
    }

    pub(super) fn carry(&mut self, usage: Observation) {
        if let Some(previous) = self.progress.carried_usage.replace(usage) {
            self.replay.unattached_usage.push(previous.line);
        }
    }

    pub(super) fn observe(&mut self, info: &TokenInfo, record: &Record) -> Effect {
        if self.progress.last_total.as_ref() == Some(&info.total) {
            return Effect::DuplicateUsage;
        }
        self.progress.last_total = Some(info.total.clone());
        let observation = Observation {
            line: record.line,
            unix_seconds: record.unix_seconds,
            usage: info.last.clone(),
        };
        if self.progress.slot_open && self.progress.slot_step.is_none() {
            if let Some(previous) = self.progress.slot_usage.replace(observation) {
                self.carry(previous);
            }
        } else if let Some(step) = self.replay.steps.last_mut().filter(|s| s.usage.is_none()) {
            step.usage = Some(observation);
        } else {
            self.carry(observation);
        }
        Effect::Usage
    }

    pub(super) fn start_turn(&mut self, turn_id: Option<String>, line: usize) {
        self.replay.turns.push(Turn {
            number: self.replay.turns.len() + 1,
            turn_id,
            line,
            steps: Vec::new(),
            rolled_back: false,
            aborted: false,
        });
        self.progress.current_turn = Some(self.replay.turns.len() - 1);
        self.progress.live_turns.push(self.replay.turns.len() - 1);
    }

    pub(super) fn item(&mut self, id: ItemId, line: usize) -> Effect {
        let item = &self.rollout.items[id];
        let effect = filter(item);
        if effect != Effect::EnteredHistory {
            return effect;
        }
        if !self.progress.lifecycle && is_turn_boundary(item, || item.json()) {
            self.unwritten_request();
            self.start_turn(None, line);
            self.open_slot();
        }
        if item.is_model_output() {
            let new_request = (self.progress.last_was_input && !self.same_response())
                || (self.progress.slot_open && self.progress.slot_step.is_none())
                || self.replay.steps.is_empty();
            if new_request {
                self.new_step(line, false);
            }
            self.progress.last_was_input = false;
        } else if is_input(item) {
            self.progress.last_was_input = true;
        }
        self.push_entry(HistoryEntry {
            item: id,
            line,
            origin: EntryOrigin::File,
        });
        Effect::EnteredHistory
    }

    /// Whether a model output after a tool output still belongs to the step's response:
    /// builds that write a `turn_context` before every request (0.58 to 0.104:
    /// [`crate::agents::codex::model::TurnContext::per_request`]) write parallel calls as call,
    /// output, call, output (`tests/conformance/0.58.0/parallel_calls`: one request for both
    /// calls), so without a `turn_context` since the step there was no new request.
    pub(super) fn same_response(&self) -> bool {
        if self.progress.slot_open || self.progress.slot_step.is_none() {
            return false;
        }
        let Some(context) = self.progress.current_context else {
            return false;
        };
        matches!(&self.rollout.records[context].kind,
            RecordKind::TurnContext(tc) if tc.per_request())
    }

    pub(super) fn new_step(&mut self, line: usize, pending: bool) {
        if self.progress.current_turn.is_none() {
            // Output before any user message (a plain item file): an implicit first turn.
            self.start_turn(None, line);
        }
        let turn = self
            .progress
            .current_turn
            .expect("invariant: a turn was just started");
        let usage = self
            .progress
            .slot_usage
            .take()
            .or_else(|| self.progress.carried_usage.take());
        let unix_seconds = self.rollout.records[self.progress.current_record].unix_seconds;
        let step = Step {
            turn,
            number: self.replay.turns[turn].steps.len() + 1,
            epoch: self.epoch(),
            prefix_len: self.epoch_len(),
            context: self.progress.current_context,
            usage,
            line,
            unix_seconds,
            pending,
            compaction: false,
        };
        self.replay.steps.push(step);
        let index = self.replay.steps.len() - 1;
        self.replay.turns[turn].steps.push(index);
        self.progress.slot_step = Some(index);
        self.progress.slot_open = false;
    }

    /// What a resume would send next, and the usage still held: only final at the end, so
    /// [`State::unfinish`] takes it back before more records are replayed.
    pub(super) fn finish(&mut self) {
        self.replay.resume.unfinished = Some(Box::new(Unfinished {
            current_turn: self.progress.current_turn,
            slot_open: self.progress.slot_open,
            slot_step: self.progress.slot_step,
            slot_usage: self.progress.slot_usage.clone(),
            carried_usage: self.progress.carried_usage.clone(),
            live_turns: self.progress.live_turns.len(),
            steps: self.replay.steps.len(),
            turns: self.replay.turns.len(),
            unattached_usage: self.replay.unattached_usage.len(),
            last_without_usage: self.replay.steps.last().is_some_and(|s| s.usage.is_none()),
        }));
        let wants_request = (self.progress.slot_open && self.progress.slot_step.is_none())
            || self.progress.last_was_input;
        let history_len = self.epoch_len();
        let covered = self
            .replay
            .steps
            .last()
            .is_some_and(|s| s.epoch == self.epoch() && s.prefix_len == history_len);
        if wants_request && history_len > 0 && !covered {
            let line = self.rollout.records.last().map_or(0, |r| r.line);
            self.new_step(line, true);
        }
        for usage in [
            self.progress.slot_usage.take(),
            self.progress.carried_usage.take(),
        ]
        .into_iter()
        .flatten()
        {
            match self.replay.steps.last_mut().filter(|s| s.usage.is_none()) {
                Some(step) => step.usage = Some(usage),
                None => self.replay.unattached_usage.push(usage.line),
            }
        }
    }

    /// Undo [`State::finish`].
    pub(super) fn unfinish(&mut self) {
        let Some(u) = self.replay.resume.unfinished.take() else {
            return;
        };
        let replay = &mut self.replay;
        if replay.steps.len() > u.steps
            && let Some(pending) = replay.steps.pop()
            && let Some(turn) = replay.turns.get_mut(pending.turn)
        {
            turn.steps.pop();
        }
        replay.turns.truncate(u.turns);
        if u.last_without_usage
            && let Some(last) = replay.steps.last_mut()
        {
            last.usage = None;
        }
        replay.unattached_usage.truncate(u.unattached_usage);
        self.progress.live_turns.truncate(u.live_turns);
        self.progress.current_turn = u.current_turn;
        self.progress.slot_open = u.slot_open;
        self.progress.slot_step = u.slot_step;
        self.progress.slot_usage = u.slot_usage;
        self.progress.carried_usage = u.carried_usage;
    }
}

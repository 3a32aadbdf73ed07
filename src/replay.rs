//! Replay: the durable ("raw") history a resume rebuilds from a rollout, with its turns and
//! steps (codex-rollout.md sections 6.1, 7.2, 7.3).
//!
//! History lives in *epochs*: append-only lists of entries. A compaction or a rollback starts a
//! new epoch, so every step can point at `(epoch, prefix length)` and no step copies the history
//! before it. A rollback's epoch shares the surviving prefix with the epoch it cut
//! ([`SharedLists`]), so a rollback costs O(log) plus the entries it drops: replay is linear in
//! the rollout however many rollbacks it holds.

use crate::content::{SUMMARY_PREFIX, is_context_message, is_turn_boundary, message_texts};
use crate::model::{
    EventKind, Item, ItemId, ItemKind, Record, RecordKind, Rollout, Text, TokenInfo, Usage,
};
use crate::shared::{SharedLists, Slice};

/// One entry of the raw history: an item and the line it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryEntry {
    pub item: ItemId,
    pub line: usize,
    pub origin: EntryOrigin,
}

/// Where a raw history entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryOrigin {
    /// Read from the file.
    File,
    /// Read from the file, but placed by promptc's rebuild of a compaction without
    /// `replacement_history` (Codex re-creates this initial context at resume time).
    Approximate,
    /// A user message promptc rebuilt for such a compaction.
    Rebuilt,
    /// The summary message of such a compaction.
    Summary,
    /// A fork's parent history, read from the parent rollout: Codex sends it first.
    Parent,
}

impl EntryOrigin {
    /// Stable name used in output.
    pub fn name(self) -> &'static str {
        match self {
            EntryOrigin::File => "raw",
            EntryOrigin::Approximate => "approximate",
            EntryOrigin::Rebuilt => "rebuilt",
            EntryOrigin::Summary => "synthetic",
            EntryOrigin::Parent => "parent",
        }
    }
}

/// A user turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// 1-based.
    pub number: usize,
    pub turn_id: Option<String>,
    /// Line where the turn starts (its user message or `task_started`).
    pub line: usize,
    /// Indices into [`Replay::steps`].
    pub steps: Vec<usize>,
    /// Dropped from history by a later `thread_rolled_back`.
    pub rolled_back: bool,
    /// Ended by `turn_aborted`.
    pub aborted: bool,
}

/// An observed usage for one request, from a `token_count` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub line: usize,
    /// The event line's timestamp in Unix seconds ([`crate::model::Record::unix_seconds`]).
    pub unix_seconds: Option<i64>,
    /// `last_token_usage`: the usage of this one request.
    pub usage: Usage,
}

/// One sampling request.
#[derive(Debug, Clone)]
pub struct Step {
    /// Index into [`Replay::turns`].
    pub turn: usize,
    /// 1-based within its turn.
    pub number: usize,
    /// The request's input is `epochs[epoch][..prefix_len]`.
    pub epoch: usize,
    pub prefix_len: usize,
    /// The `turn_context` record in effect (index into `Rollout::records`).
    pub context: Option<usize>,
    pub usage: Option<Observation>,
    /// Line of the step's first model output, or of the last line for a pending step.
    pub line: usize,
    /// That line's timestamp in Unix seconds ([`crate::model::Record::unix_seconds`]).
    pub unix_seconds: Option<i64>,
    /// No output was recorded: the request a resume would send next.
    pub pending: bool,
}

/// A compaction checkpoint.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub line: usize,
    /// The epoch the compaction started.
    pub epoch: usize,
    /// The history was rebuilt by promptc (no `replacement_history`): approximate.
    pub rebuilt: bool,
    /// Usage reported for the compaction request itself, if any.
    pub usage: Option<Observation>,
}

/// A rollback.
#[derive(Debug, Clone)]
pub struct Rollback {
    pub line: usize,
    pub num_turns: u64,
    /// Turns it actually removed.
    pub dropped_turns: usize,
    pub epoch: usize,
}

/// What became of a record during replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The item entered the raw history.
    EnteredHistory,
    /// A system-role message: Codex never records it.
    SystemMessage,
    /// An item type promptc does not know: kept and shown, not replayed.
    UnknownItem,
    /// `compaction_trigger`: not an API item.
    NotPersisted,
    /// Replaced the history (a `compacted` line).
    Compaction,
    /// Dropped turns (`thread_rolled_back`).
    Rollback,
    /// Set the context of the following requests.
    TurnContext,
    /// A usage observation attached to a step or compaction.
    Usage,
    /// A `token_count` whose totals repeat the previous one.
    DuplicateUsage,
    /// A turn boundary event.
    TurnLifecycle,
    /// Metadata, UI and telemetry lines: never part of the history.
    Ignored,
    /// A line type promptc does not know.
    UnknownLine,
}

impl Effect {
    /// Stable name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Effect::EnteredHistory => "history",
            Effect::SystemMessage => "system_message_not_recorded",
            Effect::UnknownItem => "unknown_item_not_replayed",
            Effect::NotPersisted => "not_persisted",
            Effect::Compaction => "compaction",
            Effect::Rollback => "rollback",
            Effect::TurnContext => "turn_context",
            Effect::Usage => "usage",
            Effect::DuplicateUsage => "duplicate_usage",
            Effect::TurnLifecycle => "turn_lifecycle",
            Effect::Ignored => "not_history",
            Effect::UnknownLine => "unknown_line_not_replayed",
        }
    }
}

/// The result of replaying a rollout.
#[derive(Debug, Clone)]
pub struct Replay {
    /// One list per epoch (list `e` is epoch `e`); a rollback's epoch shares its prefix with the
    /// epoch it cut.
    pub epochs: SharedLists<HistoryEntry>,
    pub turns: Vec<Turn>,
    pub steps: Vec<Step>,
    pub checkpoints: Vec<Checkpoint>,
    pub rollbacks: Vec<Rollback>,
    /// One per record of the rollout.
    pub effects: Vec<Effect>,
    /// Items promptc made while replaying (a rebuilt compaction history); ids continue after
    /// `Rollout::items`.
    pub extra_items: Vec<Item>,
    /// Things the replay could only approximate, with their line.
    pub approximations: Vec<(usize, String)>,
    /// Observations promptc could not attach to a request, with their line.
    pub unattached_usage: Vec<usize>,
}

impl Replay {
    /// The raw history after the whole file: the last epoch.
    pub fn history(&self) -> Slice<'_, HistoryEntry> {
        self.epoch(self.epochs.len() - 1)
    }

    /// The raw history of an epoch, as long as it grew.
    pub fn epoch(&self, epoch: usize) -> Slice<'_, HistoryEntry> {
        self.epochs.list(epoch)
    }

    /// The raw history a step's request was built from.
    pub fn step_history(&self, step: usize) -> Slice<'_, HistoryEntry> {
        let s = &self.steps[step];
        self.epochs.slice(s.epoch, ..s.prefix_len)
    }

    /// An item by id, whether it came from the file or from replay.
    pub fn item<'a>(&'a self, rollout: &'a Rollout, id: ItemId) -> &'a Item {
        if id < rollout.items.len() {
            &rollout.items[id]
        } else {
            &self.extra_items[id - rollout.items.len()]
        }
    }

    /// An item's JSON text, whether it came from the file or from replay.
    pub fn item_json<'a>(&'a self, rollout: &'a Rollout, id: ItemId) -> &'a str {
        self.item(rollout, id).json(&rollout.bytes)
    }
}

/// Does the item enter the history (Codex's `is_api_message` filter)?
fn filter(item: &Item) -> Effect {
    match item.kind {
        ItemKind::Message if item.role.as_deref() == Some("system") => Effect::SystemMessage,
        ItemKind::Unknown => Effect::UnknownItem,
        ItemKind::CompactionTrigger => Effect::NotPersisted,
        _ => Effect::EnteredHistory,
    }
}

/// Is the item something the next request sends as new input (as opposed to model output)?
fn is_input(item: &Item) -> bool {
    match item.kind {
        ItemKind::Message => matches!(item.role.as_deref(), Some("user" | "developer")),
        ItemKind::FunctionCallOutput
        | ItemKind::CustomToolCallOutput
        | ItemKind::ToolSearchOutput => true,
        _ => false,
    }
}

/// The budget Codex uses when it rebuilds a compacted history from user messages
/// (`build_token_limited_compacted_history`, late 2025), in approximate tokens of 4 bytes.
const COMPACT_USER_MESSAGE_MAX_TOKENS: usize = 20_000;

struct State<'a> {
    rollout: &'a Rollout,
    replay: Replay,
    lifecycle: bool,
    current_turn: Option<usize>,
    current_context: Option<usize>,
    /// A `turn_context` (or a turn start) asked for a new request.
    slot_open: bool,
    /// The step created since the slot opened.
    slot_step: Option<usize>,
    slot_usage: Option<Observation>,
    carried_usage: Option<Observation>,
    last_total: Option<Usage>,
    last_was_input: bool,
    /// The record being replayed (the last one once replay is done).
    current_record: usize,
    /// Positions of the turn boundaries (user messages) in the current epoch, in order, up to
    /// `scanned`: a rollback scans only what was appended since the last one.
    boundaries: Vec<usize>,
    scanned: usize,
    /// Turns not rolled back, oldest first.
    live_turns: Vec<usize>,
}

/// Replay a rollout into its raw history, turns and steps.
pub fn replay(rollout: &Rollout) -> Replay {
    replay_with_base(rollout, Vec::new(), 0)
}

/// Replay a rollout whose history starts with `base` (a fork's parent history, items that own
/// their text), placed at `line` (the line that names the parent).
pub fn replay_with_base(rollout: &Rollout, base: Vec<Item>, line: usize) -> Replay {
    let lifecycle = rollout
        .records
        .iter()
        .any(|r| matches!(&r.kind, RecordKind::Event(e) if e.kind == EventKind::TaskStarted));
    let mut state = State {
        rollout,
        replay: Replay {
            epochs: {
                // Room for every item and for a step at each: growing these lists copied
                // them into new pages, each page a fault (3 µs here) on the one thread.
                // Room never used is never touched.
                let mut epochs = SharedLists::new();
                epochs.new_list_from(Vec::with_capacity(rollout.items.len()));
                epochs
            },
            turns: Vec::new(),
            steps: Vec::with_capacity(rollout.items.len() + 1),
            checkpoints: Vec::new(),
            rollbacks: Vec::new(),
            effects: Vec::with_capacity(rollout.records.len()),
            extra_items: Vec::new(),
            approximations: Vec::new(),
            unattached_usage: Vec::new(),
        },
        lifecycle,
        current_turn: None,
        current_context: None,
        slot_open: false,
        slot_step: None,
        slot_usage: None,
        carried_usage: None,
        last_total: None,
        last_was_input: false,
        current_record: 0,
        boundaries: Vec::new(),
        scanned: 0,
        live_turns: Vec::new(),
    };
    for item in base {
        state.replay.extra_items.push(item);
        let id = rollout.items.len() + state.replay.extra_items.len() - 1;
        state.push_entry(HistoryEntry {
            item: id,
            line,
            origin: EntryOrigin::Parent,
        });
    }
    // In order, not by index: an index is first located among the parts it was parsed in.
    for (index, record) in rollout.records.iter().enumerate() {
        state.current_record = index;
        let effect = state.record(index, record);
        state.replay.effects.push(effect);
    }
    state.finish();
    state.replay
}

impl State<'_> {
    /// The current epoch.
    fn epoch(&self) -> usize {
        self.replay.epochs.len() - 1
    }

    fn epoch_len(&self) -> usize {
        self.replay.epochs.list_len(self.epoch())
    }

    /// Append to the current epoch.
    fn push_entry(&mut self, entry: HistoryEntry) {
        let epoch = self.epoch();
        self.replay.epochs.push(epoch, entry);
    }

    /// Bring `boundaries` up to date with the current epoch.
    fn scan_boundaries(&mut self) {
        let rollout = self.rollout;
        let epoch = self.epoch();
        let len = self.epoch_len();
        let new = self.replay.epochs.slice(epoch, self.scanned..len);
        for (offset, entry) in new.iter().enumerate() {
            let item = self.replay.item(rollout, entry.item);
            if is_turn_boundary(item, || item.json(&rollout.bytes)) {
                self.boundaries.push(self.scanned + offset);
            }
        }
        self.scanned = len;
    }

    fn record(&mut self, index: usize, record: &Record) -> Effect {
        let line = record.line;
        match &record.kind {
            RecordKind::SessionMeta(_) | RecordKind::State | RecordKind::Other { .. } => {
                Effect::Ignored
            }
            RecordKind::Unknown { .. } => Effect::UnknownLine,
            RecordKind::TurnContext(_) => {
                self.current_context = Some(index);
                self.open_slot();
                Effect::TurnContext
            }
            RecordKind::Item(id) => self.item(*id, line),
            RecordKind::Compacted(compacted) => {
                let usage = self.slot_usage.take().or(self.carried_usage.take());
                let (entries, rebuilt) = match &compacted.replacement {
                    Some(ids) => (
                        ids.iter()
                            .filter(|&&id| {
                                filter(&self.rollout.items[id]) == Effect::EnteredHistory
                            })
                            .map(|&item| HistoryEntry {
                                item,
                                line,
                                origin: EntryOrigin::File,
                            })
                            .collect(),
                        false,
                    ),
                    None => (self.rebuild_compacted(&compacted.message, line), true),
                };
                self.replay.epochs.new_list_from(entries);
                self.boundaries.clear();
                self.scanned = 0;
                let epoch = self.epoch();
                self.replay.checkpoints.push(Checkpoint {
                    line,
                    epoch,
                    rebuilt,
                    usage,
                });
                self.open_slot();
                Effect::Compaction
            }
            RecordKind::Event(event) => match &event.kind {
                EventKind::TaskStarted => {
                    self.start_turn(event.turn_id.as_deref().map(String::from), line);
                    self.open_slot();
                    Effect::TurnLifecycle
                }
                EventKind::TaskComplete => Effect::TurnLifecycle,
                EventKind::TurnAborted => {
                    if let Some(turn) = self.current_turn {
                        self.replay.turns[turn].aborted = true;
                    }
                    Effect::TurnLifecycle
                }
                EventKind::ThreadRolledBack { num_turns } => {
                    self.rollback(*num_turns, line);
                    Effect::Rollback
                }
                EventKind::TokenCount(Some(info)) => self.observe(info, record),
                EventKind::TokenCount(None)
                | EventKind::ContextCompacted
                | EventKind::UserMessage
                | EventKind::Other => Effect::Ignored,
            },
        }
    }

    fn open_slot(&mut self) {
        if let Some(usage) = self.slot_usage.take() {
            // A request that produced no output (a retry): keep its usage for the next one.
            self.carry(usage);
        }
        self.slot_open = true;
        self.slot_step = None;
    }

    fn carry(&mut self, usage: Observation) {
        if let Some(previous) = self.carried_usage.replace(usage) {
            self.replay.unattached_usage.push(previous.line);
        }
    }

    fn observe(&mut self, info: &TokenInfo, record: &Record) -> Effect {
        if self.last_total.as_ref() == Some(&info.total) {
            return Effect::DuplicateUsage;
        }
        self.last_total = Some(info.total.clone());
        let observation = Observation {
            line: record.line,
            unix_seconds: record.unix_seconds,
            usage: info.last.clone(),
        };
        if self.slot_open && self.slot_step.is_none() {
            if let Some(previous) = self.slot_usage.replace(observation) {
                self.carry(previous);
            }
        } else if let Some(step) = self.replay.steps.last_mut().filter(|s| s.usage.is_none()) {
            step.usage = Some(observation);
        } else {
            self.carry(observation);
        }
        Effect::Usage
    }

    fn start_turn(&mut self, turn_id: Option<String>, line: usize) {
        self.replay.turns.push(Turn {
            number: self.replay.turns.len() + 1,
            turn_id,
            line,
            steps: Vec::new(),
            rolled_back: false,
            aborted: false,
        });
        self.current_turn = Some(self.replay.turns.len() - 1);
        self.live_turns.push(self.replay.turns.len() - 1);
    }

    fn item(&mut self, id: ItemId, line: usize) -> Effect {
        let item = &self.rollout.items[id];
        let effect = filter(item);
        if effect != Effect::EnteredHistory {
            return effect;
        }
        if !self.lifecycle && is_turn_boundary(item, || item.json(&self.rollout.bytes)) {
            self.start_turn(None, line);
            self.open_slot();
        }
        if item.is_model_output() {
            let new_request = self.last_was_input
                || (self.slot_open && self.slot_step.is_none())
                || self.replay.steps.is_empty();
            if new_request {
                self.new_step(line, false);
            }
            self.last_was_input = false;
        } else if is_input(item) {
            self.last_was_input = true;
        }
        self.push_entry(HistoryEntry {
            item: id,
            line,
            origin: EntryOrigin::File,
        });
        Effect::EnteredHistory
    }

    fn new_step(&mut self, line: usize, pending: bool) {
        if self.current_turn.is_none() {
            // Output before any user message (a plain item file): an implicit first turn.
            self.start_turn(None, line);
        }
        let turn = self
            .current_turn
            .expect("invariant: a turn was just started");
        let usage = self.slot_usage.take().or_else(|| self.carried_usage.take());
        let unix_seconds = self.rollout.records[self.current_record].unix_seconds;
        let step = Step {
            turn,
            number: self.replay.turns[turn].steps.len() + 1,
            epoch: self.epoch(),
            prefix_len: self.epoch_len(),
            context: self.current_context,
            usage,
            line,
            unix_seconds,
            pending,
        };
        self.replay.steps.push(step);
        let index = self.replay.steps.len() - 1;
        self.replay.turns[turn].steps.push(index);
        self.slot_step = Some(index);
        self.slot_open = false;
    }

    fn finish(&mut self) {
        let wants_request = (self.slot_open && self.slot_step.is_none()) || self.last_was_input;
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
        for usage in [self.slot_usage.take(), self.carried_usage.take()]
            .into_iter()
            .flatten()
        {
            match self.replay.steps.last_mut().filter(|s| s.usage.is_none()) {
                Some(step) => step.usage = Some(usage),
                None => self.replay.unattached_usage.push(usage.line),
            }
        }
    }

    /// `drop_last_n_user_turns`: cut at the n-th user turn boundary from the end (the first
    /// boundary when there are fewer), then trim contextual messages just above the cut.
    /// Costs O(log) plus the entries and turns it drops: the new epoch shares the rest.
    fn rollback(&mut self, num_turns: u64, line: usize) {
        let rollout = self.rollout;
        let epoch = self.epoch();
        let len = self.epoch_len();
        self.scan_boundaries();
        let boundaries = &self.boundaries;
        let n = usize::try_from(num_turns).unwrap_or(usize::MAX);
        let mut cut = if n == 0 || boundaries.is_empty() {
            len
        } else if n >= boundaries.len() {
            boundaries[0]
        } else {
            boundaries[boundaries.len() - n]
        };
        if n > boundaries.len() && !boundaries.is_empty() {
            self.replay.approximations.push((
                line,
                format!(
                    "rollback of {num_turns} turns, but the history holds {}: cut at the first",
                    boundaries.len()
                ),
            ));
        }
        if cut < len && !boundaries.is_empty() && cut > boundaries[0] {
            while cut > boundaries[0] {
                let item = self
                    .replay
                    .item(rollout, self.replay.epochs.get(epoch, cut - 1).item);
                if is_context_message(item, || item.json(&rollout.bytes)) {
                    cut -= 1;
                } else {
                    break;
                }
            }
        }
        if cut >= len {
            // Codex's drop_last_n_user_turns leaves the history as it is: nothing to reset.
            self.replay.rollbacks.push(Rollback {
                line,
                num_turns,
                dropped_turns: 0,
                epoch,
            });
            return;
        }
        let kept = boundaries.partition_point(|&b| b < cut);
        let dropped = boundaries.len() - kept;
        self.boundaries.truncate(kept);
        self.scanned = cut;
        // Mark the newest surviving turns as rolled back, newest first.
        for _ in 0..dropped {
            match self.live_turns.pop() {
                Some(turn) => self.replay.turns[turn].rolled_back = true,
                None => break,
            }
        }
        self.replay.epochs.fork(epoch, cut);
        self.replay.rollbacks.push(Rollback {
            line,
            num_turns,
            dropped_turns: dropped,
            epoch: self.replay.epochs.len() - 1,
        });
        self.last_was_input = cut > 0;
        self.open_slot();
    }

    /// Legacy compaction without `replacement_history`: Codex rebuilds
    /// `initial context + recent user messages (about 20k tokens) + summary`. The initial context
    /// is rebuilt from the config at resume time, which the rollout does not record: promptc
    /// reuses the contextual messages that opened the history, and says the result is approximate.
    fn rebuild_compacted(&mut self, message: &str, line: usize) -> Vec<HistoryEntry> {
        let rollout = self.rollout;
        let history = self.replay.history();
        let mut entries = Vec::new();
        for entry in history.iter() {
            let item = self.replay.item(rollout, entry.item);
            if !is_context_message(item, || item.json(&rollout.bytes)) {
                break;
            }
            entries.push(HistoryEntry {
                origin: EntryOrigin::Approximate,
                ..*entry
            });
        }
        let mut selected: Vec<String> = Vec::new();
        let mut budget = COMPACT_USER_MESSAGE_MAX_TOKENS * 4;
        for entry in history.iter().rev() {
            let item = self.replay.item(rollout, entry.item);
            let json = || item.json(&rollout.bytes);
            if !is_turn_boundary(item, json) {
                continue;
            }
            let text = message_texts(json()).join("\n");
            if text.starts_with(SUMMARY_PREFIX) {
                continue;
            }
            if budget == 0 {
                break;
            }
            if text.len() <= budget {
                budget -= text.len();
                selected.push(text);
            } else {
                let mut cut = budget;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                selected.push(format!("{}…", &text[..cut]));
                budget = 0;
            }
        }
        selected.reverse();
        let summary = if message.is_empty() {
            "(no summary available)".to_string()
        } else {
            message.to_string()
        };
        selected.push(summary);
        let count = selected.len();
        for (index, text) in selected.into_iter().enumerate() {
            let json = serde_json::json!({
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            })
            .to_string();
            let digest = Some(crate::hash::hash("item", json.as_bytes()));
            let item = Item {
                text: Text::Owned(json.into_boxed_str()),
                kind: ItemKind::Message,
                type_name: "message".into(),
                role: Some("user".into()),
                call_id: None,
                id: None,
                name: None,
                execution: None,
                line,
                wire: None,
                digest,
            };
            self.replay.extra_items.push(item);
            let id = self.rollout.items.len() + self.replay.extra_items.len() - 1;
            let origin = if index + 1 == count {
                EntryOrigin::Summary
            } else {
                EntryOrigin::Rebuilt
            };
            entries.push(HistoryEntry {
                item: id,
                line,
                origin,
            });
        }
        self.replay.approximations.push((
            line,
            "compaction without replacement_history: history rebuilt from the opening context, \
             recent user messages and the summary; Codex rebuilds the initial context from its \
             config at resume time"
                .to_string(),
        ));
        entries
    }
}

#[cfg(test)]
mod tests;

//! Replay: the durable ("raw") history a resume rebuilds from a rollout, with its turns and
//! steps (codex-rollout.md sections 6.1, 7.2, 7.3).
//!
//! History lives in *epochs*: append-only lists of entries. A compaction or a rollback starts a
//! new epoch, so every step can point at `(epoch, prefix length)` and no step copies the history
//! before it. A rollback's epoch shares the surviving prefix with the epoch it cut
//! ([`SharedLists`]), so a rollback costs O(log) plus the entries it drops: replay is linear in
//! the rollout however many rollbacks it holds.

use crate::agents::codex::content::is_turn_boundary;
use crate::agents::codex::model::{
    EventKind, Item, ItemId, ItemKind, Record, RecordKind, Rollout, Usage,
};
use crate::core::shared::{SharedLists, Slice};
pub use crate::core::steps::{Observation, Step, Turn};

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

/// A compaction checkpoint.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub line: usize,
    /// The `compacted` line's hash ([`crate::agents::codex::model::Compacted::digest`]).
    pub digest: crate::core::hash::Hash,
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
    /// Items promptc made while replaying (a fork's parent history, a rebuilt compaction
    /// history); their ids are their index here with [`MADE`] set.
    pub extra_items: Vec<Item>,
    /// Things the replay could only approximate, with their line.
    pub approximations: Vec<(usize, String)>,
    /// Observations promptc could not attach to a request, with their line.
    pub unattached_usage: Vec<usize>,
    /// Where replay stopped: [`replay_more`] goes on from there.
    resume: Resume,
}

/// The ids of the items replay makes (a fork's parent history, a rebuilt compaction) have this
/// bit set: they stay the same however many items the rollout gains later ([`replay_more`]).
pub const MADE: ItemId = 1 << (usize::BITS - 1);

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
        if id & MADE == 0 {
            &rollout.items[id]
        } else {
            &self.extra_items[id & !MADE]
        }
    }

    /// Keep an item replay made: its id.
    fn push_made(&mut self, item: Item) -> ItemId {
        self.extra_items.push(item);
        MADE | (self.extra_items.len() - 1)
    }

    /// An index for the items of `rollout` and this replay, without gaps: the file's items,
    /// then replay's.
    pub fn dense_index(&self, rollout: &Rollout, id: ItemId) -> usize {
        if id & MADE == 0 {
            id
        } else {
            rollout.items.len() + (id & !MADE)
        }
    }

    /// An item's JSON text, whether it came from the file or from replay.
    pub fn item_json<'a>(&'a self, rollout: &'a Rollout, id: ItemId) -> &'a str {
        self.item(rollout, id).json()
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

/// What replay keeps while it goes through the records in order. Each record kind has its
/// step: [`State::record`] dispatches, [`State::item`] appends to the history and starts steps,
/// [`State::observe`] attaches token usage to steps, `compaction.rs` and `rollback.rs` start new
/// epochs, [`State::finish`] adds the pending request a resume would send.
struct State<'a> {
    rollout: &'a Rollout,
    replay: Replay,
    progress: Progress,
}

/// Where replay is in the records: what [`State`] carries from one record to the next, kept in
/// the replay between [`replay_more`]s.
#[derive(Debug, Clone, Default)]
struct Progress {
    /// The file has turn lifecycle events (eras C and D): user messages do not start turns.
    lifecycle: bool,
    current_turn: Option<usize>,
    /// The record of the last `turn_context`.
    current_context: Option<usize>,
    // The request slot: a `turn_context` (or a turn start, a compaction, a rollback) opens it,
    // the next model output makes its step; usage seen meanwhile belongs to that step.
    /// A `turn_context` (or a turn start) asked for a new request.
    slot_open: bool,
    /// The step created since the slot opened.
    slot_step: Option<usize>,
    slot_usage: Option<Observation>,
    /// Usage of a request that produced no output (a retry), for the next step.
    carried_usage: Option<Observation>,
    /// The last cumulative total seen: a `token_count` that repeats it is a duplicate.
    last_total: Option<Usage>,
    /// The last history item was input (a user message, a tool output): the next model output
    /// is a new request.
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

/// What a replay keeps to go on: its [`Progress`], and how to undo [`State::finish`].
#[derive(Debug, Clone, Default)]
struct Resume {
    progress: Progress,
    /// Records replayed.
    records: usize,
    /// Items of a fork's parent history, first in `extra_items`, and their line.
    base: (usize, usize),
    /// `approximations` made by replay; those after are notes a caller added (a fork's).
    approximations: usize,
    /// The state before [`State::finish`], and the lengths it changed.
    unfinished: Option<Box<Unfinished>>,
}

/// What [`State::finish`] changed, to put back before more records are replayed.
#[derive(Debug, Clone)]
struct Unfinished {
    current_turn: Option<usize>,
    slot_open: bool,
    slot_step: Option<usize>,
    slot_usage: Option<Observation>,
    carried_usage: Option<Observation>,
    live_turns: usize,
    steps: usize,
    turns: usize,
    unattached_usage: usize,
    /// The last step had no usage.
    last_without_usage: bool,
}

/// Replay a rollout into its raw history, turns and steps.
pub fn replay(rollout: &Rollout) -> Replay {
    replay_with_base(rollout, Vec::new(), 0)
}

/// Go on replaying `rollout` from where `replay`, made of the rollout's first records, stopped:
/// the result is [`replay_with_base`]'s of the whole rollout (notes added to `replay.approximations`
/// after it was made stay last). Costs the new records, but for the first `task_started` after
/// user messages (they no longer start turns), where the whole rollout is replayed again.
///
/// Returns how many of the steps `replay` had are the same in the result: all but the last one
/// (a usage arriving later is its own, a pending step goes), none when replayed again.
pub fn replay_more(rollout: &Rollout, replay: &mut Replay) -> usize {
    let later = replay.approximations.split_off(
        replay
            .resume
            .approximations
            .min(replay.approximations.len()),
    );
    let from = replay.resume.records;
    let lifecycle_now = !replay.resume.progress.lifecycle
        && has_lifecycle(rollout.records.get(from..).unwrap_or(&[]));
    if lifecycle_now {
        let (count, line) = replay.resume.base;
        let base = replay.extra_items[..count].to_vec();
        *replay = replay_with_base(rollout, base, line);
        replay.approximations.extend(later);
        return 0;
    }
    let unchanged = replay
        .resume
        .unfinished
        .as_ref()
        .map_or(0, |u| u.steps.saturating_sub(1));
    let mut state = State::resume(rollout, std::mem::replace(replay, empty(0, 0)));
    state.unfinish();
    state.run(from);
    *replay = state.suspend();
    replay.approximations.extend(later);
    unchanged
}

/// Any `task_started`: turns are delimited by lifecycle events (eras C and D).
fn has_lifecycle(records: &[Record]) -> bool {
    records
        .iter()
        .any(|r| matches!(&r.kind, RecordKind::Event(e) if e.kind == EventKind::TaskStarted))
}

/// An empty replay, with room for `items` items and `records` records.
fn empty(items: usize, records: usize) -> Replay {
    Replay {
        epochs: {
            // Room for every item and for a step at each: growing these lists copied
            // them into new pages, each page a fault (3 µs here) on the one thread.
            // Room never used is never touched.
            let mut epochs = SharedLists::new();
            epochs.new_list_from(Vec::with_capacity(items));
            epochs
        },
        turns: Vec::new(),
        steps: Vec::with_capacity(items + 1),
        checkpoints: Vec::new(),
        rollbacks: Vec::new(),
        effects: Vec::with_capacity(records),
        extra_items: Vec::new(),
        approximations: Vec::new(),
        unattached_usage: Vec::new(),
        resume: Resume::default(),
    }
}

/// Replay a rollout whose history starts with `base` (a fork's parent history, items that own
/// their text), placed at `line` (the line that names the parent).
pub fn replay_with_base(rollout: &Rollout, base: Vec<Item>, line: usize) -> Replay {
    let mut replay = empty(rollout.items.len(), rollout.records.len());
    replay.resume.progress.lifecycle = has_lifecycle(&rollout.records);
    replay.resume.base = (base.len(), line);
    let mut state = State::resume(rollout, replay);
    for item in base {
        let id = state.replay.push_made(item);
        state.push_entry(HistoryEntry {
            item: id,
            line,
            origin: EntryOrigin::Parent,
        });
    }
    state.run(0);
    state.suspend()
}

impl<'a> State<'a> {
    /// Take up a replay where it stopped.
    fn resume(rollout: &'a Rollout, mut replay: Replay) -> State<'a> {
        let progress = std::mem::take(&mut replay.resume.progress);
        State {
            rollout,
            replay,
            progress,
        }
    }

    /// Replay the records from `from` on, then finish.
    fn run(&mut self, from: usize) {
        let rollout = self.rollout;
        for (index, record) in rollout.records.iter().enumerate().skip(from) {
            self.progress.current_record = index;
            let effect = self.record(index, record);
            self.replay.effects.push(effect);
        }
        self.replay.resume.records = rollout.records.len();
        self.replay.resume.approximations = self.replay.approximations.len();
        self.finish();
    }

    /// The replay, with what it takes to go on.
    fn suspend(mut self) -> Replay {
        self.replay.resume.progress = self.progress;
        self.replay
    }
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
        let new = self.replay.epochs.slice(epoch, self.progress.scanned..len);
        for (offset, entry) in new.iter().enumerate() {
            let item = self.replay.item(rollout, entry.item);
            if is_turn_boundary(item, || item.json()) {
                self.progress
                    .boundaries
                    .push(self.progress.scanned + offset);
            }
        }
        self.progress.scanned = len;
    }

    fn record(&mut self, index: usize, record: &Record) -> Effect {
        let line = record.line;
        match &record.kind {
            RecordKind::SessionMeta(_) | RecordKind::State | RecordKind::Other { .. } => {
                Effect::Ignored
            }
            RecordKind::Unknown { .. } => Effect::UnknownLine,
            RecordKind::TurnContext(_) => {
                self.progress.current_context = Some(index);
                self.open_slot();
                Effect::TurnContext
            }
            RecordKind::Item(id) => self.item(*id, line),
            RecordKind::Compacted(compacted) => {
                self.compaction(compacted, line);
                Effect::Compaction
            }
            RecordKind::Event(event) => match &event.kind {
                EventKind::TaskStarted => {
                    self.unwritten_request();
                    self.start_turn(event.turn_id.as_deref().map(String::from), line);
                    self.open_slot();
                    Effect::TurnLifecycle
                }
                EventKind::TaskComplete => Effect::TurnLifecycle,
                EventKind::TurnAborted => {
                    if let Some(turn) = self.progress.current_turn {
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
                | EventKind::ThreadSettingsApplied { .. }
                | EventKind::Other => Effect::Ignored,
            },
        }
    }
}

mod compaction;
mod rollback;
mod steps;

#[cfg(test)]
mod tests;

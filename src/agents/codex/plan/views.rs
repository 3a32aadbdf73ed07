//! The model view of every step, built in one pass over the steps: each step's raw history is
//! the one before it cut back (a rollback, a compaction) and extended; the view entries of
//! the unchanged prefix are shared, and those after the first change are rendered again,
//! reused from a list that already holds them where one does.
//!
//! Per step ([`ViewBuilder::step`]): find the raw prefix shared with what is materialized,
//! cut the path back to it ([`ViewBuilder::cut_back`]), extend it with the step's new raw
//! entries ([`ViewBuilder::extend`]), find the first raw entry whose view changes (the cut,
//! or an earlier entry whose call or output left or joined), remember the rendering the view
//! leaves there ([`ViewBuilder::remember_left_rendering`]), and render from there on
//! ([`ViewBuilder::render`]).

use std::sync::Arc;

use foldhash::HashMap;

use super::PlanOptions;
use super::digests::{Digests, digest_item, digest_items};
use crate::agents::codex::item_tokens::item_tokens;
use crate::agents::codex::model::{ItemId, ItemKind};
use crate::agents::codex::normalize::{Origin, ViewEntry, ViewItem, synthetic_output};
use crate::agents::codex::replay::MADE;
use crate::agents::codex::session::Session;
use crate::core::changes::ChangeLog;
use crate::core::hash::{Hash, hash};
use crate::core::shared::ListId;
use crate::core::shared::SharedLists;
use crate::fingerprint::{EntryData, chain_next, chain_start};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    Ghost,
    Call,
    Output,
}

/// A call/output pairing key: namespace (function outputs answer function and local shell
/// calls) and call id.
type Key<'a> = (u8, &'a str);

/// How an item takes part in normalization: its role, and the key under which it answers or is
/// answered (`(is_call, key)`; some items have a key and still keep their place, e.g. a server
/// tool search output answers its call but is never dropped).
fn classify(item: &crate::agents::codex::model::Item) -> (Role, Option<(bool, Key<'_>)>) {
    let namespace = ItemKind::pairing(item.kind);
    let key = namespace.and_then(|(space, is_call)| {
        let call_id = item.call_id.as_deref().or(match item.kind {
            ItemKind::FunctionCall
            | ItemKind::CustomToolCall
            | ItemKind::FunctionCallOutput
            | ItemKind::CustomToolCallOutput => Some(""),
            _ => None,
        })?;
        Some((is_call, (space, call_id)))
    });
    if item.kind == ItemKind::GhostSnapshot {
        return (Role::Ghost, key);
    }
    let role = match (namespace, key) {
        (Some(_), Some((is_call, _))) => {
            if item.kind == ItemKind::ToolSearchOutput
                && item.execution.as_deref() == Some("server")
            {
                Role::Plain
            } else if is_call {
                Role::Call
            } else {
                Role::Output
            }
        }
        _ => Role::Plain,
    };
    (role, key)
}

/// First positions on the path of calls (or of outputs), by namespace and call id.
#[derive(Debug, Default)]
struct FirstOf([HashMap<Box<str>, usize>; 3]);

impl FirstOf {
    fn get(&self, (space, id): Key) -> Option<usize> {
        self.0[usize::from(space)].get(id).copied()
    }

    /// Note `position` for `key` unless it has one: whether it did not.
    fn insert_first(&mut self, (space, id): Key, position: usize) -> bool {
        let map = &mut self.0[usize::from(space)];
        let vacant = !map.contains_key(id);
        if vacant {
            map.insert(id.into(), position);
        }
        vacant
    }

    fn remove(&mut self, (space, id): Key) {
        self.0[usize::from(space)].remove(id);
    }
}

/// One raw entry of the live path.
struct RawSlot {
    /// Its role and pairing key are [`classify`]'s of the item (the key is read again when
    /// needed: it borrows from the session, which grows between steps).
    item: ItemId,
    role: Role,
    /// This entry is the first with its key on the path (it is in `first_call`/`first_output`).
    first: bool,
    /// The status the entry is rendered with in the live view (see [`Live::status`]); kept for
    /// the first entry of each key, which is the one that records [`Alt`]s (a later entry of a
    /// key jumped over by a reuse keeps its old one).
    status: (bool, bool),
    /// Renderings of this entry that the live view left when its status changed, to go back to
    /// when the status changes back (a rewrite in the middle of a long history).
    alts: Vec<Alt>,
}

/// A rendering of a raw entry that the live view left: `list` holds, from `pos`, the entry
/// rendered with `status` after the view prefix ending with the stored entry `prefix`, then the
/// entries after it up to (not including) raw entry `agree`, rendered as the live path had them
/// at step `stamp`, within `list[..len]` (the live view's length then: entries past it belong
/// to another path).
#[derive(Debug, Clone, Copy)]
struct Alt {
    prefix: Option<(ListId, usize)>,
    status: (bool, bool),
    list: ListId,
    pos: usize,
    len: usize,
    agree: usize,
    stamp: usize,
}

/// At most this many renderings are remembered per raw entry (forgetting one only costs reuse).
const MAX_ALTS: usize = 4;

/// The raw path the plan materialized last (a prefix of `epoch`) and its view: steps extend it,
/// rollbacks and compactions cut it back. Each raw entry is pushed once and popped at most once.
struct Live {
    epoch: usize,
    slots: Vec<RawSlot>,
    /// First position of a call / an output of each key on the path.
    first_call: FirstOf,
    first_output: FirstOf,
    /// The view of the path: the first `len` entries of `array`.
    array: ListId,
    len: usize,
    /// The chain value and token total of that view.
    chain: Hash,
    tokens: usize,
}

impl Live {
    /// Is the slot's entry in the view of the whole path, and does it need a synthetic output?
    fn status(&self, session: &Session, slot: &RawSlot) -> (bool, bool) {
        let key = || classify(session.item(slot.item)).1;
        let answered = |first: &FirstOf| key().is_some_and(|(_, k)| first.get(k).is_some());
        match slot.role {
            Role::Plain => (true, false),
            Role::Ghost => (false, false),
            Role::Call => (true, !answered(&self.first_output)),
            Role::Output => (answered(&self.first_call), false),
        }
    }

    /// The first entry on side `is_call` (the calls, or the outputs) of `key`, whose status
    /// changes when a partner joins or leaves the path. Later entries of the key change with it
    /// and need not be named: a rendering reused from the first one on had them with the same
    /// status as the first one, which is theirs again.
    fn partner(&self, is_call: bool, key: Key, flips: &mut Vec<usize>) {
        let first = if is_call {
            &self.first_call
        } else {
            &self.first_output
        };
        flips.extend(first.get(key));
    }
}

/// The raw position an entry renders.
fn origin_raw(entry: &ViewEntry) -> usize {
    match entry.origin {
        Origin::Raw(raw) | Origin::Synthetic { call: raw } => raw,
    }
}

/// Where raw entry `raw` starts in `list[from..end]`: the first entry of it or of a later one.
fn view_position(arrays: &ViewLists, list: ListId, from: usize, end: usize, raw: usize) -> usize {
    let (mut low, mut high) = (from, end);
    while low < high {
        let mid = (low + high) / 2;
        if origin_raw(arrays.entries.get(list, mid)) < raw {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// The stored place of the entry before `pos`: equal places mean equal view prefixes.
fn prefix_place(arrays: &ViewLists, list: ListId, pos: usize) -> Option<(ListId, usize)> {
    pos.checked_sub(1)
        .map(|last| arrays.entries.locate_item(list, last))
}

/// The model views of all steps: append-only lists that share prefixes. A step's view is a
/// prefix of one list; a rewrite of already-sent history (a rollback, an output after a
/// synthetic one) forks a list at the first entry that changes instead of copying the prefix.
/// `entries` (Codex's, kept in [`super::CodexPlan`]) and `data` (the plan's neutral part)
/// always have the same shape (same list ids, same lengths).
#[derive(Debug, Default)]
pub(crate) struct ViewLists {
    pub(crate) entries: SharedLists<ViewEntry>,
    pub(crate) data: SharedLists<EntryData>,
}

impl ViewLists {
    pub(crate) fn new_list(&mut self, capacity: usize) -> ListId {
        let id = self.entries.new_list_from(Vec::with_capacity(capacity));
        let same = self.data.new_list_from(Vec::with_capacity(capacity));
        debug_assert_eq!(id, same);
        id
    }

    pub(crate) fn fork(&mut self, list: ListId, len: usize) -> ListId {
        let id = self.entries.fork(list, len);
        let same = self.data.fork(list, len);
        debug_assert_eq!(id, same);
        id
    }

    pub(crate) fn len(&self, list: ListId) -> usize {
        self.entries.list_len(list)
    }
}

/// What the pass over the steps keeps from one step to the next: the plan keeps it to go on
/// with the steps a growing session adds (see [`super::Planner`]).
pub(super) struct ViewBuilder {
    estimate_tokens: bool,
    /// By item id, when estimating tokens: each item is counted once, and counting, the
    /// expensive part, is spread over the available cores beforehand for the items there when
    /// the builder is made. Without estimates there is no memo: every item has its own hash
    /// (made by the loader or by replay), taken as the item is reached.
    item_digests: Digests,
    /// The views' lists: the plan's, lent for the steps (see [`super::Planner::extend`]).
    pub arrays: ViewLists,
    live: Live,
    /// The first raw position each step changed: an [`Alt`] recorded at a step still agrees
    /// with the live path below the smallest change of the steps after it.
    changes: ChangeLog,
    /// The raw entries before the cut whose status changes at this step.
    flips: Vec<usize>,
    /// Steps made.
    steps: usize,
}

/// Where rendering a step's view has got to: position `pos` of `list`, with the chain value
/// and token total there when known.
struct Cursor {
    list: ListId,
    pos: usize,
    tail: Option<(Hash, usize)>,
}

impl Cursor {
    /// When the entry at the cursor is one that `matches` accepts (a list already holds it as
    /// this path needs it), move past it.
    fn reuse(&mut self, arrays: &ViewLists, matches: impl Fn(&ViewEntry) -> bool) -> bool {
        let reused =
            self.pos < arrays.len(self.list) && matches(arrays.entries.get(self.list, self.pos));
        if reused {
            self.pos += 1;
            self.tail = None;
        }
        reused
    }

    /// Put `entry` at the cursor (forking the list there if it goes on) and move past it.
    fn push(&mut self, arrays: &mut ViewLists, entry: ViewEntry, item_hash: Hash, tokens: usize) {
        if self.pos < arrays.len(self.list) {
            self.list = arrays.fork(self.list, self.pos);
        }
        let (chain, total) = self.chain_and_tokens(arrays);
        let chain = chain_next(&chain, &item_hash);
        let total = total + tokens;
        arrays.entries.push(self.list, entry);
        arrays.data.push(
            self.list,
            EntryData {
                item_hash,
                chain,
                tokens: total,
            },
        );
        self.pos += 1;
        self.tail = Some((chain, total));
    }

    /// The chain value and token total of the view up to the cursor.
    fn chain_and_tokens(&self, arrays: &ViewLists) -> (Hash, usize) {
        self.tail.unwrap_or_else(|| match self.pos.checked_sub(1) {
            Some(last) => {
                let data = arrays.data.get(self.list, last);
                (data.chain, data.tokens)
            }
            None => (chain_start(), 0),
        })
    }
}

impl ViewBuilder {
    /// A builder whose first step's raw history is in `first_epoch`, with `arrays` (empty).
    pub(super) fn new(
        session: &Session,
        options: &PlanOptions,
        first_epoch: usize,
        mut arrays: ViewLists,
    ) -> Self {
        let item_digests = if options.estimate_tokens {
            digest_items(session, options)
        } else {
            Digests::default()
        };
        // Room for the first epoch's whole history, which is usually all of it (see
        // `replay::replay`).
        let capacity = session.replay.epochs.list_len(first_epoch);
        let live = Live {
            epoch: first_epoch,
            slots: Vec::with_capacity(capacity),
            first_call: FirstOf::default(),
            first_output: FirstOf::default(),
            array: arrays.new_list(capacity),
            len: 0,
            chain: chain_start(),
            tokens: 0,
        };
        ViewBuilder {
            estimate_tokens: options.estimate_tokens,
            item_digests,
            arrays,
            live,
            changes: ChangeLog::default(),
            flips: Vec::new(),
            steps: 0,
        }
    }

    /// The view of the next step, whose raw history is the first `target` entries of `epoch`:
    /// its list, length and chain value. Any sequence of steps may be made (a step redone when
    /// it changed, say): each view is its raw history's.
    pub(super) fn step(
        &mut self,
        session: &Session,
        epoch: usize,
        target: usize,
    ) -> (ListId, usize, Hash) {
        let step_index = self.steps;
        self.steps += 1;
        let materialized = self.live.slots.len();
        // All of it while the epoch grows; less after a rollback; nothing after a compaction.
        let common = if self.live.epoch == epoch {
            materialized.min(target)
        } else {
            let epochs = &session.replay.epochs;
            epochs.common_prefix(self.live.epoch, materialized, epoch, target)
        };
        self.flips.clear();
        self.cut_back(session, common);
        self.extend(session, epoch, common, target);
        self.flips.retain(|&f| f < common);
        self.flips.sort_unstable();
        self.flips.dedup();
        // The first raw entry whose view changes: the cut, or an earlier flip.
        let change = self.flips.first().map_or(common, |&f| f.min(common));
        let mut cursor = if change >= materialized {
            Cursor {
                list: self.live.array,
                pos: self.live.len,
                tail: Some((self.live.chain, self.live.tokens)),
            }
        } else {
            let pos = view_position(&self.arrays, self.live.array, 0, self.live.len, change);
            Cursor {
                list: self.live.array,
                pos,
                tail: None,
            }
        };
        if change < common {
            self.remember_left_rendering(step_index, change, common, &cursor);
        }
        self.render(session, change, common, target, &mut cursor);
        self.changes.push(step_index, change);
        let (chain, tokens) = cursor.chain_and_tokens(&self.arrays);
        let live = &mut self.live;
        (live.array, live.len, live.chain, live.tokens) = (cursor.list, cursor.pos, chain, tokens);
        (cursor.list, cursor.pos, chain)
    }

    /// Pop the raw entries past `common`; the entries whose partner (a call's output, an
    /// output's call) leaves with them change status.
    fn cut_back(&mut self, session: &Session, common: usize) {
        let live = &mut self.live;
        while live.slots.len() > common {
            let Some(slot) = live.slots.pop() else { break };
            if !slot.first {
                continue;
            }
            if let Some((is_call, key)) = classify(session.item(slot.item)).1 {
                if is_call {
                    live.first_call.remove(key);
                } else {
                    live.first_output.remove(key);
                }
                live.partner(!is_call, key, &mut self.flips);
            }
        }
    }

    /// Push the raw entries `common..target` of `epoch`; the entries whose partner joins with
    /// them change status.
    fn extend(&mut self, session: &Session, epoch: usize, common: usize, target: usize) {
        let live = &mut self.live;
        let entries = session.replay.epochs.slice(epoch, common..target);
        for (offset, entry) in entries.iter().enumerate() {
            let (role, key) = classify(session.item(entry.item));
            let mut first = false;
            if let Some((is_call, k)) = key {
                let own = if is_call {
                    &mut live.first_call
                } else {
                    &mut live.first_output
                };
                if own.insert_first(k, common + offset) {
                    first = true;
                    live.partner(!is_call, k, &mut self.flips);
                }
            }
            live.slots.push(RawSlot {
                item: entry.item,
                role,
                first,
                status: (false, false),
                alts: Vec::new(),
            });
        }
        live.epoch = epoch;
    }

    /// The first flip after raw entry `j`, or the cut.
    fn next_flip(&self, j: usize, common: usize) -> usize {
        let flips = &self.flips;
        flips
            .get(flips.partition_point(|&f| f <= j))
            .map_or(common, |&f| f.min(common))
    }

    /// Keep the rendering that the view leaves at flipped entry `change` (at the cursor), to
    /// come back to when its status flips back.
    fn remember_left_rendering(
        &mut self,
        step_index: usize,
        change: usize,
        common: usize,
        cursor: &Cursor,
    ) {
        let alt = Alt {
            prefix: prefix_place(&self.arrays, cursor.list, cursor.pos),
            status: self.live.slots[change].status,
            list: cursor.list,
            pos: cursor.pos,
            len: self.live.len,
            agree: self.next_flip(change, common),
            stamp: step_index,
        };
        let alts = &mut self.live.slots[change].alts;
        alts.retain(|a| (a.prefix, a.status) != (alt.prefix, alt.status));
        if alts.len() == MAX_ALTS {
            alts.remove(0);
        }
        alts.push(alt);
    }

    /// Render raw entries `change..target` from the cursor: each one's status, then its
    /// entries (reused where the list holds them, pushed where not), jumping over the entries
    /// of a rendering left earlier where one fits.
    fn render(
        &mut self,
        session: &Session,
        change: usize,
        common: usize,
        target: usize,
        cursor: &mut Cursor,
    ) {
        let mut raw = change;
        while raw < target {
            let status = self.live.status(session, &self.live.slots[raw]);
            self.live.slots[raw].status = status;
            if raw < common
                && self.flips.binary_search(&raw).is_ok()
                && let Some(end) = self.jump_to_left_rendering(raw, common, cursor)
            {
                raw = end;
                continue;
            }
            let (kept, synthetic) = status;
            if kept {
                let id = self.live.slots[raw].item;
                self.render_item(session, raw, id, cursor);
                if synthetic {
                    self.render_synthetic_output(session, raw, id, cursor);
                }
            }
            raw += 1;
        }
    }

    /// A rendering of flipped raw entry `raw` that the view left earlier after the same
    /// prefix and with its status now: move the cursor over the entries it renders as this
    /// path needs them, and return the raw entry after those.
    fn jump_to_left_rendering(
        &self,
        raw: usize,
        common: usize,
        cursor: &mut Cursor,
    ) -> Option<usize> {
        let slot = &self.live.slots[raw];
        let prefix = prefix_place(&self.arrays, cursor.list, cursor.pos);
        let alt = slot
            .alts
            .iter()
            .rev()
            .find(|a| a.prefix == prefix && a.status == slot.status)?;
        let end = alt
            .agree
            .min(self.changes.after(alt.stamp))
            .min(self.next_flip(raw, common))
            .max(raw + 1);
        cursor.list = alt.list;
        // Within the view the alt was taken from: after it, `list` may go on with entries of
        // an older path (a rolled-back message, say).
        cursor.pos = view_position(&self.arrays, alt.list, alt.pos, alt.len, end);
        cursor.tail = None;
        Some(end)
    }

    /// The entry of history item `id` at raw position `raw`.
    fn render_item(&mut self, session: &Session, raw: usize, id: ItemId, cursor: &mut Cursor) {
        let held = |entry: &ViewEntry| {
            matches!(entry, ViewEntry { origin: Origin::Raw(r), item: ViewItem::History(i) }
                if *r == raw && *i == id)
        };
        if cursor.reuse(&self.arrays, held) {
            return;
        }
        let estimate_tokens = self.estimate_tokens;
        let digest = || digest_item(session.item(id), estimate_tokens);
        let (item_hash, item_tokens) = if estimate_tokens {
            let (digests, index) = match id & MADE {
                0 => (&mut self.item_digests[0], id),
                _ => (&mut self.item_digests[1], id & !MADE),
            };
            if digests.len() <= index {
                digests.resize(index + 1, None);
            }
            *digests[index].get_or_insert_with(digest)
        } else {
            digest()
        };
        let entry = ViewEntry {
            origin: Origin::Raw(raw),
            item: ViewItem::History(id),
        };
        cursor.push(&mut self.arrays, entry, item_hash, item_tokens);
    }

    /// The synthetic output of call `id` at raw position `raw`, which has none on the path.
    fn render_synthetic_output(
        &mut self,
        session: &Session,
        raw: usize,
        id: ItemId,
        cursor: &mut Cursor,
    ) {
        let Some(output) = synthetic_output(session.item(id)) else {
            return;
        };
        let held =
            |entry: &ViewEntry| matches!(entry.origin, Origin::Synthetic { call } if call == raw);
        if cursor.reuse(&self.arrays, held) {
            return;
        }
        let json = output.json();
        let item_hash = hash("item", json.as_bytes());
        let tokens = if self.estimate_tokens {
            item_tokens(&output, json)
        } else {
            0
        };
        let entry = ViewEntry {
            origin: Origin::Synthetic { call: raw },
            item: ViewItem::Synthetic(Arc::new(output)),
        };
        cursor.push(&mut self.arrays, entry, item_hash, tokens);
    }
}

//! Fingerprints of compiled requests, component by component, for every step, in time linear in
//! the rollout.
//!
//! # Encoding (a stability boundary: changing it is a breaking change)
//!
//! Hash function: XXH3-128 (the 128-bit XXH3 of xxHash). A fingerprint is its 16 bytes in
//! canonical (big-endian) order, as 32 lowercase hex digits, the form `xxhsum -H2` and Python's
//! `xxhash.xxh3_128(..).hexdigest()` print. Each component hash is `XXH3-128(tag || 0x00 || bytes)`:
//!
//! | component | tag | bytes |
//! |---|---|---|
//! | `instructions` | `instructions` | the instructions text, UTF-8 |
//! | `tools` | `tools` | the `tools` array as sent: `[`, each spec joined by `,`, `]` (a `--tools` spec's exact JSON, then `session_meta.dynamic_tools`, each as compact JSON), request order |
//! | `tools_canonical` | `tools-canonical` | each tool's JSON with object keys sorted, the tools sorted, joined by `\n` |
//! | `params` | `params` | compact JSON `{model, tool_choice, parallel_tool_calls, reasoning, store, stream, include, text}` in that order, as [`crate::compile::params`] writes it: `parallel_tool_calls` is `null` (not recorded), `reasoning` and `text` are left out when the turn context has nothing for them |
//! | `prompt_cache_key` | `prompt_cache_key` | the key (the session id) |
//! | `checkpoint` | `checkpoint` | the exact bytes of the `compacted` line the history starts from (no line: no checkpoint hash, `none` in `request`) |
//! | item `i` | `item` | the item's JSON exactly as sent |
//!
//! `tests/reference/fingerprints.py` computes every component from this description alone, for
//! small rollouts and for `fixtures/baseline.json`; `src/fingerprint/tests.rs` holds promptc to it.
//!
//! `input` is chained: `c_0 = XXH3-128("input" || 0x00)`, `c_{i+1} = XXH3-128(c_i || h_i)` where
//! `h_i` is item `i`'s hash above, over the 16-byte hashes, so the fingerprint after item `i` covers items `0..=i` and two requests'
//! longest common prefix is found by comparing chain values. `request` is
//! `XXH3-128("request" || 0x00 || "instructions=<fp>\ntools=<fp>\nparams=<fp>\nprompt_cache_key=<fp>\ncheckpoint=<fp>\ninput=<fp>\n")`,
//! where an unknown component is written as `unknown`; such a request fingerprint is partial
//! and says so in `unknown`.

use std::collections::hash_map::Entry;
use std::sync::Arc;

// Keys are call ids from the session: foldhash is several times faster than SipHash on them
// and still seeded per process.
use foldhash::{HashMap, HashMapExt};
use serde_json::Value;
use xxhash_rust::xxh3::xxh3_128;

use crate::compile::{InstructionsSource, ToolPlan, params};
use crate::model::ItemId;
use crate::model::ItemKind;
use crate::normalize::{Origin, ViewEntry, ViewItem, synthetic_output};
use crate::parallel::Threads;
use crate::session::Session;
use crate::shared::{ListId, SharedLists, Slice};
use crate::tokens;

use crate::hash::push_hex;
pub use crate::hash::{HASH_NAME, Hash, hash, hex};

fn chain_start() -> Hash {
    hash("input", b"")
}

fn chain_next(previous: &Hash, item: &Hash) -> Hash {
    let mut both = [0u8; 32];
    both[..16].copy_from_slice(previous);
    both[16..].copy_from_slice(item);
    xxh3_128(&both).to_be_bytes()
}

/// JSON text with object keys sorted, recursively: the canonical form.
pub fn canonical_json(text: &str) -> String {
    fn sort(value: Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k, sort(v))).collect())
            }
            Value::Array(items) => Value::Array(items.into_iter().map(sort).collect()),
            other => other,
        }
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => sort(value).to_string(),
        Err(_) => text.to_string(),
    }
}

/// The canonical hash of one item (keys sorted): equal when two items differ only in key order.
pub fn canonical_item_hash(json: &str) -> Hash {
    hash("item-canonical", canonical_json(json).as_bytes())
}

/// Fingerprints of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub instructions: Option<Hash>,
    pub tools: Option<Hash>,
    pub tools_canonical: Option<Hash>,
    pub params: Hash,
    pub prompt_cache_key: Option<Hash>,
    pub checkpoint: Option<Hash>,
    pub input: Hash,
    pub input_items: usize,
    pub request: Hash,
}

impl Fingerprint {
    /// Names of the components that are unknown.
    pub fn unknown(&self) -> Vec<&'static str> {
        let mut unknown = Vec::new();
        if self.instructions.is_none() {
            unknown.push("instructions");
        }
        if self.tools.is_none() {
            unknown.push("tools");
        }
        if self.prompt_cache_key.is_none() {
            unknown.push("prompt_cache_key");
        }
        unknown
    }
}

/// The text the request hash covers: each component's hex, `unknown` or `none` where there is
/// no hash (see "Fingerprint encoding"). Written into `out`, reused from step to step.
fn request_text(out: &mut String, components: [(&str, Option<&Hash>, &str); 6]) {
    out.clear();
    for (name, hash, missing) in components {
        out.push_str(name);
        out.push('=');
        match hash {
            Some(hash) => push_hex(out, hash),
            None => out.push_str(missing),
        }
        out.push('\n');
    }
}

/// Per view entry, beside the entry itself.
#[derive(Debug, Clone, Copy)]
struct EntryData {
    /// Hash of the entry's JSON.
    item_hash: Hash,
    /// The chain value covering the entries up to and including this one.
    chain: Hash,
    /// Estimated tokens of the entries up to and including this one.
    tokens: usize,
}

/// The model views of all steps: append-only lists that share prefixes. A step's view is a
/// prefix of one list; a rewrite of already-sent history (a rollback, an output after a
/// synthetic one) forks a list at the first entry that changes instead of copying the prefix.
/// `entries` and `data` always have the same shape (same list ids, same lengths).
#[derive(Debug, Default)]
struct ViewLists {
    entries: SharedLists<ViewEntry>,
    data: SharedLists<EntryData>,
}

impl ViewLists {
    fn new_list(&mut self, capacity: usize) -> ListId {
        let id = self.entries.new_list_from(Vec::with_capacity(capacity));
        let same = self.data.new_list_from(Vec::with_capacity(capacity));
        debug_assert_eq!(id, same);
        id
    }

    fn fork(&mut self, list: ListId, len: usize) -> ListId {
        let id = self.entries.fork(list, len);
        let same = self.data.fork(list, len);
        debug_assert_eq!(id, same);
        id
    }

    fn len(&self, list: ListId) -> usize {
        self.entries.list_len(list)
    }
}

/// What is known about each step's request, computed once for the whole session.
#[derive(Debug)]
pub struct Plan {
    arrays: ViewLists,
    /// Per step: `(view list, view length)`.
    pub views: Vec<(ListId, usize)>,
    pub fingerprints: Vec<Fingerprint>,
    /// Per step: the instructions used and their source.
    pub instructions: Vec<(Option<Arc<str>>, InstructionsSource)>,
    pub tools: ToolPlan,
    /// Estimated tokens of the instructions of each step and of the tools.
    pub instruction_tokens: Vec<usize>,
    pub tool_tokens: usize,
    pub estimate_tokens: bool,
    /// Per stored view entry, the first position on its list of an equal item; built on first
    /// use (diff asks it for many steps).
    first_seen: std::sync::OnceLock<Vec<Vec<usize>>>,
    chain_start: Hash,
    /// The threads the plan was made on; the stages that go over its steps afterwards (cache
    /// analysis, the text tables) use them too.
    pub threads: Threads,
}

/// Options of the plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// `--instructions FILE` text.
    pub instructions: Option<String>,
    /// `--tools FILE` specs (exact JSON of each).
    pub tools: Option<Vec<String>>,
    /// Estimate tokens (off: every estimate is 0).
    pub estimate_tokens: bool,
    /// Threads for token counting, the step headers and the request fingerprints (0 or 1:
    /// everything on the calling thread). The result does not depend on it.
    pub threads: Threads,
}

/// The hash and token estimate (0 when not estimating) of every item that entered a history
/// (`None` for the others), computed on `options.threads` threads. The result does not depend
/// on the thread count.
fn digest_items(session: &Session, options: &PlanOptions) -> Vec<Option<(Hash, usize)>> {
    let total = session.rollout.items.len() + session.replay.extra_items.len();
    let mut used = vec![false; total];
    for entry in session.replay.epochs.stored_items() {
        used[entry.item] = true;
    }
    let digest = |id: usize| -> Option<(Hash, usize)> {
        used[id].then(|| digest_item(session.item(id), &session.rollout.bytes, options))
    };
    // Tasks are blocks of ids: taking ids one at a time would cost more than hashing most items.
    const BLOCK: usize = 32;
    let threads = if total < 2 * BLOCK {
        Threads::new(1)
    } else {
        options.threads
    };
    // Counting reads the items' bytes again: let the input's owner release them after each
    // block, as the loader did after each part.
    crate::parallel::map_each_then(total, BLOCK, threads, digest, |ids| {
        session.rollout.release_items(ids)
    })
}

/// An item's hash and token estimate, as sent.
fn digest_item(item: &crate::model::Item, bytes: &[u8], options: &PlanOptions) -> (Hash, usize) {
    let estimate = if options.estimate_tokens {
        tokens::item_tokens(item, item.wire_json(bytes))
    } else {
        0
    };
    let digest = item
        .digest
        .unwrap_or_else(|| hash("item", item.wire_bytes(bytes)));
    (digest, estimate)
}

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
fn classify(item: &crate::model::Item) -> (Role, Option<(bool, Key<'_>)>) {
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

/// One raw entry of the live path.
struct RawSlot<'a> {
    item: ItemId,
    role: Role,
    key: Option<(bool, Key<'a>)>,
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

/// The first raw position each step changed, as a stack of suffix minima: `after(t)` is the
/// smallest change of the steps after `t`, so an [`Alt`] recorded at `t` still agrees with the
/// live path below it.
#[derive(Debug, Default)]
struct ChangeLog {
    /// `(step, position)`, steps and positions increasing.
    minima: Vec<(usize, usize)>,
}

impl ChangeLog {
    fn push(&mut self, step: usize, position: usize) {
        while self.minima.last().is_some_and(|&(_, p)| p >= position) {
            self.minima.pop();
        }
        self.minima.push((step, position));
    }

    fn after(&self, step: usize) -> usize {
        let i = self.minima.partition_point(|&(s, _)| s <= step);
        self.minima.get(i).map_or(usize::MAX, |&(_, p)| p)
    }
}

/// The raw path the plan materialized last (a prefix of `epoch`) and its view: steps extend it,
/// rollbacks and compactions cut it back. Each raw entry is pushed once and popped at most once.
struct Live<'a> {
    epoch: usize,
    slots: Vec<RawSlot<'a>>,
    /// First position of a call / an output of each key on the path.
    first_call: HashMap<Key<'a>, usize>,
    first_output: HashMap<Key<'a>, usize>,
    /// The view of the path: the first `len` entries of `array`.
    array: ListId,
    len: usize,
    /// The chain value and token total of that view.
    chain: Hash,
    tokens: usize,
}

impl Live<'_> {
    /// Is the slot's entry in the view of the whole path, and does it need a synthetic output?
    fn status(&self, slot: &RawSlot) -> (bool, bool) {
        let answered =
            |map: &HashMap<Key, usize>| slot.key.is_some_and(|(_, k)| map.contains_key(&k));
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
        flips.extend(first.get(&key));
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

/// Build the plan: every step's model view, fingerprints and token estimates, sharing work
/// between steps so the total cost is linear in the rollout. A rewrite of history (a rollback, a
/// late output) keeps the unchanged prefix shared; the entries after the first one that changed
/// have other chain values, and are taken from a list that already holds them when there is one
/// (the rendering an entry had before its status flipped, an earlier branch being walked), and
/// hashed and stored again only where none does.
///
/// The views are built in one pass over the steps, which cannot be split; each step's
/// instructions and params depend on its turn context alone, and are worked out on another
/// thread meanwhile (when `options.threads` allows one and there are enough steps). The request
/// fingerprints, which need both, are spread over the threads afterwards.
pub fn plan(session: &Session, options: &PlanOptions) -> Plan {
    let replay = &session.replay;
    let rollout = &session.rollout;
    let meta = rollout.meta.as_ref();

    // Tools: the caller's plan plus the session's dynamic tools.
    let tools = {
        let mut list = options.tools.clone();
        if let Some(dynamic) = meta.and_then(|m| m.dynamic_tools.as_ref()) {
            list.get_or_insert_with(Vec::new)
                .extend(dynamic.iter().cloned());
        }
        ToolPlan { tools: list }
    };
    let tools_hash = tools
        .tools
        .as_ref()
        .map(|t| hash("tools", format!("[{}]", t.join(",")).as_bytes()));
    let tools_canonical = tools.tools.as_ref().map(|t| {
        let mut canonical: Vec<String> = t.iter().map(|tool| canonical_json(tool)).collect();
        canonical.sort();
        hash("tools-canonical", canonical.join("\n").as_bytes())
    });
    let tool_tokens = match (&tools.tools, options.estimate_tokens) {
        (Some(t), true) => t.iter().map(|tool| tokens::count(tool)).sum(),
        _ => 0,
    };
    let cache_key = meta.and_then(|m| m.id.as_deref());
    let cache_key_hash = cache_key.map(|k| hash("prompt_cache_key", k.as_bytes()));
    let checkpoint_of_epoch = checkpoints(session);

    // A thread of its own for the headers pays off from a few hundred steps (unit tests use
    // it from two, so that their small sessions take that path; tests/cli/fuzz_bodies.rs
    // runs 256).
    const HEADER_THREAD_STEPS: usize = if cfg!(test) { 2 } else { 256 };
    let (views, headers) = if options.threads.count > 1 && replay.steps.len() >= HEADER_THREAD_STEPS
    {
        std::thread::scope(|scope| {
            let headers = crate::parallel::spawn(scope, options.threads, 1, || {
                step_headers(session, options)
            });
            let views = build_views(session, options);
            match headers.join() {
                Ok(headers) => (views, headers),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    } else {
        (
            build_views(session, options),
            step_headers(session, options),
        )
    };

    let file_instructions: Option<Arc<str>> = options.instructions.as_deref().map(Arc::from);
    let meta_instructions: Option<Arc<str>> = meta
        .and_then(|m| m.base_instructions.as_deref())
        .map(Arc::from);
    let instructions = headers
        .iter()
        .enumerate()
        .map(|(step, header)| {
            let text = match header.source {
                InstructionsSource::File => file_instructions.clone(),
                InstructionsSource::TurnContext => session
                    .step_context(step)
                    .and_then(|c| c.base_instructions.as_deref())
                    .map(Arc::from),
                InstructionsSource::SessionMeta => meta_instructions.clone(),
                InstructionsSource::Unknown => None,
            };
            (text, header.source)
        })
        .collect();
    let instruction_tokens = headers
        .iter()
        .map(|h| h.instructions.map_or(0, |(_, tokens)| tokens))
        .collect();

    // Blocks of steps: one step is less work than taking a task. Unit tests use short blocks,
    // so that their small sessions span several; tests/cli/fuzz_bodies.rs runs 256.
    const BLOCK: usize = if cfg!(test) { 4 } else { 256 };
    let steps = replay.steps.len();
    let fingerprints = crate::parallel::map_blocks(steps, BLOCK, options.threads, |block| {
        let mut request = String::new();
        block
            .map(|step| {
                let header = &headers[step];
                let instructions = header.instructions.map(|(hash, _)| hash);
                let (input, input_items) = (views.inputs[step], views.views[step].1);
                let checkpoint = checkpoint_of_epoch[replay.steps[step].epoch];
                request_text(
                    &mut request,
                    [
                        ("instructions", instructions.as_ref(), "unknown"),
                        ("tools", tools_hash.as_ref(), "unknown"),
                        ("params", Some(&header.params), ""),
                        ("prompt_cache_key", cache_key_hash.as_ref(), "unknown"),
                        ("checkpoint", checkpoint.as_ref(), "none"),
                        ("input", Some(&input), ""),
                    ],
                );
                Fingerprint {
                    instructions,
                    tools: tools_hash,
                    tools_canonical,
                    params: header.params,
                    prompt_cache_key: cache_key_hash,
                    checkpoint,
                    input,
                    input_items,
                    request: hash("request", request.as_bytes()),
                }
            })
            .collect::<Vec<_>>()
    })
    .concat();

    Plan {
        arrays: views.arrays,
        views: views.views,
        fingerprints,
        instructions,
        tools,
        instruction_tokens,
        tool_tokens,
        estimate_tokens: options.estimate_tokens,
        first_seen: std::sync::OnceLock::new(),
        chain_start: chain_start(),
        threads: options.threads,
    }
}

/// The checkpoint of each epoch: the hash of the compacted line it started from (rollbacks
/// inherit their epoch's).
fn checkpoints(session: &Session) -> Vec<Option<Hash>> {
    let (replay, rollout) = (&session.replay, &session.rollout);
    let mut checkpoint_of_epoch: Vec<Option<Hash>> = vec![None; replay.epochs.len()];
    let mut current = None;
    let mut compactions = replay.checkpoints.iter().peekable();
    for (epoch, slot) in checkpoint_of_epoch.iter_mut().enumerate() {
        if let Some(c) = compactions.peek().filter(|c| c.epoch == epoch) {
            // Records are in line order.
            let record = rollout
                .records
                .binary_search_by_key(&c.line, |r| r.line)
                .ok()
                .map(|index| &rollout.records[index]);
            current = record.map(|r| hash("checkpoint", rollout.line_bytes(r)));
            compactions.next();
        }
        *slot = current;
    }
    checkpoint_of_epoch
}

/// A step's instructions and params, which depend on its turn context alone.
#[derive(Debug, Clone, Copy)]
struct StepHeader {
    source: InstructionsSource,
    /// Hash and token estimate of the instructions, when they are known.
    instructions: Option<(Hash, usize)>,
    params: Hash,
}

/// The header of every step: instructions from `--instructions FILE`, else a turn_context
/// override, else session_meta; the `params` of its turn context.
fn step_headers(session: &Session, options: &PlanOptions) -> Vec<StepHeader> {
    let digest = |text: &str| {
        let tokens = if options.estimate_tokens {
            tokens::count(text)
        } else {
            0
        };
        (hash("instructions", text.as_bytes()), tokens)
    };
    let file = options.instructions.as_deref().map(digest);
    let meta_text = session
        .rollout
        .meta
        .as_ref()
        .and_then(|m| m.base_instructions.as_deref());
    let mut meta = None;
    // Keyed by the turn_context record the text came from.
    let mut overrides: HashMap<Option<usize>, (Hash, usize)> = HashMap::new();
    let mut params_memo: HashMap<Option<usize>, Hash> = HashMap::new();
    let mut last_params: Option<(Option<&crate::model::TurnContext>, Hash)> = None;
    let mut headers = Vec::with_capacity(session.replay.steps.len());
    for (index, step) in session.replay.steps.iter().enumerate() {
        let context = session.step_context(index);
        let (source, instructions) =
            match (file, context.and_then(|c| c.base_instructions.as_deref())) {
                (Some(file), _) => (InstructionsSource::File, Some(file)),
                (None, Some(text)) => (
                    InstructionsSource::TurnContext,
                    Some(
                        *overrides
                            .entry(step.context)
                            .or_insert_with(|| digest(text)),
                    ),
                ),
                (None, None) => match meta_text {
                    Some(text) => (
                        InstructionsSource::SessionMeta,
                        Some(*meta.get_or_insert_with(|| digest(text))),
                    ),
                    None => (InstructionsSource::Unknown, None),
                },
            };
        let params_hash = *params_memo.entry(step.context).or_insert_with(|| {
            // Era B writes a turn_context per step; within a turn it equals the one before,
            // and comparing them is cheaper than building the params JSON.
            match last_params {
                Some((last, previous)) if last == context => previous,
                _ => hash("params", params(context).as_bytes()),
            }
        });
        last_params = Some((context, params_hash));
        headers.push(StepHeader {
            source,
            instructions,
            params: params_hash,
        });
    }
    headers
}

/// The model views of all steps, stored once, and each step's input chain value.
struct Views {
    arrays: ViewLists,
    /// Per step: `(view list, view length)`.
    views: Vec<(ListId, usize)>,
    /// Per step: the chain value of its whole input.
    inputs: Vec<Hash>,
}

/// Every step's model view, in one pass over the steps (see [`plan`]).
fn build_views(session: &Session, options: &PlanOptions) -> Views {
    let replay = &session.replay;
    let rollout = &session.rollout;
    // Indexed by item id: each item is counted once. Token counting is the expensive part and
    // items are independent: it is spread over the available cores. Without it there is no
    // memo: every item has its own hash (made by the loader or by replay), taken as the item
    // is reached, and a memo of every item was 32 bytes an item to write on this thread.
    let mut item_hash_memo = if options.estimate_tokens {
        digest_items(session, options)
    } else {
        Vec::new()
    };
    let mut arrays = ViewLists::default();
    let mut live: Option<Live> = None;
    let mut changes = ChangeLog::default();
    let mut flips: Vec<usize> = Vec::new();
    let mut views = Vec::with_capacity(replay.steps.len());
    let mut inputs = Vec::with_capacity(replay.steps.len());

    for (step_index, step) in replay.steps.iter().enumerate() {
        let epoch = step.epoch;
        let target = step.prefix_len;
        // Room for the first epoch's whole history, which is usually all of it (see
        // `replay::replay`).
        let live = live.get_or_insert_with(|| Live {
            epoch,
            slots: Vec::with_capacity(replay.epochs.list_len(epoch)),
            first_call: HashMap::new(),
            first_output: HashMap::new(),
            array: arrays.new_list(replay.epochs.list_len(epoch)),
            len: 0,
            chain: chain_start(),
            tokens: 0,
        });
        // The raw prefix this step shares with what is materialized: all of it while the
        // epoch grows; less after a rollback; nothing after a compaction.
        let materialized = live.slots.len();
        let common = if live.epoch == epoch {
            materialized.min(target)
        } else {
            replay
                .epochs
                .common_prefix(live.epoch, materialized, epoch, target)
        };
        // The raw entries before the cut whose status changes: those whose partner (a call's
        // output, an output's call) leaves or joins the path.
        flips.clear();
        while live.slots.len() > common {
            let Some(slot) = live.slots.pop() else { break };
            if let (true, Some((is_call, key))) = (slot.first, slot.key) {
                if is_call {
                    live.first_call.remove(&key);
                } else {
                    live.first_output.remove(&key);
                }
                live.partner(!is_call, key, &mut flips);
            }
        }
        for (offset, entry) in replay
            .epochs
            .slice(epoch, common..target)
            .iter()
            .enumerate()
        {
            let (role, key) = classify(session.item(entry.item));
            let mut first = false;
            if let Some((is_call, k)) = key {
                let own = if is_call {
                    &mut live.first_call
                } else {
                    &mut live.first_output
                };
                if let Entry::Vacant(vacant) = own.entry(k) {
                    vacant.insert(common + offset);
                    first = true;
                    live.partner(!is_call, k, &mut flips);
                }
            }
            live.slots.push(RawSlot {
                item: entry.item,
                role,
                key,
                first,
                status: (false, false),
                alts: Vec::new(),
            });
        }
        live.epoch = epoch;
        flips.retain(|&f| f < common);
        flips.sort_unstable();
        flips.dedup();
        // The first raw entry whose view changes: the cut, or an earlier flip.
        let change = flips.first().map_or(common, |&f| f.min(common));
        // Entries after the last one that keeps its place are rendered again: reused where a
        // list already holds them (walking it entry by entry, or jumping to a rendering the
        // view left earlier and over the entries known to agree), pushed where none does.
        let mut list = live.array;
        let mut pos = if change >= materialized {
            live.len
        } else {
            view_position(&arrays, live.array, 0, live.len, change)
        };
        // Chain value and token total at `pos` of `list`, when known.
        let mut tail = (change >= materialized).then_some((live.chain, live.tokens));
        let next_flip = |j: usize| {
            flips
                .get(flips.partition_point(|&f| f <= j))
                .map_or(common, |&f| f.min(common))
        };
        if change < common {
            // The rendering of the flipped entry the view leaves, to come back to.
            let alt = Alt {
                prefix: prefix_place(&arrays, list, pos),
                status: live.slots[change].status,
                list,
                pos,
                len: live.len,
                agree: next_flip(change),
                stamp: step_index,
            };
            let alts = &mut live.slots[change].alts;
            alts.retain(|a| (a.prefix, a.status) != (alt.prefix, alt.status));
            if alts.len() == MAX_ALTS {
                alts.remove(0);
            }
            alts.push(alt);
        }
        let mut raw = change;
        while raw < target {
            let status = live.status(&live.slots[raw]);
            live.slots[raw].status = status;
            if raw < common && flips.binary_search(&raw).is_ok() {
                let prefix = prefix_place(&arrays, list, pos);
                if let Some(alt) = live.slots[raw]
                    .alts
                    .iter()
                    .rev()
                    .find(|a| a.prefix == prefix && a.status == status)
                {
                    // Entries raw..end are rendered in alt.list exactly as this path needs.
                    let end = alt
                        .agree
                        .min(changes.after(alt.stamp))
                        .min(next_flip(raw))
                        .max(raw + 1);
                    list = alt.list;
                    // Within the view the alt was taken from: after it, `list` may go on with
                    // entries of an older path (a rolled-back message, say).
                    pos = view_position(&arrays, list, alt.pos, alt.len, end);
                    tail = None;
                    raw = end;
                    continue;
                }
            }
            let (kept, synthetic) = status;
            if kept {
                let id = live.slots[raw].item;
                let history = ViewEntry {
                    origin: Origin::Raw(raw),
                    item: ViewItem::History(id),
                };
                let reused = pos < arrays.len(list)
                    && matches!(arrays.entries.get(list, pos),
                        ViewEntry { origin: Origin::Raw(r), item: ViewItem::History(i) } if *r == raw && *i == id);
                if reused {
                    pos += 1;
                    tail = None;
                } else {
                    let digest = || digest_item(session.item(id), &rollout.bytes, options);
                    let (item_hash, item_tokens) = if options.estimate_tokens {
                        *item_hash_memo[id].get_or_insert_with(digest)
                    } else {
                        digest()
                    };
                    push_entry(
                        &mut arrays,
                        &mut list,
                        &mut pos,
                        &mut tail,
                        history,
                        item_hash,
                        item_tokens,
                    );
                }
                if synthetic && let Some(output) = synthetic_output(session.item(id)) {
                    let reused = pos < arrays.len(list)
                        && matches!(arrays.entries.get(list, pos).origin,
                            Origin::Synthetic { call } if call == raw);
                    if reused {
                        pos += 1;
                        tail = None;
                    } else {
                        let json = output.json(&rollout.bytes);
                        let h = hash("item", json.as_bytes());
                        let t = if options.estimate_tokens {
                            tokens::item_tokens(&output, json)
                        } else {
                            0
                        };
                        push_entry(
                            &mut arrays,
                            &mut list,
                            &mut pos,
                            &mut tail,
                            ViewEntry {
                                origin: Origin::Synthetic { call: raw },
                                item: ViewItem::Synthetic(Arc::new(output)),
                            },
                            h,
                            t,
                        );
                    }
                }
            }
            raw += 1;
        }
        changes.push(step_index, change);
        let (chain, tokens_total) = tail.unwrap_or_else(|| data_at(&arrays, list, pos));
        (live.array, live.len, live.chain, live.tokens) = (list, pos, chain, tokens_total);
        let view_len = pos;
        views.push((live.array, view_len));

        inputs.push(chain);
    }
    Views {
        arrays,
        views,
        inputs,
    }
}

/// The chain value and token total after the first `pos` entries of `list`.
fn data_at(arrays: &ViewLists, list: ListId, pos: usize) -> (Hash, usize) {
    match pos.checked_sub(1) {
        Some(last) => {
            let data = arrays.data.get(list, last);
            (data.chain, data.tokens)
        }
        None => (chain_start(), 0),
    }
}

/// Put `entry` at `pos` of `list` (forking it there if it goes on) and move past it.
fn push_entry(
    arrays: &mut ViewLists,
    list: &mut ListId,
    pos: &mut usize,
    tail: &mut Option<(Hash, usize)>,
    entry: ViewEntry,
    item_hash: Hash,
    item_tokens: usize,
) {
    if *pos < arrays.len(*list) {
        *list = arrays.fork(*list, *pos);
    }
    let (chain, tokens) = tail.unwrap_or_else(|| data_at(arrays, *list, *pos));
    let chain = chain_next(&chain, &item_hash);
    let tokens = tokens + item_tokens;
    arrays.entries.push(*list, entry);
    arrays.data.push(
        *list,
        EntryData {
            item_hash,
            chain,
            tokens,
        },
    );
    *pos += 1;
    *tail = Some((chain, tokens));
}

impl Plan {
    /// The model-view entries of a step's request.
    pub fn view(&self, step: usize) -> Slice<'_, ViewEntry> {
        let (list, len) = self.views[step];
        self.arrays.entries.slice(list, ..len)
    }

    /// Chain value after `k` entries of a step's input.
    pub fn chain(&self, step: usize, k: usize) -> &Hash {
        match k.checked_sub(1) {
            None => &self.chain_start,
            Some(last) => &self.data(step, last).chain,
        }
    }

    fn data(&self, step: usize, k: usize) -> &EntryData {
        let (list, len) = self.views[step];
        assert!(k < len, "entry {k} of a view of {len}");
        self.arrays.data.get(list, k)
    }

    /// The first position of an item equal to entry `k` (same item hash) in a step's input:
    /// at most `k`.
    pub fn first_occurrence(&self, step: usize, k: usize) -> usize {
        let (list, len) = self.views[step];
        assert!(k < len, "entry {k} of a view of {len}");
        let first = self
            .first_seen
            .get_or_init(|| self.arrays.data.first_positions(|d| d.item_hash));
        let (segment, index) = self.arrays.data.locate_item(list, k);
        first[segment][index]
    }

    /// Item hash of entry `k` of a step's input.
    pub fn item_hash(&self, step: usize, k: usize) -> &Hash {
        &self.data(step, k).item_hash
    }

    /// Estimated tokens of the first `k` entries of a step's input.
    pub fn input_tokens(&self, step: usize, k: usize) -> usize {
        k.checked_sub(1)
            .map_or(0, |last| self.data(step, last).tokens)
    }

    /// Estimated tokens of a step's whole request: instructions, tools and input.
    pub fn request_tokens(&self, step: usize) -> usize {
        self.instruction_tokens[step]
            + self.tool_tokens
            + self.input_tokens(step, self.views[step].1)
    }
}

/// Length of the longest common prefix of two inputs, from their chains: one comparison when
/// one input starts with the other, else a binary search.
pub fn common_prefix(a: &Plan, step_a: usize, b: &Plan, step_b: usize) -> usize {
    let max = a.views[step_a].1.min(b.views[step_b].1);
    // Most often one input starts with the whole other (the next step of a session): one
    // look instead of a search, which read ~24 chain values all over the views for each
    // step of `steps`.
    if a.chain(step_a, max) == b.chain(step_b, max) {
        return max;
    }
    // chain(k) equal implies entries 0..k equal; find the largest such k.
    let (mut low, mut high) = (0usize, max);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if a.chain(step_a, mid) == b.chain(step_b, mid) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    low
}

#[cfg(test)]
mod tests;

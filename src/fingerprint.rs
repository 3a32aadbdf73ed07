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
//! | `params` | `params` | compact JSON `{model, tool_choice, parallel_tool_calls, reasoning, store, stream, include, text}` in that order, as [`crate::agents::codex::compile::params`] writes it: `parallel_tool_calls` is `null` (not recorded), `reasoning` and `text` are left out when the turn context has nothing for them |
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

use std::sync::Arc;

// Keys are call ids from the session: foldhash is several times faster than SipHash on them
// and still seeded per process.
use foldhash::HashMap;
use serde_json::Value;
use xxhash_rust::xxh3::xxh3_128;

use crate::agents::codex::compile::{InstructionsSource, ToolPlan, params};
use crate::agents::codex::normalize::ViewEntry;
use crate::agents::codex::session::Session;
use crate::core::parallel::Threads;
use crate::core::shared::{ListId, SharedLists, Slice};
use crate::core::tokens;

use crate::core::hash::push_hex;
pub use crate::core::hash::{HASH_NAME, Hash, hash, hex};

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

/// Build the plan: every step's model view, fingerprints and token estimates, sharing work
/// between steps so the total cost is linear in the rollout. A rewrite of history (a rollback, a
/// late output) keeps the unchanged prefix shared; the entries after the first one that changed
/// have other chain values, and are taken from a list that already holds them when there is one
/// (the rendering an entry had before its status flipped, an earlier branch being walked), and
/// hashed and stored again only where none does. One [`Planner::extend`] of a new planner.
pub fn plan(session: &Session, options: &PlanOptions) -> Plan {
    let mut planner = Planner::new(session, options);
    planner.extend(session, 0);
    planner.plan
}

/// A plan that grows with its session (`watch`): [`Planner::extend`] plans the steps replay
/// added since the last call, at the cost of those steps.
pub struct Planner {
    options: PlanOptions,
    plan: Plan,
    /// The session had its meta (tools, cache key, instructions come from it).
    meta: bool,
    tools_hash: Option<Hash>,
    tools_canonical: Option<Hash>,
    cache_key_hash: Option<Hash>,
    file_instructions: Option<Arc<str>>,
    meta_instructions: Option<Arc<str>>,
    /// The checkpoint of each epoch so far.
    checkpoint_of_epoch: Vec<Option<Hash>>,
    headers: HeaderMemo,
    /// From the first step on.
    views: Option<ViewBuilder>,
}

impl Planner {
    /// A plan of no steps yet.
    pub fn new(session: &Session, options: &PlanOptions) -> Planner {
        let meta = session.rollout.meta.as_ref();
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
        Planner {
            options: options.clone(),
            plan: Plan {
                arrays: ViewLists::default(),
                views: Vec::new(),
                fingerprints: Vec::new(),
                instructions: Vec::new(),
                tools,
                instruction_tokens: Vec::new(),
                tool_tokens,
                estimate_tokens: options.estimate_tokens,
                first_seen: std::sync::OnceLock::new(),
                chain_start: chain_start(),
                threads: options.threads,
            },
            meta: meta.is_some(),
            tools_hash,
            tools_canonical,
            cache_key_hash: cache_key.map(|k| hash("prompt_cache_key", k.as_bytes())),
            file_instructions: options.instructions.as_deref().map(Arc::from),
            meta_instructions: meta
                .and_then(|m| m.base_instructions.as_deref())
                .map(Arc::from),
            checkpoint_of_epoch: Vec::new(),
            headers: HeaderMemo::default(),
            views: None,
        }
    }

    /// The plan of the steps so far.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Plan the session's steps from step `unchanged` on: the steps before it are those the
    /// plan has (the session grew since: `watch`). The last step planned is planned again, as
    /// it may have changed (the pending step); with `unchanged` 0, or when the session's meta
    /// arrived since, everything is planned again.
    ///
    /// The views are built in one pass over the steps, which cannot be split; each step's
    /// instructions and params depend on its turn context alone, and are worked out on another
    /// thread meanwhile (when `options.threads` allows one and there are enough steps). The
    /// request fingerprints, which need both, are spread over the threads afterwards.
    ///
    /// Returns how many of the first steps kept their plan (none when planned again).
    pub fn extend(&mut self, session: &Session, unchanged: usize) -> usize {
        let planned = self.views.is_some() || !self.checkpoint_of_epoch.is_empty();
        if (unchanged == 0 && planned) || session.rollout.meta.is_some() != self.meta {
            *self = Planner::new(session, &self.options);
        }
        let replay = &session.replay;
        let steps = replay.steps.len();
        let from = unchanged
            .min(self.plan.views.len().saturating_sub(1))
            .min(steps);
        let plan = &mut self.plan;
        plan.views.truncate(from);
        plan.fingerprints.truncate(from);
        plan.instructions.truncate(from);
        plan.instruction_tokens.truncate(from);
        plan.first_seen = std::sync::OnceLock::new();
        extend_checkpoints(session, &mut self.checkpoint_of_epoch);
        let Some(first) = replay.steps.get(from) else {
            return from;
        };
        let options = &self.options;
        // The lists are the plan's: lent to the builder for these steps.
        let arrays = std::mem::take(&mut plan.arrays);
        let builder = match &mut self.views {
            Some(builder) => {
                builder.arrays = arrays;
                builder
            }
            None => self
                .views
                .insert(ViewBuilder::new(session, options, first.epoch, arrays)),
        };
        let build_views = |builder: &mut ViewBuilder| {
            replay.steps[from..]
                .iter()
                .map(|step| builder.step(session, step.epoch, step.prefix_len))
                .collect::<Vec<_>>()
        };
        // A thread of its own for the headers pays off from a few hundred steps (unit tests
        // use it from two, so that their small sessions take that path;
        // tests/cli/fuzz_bodies.rs runs 256).
        const HEADER_THREAD_STEPS: usize = if cfg!(test) { 2 } else { 256 };
        let memo = &mut self.headers;
        let (views, headers) = if options.threads.count > 1 && steps - from >= HEADER_THREAD_STEPS {
            std::thread::scope(|scope| {
                let headers = scope.spawn(|| step_headers(session, options, from, memo));
                let views = build_views(builder);
                match headers.join() {
                    Ok(headers) => (views, headers),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            })
        } else {
            (
                build_views(builder),
                step_headers(session, options, from, memo),
            )
        };
        plan.arrays = std::mem::take(&mut builder.arrays);

        plan.instructions
            .extend(headers.iter().enumerate().map(|(offset, header)| {
                let text = match header.source {
                    InstructionsSource::File => self.file_instructions.clone(),
                    InstructionsSource::TurnContext => session
                        .step_context(from + offset)
                        .and_then(|c| c.base_instructions.as_deref())
                        .map(Arc::from),
                    InstructionsSource::SessionMeta => self.meta_instructions.clone(),
                    InstructionsSource::Unknown => None,
                };
                (text, header.source)
            }));
        plan.instruction_tokens.extend(
            headers
                .iter()
                .map(|h| h.instructions.map_or(0, |(_, tokens)| tokens)),
        );

        // Blocks of steps: one step is less work than taking a task. Unit tests use short
        // blocks, so that their small sessions span several; tests/cli/fuzz_bodies.rs runs 256.
        const BLOCK: usize = if cfg!(test) { 4 } else { 256 };
        let (tools_hash, tools_canonical) = (self.tools_hash, self.tools_canonical);
        let cache_key_hash = self.cache_key_hash;
        let checkpoint_of_epoch = &self.checkpoint_of_epoch;
        let fingerprints =
            crate::core::parallel::map_blocks(views.len(), BLOCK, options.threads, |block| {
                let mut request = String::new();
                block
                    .map(|offset| {
                        let header = &headers[offset];
                        let instructions = header.instructions.map(|(hash, _)| hash);
                        let (_, input_items, input) = views[offset];
                        let checkpoint = checkpoint_of_epoch[replay.steps[from + offset].epoch];
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
            });
        for block in fingerprints {
            plan.fingerprints.extend(block);
        }
        plan.views
            .extend(views.iter().map(|&(list, len, _)| (list, len)));
        from
    }
}

/// Add the checkpoint of each epoch past those in `checkpoint_of_epoch`: the hash of the
/// compacted line it started from (rollbacks inherit their epoch's).
fn extend_checkpoints(session: &Session, checkpoint_of_epoch: &mut Vec<Option<Hash>>) {
    let replay = &session.replay;
    let from = checkpoint_of_epoch.len();
    let mut current = checkpoint_of_epoch.last().copied().flatten();
    let first = replay.checkpoints.partition_point(|c| c.epoch < from);
    let mut compactions = replay.checkpoints[first..].iter().peekable();
    for epoch in from..replay.epochs.len() {
        if let Some(c) = compactions.peek().filter(|c| c.epoch == epoch) {
            current = Some(c.digest);
            compactions.next();
        }
        checkpoint_of_epoch.push(current);
    }
}

/// A step's instructions and params, which depend on its turn context alone.
#[derive(Debug, Clone, Copy)]
struct StepHeader {
    source: InstructionsSource,
    /// Hash and token estimate of the instructions, when they are known.
    instructions: Option<(Hash, usize)>,
    params: Hash,
}

/// What the step headers reuse from step to step.
#[derive(Debug, Default)]
struct HeaderMemo {
    /// `--instructions FILE`, then the session_meta instructions: hash and tokens.
    file: Option<Option<(Hash, usize)>>,
    meta: Option<(Hash, usize)>,
    /// Keyed by the turn_context record the text came from.
    overrides: HashMap<Option<usize>, (Hash, usize)>,
    params: HashMap<Option<usize>, Hash>,
    /// The last step's turn_context record and params.
    last_params: Option<(Option<usize>, Hash)>,
}

/// The header of every step from `from` on: instructions from `--instructions FILE`, else a
/// turn_context override, else session_meta; the `params` of its turn context.
fn step_headers(
    session: &Session,
    options: &PlanOptions,
    from: usize,
    memo: &mut HeaderMemo,
) -> Vec<StepHeader> {
    let digest = |text: &str| {
        let tokens = if options.estimate_tokens {
            tokens::count(text)
        } else {
            0
        };
        (hash("instructions", text.as_bytes()), tokens)
    };
    let file = *memo
        .file
        .get_or_insert_with(|| options.instructions.as_deref().map(digest));
    let meta_text = session
        .rollout
        .meta
        .as_ref()
        .and_then(|m| m.base_instructions.as_deref());
    let context_of = |record: Option<usize>| match &session.rollout.records[record?].kind {
        crate::agents::codex::model::RecordKind::TurnContext(tc) => Some(tc),
        _ => None,
    };
    let steps = &session.replay.steps;
    let mut headers = Vec::with_capacity(steps.len() - from);
    for (index, step) in steps.iter().enumerate().skip(from) {
        let context = session.step_context(index);
        let (source, instructions) =
            match (file, context.and_then(|c| c.base_instructions.as_deref())) {
                (Some(file), _) => (InstructionsSource::File, Some(file)),
                (None, Some(text)) => (
                    InstructionsSource::TurnContext,
                    Some(
                        *memo
                            .overrides
                            .entry(step.context)
                            .or_insert_with(|| digest(text)),
                    ),
                ),
                (None, None) => match meta_text {
                    Some(text) => (
                        InstructionsSource::SessionMeta,
                        Some(*memo.meta.get_or_insert_with(|| digest(text))),
                    ),
                    None => (InstructionsSource::Unknown, None),
                },
            };
        let last_params = memo.last_params;
        let params_hash = *memo.params.entry(step.context).or_insert_with(|| {
            // Era B writes a turn_context per step; within a turn it equals the one before,
            // and comparing them is cheaper than building the params JSON.
            match last_params {
                Some((last, previous)) if context_of(last).map(|c| &**c) == context => previous,
                _ => hash("params", params(context).as_bytes()),
            }
        });
        memo.last_params = Some((step.context, params_hash));
        headers.push(StepHeader {
            source,
            instructions,
            params: params_hash,
        });
    }
    headers
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

mod views;

use views::ViewBuilder;

#[cfg(test)]
mod tests;

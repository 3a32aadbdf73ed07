//! Fingerprints of compiled requests, component by component, for every step, in time linear in
//! the rollout.
//!
//! # Encoding (a stability boundary: changing it is a breaking change)
//!
//! Hash function: BLAKE3. A fingerprint is the first 16 bytes of the hash, as 32 lowercase hex
//! digits. Each component hash is `BLAKE3(tag || 0x00 || bytes)`:
//!
//! | component | tag | bytes |
//! |---|---|---|
//! | `instructions` | `instructions` | the instructions text, UTF-8 |
//! | `tools` | `tools` | the `tools` array exactly as in the request (compact JSON, request order) |
//! | `tools_canonical` | `tools-canonical` | each tool's JSON with object keys sorted, the tools sorted, joined by `\n` |
//! | `params` | `params` | compact JSON `{model, tool_choice, parallel_tool_calls, reasoning, store, stream, include, text}` in that order |
//! | `prompt_cache_key` | `prompt_cache_key` | the key |
//! | `checkpoint` | `checkpoint` | the exact bytes of the `compacted` line the history starts from, or `none` |
//! | item `i` | `item` | the item's JSON exactly as sent |
//!
//! `input` is chained: `c_0 = BLAKE3("input" || 0x00)`, `c_{i+1} = BLAKE3(c_i || item_i)` over the
//! full 32-byte hashes, so the fingerprint after item `i` covers items `0..=i` and two requests'
//! longest common prefix is found by comparing chain values. `request` is
//! `BLAKE3("request" || 0x00 || "instructions=<fp>\ntools=<fp>\nparams=<fp>\nprompt_cache_key=<fp>\ncheckpoint=<fp>\ninput=<fp>\n")`,
//! where an unknown component is written as `unknown`; such a request fingerprint is partial
//! and says so in `unknown`.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

use crate::compile::{InstructionsSource, ToolPlan, params};
use crate::model::ItemKind;
use crate::normalize::{Origin, ViewEntry, ViewItem, synthetic_output};
use crate::session::Session;
use crate::tokens;

/// A full BLAKE3 hash.
pub type Hash = [u8; 32];

/// Hash `bytes` under a component tag.
pub fn hash(tag: &str, bytes: &[u8]) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(tag.as_bytes());
    hasher.update(&[0]);
    hasher.update(bytes);
    *hasher.finalize().as_bytes()
}

/// The printed form: 32 hex digits (128 bits).
pub fn hex(hash: &Hash) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(32);
    for byte in &hash[..16] {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
    out
}

fn chain_start() -> Hash {
    hash("input", b"")
}

fn chain_next(previous: &Hash, item: &Hash) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(previous);
    hasher.update(item);
    *hasher.finalize().as_bytes()
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

fn optional_hex(hash: &Option<Hash>) -> String {
    hash.as_ref().map_or_else(|| "unknown".to_string(), hex)
}

/// One append-only model-view array shared by the steps of an epoch.
#[derive(Debug, Clone, Default)]
pub struct ViewArray {
    pub epoch: usize,
    pub entries: Vec<ViewEntry>,
    /// Hash of each entry's JSON.
    pub item_hashes: Vec<Hash>,
    /// `chain[k]` covers entries `0..k`; `chain[0]` is the start value.
    pub chain: Vec<Hash>,
    /// `tokens[k]`: estimated tokens of entries `0..k`.
    pub tokens: Vec<usize>,
    /// View position where raw entry `i` starts.
    raw_position: Vec<usize>,
    /// First position of each item hash, built on first use (diff asks it for many steps).
    first_seen: std::cell::OnceCell<HashMap<Hash, usize>>,
    /// Raw prefix length materialized.
    raw_len: usize,
}

/// What is known about each step's request, computed once for the whole session.
#[derive(Debug)]
pub struct Plan {
    pub arrays: Vec<ViewArray>,
    /// Per step: `(array, view length)`.
    pub views: Vec<(usize, usize)>,
    pub fingerprints: Vec<Fingerprint>,
    /// Per step: the instructions used and their source.
    pub instructions: Vec<(Option<Rc<str>>, InstructionsSource)>,
    pub tools: ToolPlan,
    /// Estimated tokens of the instructions of each step and of the tools.
    pub instruction_tokens: Vec<usize>,
    pub tool_tokens: usize,
    pub estimate_tokens: bool,
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
    /// Threads for token counting (0 or 1: count on the calling thread).
    pub threads: usize,
}

/// The hash and token estimate (0 when not estimating) of every item that entered a history
/// (`None` for the others), computed on `options.threads` threads. The result does not depend
/// on the thread count.
fn digest_items(session: &Session, options: &PlanOptions) -> Vec<Option<(Hash, usize)>> {
    let total = session.rollout.items.len() + session.replay.extra_items.len();
    let mut used = vec![false; total];
    for epoch in &session.replay.epochs {
        for entry in epoch {
            used[entry.item] = true;
        }
    }
    let digest = |id: usize| -> Option<(Hash, usize)> {
        used[id].then(|| digest_item(session.item(id), &session.rollout.bytes, options))
    };
    let threads = options.threads.max(1);
    if threads == 1 || total < 64 {
        return (0..total).map(digest).collect();
    }
    // Interleaved ids balance large and small items across threads.
    let mut digests = vec![None; total];
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let digest = &digest;
                scope.spawn(move || {
                    (t..total)
                        .step_by(threads)
                        .map(|id| (id, digest(id)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            // A panic in a digesting thread is a bug; propagate it.
            for (id, item_digest) in handle.join().expect("item digest thread") {
                digests[id] = item_digest;
            }
        }
    });
    digests
}

/// An item's hash and token estimate, as sent.
fn digest_item(item: &crate::model::Item, bytes: &[u8], options: &PlanOptions) -> (Hash, usize) {
    let estimate = if options.estimate_tokens {
        tokens::item_tokens(item, item.wire_json(bytes))
    } else {
        0
    };
    (hash("item", item.wire_bytes(bytes)), estimate)
}

/// Per-epoch pairing facts: for each raw entry, when its normalization status changes.
struct EpochFacts {
    /// Per raw index: for a call, the index of its first output (`None`: none in the epoch);
    /// for an output, the index of its first call; `Some(0)` for entries whose status never changes.
    threshold: Vec<Option<usize>>,
    role: Vec<Role>,
    /// `(threshold, raw index)` for entries whose status changes after they appear, by threshold.
    events: Vec<(usize, usize)>,
    next_event: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    Ghost,
    Call,
    Output,
}

fn epoch_facts(session: &Session, epoch: usize) -> EpochFacts {
    let entries = &session.replay.epochs[epoch];
    // Namespaces: function outputs answer function and local shell calls.
    let namespace = ItemKind::pairing;
    let mut first_call: HashMap<(u8, &str), usize> = HashMap::new();
    let mut first_output: HashMap<(u8, &str), usize> = HashMap::new();
    for (i, entry) in entries.iter().enumerate() {
        let item = session.item(entry.item);
        let Some((space, is_call)) = namespace(item.kind) else {
            continue;
        };
        let Some(call_id) = item.call_id.as_deref().or(match item.kind {
            ItemKind::FunctionCall
            | ItemKind::CustomToolCall
            | ItemKind::FunctionCallOutput
            | ItemKind::CustomToolCallOutput => Some(""),
            _ => None,
        }) else {
            continue;
        };
        let map = if is_call {
            &mut first_call
        } else {
            &mut first_output
        };
        map.entry((space, call_id)).or_insert(i);
    }
    let mut threshold = Vec::with_capacity(entries.len());
    let mut role = Vec::with_capacity(entries.len());
    let mut events = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let item = session.item(entry.item);
        if item.kind == ItemKind::GhostSnapshot {
            threshold.push(Some(0));
            role.push(Role::Ghost);
            continue;
        }
        let pairing = namespace(item.kind).and_then(|(space, is_call)| {
            let call_id = match (&item.call_id, item.kind) {
                (Some(id), _) => id.as_str(),
                (None, ItemKind::LocalShellCall | ItemKind::ToolSearchCall) => return None,
                (None, ItemKind::ToolSearchOutput) => return None,
                (None, _) => "",
            };
            if item.kind == ItemKind::ToolSearchOutput
                && item.execution.as_deref() == Some("server")
            {
                return None;
            }
            Some(if is_call {
                (Role::Call, first_output.get(&(space, call_id)).copied())
            } else {
                (Role::Output, first_call.get(&(space, call_id)).copied())
            })
        });
        match pairing {
            None => {
                threshold.push(Some(0));
                role.push(Role::Plain);
            }
            Some((r, partner)) => {
                if let Some(t) = partner
                    && t > i
                {
                    events.push((t, i));
                }
                threshold.push(partner);
                role.push(r);
            }
        }
    }
    events.sort_unstable();
    EpochFacts {
        threshold,
        role,
        events,
        next_event: 0,
    }
}

impl EpochFacts {
    /// Is raw entry `i` present (and, for a call, answered) in a prefix of length `n`?
    /// Returns (kept, needs synthetic output).
    fn status(&self, i: usize, n: usize) -> (bool, bool) {
        match self.role[i] {
            Role::Plain => (true, false),
            Role::Ghost => (false, false),
            Role::Call => (true, self.threshold[i].is_none_or(|o| o >= n)),
            Role::Output => (self.threshold[i].is_some_and(|c| c < n), false),
        }
    }

    /// The smallest raw index below `old_n` whose status differs between prefixes `old_n` and
    /// `new_n`. Advances through the events, so a sequence of growing prefixes is linear.
    fn first_change(&mut self, old_n: usize, new_n: usize) -> Option<usize> {
        let mut first: Option<usize> = None;
        while let Some(&(t, i)) = self.events.get(self.next_event) {
            if t >= new_n {
                break;
            }
            self.next_event += 1;
            if t >= old_n && i < old_n {
                first = Some(first.map_or(i, |f| f.min(i)));
            }
        }
        first
    }
}

/// Build the plan: every step's model view, fingerprints and token estimates, sharing work
/// between steps so the total cost is linear in the rollout (plus the length of any rewound
/// prefix, which only a rewrite of history causes).
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

    let file_instructions: Option<Rc<str>> = options.instructions.as_deref().map(Rc::from);
    let meta_instructions: Option<Rc<str>> = meta
        .and_then(|m| m.base_instructions.as_deref())
        .map(Rc::from);
    // Keyed by where the text came from: the file, session_meta, or a turn_context record.
    let mut instruction_memo: HashMap<(InstructionsSource, Option<usize>), (Hash, usize)> =
        HashMap::new();
    let mut params_memo: HashMap<Option<usize>, Hash> = HashMap::new();
    let mut last_params: Option<(Option<&crate::model::TurnContext>, Hash)> = None;

    // Checkpoint of each epoch: the compacted line it started from (rollbacks inherit).
    let mut checkpoint_of_epoch: Vec<Option<Hash>> = vec![None; replay.epochs.len()];
    {
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
    }

    // Indexed by item id: each item is hashed (and counted) once. Hashing and token counting
    // are the expensive parts and items are independent: spread them over the available cores.
    let mut item_hash_memo = digest_items(session, options);
    let mut arrays: Vec<ViewArray> = Vec::new();
    let mut latest_array_of_epoch: HashMap<usize, usize> = HashMap::new();
    let mut facts_of_epoch: HashMap<usize, EpochFacts> = HashMap::new();
    let mut views = Vec::with_capacity(replay.steps.len());
    let mut fingerprints = Vec::with_capacity(replay.steps.len());
    let mut instructions = Vec::with_capacity(replay.steps.len());
    let mut instruction_tokens = Vec::with_capacity(replay.steps.len());

    for (step_index, step) in replay.steps.iter().enumerate() {
        let epoch = step.epoch;
        let target = step.prefix_len;
        let facts = facts_of_epoch
            .entry(epoch)
            .or_insert_with(|| epoch_facts(session, epoch));
        let array_index = match latest_array_of_epoch.get(&epoch).copied() {
            Some(a) if arrays[a].raw_len <= target => {
                let old_n = arrays[a].raw_len;
                match facts.first_change(old_n, target) {
                    None => a,
                    Some(r) => {
                        // History before this step was rewritten by normalization: fork.
                        let position = arrays[a].raw_position[r];
                        let old = &arrays[a];
                        let forked = ViewArray {
                            first_seen: std::cell::OnceCell::new(),
                            epoch,
                            entries: old.entries[..position].to_vec(),
                            item_hashes: old.item_hashes[..position].to_vec(),
                            chain: old.chain[..=position].to_vec(),
                            tokens: old.tokens[..=position].to_vec(),
                            raw_position: old.raw_position[..r].to_vec(),
                            raw_len: r,
                        };
                        arrays.push(forked);
                        arrays.len() - 1
                    }
                }
            }
            _ => {
                arrays.push(ViewArray {
                    epoch,
                    chain: vec![chain_start()],
                    tokens: vec![0],
                    ..ViewArray::default()
                });
                arrays.len() - 1
            }
        };
        latest_array_of_epoch.insert(epoch, array_index);
        let array = &mut arrays[array_index];
        let history = &replay.epochs[epoch];
        for (raw, entry) in history.iter().enumerate().take(target).skip(array.raw_len) {
            array.raw_position.push(array.entries.len());
            let (kept, synthetic) = facts.status(raw, target);
            if !kept {
                continue;
            }
            let id = entry.item;
            let (item_hash, item_tokens) = *item_hash_memo[id]
                .get_or_insert_with(|| digest_item(session.item(id), &rollout.bytes, options));
            push_entry(
                array,
                ViewEntry {
                    origin: Origin::Raw(raw),
                    item: ViewItem::History(id),
                },
                item_hash,
                item_tokens,
            );
            if synthetic && let Some(output) = synthetic_output(session.item(id)) {
                let json = output.json(&rollout.bytes);
                let h = hash("item", json.as_bytes());
                let t = if options.estimate_tokens {
                    tokens::item_tokens(&output, json)
                } else {
                    0
                };
                push_entry(
                    array,
                    ViewEntry {
                        origin: Origin::Synthetic { call: raw },
                        item: ViewItem::Synthetic(Rc::new(output)),
                    },
                    h,
                    t,
                );
            }
        }
        array.raw_len = target;
        let view_len = array.entries.len();
        views.push((array_index, view_len));

        // Instructions: --instructions FILE, else a turn_context override, else session_meta.
        let context = session.step_context(step_index);
        let (text, source): (Option<Rc<str>>, InstructionsSource) =
            if let Some(text) = &file_instructions {
                (Some(text.clone()), InstructionsSource::File)
            } else if let Some(text) = context.and_then(|c| c.base_instructions.as_deref()) {
                (Some(Rc::from(text)), InstructionsSource::TurnContext)
            } else if let Some(text) = &meta_instructions {
                (Some(text.clone()), InstructionsSource::SessionMeta)
            } else {
                (None, InstructionsSource::Unknown)
            };
        let (instructions_hash, instructions_tokens) = match &text {
            None => (None, 0),
            Some(text) => {
                let key = (
                    source,
                    (source == InstructionsSource::TurnContext)
                        .then_some(step.context)
                        .flatten(),
                );
                let (h, t) = *instruction_memo.entry(key).or_insert_with(|| {
                    let t = if options.estimate_tokens {
                        tokens::count(text)
                    } else {
                        0
                    };
                    (hash("instructions", text.as_bytes()), t)
                });
                (Some(h), t)
            }
        };
        let params_hash = *params_memo.entry(step.context).or_insert_with(|| {
            // Era B writes a turn_context per step, nearly always equal to the one before:
            // comparing them is cheaper than building the params JSON.
            match last_params {
                Some((last, previous)) if last == context => previous,
                _ => hash("params", params(context).as_bytes()),
            }
        });
        last_params = Some((context, params_hash));
        let input = arrays[array_index].chain[view_len];
        let checkpoint = checkpoint_of_epoch[epoch];
        let request_text = format!(
            "instructions={}\ntools={}\nparams={}\nprompt_cache_key={}\ncheckpoint={}\ninput={}\n",
            optional_hex(&instructions_hash),
            optional_hex(&tools_hash),
            hex(&params_hash),
            optional_hex(&cache_key_hash),
            checkpoint.as_ref().map_or_else(|| "none".to_string(), hex),
            hex(&input)
        );
        fingerprints.push(Fingerprint {
            instructions: instructions_hash,
            tools: tools_hash,
            tools_canonical,
            params: params_hash,
            prompt_cache_key: cache_key_hash,
            checkpoint,
            input,
            input_items: view_len,
            request: hash("request", request_text.as_bytes()),
        });
        instructions.push((text, source));
        instruction_tokens.push(instructions_tokens);
    }
    Plan {
        arrays,
        views,
        fingerprints,
        instructions,
        tools,
        instruction_tokens,
        tool_tokens,
        estimate_tokens: options.estimate_tokens,
    }
}

fn push_entry(array: &mut ViewArray, entry: ViewEntry, item_hash: Hash, item_tokens: usize) {
    let previous = *array
        .chain
        .last()
        .expect("invariant: chain starts with a value");
    array.chain.push(chain_next(&previous, &item_hash));
    let total = array.tokens.last().copied().unwrap_or(0) + item_tokens;
    array.tokens.push(total);
    array.item_hashes.push(item_hash);
    array.entries.push(entry);
}

impl Plan {
    /// The model-view entries of a step's request.
    pub fn view(&self, step: usize) -> &[ViewEntry] {
        let (array, len) = self.views[step];
        &self.arrays[array].entries[..len]
    }

    /// Chain value after `k` entries of a step's input.
    pub fn chain(&self, step: usize, k: usize) -> &Hash {
        let (array, _) = self.views[step];
        &self.arrays[array].chain[k]
    }

    /// The first position of an item with this hash in the array a step's input comes from
    /// (positions past the step's own input count too: compare with a bound).
    pub fn first_index(&self, step: usize, item: &Hash) -> Option<usize> {
        let (array, _) = self.views[step];
        let array = &self.arrays[array];
        array
            .first_seen
            .get_or_init(|| {
                let mut first = HashMap::with_capacity(array.item_hashes.len());
                for (position, hash) in array.item_hashes.iter().enumerate() {
                    first.entry(*hash).or_insert(position);
                }
                first
            })
            .get(item)
            .copied()
    }

    /// Item hash of entry `k` of a step's input.
    pub fn item_hash(&self, step: usize, k: usize) -> &Hash {
        let (array, _) = self.views[step];
        &self.arrays[array].item_hashes[k]
    }

    /// Estimated tokens of the first `k` entries of a step's input.
    pub fn input_tokens(&self, step: usize, k: usize) -> usize {
        let (array, _) = self.views[step];
        self.arrays[array].tokens[k]
    }

    /// Estimated tokens of a step's whole request: instructions, tools and input.
    pub fn request_tokens(&self, step: usize) -> usize {
        self.instruction_tokens[step]
            + self.tool_tokens
            + self.input_tokens(step, self.views[step].1)
    }
}

/// Length of the longest common prefix of two inputs, from their chains (binary search).
pub fn common_prefix(a: &Plan, step_a: usize, b: &Plan, step_b: usize) -> usize {
    let max = a.views[step_a].1.min(b.views[step_b].1);
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

//! Fingerprints of compiled requests, component by component, for every step, and the plan that
//! holds them with each step's model view; a session's agent makes the plan
//! (`agents::codex::plan`), in time linear in the rollout.
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

use std::any::Any;

use serde_json::Value;
use xxhash_rust::xxh3::xxh3_128;

use crate::core::parallel::Threads;
use crate::core::request::Part;
use crate::core::shared::{ListId, SharedLists};

use crate::core::hash::push_hex;
pub use crate::core::hash::{HASH_NAME, Hash, hash, hex};

/// Options of a plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Codex: `--instructions FILE` text.
    pub instructions: Option<String>,
    /// Codex: `--tools FILE` specs (exact JSON of each).
    pub tools: Option<Vec<String>>,
    /// Codex: `compile --output-schema FILE` (compact JSON): its `text.format` in `params`.
    pub output_schema: Option<String>,
    /// Estimate tokens (off: every estimate is 0).
    pub estimate_tokens: bool,
    /// Threads for token counting, the step headers and the request fingerprints (0 or 1:
    /// everything on the calling thread). The result does not depend on it.
    pub threads: Threads,
}

pub(crate) fn chain_start() -> Hash {
    hash("input", b"")
}

pub(crate) fn chain_next(previous: &Hash, item: &Hash) -> Hash {
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
    /// The agent's API has no cache key (Anthropic's): `prompt_cache_key` is absent, not unknown.
    pub cache_key_absent: bool,
    /// The input holds context the session does not record (Claude Code before 2.1.3xx
    /// injects it into the first message): `input` covers what it records.
    pub input_partial: bool,
}

impl Fingerprint {
    /// The hash of one part of the request (`None`: unknown, or no checkpoint).
    pub fn part(&self, part: Part) -> Option<&Hash> {
        match part {
            Part::CacheKey => self.prompt_cache_key.as_ref(),
            Part::Instructions => self.instructions.as_ref(),
            Part::Tools => self.tools.as_ref(),
            Part::Params => Some(&self.params),
            Part::Checkpoint => self.checkpoint.as_ref(),
            Part::Input => Some(&self.input),
        }
    }

    /// Names of the components that are unknown.
    pub fn unknown(&self) -> Vec<&'static str> {
        let mut unknown = Vec::new();
        if self.instructions.is_none() {
            unknown.push("instructions");
        }
        if self.tools.is_none() {
            unknown.push("tools");
        }
        if self.prompt_cache_key.is_none() && !self.cache_key_absent {
            unknown.push("prompt_cache_key");
        }
        if self.input_partial {
            unknown.push("input");
        }
        unknown
    }
}

/// The text the request hash covers: each component's hex, `unknown` or `none` where there is
/// no hash (see "Fingerprint encoding"). Written into `out`, reused from step to step.
pub(crate) fn request_text(out: &mut String, components: [(&str, Option<&Hash>, &str); 6]) {
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
pub(crate) struct EntryData {
    /// Hash of the entry's JSON.
    pub(crate) item_hash: Hash,
    /// The chain value covering the entries up to and including this one.
    pub(crate) chain: Hash,
    /// Estimated tokens of the entries up to and including this one.
    pub(crate) tokens: usize,
}

/// What is known about each step's request, computed once for the whole session: the neutral
/// part (each step's input as a prefix of one of the shared lists, its fingerprints and token
/// estimates) and what the session's agent keeps beside it ([`AgentPlan`]), which only that
/// agent reads.
#[derive(Debug)]
pub struct Plan {
    /// Per input entry: its hash, the chain up to it and the tokens up to it. The input of step
    /// `k` is `data[views[k].0][..views[k].1]`; model views of all steps share these lists, a
    /// rewrite of already-sent history forking a list at the first entry that changes.
    pub(crate) data: SharedLists<EntryData>,
    /// Per step: `(view list, view length)`.
    pub views: Vec<(ListId, usize)>,
    pub fingerprints: Vec<Fingerprint>,
    /// Estimated tokens of the instructions of each step and of the tools.
    pub instruction_tokens: Vec<usize>,
    pub tool_tokens: usize,
    pub estimate_tokens: bool,
    /// Per stored view entry, the first position on its list of an equal item; built on first
    /// use (diff asks it for many steps).
    pub(crate) first_seen: std::sync::OnceLock<Vec<Vec<usize>>>,
    pub(crate) chain_start: Hash,
    /// The threads the plan was made on; the stages that go over its steps afterwards (cache
    /// analysis, the text tables) use them too.
    pub threads: Threads,
    /// What the session's agent keeps of each step beside the neutral part ([`Plan::agent()`]).
    pub(crate) agent: AgentPlan,
}

/// The part of a plan only its session's agent reads: each agent's entries (in lists of the same
/// shape as [`Plan::data`]), the texts its parts were made from. The plan holds it without
/// naming its type, so that an agent is added without touching the stages; the agent that made
/// the plan takes it back with [`Plan::agent()`].
pub struct AgentPlan(Box<dyn AgentPart>);

/// What an agent's part of a plan is: any data the plan can carry across threads and print.
trait AgentPart: Any + std::fmt::Debug + Send + Sync {}

impl<T: Any + std::fmt::Debug + Send + Sync> AgentPart for T {}

impl AgentPlan {
    /// An agent's part of a plan.
    pub fn new<T: Any + std::fmt::Debug + Send + Sync>(part: T) -> AgentPlan {
        AgentPlan(Box::new(part))
    }
}

impl std::fmt::Debug for AgentPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Plan {
    /// The agent's part of the plan, as the agent that made it stored it. Asking for another
    /// type is a programming error (a session's plan is made by its own agent): it panics.
    pub fn agent<T: Any>(&self) -> &T {
        let part: &dyn Any = &*self.agent.0;
        part.downcast_ref().unwrap_or_else(|| wrong_agent::<T>())
    }

    /// [`Plan::agent()`], to change it (the agent growing its plan).
    pub fn agent_mut<T: Any>(&mut self) -> &mut T {
        let part: &mut dyn Any = &mut *self.agent.0;
        part.downcast_mut().unwrap_or_else(|| wrong_agent::<T>())
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
        self.data.get(list, k)
    }

    /// The first position of an item equal to entry `k` (same item hash) in a step's input:
    /// at most `k`.
    pub fn first_occurrence(&self, step: usize, k: usize) -> usize {
        let (list, len) = self.views[step];
        assert!(k < len, "entry {k} of a view of {len}");
        let first = self
            .first_seen
            .get_or_init(|| self.data.first_positions(|d| d.item_hash));
        let (segment, index) = self.data.locate_item(list, k);
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

/// A plan asked for another agent's part than the one it holds.
fn wrong_agent<T>() -> ! {
    panic!(
        "invariant: a session's plan is made by its own agent, its part a {}",
        std::any::type_name::<T>()
    )
}

#[cfg(test)]
mod tests;

//! Anthropic's prompt cache (Messages API), as a request's prefix predicts it: Anthropic's
//! prompt-caching documentation, and CONFORMANCE.md "Usage model" for the mock that simulates it.
//! The prompt is tools, then system blocks, then the parameters that invalidate the messages'
//! cache, then the messages' blocks; a block with `cache_control` is a breakpoint that writes an
//! entry for the prefix up to it (per model, for its TTL, refreshed by a hit); a request reads
//! the longest entry found at one of its breakpoints or up to 20 blocks before one.

use serde_json::Value;

use crate::core::hash::{Hash, hash};
use crate::providers::{BreakpointCache, CacheModel};
pub use crate::providers::{Lookup, PromptView};

pub mod prices;

/// Blocks the cache looks back from a breakpoint for an earlier entry.
pub const LOOKBACK_BLOCKS: usize = 20;

/// Where a block is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Tool(usize),
    /// The tools, which the build does not record.
    Tools,
    System(usize),
    /// The system prompt, which the build does not record.
    SystemWhole,
    Params,
    /// Message, block.
    Message(usize, usize),
}

impl Part {
    /// `tools[3]`, `system[1]`, `params`, `messages[2].content[0]`; `tools` or `system` alone
    /// for a part the transcript does not record.
    pub fn name(self) -> String {
        match self {
            Part::Tool(i) => format!("tools[{i}]"),
            Part::Tools => "tools".into(),
            Part::System(i) => format!("system[{i}]"),
            Part::SystemWhole => "system".into(),
            Part::Params => "params".into(),
            Part::Message(i, j) => format!("messages[{i}].content[{j}]"),
        }
    }

    /// The part a name in `Compiled::unknown` covers, by its name's prefix.
    pub fn within(self, prefix: &str) -> bool {
        match self {
            Part::Message(i, _) => prefix == format!("messages[{i}].content"),
            _ => false,
        }
    }

    /// The part of the request (as every agent's requests are divided) this block is in.
    pub fn kind(self) -> crate::core::request::Part {
        use crate::core::request::Part as Whole;
        match self {
            Part::Tool(_) | Part::Tools => Whole::Tools,
            Part::System(_) | Part::SystemWhole => Whole::Instructions,
            Part::Params => Whole::Params,
            Part::Message(..) => Whole::Input,
        }
    }

    pub fn is_system(self) -> bool {
        matches!(self, Part::System(_) | Part::SystemWhole)
    }
}

/// One block of a prompt, in the order the cache sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub part: Part,
    pub hash: Hash,
    /// The transcript records it (else it is assumed unchanged from one request to the next).
    pub known: bool,
    /// A breakpoint, with its TTL in seconds.
    pub breakpoint: Option<i64>,
}

/// The blocks of a compiled body. A part the build does not record is one unknown block (with
/// the breakpoint those builds put on their system blocks).
pub fn prompt_blocks(body: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    let block = |part: Part, value: &Value, tag: &str| Block {
        hash: hash(tag, canonical_without_cache_control(value).as_bytes()),
        known: !value.is_null(),
        breakpoint: ttl(value),
        part,
    };
    match &body["tools"] {
        Value::Array(tools) => {
            for (i, tool) in tools.iter().enumerate() {
                out.push(block(Part::Tool(i), tool, "claude-tool"));
            }
        }
        Value::Null if body.get("tools").is_some() => out.push(unknown(Part::Tools, None)),
        _ => {}
    }
    match &body["system"] {
        Value::Array(blocks) => {
            for (i, b) in blocks.iter().enumerate() {
                if b.is_null() {
                    // 2.1.3xx's billing block: not recorded, the same through a session.
                    out.push(unknown(Part::System(i), None));
                } else {
                    out.push(block(Part::System(i), b, "claude-system"));
                }
            }
        }
        Value::String(text) => out.push(block(
            Part::System(0),
            &Value::String(text.clone()),
            "claude-system",
        )),
        Value::Null if body.get("system").is_some() => {
            out.push(unknown(Part::SystemWhole, Some(300)))
        }
        _ => {}
    }
    let params = serde_json::json!({"thinking": body.get("thinking"), "tool_choice": body.get("tool_choice")});
    out.push(block(Part::Params, &params, "claude-params"));
    for (i, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let role = message["role"].as_str().unwrap_or("");
        let blocks = match &message["content"] {
            Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => Vec::new(),
        };
        for (j, b) in blocks.iter().enumerate() {
            out.push(Block {
                part: Part::Message(i, j),
                hash: block_hash(role, b),
                known: true,
                breakpoint: ttl(b),
            });
        }
    }
    out
}

/// A block's TTL in seconds, when it is a breakpoint.
fn ttl(b: &Value) -> Option<i64> {
    b.get("cache_control")
        .map(|cc| match cc.get("ttl").and_then(Value::as_str) {
            Some("1h") => 3600,
            _ => 300,
        })
}

/// A message block's identity: its role and its JSON without `cache_control`.
pub fn block_hash(role: &str, block: &Value) -> Hash {
    let keyed = serde_json::json!([role, block]);
    hash(
        "claude-block",
        canonical_without_cache_control(&keyed).as_bytes(),
    )
}

/// A block standing for a part the log does not record (assumed unchanged between requests).
pub fn unknown(part: Part, breakpoint: Option<i64>) -> Block {
    Block {
        part,
        hash: hash("claude-unknown", part.name().as_bytes()),
        known: false,
        breakpoint,
    }
}

/// A value with every `cache_control` left out: a breakpoint marks a block, it is not part of
/// what the cache compares.
pub fn without_cache_control(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), without_cache_control(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_cache_control).collect()),
        other => other.clone(),
    }
}

/// The compact JSON of a value without its `cache_control`s.
pub fn canonical_without_cache_control(value: &Value) -> String {
    serde_json::to_string(&without_cache_control(value)).expect("a JSON value serializes")
}

/// The chain over a prompt's message blocks, from its start: two prompts share their first `k`
/// message blocks exactly when their chains agree at `k` (the 16-byte hashes chained, as
/// `fingerprint`'s input chain is).
pub fn message_chain_start() -> Hash {
    hash("claude-messages-chain", b"")
}

/// The chain value after `block` (its [`block_hash`]) follows a prefix whose chain is `link`.
pub fn message_chain_next(link: &Hash, block: &Hash) -> Hash {
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(link);
    bytes[16..].copy_from_slice(block);
    hash("claude-messages-chain", &bytes)
}

/// The provider's cache as the session's requests fill it.
#[derive(Debug, Default)]
pub struct Simulation {
    /// Prefix (model, head blocks, message chain) → expiry, in seconds since the epoch.
    entries: foldhash::HashMap<Hash, i64>,
    /// The chain over the last request's model and head blocks, and those blocks' hashes.
    head: Vec<(Hash, Hash)>,
    /// The last request's model and its [`min_cacheable`].
    model: Option<(String, u64)>,
}

impl Simulation {
    /// Look `prompt` up at `now`, then write its breakpoints' entries. A prefix is named by the
    /// model, the head blocks and the message chain where it ends, so a request costs its
    /// breakpoints (each looked up over the 20 blocks before it), not its length. Message
    /// blocks are hashed under a tag of their own, so a head never equals a message prefix.
    ///
    /// As Anthropic's cache (and the recordings' mock) does: a hit refreshes the entry it read,
    /// and a request whose whole prompt is below the model's minimum cacheable length
    /// (`prompt_tokens`, when known) writes nothing.
    pub fn request_view(
        &mut self,
        model: &str,
        prompt: &(impl PromptView + ?Sized),
        now: i64,
        prompt_tokens: Option<u64>,
    ) -> Lookup {
        let head = prompt.head();
        // The head's chain is taken on from the last request's where they share blocks.
        let minimum = match &self.model {
            Some((last, minimum)) if last == model => *minimum,
            _ => {
                self.head.clear();
                let minimum = min_cacheable(model) as u64;
                self.model = Some((model.to_string(), minimum));
                minimum
            }
        };
        let shared = self
            .head
            .iter()
            .zip(head)
            .take_while(|((h, _), b)| *h == b.hash)
            .count();
        self.head.truncate(shared);
        let mut link = self
            .head
            .last()
            .map_or_else(|| hash("claude-prefix", model.as_bytes()), |&(_, l)| l);
        for b in &head[shared..] {
            link = prefix_next(&link, &b.hash);
            self.head.push((b.hash, link));
        }
        let links = &self.head;
        let key = |p: usize| match p.checked_sub(head.len()) {
            None => links[p].1,
            Some(k) => prefix_next(&link, &prompt.message_chain(k)),
        };
        let breakpoints = prompt.breakpoints();
        // The block read and its entry's key.
        let mut read: Option<(usize, Hash)> = None;
        let mut expired = false;
        for &(bp, _) in breakpoints {
            for p in (bp.saturating_sub(LOOKBACK_BLOCKS)..=bp).rev() {
                let key = key(p);
                match self.entries.get(&key) {
                    Some(&expiry) if expiry > now => {
                        if read.is_none_or(|(r, _)| p > r) {
                            read = Some((p, key));
                        }
                        break;
                    }
                    Some(_) => expired = true,
                    None => {}
                }
            }
        }
        // The hit refreshes the entry it read (by the default TTL, as the mock does).
        if let Some((_, key)) = read
            && let Some(expiry) = self.entries.get_mut(&key)
        {
            *expiry = (*expiry).max(now + DEFAULT_TTL_SECONDS);
        }
        let read_block = read.map(|(p, _)| p);
        let below_minimum = prompt_tokens.is_some_and(|t| t < minimum);
        for &(bp, ttl) in breakpoints {
            if below_minimum {
                break;
            }
            let entry = self.entries.entry(key(bp)).or_insert(0);
            *entry = (*entry).max(now + ttl);
        }
        Lookup {
            read_block,
            expired: expired && read_block.is_none(),
        }
    }
}

fn prefix_next(link: &Hash, block: &Hash) -> Hash {
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(link);
    bytes[16..].copy_from_slice(block);
    hash("claude-prefix", &bytes)
}

impl BreakpointCache for Simulation {
    fn request(
        &mut self,
        model: &str,
        prompt: &dyn PromptView,
        now: i64,
        prompt_tokens: Option<u64>,
    ) -> Lookup {
        self.request_view(model, prompt, now, prompt_tokens)
    }

    fn reserve(&mut self, requests: usize) {
        self.entries.reserve(requests);
    }
}

/// The minimum cacheable prefix of a model, in tokens (Anthropic's prompt-caching
/// documentation; `conformance/claude_mock.py` has the same table): below it a breakpoint
/// writes nothing, without error. The first matching name wins.
pub fn min_cacheable(model: &str) -> usize {
    const MINIMUMS: [(&str, usize); 6] = [
        ("claude-3-haiku", 2048),
        ("claude-3-5-haiku", 2048),
        ("haiku-4-5", 4096),
        ("opus-4-5", 4096),
        ("opus-4-6", 4096),
        ("opus-4-7", 4096),
    ];
    MINIMUMS
        .iter()
        .find(|(name, _)| model.contains(name))
        .map_or(MIN_CACHEABLE, |&(_, n)| n)
}

/// Anthropic's prompt cache: explicit breakpoints, each entry per model for its TTL (5 minutes
/// or an hour), read from a breakpoint or up to [`LOOKBACK_BLOCKS`] blocks before it.
#[derive(Debug, Clone, Copy, Default)]
pub struct BreakpointPrefixCache;

/// The provider's minimum cacheable prefix for the models Claude Code sends (Sonnet and Opus
/// 4.x); below it nothing is written, without error.
pub const MIN_CACHEABLE: usize = 1024;

/// A TTL when a breakpoint names none.
pub const DEFAULT_TTL_SECONDS: i64 = 300;

impl CacheModel for BreakpointPrefixCache {
    /// Nothing below the minimum; no granule (reads and writes are counted to the token).
    fn cacheable(&self, tokens: usize) -> usize {
        if tokens < MIN_CACHEABLE { 0 } else { tokens }
    }

    fn retention_seconds(&self) -> i64 {
        DEFAULT_TTL_SECONDS
    }

    fn reports_writes(&self) -> bool {
        true
    }

    /// What it read and what it wrote: the prefix up to its last breakpoint.
    fn left_cached(&self, usage: &crate::core::usage::Usage) -> u64 {
        usage
            .cached_input_tokens
            .saturating_add(usage.cache_write_input_tokens.unwrap_or(0))
    }

    fn keyed_on_breakpoints(&self) -> bool {
        true
    }

    fn breakpoint_cache(&self) -> Option<Box<dyn BreakpointCache>> {
        Some(Box::new(Simulation::default()))
    }
}

//! Anthropic's prompt cache (Messages API), as a request's prefix predicts it: Anthropic's
//! prompt-caching documentation, and CONFORMANCE.md "Usage model" for the mock that simulates it.
//! The prompt is tools, then system blocks, then the parameters that invalidate the messages'
//! cache, then the messages' blocks; a block with `cache_control` is a breakpoint that writes an
//! entry for the prefix up to it (per model, for its TTL, refreshed by a hit); a request reads
//! the longest entry found at one of its breakpoints or up to 20 blocks before one.

use serde_json::Value;

use crate::core::hash::{Hash, hash};

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

/// The provider's cache as the session's requests fill it.
#[derive(Debug, Default)]
pub struct Simulation {
    /// Prefix chain (model first) → expiry, in seconds since the epoch.
    entries: foldhash::HashMap<Hash, i64>,
    /// The last request's blocks and chain: the next one's shared blocks keep their links.
    blocks: Vec<(Hash, Hash)>,
    model: String,
}

/// What the cache holds for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup {
    /// The last block of the longest prefix found, if any.
    pub read_block: Option<usize>,
    /// An entry for a longer prefix existed but had expired.
    pub expired: bool,
}

impl Simulation {
    /// Look `blocks` up at `now`, then write its breakpoints' entries. The chain is taken on from
    /// the blocks it shares with the previous request, so a session costs its new blocks.
    pub fn request(&mut self, model: &str, blocks: &[Block], now: i64) -> Lookup {
        if model != self.model {
            self.blocks.clear();
            self.model = model.to_string();
        }
        let shared = self
            .blocks
            .iter()
            .zip(blocks)
            .take_while(|((h, _), b)| *h == b.hash)
            .count();
        self.blocks.truncate(shared);
        let mut link = self
            .blocks
            .last()
            .map_or_else(|| hash("claude-prefix", model.as_bytes()), |(_, c)| *c);
        for b in &blocks[shared..] {
            let mut bytes = [0u8; 32];
            bytes[..16].copy_from_slice(&link);
            bytes[16..].copy_from_slice(&b.hash);
            link = hash("claude-prefix", &bytes);
            self.blocks.push((b.hash, link));
        }
        let chain = |p: usize| self.blocks[p].1;
        let breakpoints: Vec<(usize, i64)> = blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.breakpoint.map(|t| (i, t)))
            .collect();
        let mut read_block = None;
        let mut expired = false;
        for &(bp, _) in &breakpoints {
            for p in (bp.saturating_sub(LOOKBACK_BLOCKS)..=bp).rev() {
                match self.entries.get(&chain(p)) {
                    Some(&expiry) if expiry > now => {
                        read_block = read_block.max(Some(p));
                        break;
                    }
                    Some(_) => expired = true,
                    None => {}
                }
            }
        }
        for &(bp, ttl) in &breakpoints {
            let entry = self.entries.entry(chain(bp)).or_insert(0);
            *entry = (*entry).max(now + ttl);
        }
        Lookup {
            read_block,
            expired: expired && read_block.is_none(),
        }
    }
}

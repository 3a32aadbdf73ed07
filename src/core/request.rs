//! A request as the stages see it: an ordered list of parts, each fingerprinted on its own, the
//! input last and chained item by item, so that two requests share a prefix exactly as far as
//! their parts agree. Codex's parts are the Responses API's (`instructions`, `tools`, params,
//! `prompt_cache_key`, the `compacted` checkpoint, `input`); Anthropic's Messages API maps onto
//! the same ones (`system` blocks as instructions, `tools`, `messages` as the input).

use serde_json::Value;

/// One part of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// What routes the request to a cache (OpenAI's `prompt_cache_key`).
    CacheKey,
    /// The system text: instructions, or system blocks.
    Instructions,
    /// The tool specs, in request order.
    Tools,
    /// Request-level parameters (model, reasoning, output format).
    Params,
    /// The summary a compaction left, which the history starts from.
    Checkpoint,
    /// The input items or messages.
    Input,
}

impl Part {
    /// The parts before the input whose change breaks every cached prefix, in the order the
    /// cache analysis names the first that changed.
    pub const BEFORE_INPUT: [Part; 4] = [
        Part::Instructions,
        Part::Tools,
        Part::Params,
        Part::CacheKey,
    ];

    /// Stable name in output: the fingerprint component's.
    pub fn name(self) -> &'static str {
        match self {
            Part::CacheKey => "prompt_cache_key",
            Part::Instructions => "instructions",
            Part::Tools => "tools",
            Part::Params => "params",
            Part::Checkpoint => "checkpoint",
            Part::Input => "input",
        }
    }
}

/// A tool's `name` (or, for namespaces and built-ins, its `type`).
pub fn tool_name(tool: &str) -> String {
    let value: Value = serde_json::from_str(tool).unwrap_or(Value::Null);
    value
        .get("name")
        .and_then(Value::as_str)
        .or_else(|| value.get("type").and_then(Value::as_str))
        .unwrap_or("?")
        .to_string()
}

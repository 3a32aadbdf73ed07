//! A Claude Code request's fingerprint: one hash per part of its prefix, in the cache's order,
//! and one of the whole, each `null` where the build does not record the part.
//!
//! Each component is `XXH3-128(tag ‖ 0x00 ‖ bytes)` ([`crate::core::hash::hash`]) of the part's
//! canonical JSON (keys sorted, no spaces, `cache_control` left out: a breakpoint does not
//! change the prefix): `model`, `tools` (the array), `system` (the blocks, the unrecorded
//! billing block left out), `params` (`{thinking, tool_choice}`, the parameters that invalidate
//! the messages' cache); `messages` is a chain over every content block of every message (its
//! role and the block), so two requests share their first `k` blocks exactly when their chains
//! agree at `k`; `request` hashes `model=…\ntools=…\nsystem=…\nparams=…\nmessages=…\n`.

use serde_json::Value;

use super::wire::Compiled;
use crate::core::hash::{Hash, hash, hex};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub request: String,
    pub model: Option<String>,
    pub tools: Option<String>,
    pub system: Option<String>,
    pub params: String,
    pub messages: String,
    /// Content blocks of all messages.
    pub blocks: usize,
    /// Parts the build does not record (their hash is `null`, `unknown` in `request`).
    pub unknown: Vec<String>,
}

fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().filter(|k| *k != "cache_control").collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sorted(value)).expect("a JSON value serializes")
}

fn part(tag: &str, value: &Value) -> Option<String> {
    (!value.is_null()).then(|| hex(&hash(tag, canonical(value).as_bytes())))
}

pub fn fingerprint(compiled: &Compiled) -> Fingerprint {
    let body = &compiled.body;
    let mut unknown: Vec<String> = compiled
        .unknown
        .iter()
        .filter(|u| matches!(u.part.as_str(), "tools" | "system") || u.part.starts_with("messages"))
        .map(|u| u.part.clone())
        .collect();
    let system = match &body["system"] {
        Value::Array(blocks) => {
            let recorded: Vec<Value> = blocks.iter().filter(|b| !b.is_null()).cloned().collect();
            part("claude-system", &Value::Array(recorded))
        }
        other => part("claude-system", other),
    };
    if body["tools"].is_null() && !unknown.iter().any(|u| u == "tools") {
        unknown.push("tools".into());
    }
    let params = serde_json::json!({"thinking": body.get("thinking"), "tool_choice": body.get("tool_choice")});
    let mut chain: Hash = hash("claude-messages", b"");
    let mut blocks = 0;
    for message in body["messages"].as_array().into_iter().flatten() {
        let content = match &message["content"] {
            Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
            Value::Array(items) => items.clone(),
            _ => Vec::new(),
        };
        for block in content {
            let one = hash(
                "claude-block",
                canonical(&serde_json::json!([message["role"], block])).as_bytes(),
            );
            let mut bytes = chain.to_vec();
            bytes.extend_from_slice(&one);
            chain = hash("claude-messages", &bytes);
            blocks += 1;
        }
    }
    let model = body["model"].as_str().map(str::to_string);
    let tools = part("claude-tools", &body["tools"]);
    let params = hex(&hash("claude-params", canonical(&params).as_bytes()));
    let messages = hex(&chain);
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let text = format!(
        "model={}\ntools={}\nsystem={}\nparams={params}\nmessages={messages}\n",
        model.clone().unwrap_or_else(|| "unknown".into()),
        shown(&tools),
        shown(&system),
    );
    Fingerprint {
        request: hex(&hash("claude-request", text.as_bytes())),
        model,
        tools,
        system,
        params,
        messages,
        blocks,
        unknown,
    }
}

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

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::wire::Compiled;
use crate::check::Finding;
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

/// One request of a transcript in a `check` baseline: where it is and its fingerprint's parts,
/// as `fingerprint --format json` writes them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BaselineStep {
    pub turn: usize,
    pub step: usize,
    pub request: String,
    pub model: Option<String>,
    pub tools: Option<String>,
    pub system: Option<String>,
    pub params: String,
    pub messages: String,
    pub blocks: usize,
    #[serde(default)]
    pub unknown: Vec<String>,
}

impl BaselineStep {
    pub fn new(turn: usize, step: usize, f: &Fingerprint) -> BaselineStep {
        BaselineStep {
            turn,
            step,
            request: f.request.clone(),
            model: f.model.clone(),
            tools: f.tools.clone(),
            system: f.system.clone(),
            params: f.params.clone(),
            messages: f.messages.clone(),
            blocks: f.blocks,
            unknown: f.unknown.clone(),
        }
    }
}

/// A transcript's requests against its baseline: one finding per drift class, at the first
/// request that shows it (`baseline:model_switch`, `tools_changed`, `system_changed`,
/// `params_changed`, `messages_changed`, `steps_changed`).
pub fn compare_baseline(expected: &[BaselineStep], actual: &[BaselineStep]) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |class: &str, step: usize, detail: String| {
        let name = format!("baseline:{class}");
        if !out.iter().any(|f| f.name == name) {
            out.push(Finding {
                name,
                step: Some(step),
                detail,
            });
        }
    };
    for (k, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e == a {
            continue;
        }
        let at = format!("turn {} step {}", a.turn, a.step);
        if (e.turn, e.step) != (a.turn, a.step) {
            push(
                "steps_changed",
                k,
                format!("request {k} was turn {} step {}, now {at}", e.turn, e.step),
            );
            continue;
        }
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        if e.model != a.model {
            push(
                "model_switch",
                k,
                format!("{at}: model {} -> {}", shown(&e.model), shown(&a.model)),
            );
        }
        if e.tools != a.tools {
            push("tools_changed", k, format!("{at}: tools changed"));
        }
        if e.system != a.system {
            push("system_changed", k, format!("{at}: system blocks changed"));
        }
        if e.params != a.params {
            push("params_changed", k, format!("{at}: parameters changed"));
        }
        if e.messages != a.messages {
            push(
                "messages_changed",
                k,
                format!(
                    "{at}: messages changed ({} blocks, was {})",
                    a.blocks, e.blocks
                ),
            );
        }
    }
    if expected.len() != actual.len() {
        push(
            "steps_changed",
            expected.len().min(actual.len()),
            format!(
                "{} requests, the baseline has {}",
                actual.len(),
                expected.len()
            ),
        );
    }
    out
}

//! 2.1.3xx's replay records: the body of a sampling request rebuilt from `api-request`,
//! `api-request-blob` and `api-request-shape` lines and the transcript's own messages, and
//! checked against the record's `requestDigest`.
//!
//! An `api-request` names the request it extends (`base`), how many of its messages it keeps
//! (`keep`) and the hashes of the messages after them (`tail`): each is an `api-request-blob`
//! line (context the transcript does not hold otherwise) or a message of the transcript. The
//! hash of a message is the sha256 of its canonical JSON (keys sorted, no spaces, without
//! `cache_control`, string content as one text block), as is the digest of the body (without
//! `metadata`, `stream` and the billing header block, with `params.betas` as `betas`).
//! Checked on every recorded 2.1.332 request (CONFORMANCE.md, "Layout of a Claude case").

use crate::providers::anthropic::without_cache_control;
use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::load::{LineKind, Sha256Name, Transcript};
use super::thread::{Conversation, Request, Role};

/// A part of the body the transcript does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// A dotted path into the body (`metadata`, `system[0]`).
    pub part: String,
    pub reason: String,
}

/// The rebuilt body and what its digest says.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The body in the shape the build sent it (key order included), `null` where unknown.
    pub body: Value,
    pub unknown: Vec<Unknown>,
    /// The digest of the rebuilt body, by the build's rule.
    pub digest: String,
    /// The digest the build recorded (`requestDigest`).
    pub recorded_digest: Option<String>,
}

impl Replayed {
    /// The rebuild is the body the build hashed.
    pub fn verified(&self) -> bool {
        self.recorded_digest.as_deref() == Some(self.digest.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("no replay record: the build did not write `api-request` lines for this request")]
    NoRecord,
    #[error("the replay record `{0}` is not in this file")]
    MissingRecord(String),
    #[error(
        "message {0} of the replay record is in no `api-request-blob` line and no message of this file"
    )]
    MissingMessage(String),
    #[error("the request shape {0} is not in this file")]
    MissingShape(String),
    #[error("a replay record of the wrong shape: {0}")]
    Malformed(String),
}

/// The system block a 2.1.3xx build puts first: `x-anthropic-billing-header: cc_version=…;
/// cc_entrypoint=…;` with a code derived from the first user message. Not recorded.
const BILLING_PREFIX: &str = "x-anthropic-billing-header";

/// Rebuild `request`'s body from the replay records of `t`.
pub fn replay(
    t: &Transcript,
    c: &Conversation,
    request: &Request,
) -> Result<Replayed, ReplayError> {
    let response = request.response.ok_or(ReplayError::NoRecord)?;
    let reference = c.responses[response]
        .lines
        .iter()
        .find_map(|&i| match &t.lines[i].kind {
            LineKind::Assistant(a) => a.request_ref.clone(),
            _ => None,
        })
        .ok_or(ReplayError::NoRecord)?;
    let mut records = HashMap::new();
    let mut blobs = HashMap::new();
    let mut shapes = HashMap::new();
    for line in &t.lines {
        match &line.kind {
            LineKind::ApiRequest(r) => {
                records.insert(&r.id, r);
            }
            LineKind::ApiRequestBlob { hash, message } => {
                blobs.insert(hash.clone(), parse(message)?);
            }
            LineKind::ApiRequestShape { hash, shape } => {
                shapes.insert(hash, shape);
            }
            _ => {}
        }
    }
    let record = *records
        .get(&reference)
        .ok_or_else(|| ReplayError::MissingRecord(reference.to_string()))?;
    // The messages this history holds, by hash, as the transcript wrote them.
    for message in c.history(t, request).messages {
        let value = sent_message(t, message.role, &message.lines);
        blobs.entry(message_hash(&value)).or_insert(value);
    }
    // The chain of records back to the first, then the messages forward.
    let mut chain = vec![record];
    while let Some(base) = &chain.last().expect("not empty").base {
        let record = records
            .get(base)
            .ok_or_else(|| ReplayError::MissingRecord(base.to_string()))?;
        if chain.len() > records.len() {
            return Err(ReplayError::Malformed(format!(
                "`base` chain of {reference} loops"
            )));
        }
        chain.push(record);
    }
    let mut messages: Vec<Value> = Vec::new();
    for record in chain.iter().rev() {
        messages.truncate(record.keep);
        for hash in &record.tail {
            let message = blobs
                .get(hash)
                .ok_or_else(|| ReplayError::MissingMessage(hash.to_string()))?;
            messages.push(message.clone());
        }
    }
    let params = parse(&record.params)?;
    let Value::Object(params) = params else {
        return Err(ReplayError::Malformed("`params` is not an object".into()));
    };
    let shape_hash = record
        .shape_hash
        .as_ref()
        .ok_or_else(|| ReplayError::Malformed("`api-request` without `shapeHash`".into()))?;
    let shape = parse(
        shapes
            .get(shape_hash)
            .ok_or_else(|| ReplayError::MissingShape(shape_hash.to_string()))?,
    )?;
    let mut system = shape
        .get("system")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    let mut tools = shape.get("tools").cloned();
    let mut messages = Value::Array(messages);
    let cache_control = parse(&record.cache_control)?;
    for entry in cache_control.as_array().into_iter().flatten() {
        let (Some(path), Some(value)) = (entry.get("path"), entry.get("value")) else {
            return Err(ReplayError::Malformed(
                "a `cacheControl` entry without path or value".into(),
            ));
        };
        let path = path.as_array().cloned().unwrap_or_default();
        let root = match path.first().and_then(Value::as_str) {
            Some("system") => &mut system,
            Some("messages") => &mut messages,
            Some("tools") => tools.get_or_insert(Value::Array(Vec::new())),
            _ => {
                return Err(ReplayError::Malformed(format!(
                    "`cacheControl` path {path:?}"
                )));
            }
        };
        let block = path[1..]
            .iter()
            .try_fold(root, |v, step| match step {
                Value::Number(n) => n.as_u64().and_then(|i| v.get_mut(i as usize)),
                Value::String(k) => {
                    // A string content gets its breakpoint as a one-block list.
                    if k == "content" && v.get("content").is_some_and(Value::is_string) {
                        let text = v["content"].take();
                        v["content"] = serde_json::json!([{"type": "text", "text": text}]);
                    }
                    v.get_mut(k.as_str())
                }
                _ => None,
            })
            .and_then(Value::as_object_mut)
            .ok_or_else(|| {
                ReplayError::Malformed(format!("`cacheControl` path {path:?} not in the body"))
            })?;
        block.insert("cache_control".into(), value.clone());
    }
    // A user or system message of one text block without a breakpoint goes out as a string.
    for message in messages.as_array_mut().into_iter().flatten() {
        if message.get("role").and_then(Value::as_str) == Some("assistant") {
            continue;
        }
        if let Some(Value::Array(blocks)) = message.get("content")
            && let [block] = blocks.as_slice()
            && block.get("type").and_then(Value::as_str) == Some("text")
            && block.get("cache_control").is_none()
            && let Some(text) = block.get("text").cloned()
        {
            message["content"] = text;
        }
    }
    let mut system_blocks = vec![Value::Null];
    system_blocks.extend(system.as_array().cloned().unwrap_or_default());
    let mut body = Map::new();
    body.insert(
        "model".into(),
        params.get("model").cloned().unwrap_or(Value::Null),
    );
    body.insert("messages".into(), messages);
    body.insert("system".into(), Value::Array(system_blocks));
    if let Some(tools) = tools {
        body.insert("tools".into(), tools);
    }
    body.insert("metadata".into(), Value::Null);
    for (key, value) in &params {
        if key != "model" && key != "betas" {
            body.insert(key.clone(), value.clone());
        }
    }
    body.insert("stream".into(), Value::Bool(true));
    let digest = body_digest(&body, params.get("betas"));
    Ok(Replayed {
        body: Value::Object(body),
        unknown: vec![
            Unknown {
                part: "metadata".into(),
                reason: "`metadata.user_id` holds the device id of `~/.claude.json`, which no transcript records".into(),
            },
            Unknown {
                part: "system[0]".into(),
                reason: "the billing header block (`x-anthropic-billing-header: cc_version=…; cc_entrypoint=…;`) is not recorded".into(),
            },
        ],
        digest,
        recorded_digest: record.request_digest.as_ref().map(Sha256Name::to_string),
    })
}

fn parse(text: &str) -> Result<Value, ReplayError> {
    serde_json::from_str(text).map_err(|e| ReplayError::Malformed(e.to_string()))
}

/// A message of the transcript as it is sent: the content blocks of its lines, in order.
fn sent_message(t: &Transcript, role: Role, lines: &[usize]) -> Value {
    let mut content = Vec::new();
    for &i in lines {
        let text = match &t.lines[i].kind {
            LineKind::User(u) => &u.content,
            LineKind::Assistant(a) => &a.content,
            _ => continue,
        };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(blocks)) => content.extend(blocks),
            Ok(Value::String(s)) => content.push(serde_json::json!({"type": "text", "text": s})),
            _ => {}
        }
    }
    let role = match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    };
    serde_json::json!({"role": role, "content": content})
}

/// The hash a replay record names a message by.
pub fn message_hash(message: &Value) -> Sha256Name {
    let mut value = without_cache_control(message);
    if let Some(Value::String(text)) = value.get("content") {
        let text = text.clone();
        value["content"] = serde_json::json!([{"type": "text", "text": text}]);
    }
    Sha256Name::of_digest(Sha256::digest(canonical(&value).as_bytes()).into())
}

/// The digest a 2.1.3xx build records of a body: `metadata`, `stream` and the billing block
/// left out, the betas added, string content as a text block, breakpoints kept.
fn body_digest(body: &Map<String, Value>, betas: Option<&Value>) -> String {
    let mut hashed = Map::new();
    for (key, value) in body {
        match key.as_str() {
            "metadata" | "stream" => {}
            "system" => {
                let blocks = value.as_array().into_iter().flatten();
                let kept = blocks
                    .filter(|b| {
                        !b.is_null()
                            && !b
                                .get("text")
                                .and_then(Value::as_str)
                                .is_some_and(|t| t.starts_with(BILLING_PREFIX))
                    })
                    .cloned()
                    .collect();
                hashed.insert(key.clone(), Value::Array(kept));
            }
            "messages" => {
                let messages = value.as_array().into_iter().flatten().map(|m| {
                    let mut m = m.clone();
                    if let Some(Value::String(text)) = m.get("content") {
                        let text = text.clone();
                        m["content"] = serde_json::json!([{"type": "text", "text": text}]);
                    }
                    m
                });
                hashed.insert(key.clone(), Value::Array(messages.collect()));
            }
            _ => {
                hashed.insert(key.clone(), value.clone());
            }
        }
    }
    if let Some(betas) = betas {
        hashed.insert("betas".into(), betas.clone());
    }
    sha256_hex(&canonical(&Value::Object(hashed)))
}

/// Keys sorted at every level, no spaces: the form every 2.1.3xx hash is taken of.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
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

fn sha256_hex(text: &str) -> String {
    let mut hex = String::with_capacity(64);
    crate::core::hash::push_hex(&mut hex, &Sha256::digest(text.as_bytes()));
    hex
}

//! The request compiler: a pure function from the parts of a request to the Responses-API body
//! Codex would send (codex-rollout.md section 8.2). It reads nothing and invents nothing: a part
//! the rollout does not record is `null` in the body and named in `approximations`.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::model::TurnContext;

/// Where the instructions come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstructionsSource {
    /// `--instructions FILE`.
    File,
    /// A `turn_context.base_instructions` override.
    TurnContext,
    /// `session_meta.base_instructions`.
    SessionMeta,
    /// Not recorded (Codex used its built-in prompt for the model).
    Unknown,
}

impl InstructionsSource {
    /// Stable name used in output.
    pub fn name(self) -> &'static str {
        match self {
            InstructionsSource::File => "file",
            InstructionsSource::TurnContext => "turn_context",
            InstructionsSource::SessionMeta => "session_meta",
            InstructionsSource::Unknown => "unknown",
        }
    }
}

/// The tool list of a request, as given by the caller: one plan is compiled and fingerprinted.
#[derive(Debug, Clone, Default)]
pub struct ToolPlan {
    /// Exact JSON text of each tool spec, in request order; `None` when unknown.
    pub tools: Option<Vec<String>>,
}

/// Everything a request is made of.
#[derive(Debug, Clone, Copy)]
pub struct RequestParts<'a> {
    pub instructions: Option<&'a str>,
    /// The model view, as JSON texts.
    pub input: &'a [&'a str],
    pub tools: &'a ToolPlan,
    pub context: Option<&'a TurnContext>,
    /// The thread id (`session_meta.id`).
    pub prompt_cache_key: Option<&'a str>,
}

/// A compiled request.
#[derive(Debug, Clone)]
pub struct CompiledRequest {
    /// The body exactly as it would go on the wire (compact JSON).
    pub body: String,
    /// Parts the rollout does not record, each with a reason.
    pub approximations: Vec<(&'static str, &'static str)>,
}

/// Reasoning efforts Codex has sent (codex-rollout.md section 3.2).
const KNOWN_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh"];

/// Compile a request body from its parts.
pub fn compile(parts: &RequestParts<'_>) -> CompiledRequest {
    let mut approximations = Vec::new();
    let context = parts.context;
    let model = context.and_then(|c| c.model.as_deref());
    if model.is_none() {
        approximations.push(("model", "no turn_context records the model"));
    }
    if parts.instructions.is_none() {
        approximations.push((
            "instructions",
            "not recorded (Codex used its built-in prompt); pass --instructions FILE",
        ));
    }
    if parts.tools.tools.is_none() {
        approximations.push((
            "tools",
            "tool specs are not recorded in rollouts; pass --tools FILE",
        ));
    }
    approximations.push((
        "parallel_tool_calls",
        "a model-family setting, not recorded",
    ));
    let params_object = params_object(context);
    match context.map(|c| c.effort.as_deref()) {
        Some(None) => approximations.push((
            "reasoning.effort",
            "not recorded: the model's default applies",
        )),
        Some(Some(effort)) if !KNOWN_EFFORTS.contains(&effort) => approximations.push((
            "reasoning.effort",
            "a value promptc does not know: sent as recorded, the provider may reject it",
        )),
        _ => {}
    }
    if parts.prompt_cache_key.is_none() {
        approximations.push(("prompt_cache_key", "no session_meta id"));
    }

    let mut body =
        String::with_capacity(parts.input.iter().map(|i| i.len() + 1).sum::<usize>() + 512);
    body.push('{');
    push_field(&mut body, "model", &json_string_or_null(model));
    push_field(
        &mut body,
        "instructions",
        &json_string_or_null(parts.instructions),
    );
    body.push_str(",\"input\":[");
    for (i, item) in parts.input.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(item);
    }
    body.push(']');
    let tools = match &parts.tools.tools {
        Some(tools) => format!("[{}]", tools.join(",")),
        None => "null".to_string(),
    };
    push_field(&mut body, "tools", &tools);
    // The remaining fields are the params object's own fields, in request order.
    for (key, value) in &params_object {
        if key == "model" || key == "prompt_cache_key" {
            continue;
        }
        if key == "text" {
            continue;
        }
        push_field(&mut body, key, &value.to_string());
    }
    push_field(
        &mut body,
        "prompt_cache_key",
        &json_string_or_null(parts.prompt_cache_key),
    );
    if let Some(text) = params_object.get("text") {
        push_field(&mut body, "text", &text.to_string());
    }
    body.push('}');
    CompiledRequest {
        body,
        approximations,
    }
}

fn push_field(body: &mut String, key: &str, value: &str) {
    if !body.ends_with('{') {
        body.push(',');
    }
    body.push('"');
    body.push_str(key);
    body.push_str("\":");
    body.push_str(value);
}

fn json_string_or_null(value: Option<&str>) -> String {
    value.map_or_else(
        || "null".to_string(),
        |v| Value::String(v.to_string()).to_string(),
    )
}

/// The request-level parameters, in request order: `model`, `tool_choice`,
/// `parallel_tool_calls`, `reasoning`, `store`, `stream`, `include`, `text`. Compact JSON.
pub fn params(context: Option<&TurnContext>) -> String {
    Value::Object(params_object(context)).to_string()
}

/// The `params` object (see [`params`]).
fn params_object(context: Option<&TurnContext>) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert(
        "model".into(),
        context
            .and_then(|c| c.model.clone())
            .map_or(Value::Null, Value::String),
    );
    object.insert("tool_choice".into(), "auto".into());
    object.insert("parallel_tool_calls".into(), Value::Null);
    let effort = context.and_then(|c| c.effort.clone());
    let summary = context.and_then(|c| c.summary.clone());
    let has_reasoning = effort.is_some() || summary.is_some();
    if has_reasoning {
        let mut reasoning = Map::new();
        reasoning.insert("effort".into(), effort.map_or(Value::Null, Value::String));
        if let Some(summary) = summary.filter(|s| s != "none") {
            reasoning.insert("summary".into(), Value::String(summary));
        }
        object.insert("reasoning".into(), Value::Object(reasoning));
    }
    object.insert("store".into(), false.into());
    object.insert("stream".into(), true.into());
    let include: Vec<Value> = if has_reasoning {
        vec!["reasoning.encrypted_content".into()]
    } else {
        Vec::new()
    };
    object.insert("include".into(), Value::Array(include));
    let verbosity = context.and_then(|c| c.verbosity.clone());
    let schema = context.and_then(|c| c.output_schema.as_deref());
    if verbosity.is_some() || schema.is_some() {
        let mut text = Map::new();
        if let Some(verbosity) = verbosity {
            text.insert("verbosity".into(), Value::String(verbosity));
        }
        if let Some(schema) = schema {
            let schema: Value = serde_json::from_str(schema).unwrap_or(Value::Null);
            let mut format = Map::new();
            format.insert("type".into(), "json_schema".into());
            format.insert("strict".into(), true.into());
            format.insert("schema".into(), schema);
            format.insert("name".into(), "codex_output_schema".into());
            text.insert("format".into(), Value::Object(format));
        }
        object.insert("text".into(), Value::Object(text));
    }
    object
}

/// Parse a `--tools` file: a JSON array of tool specs, or a captured request with `tools`.
pub fn parse_tools(text: &str) -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct Captured<'a> {
        #[serde(borrow)]
        tools: Vec<&'a RawValue>,
    }
    let trimmed = text.trim_start();
    let tools: Vec<&RawValue> = if trimmed.starts_with('[') {
        serde_json::from_str(text).map_err(|e| format!("not a JSON array of tool specs: {e}"))?
    } else {
        serde_json::from_str::<Captured<'_>>(text)
            .map_err(|e| {
                format!("neither a JSON array of tool specs nor a request with `tools`: {e}")
            })?
            .tools
    };
    tools
        .into_iter()
        .map(|raw| {
            let value: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            if !value.is_object() {
                return Err("a tool spec is not a JSON object".to_string());
            }
            // Compact form, keys in the file's order.
            Ok(value.to_string())
        })
        .collect()
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

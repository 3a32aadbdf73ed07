//! The request-level parameters Codex sends beside the input (`model`, `reasoning`, `text`, …),
//! from a step's turn context: what the `params` fingerprint hashes and the body carries.

use serde_json::{Map, Value};

use crate::agents::codex::model::TurnContext;

/// The request-level parameters, in request order: `model`, `tool_choice`,
/// `parallel_tool_calls`, `reasoning`, `store`, `stream`, `include`, `text`. Compact JSON.
pub fn params(context: Option<&TurnContext>) -> String {
    params_with(context, None)
}

/// [`params`] with `text.format` from an `--output-schema` schema (compact JSON), which takes
/// the place of one the turn context records: what `compile --output-schema` sends.
pub fn params_with(context: Option<&TurnContext>, output_schema: Option<&str>) -> String {
    let mut object = params_object(context);
    if let Some(schema) = output_schema {
        let text = object
            .entry("text")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(text) = text {
            text.insert("format".into(), output_format(schema));
        }
    }
    Value::Object(object).to_string()
}

/// The `params` object (see [`params`]).
pub(super) fn params_object(context: Option<&TurnContext>) -> Map<String, Value> {
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
            text.insert("format".into(), output_format(schema));
        }
        object.insert("text".into(), Value::Object(text));
    }
    object
}

/// `text.format` for an `--output-schema` schema (0.104.0/output_schema).
pub(super) fn output_format(schema: &str) -> Value {
    let schema: Value = serde_json::from_str(schema).unwrap_or(Value::Null);
    let mut format = Map::new();
    format.insert("type".into(), "json_schema".into());
    format.insert("strict".into(), true.into());
    format.insert("schema".into(), schema);
    format.insert("name".into(), "codex_output_schema".into());
    Value::Object(format)
}

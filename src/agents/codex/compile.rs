//! The request compiler: a pure function from the parts of a request to the Responses-API body
//! Codex would send (codex-rollout.md section 8.2), in the shape of the build that wrote the
//! step's turn (per-build and per-model rules: [`super::rules`]). It reads nothing and
//! invents nothing: a part the rollout does not record is `null` in the body and named in
//! `approximations`; a part set by an inferred rule is named in `rules` with its case.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::agents::codex::model::TurnContext;
use crate::agents::codex::rules::{
    Build, COMPACTION_CASE, RequestShape, SHELL_OUTPUTS_CASE, compaction_prompt_item, derived_id,
    format_shell_outputs, formats_shell_outputs, offers_freeform_apply_patch, table_build_of_tools,
    turn_model_rules,
};

mod generic;
mod params;
mod step;
mod tools;

use generic::compile_generic;
use params::{output_format, params_object};
pub use params::{params, params_with};
pub use step::{CompileOptions, compile_step};
pub use tools::parse_tools;

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
    pub instructions_source: InstructionsSource,
    /// The model view, as JSON texts.
    pub input: &'a [&'a str],
    pub tools: &'a ToolPlan,
    pub context: Option<&'a TurnContext>,
    /// The thread id (`session_meta.id`).
    pub prompt_cache_key: Option<&'a str>,
    /// The build generation and settings that decide the body's shape.
    pub shape: &'a RequestShape,
    /// `--output-schema`: the schema sent as `text.format`, compact JSON.
    pub output_schema: Option<&'a str>,
    /// A compaction request: `tools: []`, `parallel_tool_calls: false`, the checkpoint prompt
    /// after the history ([`crate::agents::codex::rules::COMPACTION_PROMPT`]).
    pub compaction: bool,
}

/// A part of the body set by a rule inferred from recorded requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub part: &'static str,
    pub rule: &'static str,
    /// The recorded case the rule is inferred from (`tests/conformance/...`).
    pub case: &'static str,
}

/// A compiled request.
#[derive(Debug, Clone)]
pub struct CompiledRequest {
    /// The body exactly as it would go on the wire (compact JSON).
    pub body: String,
    /// Parts the rollout does not record, each with a reason.
    pub approximations: Vec<(&'static str, &'static str)>,
    /// The build generation whose rules shaped the body, when the step's turn tells it.
    pub build: Option<Build>,
    /// Parts set by per-build or per-model rules, with the case each comes from.
    pub rules: Vec<Rule>,
}

/// Reasoning efforts Codex has sent (codex-rollout.md section 3.2).
const KNOWN_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh"];

/// Compile a request body from its parts: in the shape of the build that wrote the step's
/// turn ([`super::rules`]), or, when no known build wrote it, in the generic shape with
/// every build- or model-dependent field `null`.
pub fn compile(parts: &RequestParts<'_>) -> CompiledRequest {
    if !parts.compaction {
        return match parts.shape.build {
            Some(build) => compile_for(build, parts),
            None => compile_generic(parts),
        };
    }
    // A compaction request: the history plus the checkpoint prompt, offering no tools.
    let no_tools = ToolPlan {
        tools: Some(Vec::new()),
    };
    let prompt = compaction_prompt_item();
    let input: Vec<&str> = parts
        .input
        .iter()
        .copied()
        .chain([prompt.as_str()])
        .collect();
    let parts = RequestParts {
        input: &input,
        tools: &no_tools,
        ..*parts
    };
    let mut compiled = match parts.shape.build {
        Some(build) => compile_for(build, &parts),
        None => compile_generic(&parts),
    };
    let rules = [
        ("tools", "a compaction request offers no tools"),
        ("parallel_tool_calls", "false in a compaction request"),
        (
            "input",
            "a compaction request ends with the checkpoint prompt",
        ),
    ];
    if compiled.build.is_some() {
        compiled.rules.retain(|r| r.part != "parallel_tool_calls");
        compiled.rules.extend(rules.map(|(part, rule)| Rule {
            part,
            rule,
            case: COMPACTION_CASE,
        }));
    } else {
        compiled.approximations.push((
            "input",
            "a compaction request: the checkpoint prompt of the recorded builds is assumed",
        ));
    }
    compiled
}

/// Approximations every shape shares: model, tools, prompt_cache_key, effort.
fn common_approximations(parts: &RequestParts<'_>, approximations: &mut Vec<(&str, &str)>) {
    if parts.context.and_then(|c| c.model.as_deref()).is_none() {
        approximations.push(("model", "no turn_context records the model"));
    }
    if parts.prompt_cache_key.is_none() {
        approximations.push(("prompt_cache_key", "no session_meta id"));
    }
    if let Some(effort) = parts.context.and_then(|c| c.effort.as_deref())
        && !KNOWN_EFFORTS.contains(&effort)
    {
        approximations.push((
            "reasoning.effort",
            "a value promptc does not know: sent as recorded, the provider may reject it",
        ));
    }
}

const NO_INSTRUCTIONS: &str =
    "not recorded (Codex used its built-in prompt); pass --instructions FILE";
const NO_TOOLS: &str = "tool specs are not recorded in rollouts; pass --tools FILE";

/// The body in the shape of `build` (rules and their cases: [`super::rules`]).
fn compile_for(build: Build, parts: &RequestParts<'_>) -> CompiledRequest {
    let mut approximations = Vec::new();
    let mut rules = Vec::new();
    if parts.shape.unrecorded_build {
        approximations.push((
            "request shape",
            "session_meta.cli_version is newer than the recorded builds of this turn_context's \
             shape: their rules are applied unverified (CONFORMANCE.md)",
        ));
    }
    common_approximations(parts, &mut approximations);
    let context = parts.context;
    let model = context.and_then(|c| c.model.as_deref());
    // Each setting known where the builds that may have written the turn agree on it.
    // Given tools tell 0.58 from 0.77 (their shell tool) where the rollout does not.
    let told = match (&parts.tools.tools, model) {
        (Some(tools), Some(slug)) if parts.shape.table_build.is_none() => {
            table_build_of_tools(build, slug, tools).map(|name| RequestShape {
                table_build: Some(name),
                ..parts.shape.clone()
            })
        }
        _ => None,
    };
    let shape = told.as_ref().unwrap_or(parts.shape);
    let model_rules = model.map_or_else(Default::default, |slug| turn_model_rules(shape, slug));
    let code_mode = build >= Build::V0_152 && model_rules.code_mode == Some(true);

    // Shell outputs as this build renders them when the freeform apply_patch tool is offered.
    let formats_outputs = formats_shell_outputs(build)
        && match &parts.tools.tools {
            Some(tools) => offers_freeform_apply_patch(tools),
            None => model_rules.freeform_apply_patch == Some(true),
        };
    let formatted = formats_outputs
        .then(|| format_shell_outputs(parts.input))
        .flatten();
    if formatted.is_some() && parts.tools.tools.is_none() {
        rules.push(Rule {
            part: "input",
            rule: "structured shell outputs rendered as text, since every recorded request of \
                   this build and model offered the freeform apply_patch tool",
            case: SHELL_OUTPUTS_CASE,
        });
    }
    let input: Vec<&str> = match &formatted {
        Some(items) => items.iter().map(String::as_str).collect(),
        None => parts.input.to_vec(),
    };

    // Instructions: the recorded text, with the edits this build makes.
    let instructions: Option<Cow<'_, str>> =
        parts
            .instructions
            .map(|text| match build.removed_instructions() {
                Some(removed)
                    if parts.instructions_source != InstructionsSource::File
                        && text.contains(removed) =>
                {
                    rules.push(Rule {
                        part: "instructions",
                        rule: "this build removes the checklist bullet from the base instructions",
                        case: "tests/conformance/0.152.1/tool_calls",
                    });
                    Cow::Owned(text.replacen(removed, "", 1))
                }
                _ => Cow::Borrowed(text),
            });
    let as_message = build.instructions_as_message() || code_mode;

    // Items this build puts before the history: code mode's tools, the base instructions.
    let mut prefix: Vec<String> = Vec::new();
    let (has_tools_item, has_base_message) = recorded_prefix(&input, instructions.as_deref());
    if code_mode && !has_tools_item {
        match (&parts.tools.tools, parts.prompt_cache_key) {
            (Some(tools), Some(thread)) => {
                let tools = format!("[{}]", tools.join(","));
                let id = format!("at_{}", derived_id(thread, tools.as_bytes()));
                prefix.push(format!(
                    "{{\"type\":\"additional_tools\",\"id\":{},\"role\":\"developer\",\"tools\":{tools}}}",
                    Value::String(id)
                ));
                rules.push(Rule {
                    part: "input[0]",
                    rule: "code mode: the tools travel in an additional_tools item, id at_ + uuid5 of their JSON in the thread's namespace",
                    case: "tests/conformance/0.162.1/model_switch",
                });
            }
            _ => {
                prefix.push("null".to_string());
                approximations.push(("input[0]", NO_TOOLS));
            }
        }
    }
    if as_message && !has_base_message {
        let part = if prefix.is_empty() {
            "input[0]"
        } else {
            "input[1]"
        };
        match (&instructions, parts.prompt_cache_key) {
            (Some(text), Some(thread)) => {
                let id = format!("msg_{}", derived_id(thread, text.as_bytes()));
                prefix.push(format!(
                    "{{\"type\":\"message\",\"id\":{},\"role\":\"developer\",\"content\":[{{\"type\":\"input_text\",\"text\":{}}}]}}",
                    Value::String(id),
                    Value::String(text.to_string())
                ));
                rules.push(Rule {
                    part,
                    rule: "the base instructions travel as a developer message, id msg_ + uuid5 of the text in the thread's namespace",
                    case: "tests/conformance/0.162.1/tool_calls",
                });
            }
            _ => {
                prefix.push("null".to_string());
                approximations.push((part, NO_INSTRUCTIONS));
            }
        }
    } else if !as_message && instructions.is_none() {
        approximations.push(("instructions", NO_INSTRUCTIONS));
    }
    if !code_mode && parts.tools.tools.is_none() {
        approximations.push(("tools", NO_TOOLS));
    }

    let parallel = match model_rules.parallel_tool_calls {
        _ if parts.compaction => Value::Bool(false),
        Some(parallel) => {
            rules.push(Rule {
                part: "parallel_tool_calls",
                rule: "a setting of the model",
                case: model_rules.case,
            });
            Value::Bool(parallel)
        }
        None => {
            approximations.push((
                "parallel_tool_calls",
                "a setting of the model, and no recorded request of this model tells it",
            ));
            Value::Null
        }
    };

    let mut reasoning = Map::new();
    match context.and_then(|c| c.effort.as_deref()) {
        Some(effort) => {
            reasoning.insert("effort".into(), effort.into());
        }
        // Every build sends the model's default when none is configured (0.104.0/tool_calls,
        // 0.58.0/model_switch_gpt-5.1); gpt-5.1-codex has none (0.58.0/tool_calls).
        None => match model_rules.default_effort {
            Some(None) => {}
            Some(Some(effort)) => {
                reasoning.insert("effort".into(), effort.into());
                rules.push(Rule {
                    part: "reasoning.effort",
                    rule: "none configured: the model's default",
                    case: model_rules.case,
                });
            }
            None => {
                reasoning.insert("effort".into(), Value::Null);
                approximations.push((
                    "reasoning.effort",
                    "not recorded: the model's default applies, and no recorded request of this model tells it",
                ));
            }
        },
    }
    let recorded_summary = context.and_then(|c| c.summary.as_deref());
    let summary: Option<Value> = match build {
        Build::V0_58 | Build::V0_104 | Build::V0_122 => recorded_summary.map(Value::from),
        Build::V0_141 if recorded_summary == Some("auto") => {
            approximations.push((
                "reasoning.summary",
                "0.141 records `auto` whatever was configured: the model's default is assumed \
                 (tests/conformance/0.141.0/effort_change sent `detailed`)",
            ));
            match model_rules.summary_0_141 {
                Some(summary) => summary.map(Value::from),
                None => Some(Value::Null),
            }
        }
        Build::V0_141 => recorded_summary.map(Value::from),
        Build::V0_152 | Build::V0_162 => {
            if parts.shape.thread_summary.is_some() {
                rules.push(Rule {
                    part: "reasoning.summary",
                    rule: "the configured summary, recorded by thread_settings_applied (turn_context says `auto` or `none`)",
                    case: "tests/conformance/0.162.1/effort_change",
                });
            }
            parts.shape.thread_summary.as_deref().map(Value::from)
        }
    };
    if let Some(summary) = summary.filter(|s| s.as_str() != Some("none")) {
        reasoning.insert("summary".into(), summary);
    }
    if code_mode {
        reasoning.insert("context".into(), "all_turns".into());
        rules.push(Rule {
            part: "reasoning.context",
            rule: "code-mode models",
            case: "tests/conformance/0.152.1/model_switch",
        });
    }

    // text.verbosity: a model that supports it, in every build (0.58.0/model_switch_gpt-5.1).
    let mut text = Map::new();
    {
        match model_rules.verbosity {
            Some(None) => {}
            Some(Some(verbosity)) => {
                text.insert("verbosity".into(), verbosity.into());
                rules.push(Rule {
                    part: "text.verbosity",
                    rule: "a setting of the model",
                    case: model_rules.case,
                });
            }
            None => {
                text.insert("verbosity".into(), Value::Null);
                approximations.push((
                    "text.verbosity",
                    "a setting of the model, and no recorded request of this model tells it",
                ));
            }
        }
    }
    if let Some(schema) = parts.output_schema {
        text.insert("format".into(), output_format(schema));
    } else if build.records_output_schema() {
        if let Some(schema) = context.and_then(|c| c.output_schema.as_deref()) {
            text.insert("format".into(), output_format(schema));
        }
    } else {
        approximations.push((
            "text.format",
            "`codex exec --output-schema` is not recorded by this build (a run with it sends \
             text.format): pass --output-schema FILE",
        ));
    }

    let mut body = String::with_capacity(input.iter().map(|i| i.len() + 1).sum::<usize>() + 512);
    body.push('{');
    push_field(&mut body, "model", &json_string_or_null(model));
    if build.stream_second() {
        push_field(&mut body, "stream", "true");
    }
    if !as_message {
        push_field(
            &mut body,
            "instructions",
            &json_string_or_null(instructions.as_deref()),
        );
    }
    push_input(
        &mut body,
        prefix
            .iter()
            .map(String::as_str)
            .chain(input.iter().copied()),
    );
    if !code_mode {
        push_field(&mut body, "tools", &tools_json(parts.tools));
    }
    push_field(&mut body, "tool_choice", "\"auto\"");
    push_field(&mut body, "parallel_tool_calls", &parallel.to_string());
    let has_reasoning = !reasoning.is_empty();
    if has_reasoning {
        push_field(
            &mut body,
            "reasoning",
            &Value::Object(reasoning).to_string(),
        );
    }
    push_field(&mut body, "store", "false");
    if !build.stream_second() {
        push_field(&mut body, "stream", "true");
    }
    push_field(
        &mut body,
        "include",
        if has_reasoning {
            "[\"reasoning.encrypted_content\"]"
        } else {
            "[]"
        },
    );
    push_field(
        &mut body,
        "prompt_cache_key",
        &json_string_or_null(parts.prompt_cache_key),
    );
    if !text.is_empty() {
        push_field(&mut body, "text", &Value::Object(text).to_string());
    }
    if build.sends_client_metadata() {
        push_field(&mut body, "client_metadata", "null");
        approximations.push((
            "client_metadata",
            "holds Codex's installation id, which no rollout records (and from 0.141 its key order is random per request)",
        ));
    }
    body.push('}');
    CompiledRequest {
        body,
        approximations,
        build: Some(build),
        rules,
    }
}

/// Whether the input already starts with what a build puts before the history (a compaction's
/// `replacement_history` keeps them: 0.171.0/model_switch): an `additional_tools` item, the
/// base-instructions message. A recorded code-mode prefix is taken whole: its message holds the
/// model's own instructions, not `session_meta`'s. A message is the base instructions when its
/// text is theirs. (Items reach the compiler in their wire form, without the passthrough metadata
/// that would name its kind.)
fn recorded_prefix(input: &[&str], instructions: Option<&str>) -> (bool, bool) {
    let (mut tools_item, mut base_message) = (false, false);
    for (index, item) in input.iter().take(2).enumerate() {
        let Ok(value) = serde_json::from_str::<Value>(item) else {
            continue;
        };
        if value["type"] == "additional_tools" {
            tools_item = true;
            if index == 0 {
                base_message = true;
            }
        }
        if value["type"] == "message"
            && value["role"] == "developer"
            && value["content"].as_array().is_some_and(|parts| {
                matches!(parts.as_slice(), [part]
                    if instructions.is_some_and(|text| part["text"].as_str() == Some(text)))
            })
        {
            base_message = true;
        }
    }
    (tools_item, base_message)
}

fn tools_json(tools: &ToolPlan) -> String {
    match &tools.tools {
        Some(tools) => format!("[{}]", tools.join(",")),
        None => "null".to_string(),
    }
}

fn push_input<'a>(body: &mut String, items: impl Iterator<Item = &'a str>) {
    body.push_str(",\"input\":[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(item);
    }
    body.push(']');
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::codex::rules::COMPACTION_PROMPT;

    fn context(model: &str) -> TurnContext {
        TurnContext {
            model: Some(model.to_string()),
            summary: Some("auto".to_string()),
            ..TurnContext::default()
        }
    }

    fn body(
        build: Option<Build>,
        context: &TurnContext,
        tools: Option<Vec<String>>,
        instructions: (&str, InstructionsSource),
        thread_summary: Option<&str>,
    ) -> (Value, CompiledRequest) {
        let shape = RequestShape {
            build,
            thread_summary: thread_summary.map(str::to_string),
            unrecorded_build: false,
            table_build: None,
        };
        let tools = ToolPlan { tools };
        let compiled = compile(&RequestParts {
            instructions: Some(instructions.0),
            instructions_source: instructions.1,
            input: &[
                r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
            ],
            tools: &tools,
            context: Some(context),
            prompt_cache_key: Some("01a235fd-f41d-7e20-b589-39b66bf535d4"),
            shape: &shape,
            output_schema: None,
            compaction: false,
        });
        (
            serde_json::from_str(&compiled.body).expect("the body is JSON"),
            compiled,
        )
    }

    fn keys(value: &Value) -> Vec<&str> {
        value
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect()
    }

    fn named(compiled: &CompiledRequest) -> Vec<&str> {
        compiled
            .approximations
            .iter()
            .map(|(part, _)| *part)
            .collect()
    }

    const META: InstructionsSource = InstructionsSource::SessionMeta;

    /// A body with recorded instructions, no tools and no configured summary.
    fn plain(build: Build, model: &str) -> (Value, CompiledRequest) {
        body(
            Some(build),
            &context(model),
            Some(vec![]),
            ("Base.", META),
            None,
        )
    }

    #[test]
    fn builds_before_0_162_send_instructions_and_stream_after_store() {
        // tests/conformance/0.58.0/tool_calls: no effort configured, none sent; no text.
        let (value, compiled) = plain(Build::V0_58, "gpt-5.1-codex");
        assert_eq!(
            keys(&value).join(" "),
            "model instructions input tools tool_choice parallel_tool_calls reasoning store stream include prompt_cache_key"
        );
        assert_eq!(value["parallel_tool_calls"], false);
        assert_eq!(value["reasoning"].to_string(), r#"{"summary":"auto"}"#);
        assert_eq!(compiled.build, Some(Build::V0_58));
    }

    #[test]
    fn builds_from_0_162_send_stream_second_and_the_instructions_as_a_message() {
        // tests/conformance/0.162.1/tool_calls; the summary comes from thread_settings_applied.
        let mut tc = context("gpt-5.5");
        tc.summary = Some("none".to_string());
        let bullet = Build::V0_162
            .removed_instructions()
            .expect("a removed bullet");
        let base = format!("Base.\n{bullet}End.");
        let (value, compiled) = body(
            Some(Build::V0_162),
            &tc,
            Some(vec![]),
            (&base, META),
            Some("detailed"),
        );
        assert_eq!(
            keys(&value).join(" "),
            "model stream input tools tool_choice parallel_tool_calls reasoning store include prompt_cache_key text client_metadata"
        );
        let first = &value["input"][0];
        assert_eq!(first["role"], "developer");
        assert_eq!(first["content"][0]["text"], "Base.\nEnd.");
        let id = derived_id("01a235fd-f41d-7e20-b589-39b66bf535d4", b"Base.\nEnd.");
        assert_eq!(first["id"], format!("msg_{id}"));
        assert_eq!(
            value["reasoning"].to_string(),
            r#"{"effort":"medium","summary":"detailed"}"#
        );
        assert_eq!(value["text"].to_string(), r#"{"verbosity":"low"}"#);
        assert_eq!(value["client_metadata"], Value::Null);
        assert!(named(&compiled).contains(&"client_metadata"));
    }

    #[test]
    fn instructions_given_by_file_are_sent_as_given() {
        let bullet = Build::V0_152
            .removed_instructions()
            .expect("a removed bullet");
        let base = format!("Base.\n{bullet}");
        let (value, _) = body(
            Some(Build::V0_152),
            &context("gpt-5.5"),
            Some(vec![]),
            (&base, InstructionsSource::File),
            None,
        );
        assert_eq!(value["instructions"], base.as_str());
        let (value, compiled) = body(
            Some(Build::V0_152),
            &context("gpt-5.5"),
            Some(vec![]),
            (&base, META),
            None,
        );
        assert_eq!(value["instructions"], "Base.\n");
        assert!(compiled.rules.iter().any(|r| r.part == "instructions"));
        // 0.152 records `auto` in turn_context but sends no summary unless one is configured.
        assert!(value["reasoning"].get("summary").is_none());
    }

    #[test]
    fn code_mode_models_get_their_tools_and_instructions_as_items() {
        // tests/conformance/0.152.1/model_switch (gpt-5.6-sol).
        let tool = r#"{"type":"function","name":"exec"}"#.to_string();
        let (value, _) = body(
            Some(Build::V0_152),
            &context("gpt-5.6-sol"),
            Some(vec![tool.clone()]),
            ("Base.", META),
            None,
        );
        assert!(value.get("tools").is_none() && value.get("instructions").is_none());
        let items = value["input"].as_array().expect("input");
        assert_eq!(items[0]["type"], "additional_tools");
        let id = derived_id(
            "01a235fd-f41d-7e20-b589-39b66bf535d4",
            format!("[{tool}]").as_bytes(),
        );
        assert_eq!(items[0]["id"], format!("at_{id}"));
        assert_eq!(items[1]["content"][0]["text"], "Base.");
        assert_eq!(items[2]["role"], "user");
        assert_eq!(value["parallel_tool_calls"], false);
        assert_eq!(
            value["reasoning"].to_string(),
            r#"{"effort":"low","context":"all_turns"}"#
        );
        // Without --tools the item is unknown: `null`, named.
        let (value, compiled) = body(
            Some(Build::V0_152),
            &context("gpt-5.6-sol"),
            None,
            ("Base.", META),
            None,
        );
        assert_eq!(value["input"][0], Value::Null);
        assert!(named(&compiled).contains(&"input[0]"));
    }

    #[test]
    fn a_compaction_request_appends_the_prompt_and_offers_no_tools() {
        // tests/conformance/0.104.0/auto_compaction request #1.
        let shape = RequestShape {
            build: Some(Build::V0_104),
            ..RequestShape::default()
        };
        let tools = ToolPlan {
            tools: Some(vec![
                r#"{"type":"custom","name":"apply_patch"}"#.to_string(),
            ]),
        };
        let shell = r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}"#;
        let out = r#"{"type":"function_call_output","call_id":"c","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}"#;
        let context = context("gpt-5.3-codex");
        let compiled = compile(&RequestParts {
            instructions: Some("B"),
            instructions_source: META,
            input: &[shell, out],
            tools: &tools,
            context: Some(&context),
            prompt_cache_key: Some("t"),
            shape: &shape,
            output_schema: None,
            compaction: true,
        });
        let value: Value = serde_json::from_str(&compiled.body).expect("JSON");
        assert_eq!(value["tools"], serde_json::json!([]));
        assert_eq!(value["parallel_tool_calls"], false);
        let input = value["input"].as_array().expect("input");
        assert_eq!(input.len(), 3);
        // No freeform tool offered: the output goes as recorded.
        assert_eq!(input[1], serde_json::from_str::<Value>(out).expect("JSON"));
        assert_eq!(input[2]["content"][0]["text"], COMPACTION_PROMPT);
    }

    #[test]
    fn a_recorded_prefix_is_not_added_again() {
        // 0.171.0/model_switch: the compaction's replacement_history keeps the code-mode prefix,
        // with the model's own instructions.
        let input = [
            r#"{"type":"additional_tools","id":"at_1","role":"developer","tools":[]}"#,
            r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"Own."}]}"#,
        ];
        assert_eq!(recorded_prefix(&input, Some("Base.")), (true, true));
        let message = r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"Base."}]}"#;
        assert_eq!(recorded_prefix(&[message], Some("Base.")), (false, true));
        assert_eq!(recorded_prefix(&[message], Some("Other.")), (false, false));
    }

    #[test]
    fn model_settings_no_recorded_request_tells_are_null_and_named() {
        let (value, compiled) = plain(Build::V0_104, "gpt-9");
        assert_eq!(value["parallel_tool_calls"], Value::Null);
        assert_eq!(value["reasoning"]["effort"], Value::Null);
        assert_eq!(value["text"]["verbosity"], Value::Null);
        for part in ["parallel_tool_calls", "reasoning.effort", "text.verbosity"] {
            assert!(named(&compiled).contains(&part), "{part}");
        }
        // No known build: the generic shape, itself named.
        let (_, compiled) = body(None, &context("gpt-5.5"), Some(vec![]), ("B", META), None);
        assert!(named(&compiled).contains(&"request shape"));
        assert_eq!(compiled.build, None);
    }
}

//! What each generation of Codex builds puts in a request, and how a turn tells which
//! generation wrote it: the one place for per-build and per-model request rules.
//!
//! A rollout records `cli_version` only in `session_meta` (the build that created the session);
//! a session resumed by a newer build is sent in the newer build's shape. So the shape of each
//! step's request is told from that step's own `turn_context` line, which every build writes
//! with its own set of keys, and from the `thread_settings_applied` events before it.
//!
//! Every rule here is inferred from the requests real builds sent, recorded in
//! `tests/conformance/<version>/<scenario>/` (CONFORMANCE.md); each cites the case that shows it.
//! What the rules cannot tell is `null` in the compiled body and named in its approximations.

use serde_json::Value;

use crate::agents::codex::model::{Event, EventKind, RecordKind, TurnContext};
use crate::agents::codex::session::Session;

mod models;
pub use models::{
    ModelRules, TurnRules, model_rules, model_rules_in, table_build_of_tools, turn_model_rules,
};

/// A generation of Codex builds that send requests of the same shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Build {
    /// 0.58–0.77: `turn_context` has no `turn_id`.
    V0_58,
    /// 0.104: `turn_context` has `turn_id`, not `current_date`.
    V0_104,
    /// 0.122: `current_date`, not `permission_profile`.
    V0_122,
    /// 0.141: `permission_profile`, not `comp_hash`.
    V0_141,
    /// 0.152: `comp_hash`, not `root_turn_id`.
    V0_152,
    /// 0.162–0.171: `root_turn_id`.
    V0_162,
}

impl Build {
    /// The recorded builds this generation stands for.
    pub fn name(self) -> &'static str {
        match self {
            Build::V0_58 => "0.58-0.77",
            Build::V0_104 => "0.104",
            Build::V0_122 => "0.122",
            Build::V0_141 => "0.141",
            Build::V0_152 => "0.152",
            Build::V0_162 => "0.162-0.171",
        }
    }

    /// What in the `turn_context` identifies it.
    pub fn evidence(self) -> &'static str {
        match self {
            Build::V0_58 => "turn_context without turn_id",
            Build::V0_104 => "turn_context with turn_id, without current_date",
            Build::V0_122 => "turn_context with current_date, without permission_profile",
            Build::V0_141 => "turn_context with permission_profile, without comp_hash",
            Build::V0_152 => "turn_context with comp_hash, without root_turn_id",
            Build::V0_162 => "turn_context with root_turn_id",
        }
    }

    /// A recorded case of the generation.
    pub fn case(self) -> &'static str {
        match self {
            Build::V0_58 => "tests/conformance/0.58.0/tool_calls",
            Build::V0_104 => "tests/conformance/0.104.0/tool_calls",
            Build::V0_122 => "tests/conformance/0.122.0/tool_calls",
            Build::V0_141 => "tests/conformance/0.141.0/tool_calls",
            Build::V0_152 => "tests/conformance/0.152.1/tool_calls",
            Build::V0_162 => "tests/conformance/0.162.1/tool_calls",
        }
    }

    /// The newest recorded build of the generation (`major.minor.patch`).
    fn newest_recorded(self) -> [u64; 3] {
        match self {
            Build::V0_58 => [0, 77, 0],
            Build::V0_104 => [0, 104, 0],
            Build::V0_122 => [0, 122, 0],
            Build::V0_141 => [0, 141, 0],
            Build::V0_152 => [0, 152, 1],
            Build::V0_162 => [0, 171, 0],
        }
    }

    /// Whether a turn of this shape in a session created by `cli_version` was written by a
    /// build newer than any recorded one of the shape: a turn is written by the creating build or
    /// a newer one (resume), so a creating build past the shape's newest recorded build (0.80.0
    /// writes 0.58-0.77's `turn_context`) means the rules are applied unverified.
    pub fn unrecorded(self, cli_version: &str) -> bool {
        version_parts(cli_version).is_some_and(|v| v > self.newest_recorded())
    }

    /// Tell the generation from a `turn_context` payload's keys (newest evidence first).
    pub fn identify(turn_context: &TurnContext) -> Option<Build> {
        let has = |key: &str| turn_context.has_key(key);
        Some(if has("root_turn_id") {
            Build::V0_162
        } else if has("comp_hash") {
            Build::V0_152
        } else if has("permission_profile") {
            Build::V0_141
        } else if has("current_date") {
            Build::V0_122
        } else if has("turn_id") {
            Build::V0_104
        } else if has("model") && has("approval_policy") && has("sandbox_policy") {
            Build::V0_58
        } else {
            return None;
        })
    }

    /// `stream` comes second, right after `model` (0.162.1/tool_calls); before, it follows
    /// `store`.
    pub fn stream_second(self) -> bool {
        self >= Build::V0_162
    }

    /// The base instructions travel as the first input item, a developer message, instead of
    /// the `instructions` field (0.162.1/tool_calls).
    pub fn instructions_as_message(self) -> bool {
        self >= Build::V0_162
    }

    /// `client_metadata` is sent (0.122.0/tool_calls): an installation id no rollout records,
    /// and from 0.141 a key order that is random per request.
    pub fn sends_client_metadata(self) -> bool {
        self >= Build::V0_122
    }

    /// The `--output-schema` schema is recorded (`turn_context.final_output_json_schema`) only
    /// by 0.104 and 0.122 (0.104.0/output_schema); the others send `text.format` without
    /// recording it (0.58.0/output_schema, 0.141.0/output_schema, 0.171.0/output_schema).
    pub fn records_output_schema(self) -> bool {
        matches!(self, Build::V0_104 | Build::V0_122)
    }

    /// Whether this build's tools differ between two sandbox policies, where the recordings
    /// tell: 0.58-0.77 send the same tools under danger-full-access, read-only and
    /// workspace-write (0.58.0/sandbox_change, 0.77.0/sandbox_change); 0.104+ differ in
    /// web_search's `external_web_access` alone, true under danger-full-access only
    /// (0.104.0/sandbox_change to 0.171.0/sandbox_change: read-only and workspace-write share
    /// their tools). `None` for a policy no recording has.
    pub fn tools_follow_sandbox(self, before: &str, after: &str) -> Option<bool> {
        const RECORDED: [&str; 3] = ["danger-full-access", "read-only", "workspace-write"];
        if !RECORDED.contains(&before) || !RECORDED.contains(&after) {
            return None;
        }
        let full = |policy: &str| policy == "danger-full-access";
        Some(self >= Build::V0_104 && full(before) != full(after))
    }

    /// The checklist bullet these builds remove from the base instructions before sending them
    /// (0.152.1/tool_calls: `instructions` is `session_meta.base_instructions` without it, in
    /// every recorded request of 0.152.1, 0.162.1 and 0.171.0, none of which offers a plan tool).
    pub fn removed_instructions(self) -> Option<&'static str> {
        (self >= Build::V0_152).then_some(CHECKLIST_BULLET)
    }
}

/// `major.minor.patch` of a version such as `0.77.0-alpha.1`.
fn version_parts(version: &str) -> Option<[u64; 3]> {
    let mut parts = version
        .split(['-', '+'])
        .next()
        .unwrap_or("")
        .split('.')
        .map(|p| p.parse::<u64>().ok());
    match [parts.next(), parts.next(), parts.next()] {
        [Some(Some(a)), Some(Some(b)), Some(Some(c))] => Some([a, b, c]),
        _ => None,
    }
}

/// Whether this build re-renders structured shell outputs before sending them when the
/// freeform `apply_patch` tool is offered (Codex's `Prompt::get_formatted_input`): 0.58–0.122
/// do (`0.58.0/tool_calls`, `0.122.0/apply_patch`: recorded `{"output":..,"metadata":..}`, sent
/// `Exit code: 0\nWall time: 0 seconds\nOutput:\n...`); 0.141+ send outputs as recorded
/// (`0.58.0/upgrade_to_0.171.0`: 0.171 sends a 0.58 output's stored JSON).
pub fn formats_shell_outputs(build: Build) -> bool {
    build <= Build::V0_122
}

/// Every recorded model of 0.58–0.122 was offered the freeform `apply_patch` tool (a `custom`
/// tool) in every request but compaction requests (`0.58.0/tool_calls`, `0.58.0/model_switch`,
/// `0.104.0/model_switch`, `0.122.0/tool_calls`), so without `--tools` outputs are rendered
/// when the model is one of them.
pub const SHELL_OUTPUTS_CASE: &str = "tests/conformance/0.58.0/tool_calls";

/// Whether a tool list (compact JSON specs) offers the freeform `apply_patch` tool.
pub fn offers_freeform_apply_patch(tools: &[String]) -> bool {
    tools.iter().any(|tool| {
        serde_json::from_str::<Value>(tool)
            .is_ok_and(|t| t["type"] == "custom" && t["name"] == "apply_patch")
    })
}

/// The input as Codex sends it when it re-renders shell outputs: each output of a shell-like
/// call (`local_shell_call`; `function_call` `shell`, `container.exec` or `apply_patch`;
/// `custom_tool_call` `apply_patch`) whose text is `{"output":S,"metadata":{"exit_code":I,
/// "duration_seconds":F}}` becomes `Exit code: I\nWall time: F seconds\n[Total output lines:
/// N\n]Output:\nS`. `None` when no item changes.
pub fn format_shell_outputs(input: &[&str]) -> Option<Vec<String>> {
    let mut calls: Vec<String> = Vec::new();
    let mut changed: Vec<(usize, String)> = Vec::new();
    for (index, text) in input.iter().enumerate() {
        if !text.contains("call") {
            continue;
        }
        let Ok(Value::Object(mut item)) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let type_ = item.get("type").and_then(Value::as_str).unwrap_or("");
        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        match type_ {
            "local_shell_call" => {
                if let Some(id) = call_id.or_else(|| item.get("id")?.as_str().map(str::to_string)) {
                    calls.push(id);
                }
            }
            "function_call" if matches!(name, "shell" | "container.exec" | "apply_patch") => {
                calls.extend(call_id);
            }
            "custom_tool_call" if name == "apply_patch" => calls.extend(call_id),
            "function_call_output" | "custom_tool_call_output" => {
                let Some(call_id) = call_id else { continue };
                let Some(position) = calls.iter().position(|c| *c == call_id) else {
                    continue;
                };
                calls.remove(position);
                let Some(formatted) = item
                    .get("output")
                    .and_then(Value::as_str)
                    .and_then(structured_shell_output)
                else {
                    continue;
                };
                item.insert("output".into(), Value::String(formatted));
                changed.push((index, Value::Object(item).to_string()));
            }
            _ => {}
        }
    }
    if changed.is_empty() {
        return None;
    }
    let mut out: Vec<String> = input.iter().map(|t| t.to_string()).collect();
    for (index, text) in changed {
        out[index] = text;
    }
    Some(out)
}

/// Codex's `build_structured_output` of an `ExecOutputJson` text.
fn structured_shell_output(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        exit_code: i32,
        duration_seconds: f32,
    }
    #[derive(serde::Deserialize)]
    struct ExecOutput {
        output: String,
        metadata: Metadata,
    }
    let parsed: ExecOutput = serde_json::from_str(text).ok()?;
    let mut sections = vec![
        format!("Exit code: {}", parsed.metadata.exit_code),
        format!("Wall time: {} seconds", parsed.metadata.duration_seconds),
    ];
    let mut output = parsed.output.as_str();
    if let Some(after) = output.strip_prefix("Total output lines: ")
        && let Some((count, rest)) = after.split_once('\n')
        && !count.is_empty()
        && count.bytes().all(|b| b.is_ascii_digit())
    {
        sections.push(format!("Total output lines: {count}"));
        output = rest.strip_prefix('\n').unwrap_or(rest);
    }
    sections.push("Output:".to_string());
    sections.push(output.to_string());
    Some(sections.join("\n"))
}

/// The checkpoint prompt a compaction request ends with, as a user message: the same text in
/// every recorded build (`tests/conformance/0.58.0/auto_compaction` request #1 through
/// `0.171.0/auto_compaction` #1, and `0.152.1/model_switch` #2).
pub const COMPACTION_PROMPT: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a \
handoff summary for another LLM that will resume the task.\n\nInclude:\n- Current progress and key \
decisions made\n- Important context, constraints, or user preferences\n- What remains to be done \
(clear next steps)\n- Any critical data, examples, or references needed to continue\n\nBe concise, \
structured, and focused on helping the next LLM seamlessly continue the work.\n";

/// The case of the compaction-request rules: `tools: []`, `parallel_tool_calls: false`, the
/// prompt message last.
pub const COMPACTION_CASE: &str = "tests/conformance/0.58.0/auto_compaction";

/// The prompt message a compaction request appends to the history.
pub fn compaction_prompt_item() -> String {
    format!(
        "{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":{}}}]}}",
        Value::String(COMPACTION_PROMPT.to_string())
    )
}

const CHECKLIST_BULLET: &str = "- If you create a checklist or task list, you update item statuses \
incrementally as each item is completed rather than marking every item done only at the end.\n";

/// What decides the shape of one step's request, read from the rollout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestShape {
    pub build: Option<Build>,
    /// `reasoning_summary` of the last `thread_settings_applied` event before the step (0.152+
    /// record the configured summary there, not in `turn_context`: 0.152.1/effort_change).
    pub thread_summary: Option<String>,
    /// The session was created by a build newer than the recorded ones of this shape
    /// ([`Build::unrecorded`]).
    pub unrecorded_build: bool,
    /// The recorded build (as the model table names it) whose definitions apply, where the
    /// generation's builds define models differently and the rollout tells which wrote the turn:
    /// a 0.58-0.77 turn of a session 0.77 or newer created (a turn is written by the creating
    /// build or a newer one) is 0.77's. 0.58's and 0.77's `turn_context` keys are the same.
    pub table_build: Option<&'static str>,
}

/// Read the shape of a step's request from its `turn_context` line and the events before it.
pub fn request_shape(session: &Session, step: usize) -> RequestShape {
    let rollout = &session.rollout;
    let Some(context) = session.replay.steps[step].context else {
        return RequestShape::default();
    };
    let build = match &rollout.records[context].kind {
        RecordKind::TurnContext(turn_context) => Build::identify(turn_context),
        _ => None,
    };
    let step_line = session.replay.steps[step].line;
    let mut thread_summary = None;
    if build.is_some_and(|b| b >= Build::V0_152) {
        thread_summary = rollout
            .records
            .iter()
            .rev()
            .filter(|record| record.line < step_line)
            .find_map(|record| match &record.kind {
                RecordKind::Event(Event {
                    kind: EventKind::ThreadSettingsApplied { reasoning_summary },
                    ..
                }) => Some(reasoning_summary.as_deref().map(str::to_string)),
                _ => None,
            })
            .flatten();
    }
    let cli_version = rollout.meta.as_ref().and_then(|m| m.cli_version.as_deref());
    let unrecorded_build = match (build, cli_version) {
        (Some(build), Some(version)) => build.unrecorded(version),
        _ => false,
    };
    let table_build = (build == Some(Build::V0_58)
        && cli_version.and_then(version_parts) >= Some([0, 77, 0]))
    .then_some("0.77.0");
    RequestShape {
        build,
        thread_summary,
        unrecorded_build,
        table_build,
    }
}

/// Whether a step's request carries the base instructions in its `instructions` field, ahead
/// of the tools: not from 0.162 (a developer message leads the input: 0.162.1/tool_calls), nor
/// for a code-mode model, which has no `instructions` key (0.152.1/model_switch). A turn no known
/// build wrote is taken to, as the generic shape sends them.
pub fn instructions_before_tools(session: &Session, step: usize) -> bool {
    let Some(build) = request_shape(session, step).build else {
        return true;
    };
    let code_mode = build >= Build::V0_152
        && session
            .step_context(step)
            .and_then(|c| c.model.as_deref())
            .and_then(|slug| model_rules_in(build, slug))
            .is_some_and(|m| m.code_mode);
    !build.instructions_as_message() && !code_mode
}

/// The id Codex gives an item it derives from the thread (0.152+): `uuid5(uuid5(OID, thread
/// id), bytes)`. For the base-instructions message the bytes are its text (`msg_` ids in every
/// 0.162.1 and 0.171.0 request), for a code-mode `additional_tools` item the tools' compact JSON
/// (`at_` ids in 0.152.1/model_switch and 0.162.1/model_switch).
pub fn derived_id(thread_id: &str, bytes: &[u8]) -> String {
    let namespace = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, thread_id.as_bytes());
    uuid::Uuid::new_v5(&namespace, bytes).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(keys: &[&str]) -> TurnContext {
        let build_keys = TurnContext::BUILD_KEYS
            .iter()
            .enumerate()
            .filter(|(_, key)| keys.contains(key))
            .fold(0, |bits, (k, _)| bits | 1 << k);
        TurnContext {
            build_keys,
            ..TurnContext::default()
        }
    }

    #[test]
    fn generations_are_told_by_their_newest_key() {
        let base = [
            "cwd",
            "approval_policy",
            "sandbox_policy",
            "model",
            "summary",
        ];
        assert_eq!(Build::identify(&keys(&base)), Some(Build::V0_58));
        let mut k = base.to_vec();
        k.push("turn_id");
        assert_eq!(Build::identify(&keys(&k)), Some(Build::V0_104));
        k.push("current_date");
        assert_eq!(Build::identify(&keys(&k)), Some(Build::V0_122));
        k.push("permission_profile");
        assert_eq!(Build::identify(&keys(&k)), Some(Build::V0_141));
        k.push("comp_hash");
        assert_eq!(Build::identify(&keys(&k)), Some(Build::V0_152));
        k.push("root_turn_id");
        assert_eq!(Build::identify(&keys(&k)), Some(Build::V0_162));
        assert_eq!(Build::identify(&keys(&["cwd"])), None);
    }

    #[test]
    fn builds_past_a_shapes_newest_recording_are_unrecorded() {
        assert!(!Build::V0_58.unrecorded("0.58.0"));
        assert!(!Build::V0_58.unrecorded("0.77.0"));
        assert!(Build::V0_58.unrecorded("0.80.0"));
        assert!(!Build::V0_104.unrecorded("0.104.0-alpha.1"));
        assert!(Build::V0_152.unrecorded("0.153.0"));
        assert!(!Build::V0_162.unrecorded("0.171.0"));
        assert!(Build::V0_162.unrecorded("1.0.0"));
        assert!(!Build::V0_162.unrecorded("dev"));
    }

    #[test]
    fn structured_shell_outputs_are_rendered_as_codex_sends_them() {
        // 0.58.0/tool_calls: recorded and sent texts of the same output.
        let input = [
            r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#,
            r#"{"type":"function_call_output","call_id":"c1","output":"{\"output\":\".\\n..\\nnotes.txt\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}"#,
            r#"{"type":"function_call_output","call_id":"c2","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}"#,
        ];
        let out = format_shell_outputs(&input).expect("one output changes");
        assert_eq!(out[0], input[0]);
        assert_eq!(
            out[1],
            r#"{"type":"function_call_output","call_id":"c1","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\n.\n..\nnotes.txt\n"}"#
        );
        // No shell call before it: as recorded.
        assert_eq!(out[2], input[2]);
        let total = structured_shell_output(
            r#"{"output":"Total output lines: 3\n\na\nb\nc","metadata":{"exit_code":1,"duration_seconds":1.5}}"#,
        );
        assert_eq!(
            total.as_deref(),
            Some("Exit code: 1\nWall time: 1.5 seconds\nTotal output lines: 3\nOutput:\na\nb\nc")
        );
        assert_eq!(structured_shell_output("plain text"), None);
    }

    /// (parallel_tool_calls, default effort, verbosity, 0.141 summary, code mode) as the
    /// recorded requests of each model sent them (the cases of `models::MODEL_CASES`).
    type Sent = (
        bool,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
        bool,
    );

    fn sent(slug: &str) -> Option<Sent> {
        model_rules(slug).map(|m| {
            (
                m.parallel_tool_calls,
                m.default_effort,
                m.verbosity,
                m.summary_0_141,
                m.code_mode,
            )
        })
    }

    #[test]
    fn the_table_gives_what_the_recorded_models_sent() {
        // 0.58.0/tool_calls and model_switch: no parallel calls (0.58 sends no default effort,
        // the catalogs' `medium` shows from 0.104 on, and no verbosity).
        assert_eq!(
            sent("gpt-5.1-codex"),
            Some((false, Some("medium"), None, None, false))
        );
        assert_eq!(
            sent("gpt-5.1-codex-mini"),
            Some((false, Some("medium"), None, None, false))
        );
        // 0.141.0/model_switch, 0.141.0/tool_calls, 0.171.0/tool_calls.
        assert_eq!(
            sent("gpt-5.2"),
            Some((true, Some("medium"), Some("low"), Some("auto"), false))
        );
        assert_eq!(
            sent("gpt-5.3-codex"),
            Some((true, Some("medium"), Some("low"), None, false))
        );
        assert_eq!(
            sent("gpt-5.5"),
            Some((true, Some("medium"), Some("low"), None, false))
        );
        // 0.152.1/model_switch: code mode, no parallel calls.
        assert_eq!(
            sent("gpt-5.6-sol"),
            Some((false, Some("low"), Some("low"), None, true))
        );
        // The model_switch_<slug> cases, which the table was not fitted to.
        assert_eq!(
            sent("gpt-5.2-codex"),
            Some((true, Some("medium"), None, None, false))
        );
        assert_eq!(
            sent("gpt-5.4-mini"),
            Some((true, Some("medium"), Some("medium"), None, false))
        );
        assert_eq!(
            sent("gpt-daybreak-red-latest"),
            Some((false, Some("medium"), Some("high"), None, true))
        );
        assert_eq!(
            sent("gpt-6.1-sol"),
            Some((false, Some("low"), Some("low"), None, true))
        );
        assert_eq!(
            model_rules("gpt-6.1-sol").map(|m| m.case),
            Some("tests/conformance/0.171.0/model_switch_gpt-6.1-sol")
        );
    }

    #[test]
    fn slugs_without_one_answer_have_no_rules() {
        // Not in any bundled catalog.
        assert_eq!(model_rules("gpt-4.1"), None);
        // No freeform apply_patch tool (0.104.0's catalog): callers assume one of a known model.
        assert_eq!(model_rules("gpt-5"), None);
        // 0.58's gpt-5.1 family sends no parallel calls, 0.77's does.
        assert_eq!(model_rules_in(Build::V0_58, "gpt-5.1"), None);
        // Both families have gpt-5.2's effort (0.77.0/model_switch_gpt-5.2 sent `medium`).
        let family = model_rules_in(Build::V0_58, "gpt-5.1-codex").expect("0.58 and 0.77 agree");
        assert_eq!(
            (family.parallel_tool_calls, family.default_effort),
            (false, None)
        );
        // 0.162.1 and 0.171.0 give gpt-6.1-sol other context windows: the rules stay, the
        // window does not.
        let sol = model_rules_in(Build::V0_162, "gpt-6.1-sol").expect("same request rules");
        assert_eq!(
            (sol.default_effort, sol.context_window),
            (Some("low"), None)
        );
        assert_eq!(
            model_rules_in(Build::V0_152, "gpt-daybreak-red-latest").and_then(|m| m.context_window),
            Some(372_000)
        );
    }

    #[test]
    fn derived_ids_are_uuid5_in_a_thread_namespace() {
        // Python: uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_OID, thread), "You are Codex"). That this
        // is Codex's derivation is checked against every recorded request by the conformance
        // test (tests/cli/conformance.rs).
        let id = derived_id("01a235fd-f41d-7e20-b589-39b66bf535d4", b"You are Codex");
        assert_eq!(id, "dea1f21e-6197-5681-a6f8-f02d5e365ad2");
    }
}

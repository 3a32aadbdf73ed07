//! Codex's settings: the `turn_context` fields a request depends on, and which part of the
//! request each one feeds (what `AgentSession::setting_changes`, `unrecorded_part` and
//! `setting_effect` answer for Codex).

use crate::agents::codex::content::is_context_message;
use crate::agents::codex::model::TurnContext;
use crate::agents::codex::normalize::ViewEntry;
use crate::agents::codex::rules::request_shape;
use crate::agents::codex::session::Session;
use crate::agents::{SettingChange, UnrecordedEffect};
use crate::core::request::Part;

/// Which part of the request a turn-context field feeds: why its change can break the prefix.
pub fn field_effect(field: &str) -> &'static str {
    match field {
        // Some builds' tools follow the sandbox (rules.rs, `Build::tools_follow_sandbox`); no
        // recording shows whether any follow the approval policy.
        "sandbox_policy" => "tools depend on it, not recorded",
        "approval_policy" => "tools may depend on it, not recorded",
        "model" | "effort" | "summary" | "verbosity" => "request parameters depend on it",
        "base_instructions" => "instructions depend on it",
        "final_output_json_schema" => "text.format depends on it",
        _ => "the context Codex sends depends on it",
    }
}

/// The recorded turn-context fields that differ between two requests' contexts, in a fixed
/// order (tools-affecting first). Nothing when either context is missing: no record, no cause.
pub fn context_changes(
    before: Option<&TurnContext>,
    after: Option<&TurnContext>,
) -> Vec<SettingChange> {
    let (Some(a), Some(b)) = (before, after) else {
        return Vec::new();
    };
    let fields: [(&'static str, &Option<String>, &Option<String>); 9] = [
        ("sandbox_policy", &a.sandbox, &b.sandbox),
        ("approval_policy", &a.approval_policy, &b.approval_policy),
        ("model", &a.model, &b.model),
        ("effort", &a.effort, &b.effort),
        ("summary", &a.summary, &b.summary),
        ("verbosity", &a.verbosity, &b.verbosity),
        (
            "base_instructions",
            &a.base_instructions,
            &b.base_instructions,
        ),
        (
            "final_output_json_schema",
            &a.output_schema,
            &b.output_schema,
        ),
        ("cwd", &a.cwd, &b.cwd),
    ];
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "absent".into());
    fields
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(field, x, y)| SettingChange {
            field,
            before: show(x),
            after: show(y),
        })
        .collect()
}

/// How a turn-context field's change between two steps shows in a part the rollout does not
/// record: Codex's tools, which some builds derive from the sandbox policy (rules.rs,
/// [`tools_follow_sandbox`](crate::agents::codex::rules::Build::tools_follow_sandbox)). The build of the later request decides; where it is
/// unknown, unverified or not the earlier request's, or no recording changed the field (the
/// approval policy), the tools may change.
pub fn unrecorded_effect(
    before: &Session,
    step: usize,
    after: &Session,
    after_step: usize,
    change: &SettingChange,
) -> Option<UnrecordedEffect> {
    if !matches!(change.field, "sandbox_policy" | "approval_policy") {
        return None;
    }
    let (was, now) = (
        request_shape(before, step),
        request_shape(after, after_step),
    );
    let changes = match now.build {
        Some(build)
            if change.field == "sandbox_policy"
                && was.build == now.build
                && !now.unrecorded_build =>
        {
            build.tools_follow_sandbox(&change.before, &change.after)
        }
        _ => None,
    };
    Some(UnrecordedEffect {
        part: Part::Tools,
        changes,
        why: match changes {
            Some(true) => field_effect(change.field),
            Some(false) => "this build's tools do not depend on it",
            None => "tools may change with it, not recorded",
        },
    })
}

impl Session {
    /// Whether a model-view entry is context Codex injects (environment, AGENTS.md, …) rather
    /// than the conversation.
    pub fn is_context_entry(&self, entry: &ViewEntry) -> bool {
        is_context_message(self.view_item(entry), || self.view_json(entry))
    }
}

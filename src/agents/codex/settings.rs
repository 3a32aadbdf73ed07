//! Codex's settings: the `turn_context` fields a request depends on, and which part of the
//! request each one feeds. `cache` and `diff` ask here what a changed setting explains; they do
//! not know Codex's fields.

use crate::agents::codex::compile::params;
use crate::agents::codex::content::is_context_message;
use crate::agents::codex::model::TurnContext;
use crate::agents::codex::normalize::ViewEntry;
use crate::agents::codex::session::Session;
use crate::core::request::Part;

/// A field of the recorded turn context that differs between two requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextChange {
    /// The `turn_context` field, as Codex names it (`sandbox_policy`, `model`, …).
    pub field: &'static str,
    pub before: String,
    pub after: String,
}

/// Which part of the request a turn-context field feeds: why its change can break the prefix.
pub fn field_effect(field: &str) -> &'static str {
    match field {
        "sandbox_policy" | "approval_policy" => "tools depend on it, not recorded",
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
) -> Vec<ContextChange> {
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
        .map(|(field, x, y)| ContextChange {
            field,
            before: show(x),
            after: show(y),
        })
        .collect()
}

impl ContextChange {
    /// The part of the request this setting feeds when the session does not record that part
    /// itself, so that the setting's change is the only sign of the part's: Codex's tools
    /// follow its sandbox and approval policies.
    pub fn unrecorded_part(&self) -> Option<Part> {
        matches!(self.field, "sandbox_policy" | "approval_policy").then_some(Part::Tools)
    }

    /// Which part of the request the setting feeds (see [`field_effect`]).
    pub fn effect(&self) -> &'static str {
        field_effect(self.field)
    }
}

impl Session {
    /// The settings that differ between this session's step `step` and `other`'s step
    /// `other_step`.
    pub fn setting_changes(
        &self,
        step: usize,
        other: &Session,
        other_step: usize,
    ) -> Vec<ContextChange> {
        context_changes(self.step_context(step), other.step_context(other_step))
    }

    /// The model a step's request named, when its turn context records one.
    pub fn step_model(&self, step: usize) -> Option<&str> {
        self.step_context(step).and_then(|c| c.model.as_deref())
    }

    /// The reasoning effort a step's request asked for, when its turn context records one.
    pub fn step_effort(&self, step: usize) -> Option<&str> {
        self.step_context(step).and_then(|c| c.effort.as_deref())
    }

    /// A step's request parameters, as compact JSON (what the `params` fingerprint hashes).
    pub fn request_params(&self, step: usize) -> String {
        params(self.step_context(step))
    }

    /// Whether a model-view entry is context Codex injects (environment, AGENTS.md, …) rather
    /// than the conversation.
    pub fn is_context_entry(&self, entry: &ViewEntry) -> bool {
        is_context_message(self.view_item(entry), || self.view_json(entry))
    }
}

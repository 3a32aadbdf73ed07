//! Codex's answers to what the stages ask a session ([`AgentSession`]).

use crate::agents::codex::compile::params;
use crate::agents::codex::session::Session;
use crate::agents::codex::{incremental, invariants, rules, settings};
use crate::agents::{AgentSession, SettingChange, UnrecordedEffect};
use crate::fingerprint::Plan;
use crate::providers::CacheModel;
use crate::providers::openai::AutomaticPrefixCache;

impl AgentSession for Session {
    fn name(&self) -> &str {
        &self.rollout.name
    }

    /// `session_meta.id`, which Codex sends as the prompt cache key.
    fn id(&self) -> Option<&str> {
        self.rollout.meta.as_ref()?.id.as_deref()
    }

    fn forked_from(&self) -> Option<&str> {
        self.rollout.meta.as_ref()?.forked_from_id.as_deref()
    }

    /// Codex talks to OpenAI's Responses API.
    fn cache_model(&self) -> &'static dyn CacheModel {
        &AutomaticPrefixCache
    }

    fn step_model(&self, step: usize) -> Option<&str> {
        self.step_context(step).and_then(|c| c.model.as_deref())
    }

    fn step_effort(&self, step: usize) -> Option<&str> {
        self.step_context(step).and_then(|c| c.effort.as_deref())
    }

    fn request_params(&self, step: usize) -> String {
        params(self.step_context(step))
    }

    fn setting_changes(&self, step: usize, other: &Self, other_step: usize) -> Vec<SettingChange> {
        settings::context_changes(self.step_context(step), other.step_context(other_step))
    }

    fn unrecorded_effect(
        &self,
        step: usize,
        other: &Self,
        other_step: usize,
        change: &SettingChange,
    ) -> Option<UnrecordedEffect> {
        settings::unrecorded_effect(self, step, other, other_step, change)
    }

    fn setting_effect(&self, setting: &str) -> &'static str {
        settings::field_effect(setting)
    }

    /// The instructions when the build sends them in `instructions`, ahead of the tools
    /// (`0.104.0/auto_compaction`: its compaction request had its instructions cached, 3072
    /// tokens); nothing when they travel in the input, after the tools (0.162+, code mode:
    /// `0.171.0/model_switch`, none cached).
    fn compaction_request_prefix(&self, plan: &Plan, step: usize) -> usize {
        if rules::instructions_before_tools(self, step) {
            plan.instruction_tokens[step]
        } else {
            0
        }
    }

    fn incremental_break(&self, plan: &Plan, previous: usize, k: usize) -> Option<String> {
        incremental::incremental_break(self, plan, previous, k)
    }

    fn model_view_violation(&self) -> Option<String> {
        invariants::model_view_violation(self)
    }

    fn repeated_call_ids(&self) -> Vec<String> {
        invariants::repeated_call_ids(self)
    }
}

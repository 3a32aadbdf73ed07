//! Codex's answers to what the stages ask a session ([`AgentSession`]).

use crate::agents::codex::compile::params;
use crate::agents::codex::normalize::Origin;
use crate::agents::codex::plan::{codex, view};
use crate::agents::codex::render::page;
use crate::agents::codex::session::Session;
use crate::agents::codex::{incremental, invariants, rules, settings};
use crate::agents::{
    AgentSession, Entry, Header, HistoryRow, Reset, SettingChange, UnrecordedEffect,
};
use crate::core::steps::{Step, Turn};
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

    /// A Codex fork names its parent (`forked_from_id`), and `diff` names it as such.
    fn copy_of(&self, _parent: &Self) -> Option<&'static str> {
        None
    }

    /// Codex talks to OpenAI's Responses API.
    fn cache_model(&self) -> &'static dyn CacheModel {
        &AutomaticPrefixCache
    }

    fn header(&self) -> Header<'_> {
        let rollout = &self.rollout;
        let meta = rollout.meta.as_ref();
        let mut lines = vec![(
            "file",
            format!(
                "{} ({}, era {})",
                rollout.name,
                rollout.generation.name(),
                rollout.era()
            ),
        )];
        let mut session = meta
            .and_then(|m| m.id.clone())
            .unwrap_or_else(|| "(no session_meta)".to_string());
        if let Some(version) = meta.and_then(|m| m.cli_version.as_deref()) {
            session.push_str(&format!("  cli {version}"));
        }
        if let Some(forked) = meta.and_then(|m| m.forked_from_id.as_deref()) {
            session.push_str(&format!("  forked from {forked}"));
        }
        lines.push(("session", session));
        if let Some(fork) = &self.fork
            && let Some(parent) = &fork.parent
        {
            lines.push((
                "parent",
                format!(
                    "{parent}: the history opens with its {} items before the fork",
                    fork.items
                ),
            ));
        }
        let models = self.models();
        if !models.is_empty() {
            lines.push(("models", models.join(", ")));
        }
        lines.push((
            "history",
            format!(
                "{} turns, {} steps, {} lines read, {} skipped",
                self.replay.turns.len(),
                self.replay.steps.len(),
                rollout.records.len(),
                rollout.skipped.len()
            ),
        ));
        Header {
            lines,
            skipped: &rollout.skipped,
            notes: rollout
                .notes
                .iter()
                .map(|(l, n)| (Some(*l), n.as_str()))
                .collect(),
            approximations: self
                .replay
                .approximations
                .iter()
                .map(|(l, n)| (*l, n.as_str()))
                .collect(),
        }
    }

    fn agent_title(&self) -> &'static str {
        "Codex"
    }

    fn agent_name(&self) -> &'static str {
        "codex"
    }

    fn models(&self) -> Vec<String> {
        Session::models(self)
    }

    fn entry_title(&self, plan: &Plan, step: usize, k: usize) -> String {
        let entry = view(plan, step)
            .get(k)
            .expect("invariant: an entry of the step's input");
        page::title(self, entry)
    }

    fn compiled_text(&self, plan: &Plan, step: usize) -> String {
        page::body(self, plan, step)
    }

    fn history_rows(&self) -> (String, Vec<HistoryRow>) {
        (
            "Raw history and model view (the final history)".to_string(),
            page::history(self),
        )
    }

    fn turns(&self) -> &[Turn] {
        &self.replay.turns
    }

    fn steps(&self) -> &[Step] {
        &self.replay.steps
    }

    /// Another epoch: a compaction when a checkpoint was recorded between the two steps, else a
    /// rollback.
    fn reset_between(&self, previous: usize, step: usize) -> Option<Reset> {
        let replay = &self.replay;
        let (before, now) = (&replay.steps[previous], &replay.steps[step]);
        if before.epoch == now.epoch {
            return None;
        }
        let compaction = replay
            .checkpoints
            .iter()
            .any(|c| c.epoch > before.epoch && c.epoch <= now.epoch && c.line <= now.line);
        Some(if compaction {
            Reset::Compaction
        } else {
            Reset::Rollback
        })
    }

    fn checkpoint_line(&self, step: usize) -> Option<usize> {
        let epoch = self.replay.steps[step].epoch;
        self.replay
            .checkpoints
            .iter()
            .rfind(|c| c.epoch <= epoch)
            .map(|c| c.line)
    }

    fn rollbacks_before(&self, step: usize) -> usize {
        let epoch = self.replay.steps[step].epoch;
        self.replay
            .rollbacks
            .iter()
            .filter(|r| r.dropped_turns > 0 && r.epoch <= epoch)
            .count()
    }

    fn fork_parent_lines(&self) -> Option<usize> {
        let link = self.fork.as_ref()?;
        link.parent.as_ref().map(|_| link.parent_lines)
    }

    fn instructions<'a>(&'a self, plan: &'a Plan, step: usize) -> (Option<&'a str>, &'static str) {
        let (text, source) = &codex(plan).instructions[step];
        (text.as_deref(), source.name())
    }

    fn tools<'a>(&'a self, plan: &'a Plan, _step: usize) -> Option<&'a [String]> {
        codex(plan).tools.tools.as_deref()
    }

    fn entry<'a>(&'a self, plan: &'a Plan, step: usize, k: usize) -> Entry<'a> {
        let entry = view(plan, step)
            .get(k)
            .expect("invariant: an entry of the step's input");
        let item = self.view_item(entry);
        Entry {
            json: std::borrow::Cow::Borrowed(self.view_json(entry)),
            kind: &item.type_name,
            role: item.role.as_deref(),
            call_id: item.call_id.as_deref().map(std::borrow::Cow::Borrowed),
            id: item.id.as_deref().map(std::borrow::Cow::Borrowed),
            line: item.line,
            context: self.is_context_entry(entry),
            model_output: item.is_model_output(),
            synthetic: matches!(entry.origin, Origin::Synthetic { .. }),
        }
    }

    /// Every synthetic output in the step's new input sits right after its own call: what Codex
    /// sends for calls that were never answered (an interrupted response, one call or several
    /// of any type), which extends the previous request though not by its output alone.
    fn repairs_in_place(&self, plan: &Plan, step: usize) -> bool {
        let Some(previous) = step.checked_sub(1) else {
            return false;
        };
        let view = view(plan, step);
        let start = plan.views[previous].1;
        (start..view.len()).all(|i| match view[i].origin {
            Origin::Synthetic { call } => {
                i > 0 && matches!(view[i - 1].origin, Origin::Raw(c) if c == call)
            }
            Origin::Raw(_) => true,
        })
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

//! The session the binary loads: the choice between the agents' sessions. It answers the
//! stages as its agent's session does ([`AgentSession`]), so every stage takes it as it takes
//! either agent's.

use crate::AgentSession;
use crate::agents::claude::session::Session as ClaudeSession;
use crate::agents::claude::wire::Given;
use crate::agents::codex::session::Session as CodexSession;
use crate::agents::{Entry, Header, HistoryRow, Reset, SettingChange, UnrecordedEffect};
use crate::core::request::Part;
use crate::core::steps::{Step, Turn};
use crate::fingerprint::{Plan, PlanOptions};
use crate::providers::{CacheModel, PromptView};

/// A loaded session of either agent. (One is loaded per file a command names: the size of the
/// larger variant costs nothing worth a box.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Session {
    /// An OpenAI Codex CLI rollout.
    Codex(CodexSession),
    /// A Claude Code transcript.
    Claude(ClaudeSession),
}

impl From<CodexSession> for Session {
    fn from(session: CodexSession) -> Session {
        Session::Codex(session)
    }
}

impl From<ClaudeSession> for Session {
    fn from(session: ClaudeSession) -> Session {
        Session::Claude(session)
    }
}

impl Session {
    /// The Codex rollout, if it is one.
    pub fn codex(&self) -> Option<&CodexSession> {
        match self {
            Session::Codex(s) => Some(s),
            Session::Claude(_) => None,
        }
    }

    /// The Claude Code transcript, if it is one.
    pub fn claude(&self) -> Option<&ClaudeSession> {
        match self {
            Session::Claude(s) => Some(s),
            Session::Codex(_) => None,
        }
    }

    /// The plan of every step: Codex's from `options` (`--instructions`, `--tools`), Claude
    /// Code's from `given` (`--system`, `--tools`, which its builds before 2.1.3xx do not
    /// record).
    pub fn plan(&self, options: &PlanOptions, given: &Given) -> Plan {
        match self {
            Session::Codex(s) => crate::agents::codex::plan::plan(s, options),
            Session::Claude(s) => {
                crate::agents::claude::session::plan(s, given.clone(), options.threads)
            }
        }
    }
}

/// Each method asked of the session of whichever agent it is.
macro_rules! each {
    ($self:ident, $s:ident => $body:expr) => {
        match $self {
            Session::Codex($s) => $body,
            Session::Claude($s) => $body,
        }
    };
}

impl AgentSession for Session {
    fn name(&self) -> &str {
        each!(self, s => s.name())
    }
    fn id(&self) -> Option<&str> {
        each!(self, s => s.id())
    }
    fn forked_from(&self) -> Option<&str> {
        each!(self, s => s.forked_from())
    }
    fn copy_of(&self, parent: &Self) -> Option<&'static str> {
        match (self, parent) {
            (Session::Claude(b), Session::Claude(a)) => b.copy_of(a),
            (Session::Codex(b), Session::Codex(a)) => b.copy_of(a),
            _ => None,
        }
    }
    fn cache_model(&self) -> &'static dyn CacheModel {
        each!(self, s => s.cache_model())
    }
    fn agent_title(&self) -> &'static str {
        each!(self, s => s.agent_title())
    }
    fn agent_name(&self) -> &'static str {
        each!(self, s => s.agent_name())
    }
    fn models(&self) -> Vec<String> {
        each!(self, s => AgentSession::models(s))
    }
    fn entry_title(&self, plan: &Plan, step: usize, k: usize) -> String {
        each!(self, s => s.entry_title(plan, step, k))
    }
    fn compiled_text(&self, plan: &Plan, step: usize) -> String {
        each!(self, s => s.compiled_text(plan, step))
    }
    fn history_rows(&self) -> (String, Vec<HistoryRow>) {
        each!(self, s => s.history_rows())
    }
    fn header(&self) -> Header<'_> {
        each!(self, s => s.header())
    }
    fn turns(&self) -> &[Turn] {
        each!(self, s => s.turns())
    }
    fn steps(&self) -> &[Step] {
        each!(self, s => s.steps())
    }
    fn reset_between(&self, previous: usize, step: usize) -> Option<Reset> {
        each!(self, s => s.reset_between(previous, step))
    }
    fn checkpoint_line(&self, step: usize) -> Option<usize> {
        each!(self, s => s.checkpoint_line(step))
    }
    fn rollbacks_before(&self, step: usize) -> usize {
        each!(self, s => s.rollbacks_before(step))
    }
    fn fork_parent_lines(&self) -> Option<usize> {
        each!(self, s => s.fork_parent_lines())
    }
    fn instructions<'a>(&'a self, plan: &'a Plan, step: usize) -> (Option<&'a str>, &'static str) {
        each!(self, s => s.instructions(plan, step))
    }
    fn tools<'a>(&'a self, plan: &'a Plan, step: usize) -> Option<&'a [String]> {
        each!(self, s => s.tools(plan, step))
    }
    fn prompt(&self, step: usize) -> Option<Box<dyn PromptView + '_>> {
        each!(self, s => s.prompt(step))
    }
    fn copied(&self, step: usize) -> bool {
        each!(self, s => s.copied(step))
    }
    fn compaction_prompt_items(&self, step: usize) -> usize {
        each!(self, s => s.compaction_prompt_items(step))
    }
    fn judged(&self, step: usize) -> bool {
        each!(self, s => s.judged(step))
    }
    fn history_from_elsewhere(&self, step: usize) -> bool {
        each!(self, s => s.history_from_elsewhere(step))
    }
    fn part_name(&self, part: Part) -> &'static str {
        each!(self, s => s.part_name(part))
    }
    fn entry_location(&self, plan: &Plan, step: usize, k: usize) -> Option<String> {
        each!(self, s => s.entry_location(plan, step, k))
    }
    fn known_rewrite(&self, previous: usize, step: usize) -> Option<(&'static str, &'static str)> {
        each!(self, s => s.known_rewrite(previous, step))
    }
    fn unrecorded_parts(&self, plan: &Plan, step: usize, upto: usize) -> Vec<String> {
        each!(self, s => s.unrecorded_parts(plan, step, upto))
    }
    fn name_change(&self, old: &str, new: &str) -> Option<String> {
        each!(self, s => s.name_change(old, new))
    }
    fn step_key(&self, step: usize) -> Option<&str> {
        each!(self, s => s.step_key(step))
    }
    fn incremental_possible(&self) -> bool {
        each!(self, s => s.incremental_possible())
    }
    fn entry<'a>(&'a self, plan: &'a Plan, step: usize, k: usize) -> Entry<'a> {
        each!(self, s => s.entry(plan, step, k))
    }
    fn repairs_in_place(&self, plan: &Plan, step: usize) -> bool {
        each!(self, s => s.repairs_in_place(plan, step))
    }
    fn step_model(&self, step: usize) -> Option<&str> {
        each!(self, s => s.step_model(step))
    }
    fn step_effort(&self, step: usize) -> Option<&str> {
        each!(self, s => s.step_effort(step))
    }
    fn request_params(&self, step: usize) -> String {
        each!(self, s => s.request_params(step))
    }
    /// Between sessions of two agents no setting is comparable: none changed.
    fn setting_changes(&self, step: usize, other: &Self, other_step: usize) -> Vec<SettingChange> {
        match (self, other) {
            (Session::Codex(a), Session::Codex(b)) => a.setting_changes(step, b, other_step),
            (Session::Claude(a), Session::Claude(b)) => a.setting_changes(step, b, other_step),
            _ => Vec::new(),
        }
    }
    fn unrecorded_effect(
        &self,
        step: usize,
        other: &Self,
        other_step: usize,
        change: &SettingChange,
    ) -> Option<UnrecordedEffect> {
        match (self, other) {
            (Session::Codex(a), Session::Codex(b)) => {
                a.unrecorded_effect(step, b, other_step, change)
            }
            (Session::Claude(a), Session::Claude(b)) => {
                a.unrecorded_effect(step, b, other_step, change)
            }
            _ => None,
        }
    }
    fn setting_effect(&self, setting: &str) -> &'static str {
        each!(self, s => s.setting_effect(setting))
    }
    fn compaction_request_prefix(&self, plan: &Plan, step: usize) -> usize {
        each!(self, s => s.compaction_request_prefix(plan, step))
    }
    fn incremental_break(&self, plan: &Plan, previous: usize, k: usize) -> Option<String> {
        each!(self, s => s.incremental_break(plan, previous, k))
    }
    fn model_view_violation(&self) -> Option<String> {
        each!(self, s => s.model_view_violation())
    }
    fn repeated_call_ids(&self) -> Vec<String> {
        each!(self, s => s.repeated_call_ids())
    }
}

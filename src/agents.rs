//! One folder per coding agent: its loader (file format to records), history rules (replay, the
//! model view, the plan of its steps) and wire shapes (the request each of its builds sends).
//! The stages outside ask a session through [`AgentSession`]; they do not read an agent's line
//! types.

use crate::core::request::Part;
use crate::fingerprint::Plan;
use crate::providers::CacheModel;

pub mod claude;
pub mod codex;

/// A setting of a session (Codex: a `turn_context` field) that differs between two requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingChange {
    /// The setting, as its agent names it (`sandbox_policy`, `model`, …).
    pub field: &'static str,
    pub before: String,
    pub after: String,
}

/// A setting's change seen through a part of the request its session does not record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnrecordedEffect {
    pub part: Part,
    /// Whether the part changes with it, by the agent's rules for the build that sent the
    /// request: `Some(false)` it stays the same, `None` the rules cannot tell (it may change).
    pub changes: Option<bool>,
    /// In words, for output.
    pub why: &'static str,
}

/// What the stages ask a session, whatever agent wrote it: the one interface an agent's session
/// implements (as ripgrep's searcher asks a `Matcher`, whichever engine it is). Codex's is in
/// `codex/agent.rs`.
pub trait AgentSession {
    /// How the caller named the session's file.
    fn name(&self) -> &str;

    /// The session's id.
    fn id(&self) -> Option<&str>;

    /// The id of the session this one was forked from, when it says so.
    fn forked_from(&self) -> Option<&str>;

    /// The prompt cache the session's requests met: its provider's.
    fn cache_model(&self) -> &'static dyn CacheModel;

    /// The model a step's request named, when the session records it.
    fn step_model(&self, step: usize) -> Option<&str>;

    /// The reasoning effort a step's request asked for, when the session records it.
    fn step_effort(&self, step: usize) -> Option<&str>;

    /// A step's request parameters, as compact JSON (what the `params` fingerprint hashes).
    fn request_params(&self, step: usize) -> String;

    /// The settings that differ between this session's step `step` and `other`'s step
    /// `other_step`, in a fixed order (those that feed an unrecorded part first); nothing when
    /// either step has no recorded settings.
    fn setting_changes(&self, step: usize, other: &Self, other_step: usize) -> Vec<SettingChange>;

    /// How a setting's change between this session's step `step` and `other`'s step
    /// `other_step` shows in a part of the request the session does not record, so that the
    /// change is the only sign of the part's: `None` when the setting feeds no such part.
    fn unrecorded_effect(
        &self,
        step: usize,
        other: &Self,
        other_step: usize,
        change: &SettingChange,
    ) -> Option<UnrecordedEffect>;

    /// Which part of the request a setting feeds, in words: why its change can break the prefix.
    fn setting_effect(&self, setting: &str) -> &'static str;

    /// Estimated tokens a compaction request at step `step` shares with the requests before
    /// it: what precedes the tools, which it is sent without.
    fn compaction_request_prefix(&self, plan: &Plan, step: usize) -> usize;

    /// With the parts before the input unchanged and the previous input intact, why step `k`
    /// could still not go out incrementally (the previous response's id plus the new items), if
    /// it could not.
    fn incremental_break(&self, plan: &Plan, previous: usize, k: usize) -> Option<String>;

    /// Why the model view of the whole history is not in the form the agent leaves it in, if
    /// it is not.
    fn model_view_violation(&self) -> Option<String>;

    /// Each call or output whose call id repeats an earlier one's, described.
    fn repeated_call_ids(&self) -> Vec<String>;
}

//! One folder per coding agent: its loader (file format to records), history rules (replay, the
//! model view, the plan of its steps) and wire shapes (the request each of its builds sends).
//! The stages outside ask a session through [`AgentSession`]; they do not read an agent's line
//! types.

use crate::core::lines::SkippedLine;
use crate::core::request::Part;
use crate::core::steps::{SelectError, Step, Turn, TurnSelector};
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

/// What started a new history between two requests of a session: the cache's prefix is reset
/// as the agent meant it to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reset {
    /// A compaction replaced the history with its summary.
    Compaction,
    /// Turns were rolled back: the history was cut.
    Rollback,
}

/// One entry of a request's input (Codex: a model-view item; Claude Code: a message block), as
/// the stages ask about it.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Its JSON exactly as sent (borrowed where the agent holds it so, as Codex's items).
    pub json: std::borrow::Cow<'a, str>,
    /// Its type as the agent's wire names it (`message`, `function_call`, `tool_use`, …).
    pub kind: &'a str,
    pub role: Option<&'a str>,
    /// The call it makes or answers.
    pub call_id: Option<std::borrow::Cow<'a, str>>,
    /// Its own id, when it has one.
    pub id: Option<std::borrow::Cow<'a, str>>,
    /// The line of the session's file it comes from.
    pub line: usize,
    /// Context the agent injects (environment, instructions files, reminders), not a turn's.
    pub context: bool,
    /// Produced by the model (an answer, a call, reasoning).
    pub model_output: bool,
    /// Made by the agent's repair of the history for the protocol (Codex's synthetic
    /// `"aborted"` output), not read from the file.
    pub synthetic: bool,
}

/// What a session's file is, as the header of every text output says it: labelled lines, then
/// what was skipped or noted while reading it.
#[derive(Debug, Clone)]
pub struct Header<'a> {
    /// `(label, text)`, in order; the text as the file has it (the renderer escapes it).
    pub lines: Vec<(&'static str, String)>,
    pub skipped: &'a [SkippedLine],
    /// Things read but not understood, by line where the note does not say its own.
    pub notes: Vec<(Option<usize>, &'a str)>,
    /// Where what promptc shows is rebuilt or approximate, by line.
    pub approximations: Vec<(usize, &'a str)>,
}

/// A row of the page's history table: a raw entry of the file beside what the model was sent of
/// it.
#[derive(Debug, Default)]
pub struct HistoryRow {
    pub raw: Option<String>,
    pub view: Option<String>,
    /// A repair (a synthetic output, a dropped orphan, a line not sent) and why.
    pub mark: Option<String>,
}

/// What the stages ask a session, whatever agent wrote it: the one interface an agent's session
/// implements (as ripgrep's searcher asks a `Matcher`, whichever engine it is). Codex's is in
/// `codex/agent.rs`.
pub trait AgentSession: Sync {
    /// How the caller named the session's file.
    fn name(&self) -> &str;

    /// The session's id.
    fn id(&self) -> Option<&str>;

    /// The id of the session this one was forked from, when it says so.
    fn forked_from(&self) -> Option<&str>;

    /// What this session is of `parent` when its file holds copies of `parent`'s lines under a
    /// session of its own without naming it (Claude Code's `--fork-session`, or a resume that
    /// copied): `diff` says "B is ...". `None` otherwise, and for a fork that names its parent
    /// ([`forked_from`](AgentSession::forked_from)).
    fn copy_of(&self, parent: &Self) -> Option<&'static str>
    where
        Self: Sized;

    /// The prompt cache the session's requests met: its provider's.
    fn cache_model(&self) -> &'static dyn CacheModel;

    /// `turn N step M`, and whether the step is the pending request a resume would send or a
    /// compaction request.
    fn step_label(&self, step: usize) -> String {
        let s = &self.steps()[step];
        let turn = &self.turns()[s.turn];
        let pending = if s.pending {
            " (pending: what a resume sends next)"
        } else if s.compaction {
            " (compaction request: the history, then the checkpoint prompt)"
        } else {
            ""
        };
        format!("turn {} step {}{pending}", turn.number, s.number)
    }

    /// The agent, as people name it (`Codex`, `Claude Code`).
    fn agent_title(&self) -> &'static str;

    /// The agent, as JSON and pages name it (`codex`, `claude`).
    fn agent_name(&self) -> &'static str;

    /// The models the session's requests named, in first-use order.
    fn models(&self) -> Vec<String>;

    /// Entry `k` of a step's input in one line: its kind and the start of its text.
    fn entry_title(&self, plan: &Plan, step: usize, k: usize) -> String;

    /// A step's request as `compile` prints it in text, without colour, long strings folded.
    fn compiled_text(&self, plan: &Plan, step: usize) -> String;

    /// The raw history beside what the model was sent of it (the page's history table), and the
    /// table's title.
    fn history_rows(&self) -> (String, Vec<HistoryRow>);

    /// Resolve `--turn`/`--step` to a step index. With neither: the last step (the request a
    /// resume sends next when the history ends on inputs). With a turn only: its last step.
    fn select_step(
        &self,
        turn: Option<&TurnSelector>,
        step: Option<usize>,
    ) -> Result<usize, SelectError> {
        let turns = self.turns();
        let Some(turn) = turn else {
            if step.is_some() {
                return Err(SelectError::StepWithoutTurn);
            }
            return self
                .steps()
                .len()
                .checked_sub(1)
                .ok_or(SelectError::NoTurns);
        };
        let turn_index = self.select_turn(turn)?;
        let steps = &turns[turn_index].steps;
        match step {
            None => steps
                .last()
                .copied()
                .ok_or(SelectError::NoSteps(turn_index + 1)),
            Some(n) => steps
                .get(n.wrapping_sub(1))
                .copied()
                .ok_or(SelectError::NoSuchStep {
                    turn: turn_index + 1,
                    step: n,
                    steps: steps.len(),
                }),
        }
    }

    /// Resolve a turn selector to an index into [`AgentSession::turns`].
    fn select_turn(&self, turn: &TurnSelector) -> Result<usize, SelectError> {
        let turns = self.turns();
        if turns.is_empty() {
            return Err(SelectError::NoTurns);
        }
        match turn {
            TurnSelector::Number(n) => {
                if *n >= 1 && *n <= turns.len() {
                    Ok(n - 1)
                } else {
                    Err(SelectError::NoSuchTurn(n.to_string(), turns.len()))
                }
            }
            TurnSelector::Id(id) => turns
                .iter()
                .position(|t| t.turn_id.as_deref() == Some(id.as_str()))
                .ok_or_else(|| SelectError::NoSuchTurn(id.clone(), turns.len())),
        }
    }

    /// What the file is, for the header of text output.
    fn header(&self) -> Header<'_>;

    /// The user turns, in order.
    fn turns(&self) -> &[Turn];

    /// Every request, in order (a turn's are its `steps`).
    fn steps(&self) -> &[Step];

    /// What started a new history between step `previous` and a later step `step`, if anything
    /// did.
    fn reset_between(&self, previous: usize, step: usize) -> Option<Reset>;

    /// The line of the compaction whose checkpoint a step's history starts from, if any.
    fn checkpoint_line(&self, step: usize) -> Option<usize>;

    /// How many rollbacks dropped turns before a step's history.
    fn rollbacks_before(&self, step: usize) -> usize;

    /// For a fork whose parent was found: how many of the parent's lines come before the fork
    /// point (the parent's steps up to there are the ones the fork extends).
    fn fork_parent_lines(&self) -> Option<usize>;

    /// A step's system text (instructions), when the session records it, and where it came
    /// from in words.
    fn instructions<'a>(&'a self, plan: &'a Plan, step: usize) -> (Option<&'a str>, &'static str);

    /// A step's tool specs as sent, each its JSON text, when the session records them.
    fn tools<'a>(&'a self, plan: &'a Plan, step: usize) -> Option<&'a [String]>;

    /// A step's prompt as a cache keyed on breakpoints sees it, when the session's provider
    /// has such a cache and the step sent a prompt the log records (not a compaction's own
    /// request). The session's own, made as it grew: no plan is needed, so a cache can be
    /// simulated while the plan is made ([`crate::cache::plan_and_analyze`]).
    fn prompt(&self, _step: usize) -> Option<Box<dyn crate::providers::PromptView + '_>> {
        None
    }

    /// The step is a request of another session that this file copied (a fork): shown, not
    /// judged.
    fn copied(&self, _step: usize) -> bool {
        false
    }

    /// Input items a compaction's request sends after the history it summarizes (Codex: its
    /// compaction prompt, one item), beyond the plan's view; 0 for a step that is none.
    fn compaction_prompt_items(&self, step: usize) -> usize {
        usize::from(self.steps()[step].compaction)
    }

    /// The step is a request the session made and the log records the prompt of (not a copy,
    /// not a compaction's own request the log does not hold): one `diff` compares.
    fn judged(&self, step: usize) -> bool {
        !self.copied(step)
    }

    /// The step's history was sent before by requests another file records (a resume that
    /// copied it, a fork): its first request here should read what they cached.
    fn history_from_elsewhere(&self, _step: usize) -> bool {
        false
    }

    /// A part of the request in the agent's words (Claude Code's instructions are `system`).
    fn part_name(&self, part: Part) -> &'static str {
        part.name()
    }

    /// Entry `k`'s place in the request body, where the agent names it finer than an index
    /// (`messages[3].content[0]`).
    fn entry_location(&self, _plan: &Plan, _step: usize, _k: usize) -> Option<String> {
        None
    }

    /// A rewrite of the prefix between requests `previous` and `step` that the build makes by a
    /// rule of its own the log does not show, as a verdict's name and explanation.
    fn known_rewrite(
        &self,
        _previous: usize,
        _step: usize,
    ) -> Option<(&'static str, &'static str)> {
        None
    }

    /// The parts of a step's prompt up to block `upto` (of the whole prompt) that the session
    /// does not record, one name each.
    fn unrecorded_parts(&self, _plan: &Plan, _step: usize, _upto: usize) -> Vec<String> {
        Vec::new()
    }

    /// What names a step's request wherever a file holds it (Claude Code: its response's
    /// `message.id`, the same in a resume's copy and a fork), when the agent has such a key:
    /// `diff` then pairs the steps of two files by it.
    fn step_key(&self, _step: usize) -> Option<&str> {
        None
    }

    /// A request could go out as the previous response's id plus its new items (OpenAI's
    /// `previous_response_id`): whether the question applies to this agent's API at all.
    fn incremental_possible(&self) -> bool {
        true
    }

    /// What changed between two versions of a text the agent renders into the request (its
    /// system prompt, the context it injects), in a few words (`CLAUDE.md`, `the git status`),
    /// when its rules name it.
    fn name_change(&self, _old: &str, _new: &str) -> Option<String> {
        None
    }

    /// Entry `k` of a step's input.
    fn entry<'a>(&'a self, plan: &'a Plan, step: usize, k: usize) -> Entry<'a>;

    /// Whether the new entries of step `step` past the previous request's input change it only
    /// as the agent's repair of the history does (Codex: each synthetic output right after its
    /// own call), so that the request still extends the previous one as the agent meant.
    fn repairs_in_place(&self, plan: &Plan, step: usize) -> bool;

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

//! Turns and steps: a session as the requests its agent sent. A turn is one user prompt and the
//! requests it took; a step is one request, its input a prefix of one epoch of the history
//! (a compaction or rollback starts a new epoch), with the usage the provider reported.

use crate::core::usage::Usage;

/// A user turn.
#[derive(Debug, Clone)]
pub struct Turn {
    /// 1-based.
    pub number: usize,
    pub turn_id: Option<String>,
    /// Line where the turn starts (its user message or `task_started`).
    pub line: usize,
    /// Indices into the session's steps.
    pub steps: Vec<usize>,
    /// Dropped from history by a later `thread_rolled_back`.
    pub rolled_back: bool,
    /// Ended by `turn_aborted`.
    pub aborted: bool,
}

/// An observed usage for one request, as the session recorded it (Codex: a `token_count` event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub line: usize,
    /// The line's timestamp in Unix seconds.
    pub unix_seconds: Option<i64>,
    /// The usage of this one request (Codex: `last_token_usage`).
    pub usage: Usage,
}

/// One sampling request.
#[derive(Debug, Clone)]
pub struct Step {
    /// Index into the session's turns.
    pub turn: usize,
    /// 1-based within its turn.
    pub number: usize,
    /// The request's input is `epochs[epoch][..prefix_len]`.
    pub epoch: usize,
    pub prefix_len: usize,
    /// The record of the settings in effect, an index into the session's records (Codex: the
    /// `turn_context`); its agent reads it.
    pub context: Option<usize>,
    pub usage: Option<Observation>,
    /// Line of the step's first model output, or of the last line for a pending step.
    pub line: usize,
    /// That line's timestamp in Unix seconds.
    pub unix_seconds: Option<i64>,
    /// No output was recorded: the request a resume would send next.
    pub pending: bool,
    /// The compaction request a compaction answered: its input is the history before it plus
    /// the agent's compaction prompt (Codex: [`crate::agents::codex::rules::COMPACTION_PROMPT`]).
    pub compaction: bool,
}

/// How a command names a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnSelector {
    /// 1-based number.
    Number(usize),
    /// A `turn_id` from the file.
    Id(String),
}

impl std::str::FromStr for TurnSelector {
    type Err = std::convert::Infallible;
    fn from_str(text: &str) -> Result<TurnSelector, Self::Err> {
        Ok(match text.parse::<usize>() {
            Ok(n) => TurnSelector::Number(n),
            Err(_) => TurnSelector::Id(text.to_string()),
        })
    }
}

/// A selection that does not exist in the rollout.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectError {
    #[error("the rollout has no turns")]
    NoTurns,
    #[error("no turn {0} (the rollout has {1} turns)")]
    NoSuchTurn(String, usize),
    #[error("turn {turn} has no step {step} (it has {steps})")]
    NoSuchStep {
        turn: usize,
        step: usize,
        steps: usize,
    },
    #[error("turn {0} has no steps")]
    NoSteps(usize),
    #[error("--step needs --turn")]
    StepWithoutTurn,
}

//! `promptc report`: where the prompt-cache money goes, across many rollouts and transcripts.
//!
//! Each session gives a [`SessionUsage`] (its agent reads it: `agents::codex::usage`,
//! `agents::claude::usage`). A Codex rollout gives one
//! [`Request`] per distinct cumulative
//! `total_token_usage` counter (a `token_count` that repeats the previous counters is the same
//! request, re-emitted), whose tokens are the counters' growth since the previous one. Summed,
//! a session's requests are its last counters, as the rollout itself says, but for two things
//! the counters carry from elsewhere: a fork's start from its parent's (the first request
//! counts its own usage, `last_token_usage`), and Codex 0.58–0.77 restarted them at each resume
//! (a request whose counters before it are zero starts a new run). The cache loss of a request
//! and its cause come from the step analysis `promptc steps` shows ([`crate::cache`]), matched
//! by the `token_count` line. [`resolve`] then removes what forks copied from their parent, and
//! [`build`] filters by date, groups and prices ([`crate::pricing`], Anthropic's list for
//! Claude Code requests). A Claude Code home's requests come counted once already (one per
//! response, copies left out: `agents::claude::home`), in the same [`Tokens`]: a prompt's input
//! is all of it, reads and writes included, as OpenAI counts it.
//! No I/O: the binary reads the files and the time zone.

use std::sync::Arc;

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::Serialize;

use crate::cache::Verdict;
use crate::core::usage::Usage;
use crate::pricing::PriceTable;
use crate::providers::anthropic::prices::{AnthropicPrices, Priced};

/// The agent whose log a session is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    #[default]
    Codex,
    Claude,
}

impl Agent {
    pub const ALL: [Agent; 2] = [Agent::Codex, Agent::Claude];

    /// Stable name used in output and on the command line (`--agent`).
    pub fn name(self) -> &'static str {
        match self {
            Agent::Codex => "codex",
            Agent::Claude => "claude",
        }
    }

    /// The one named `name` (as [`Agent::name`] writes it).
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// Token counts of one request or a sum of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    /// Input tokens, cached ones included (OpenAI's `input_tokens`).
    pub input: u64,
    pub cached: u64,
    /// Output tokens, reasoning included (OpenAI's `output_tokens`).
    pub output: u64,
    pub reasoning: u64,
    /// Uncached input tokens written to the cache (`cache_write_input_tokens`, GPT-5.6 and
    /// later; Anthropic's `cache_creation_input_tokens`); 0 where the log does not say.
    pub cache_write: u64,
    /// Of `cache_write`, written for an hour (Anthropic's 1-hour TTL); the rest was written for
    /// the short retention (Anthropic's 5 minutes; OpenAI's writes are all of this kind).
    pub cache_write_1h: u64,
}

impl Tokens {
    pub(crate) fn of(usage: &Usage) -> Tokens {
        Tokens {
            input: usage.input_tokens,
            cached: usage.cached_input_tokens,
            output: usage.output_tokens,
            reasoning: usage.reasoning_output_tokens,
            cache_write: usage.cache_write_input_tokens.unwrap_or(0),
            cache_write_1h: 0,
        }
    }

    pub fn add(&mut self, other: Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.cached = self.cached.saturating_add(other.cached);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.cache_write_1h = self.cache_write_1h.saturating_add(other.cache_write_1h);
    }

    /// `self - before`, or `None` when a counter went down (the counters restarted).
    pub(crate) fn growth(self, before: Tokens) -> Option<Tokens> {
        Some(Tokens {
            input: self.input.checked_sub(before.input)?,
            cached: self.cached.checked_sub(before.cached)?,
            output: self.output.checked_sub(before.output)?,
            reasoning: self.reasoning.checked_sub(before.reasoning)?,
            // Not a restart when it goes down: a build that does not write it resumed the file.
            cache_write: self.cache_write.saturating_sub(before.cache_write),
            cache_write_1h: self.cache_write_1h.saturating_sub(before.cache_write_1h),
        })
    }

    /// Each count the smaller of the two.
    pub(crate) fn min_each(self, other: Tokens) -> Tokens {
        Tokens {
            input: self.input.min(other.input),
            cached: self.cached.min(other.cached),
            output: self.output.min(other.output),
            reasoning: self.reasoning.min(other.reasoning),
            cache_write: self.cache_write.min(other.cache_write),
            cache_write_1h: self.cache_write_1h.min(other.cache_write_1h),
        }
    }

    pub fn uncached(&self) -> u64 {
        self.input.saturating_sub(self.cached)
    }

    /// Input neither read from the cache nor written to it (Anthropic's `input_tokens`).
    pub fn unwritten(&self) -> u64 {
        self.uncached().saturating_sub(self.cache_write)
    }

    /// Written for the short retention (Anthropic's 5 minutes).
    pub fn cache_write_5m(&self) -> u64 {
        self.cache_write.saturating_sub(self.cache_write_1h)
    }

    /// `cached / input`; `None` without input.
    pub fn hit_rate(&self) -> Option<f64> {
        (self.input > 0).then(|| self.cached as f64 / self.input as f64)
    }
}

/// Why a request's input was not served from the cache, from the step's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    ProviderMiss,
    IdleGap,
    Compaction,
    Rollback,
    /// A component before the input changed (`instructions`, `tools`, `params`,
    /// `prompt_cache_key`), `history` when the input itself was rewritten, or the recorded
    /// turn-context field that changed (`sandbox_policy`, …); for Claude Code the part where the
    /// prefix broke (`tools`, `system`, `params`) or `history`.
    PrefixBroken(&'static str),
    /// Claude Code: the model changed (a cache is per model).
    ModelSwitch,
    /// Claude Code: idle longer than the TTL of what the previous request wrote.
    TtlExpired,
    /// Claude Code: the previous entry was more than 20 blocks before every breakpoint.
    LookbackExceeded,
    /// Claude Code: a part the build does not record must have changed.
    UnrecordedChange,
    /// A rewrite the agent's build makes by a rule of its own, by its verdict's name (Claude
    /// Code 1.0.x run as `claude -p`: `repeated_tool_turn`).
    KnownRewrite(&'static str),
    /// The session's first request: nothing to reuse. Its uncached input is counted apart and
    /// is not a loss.
    ColdStart,
}

impl Cause {
    pub(crate) fn of(verdict: &Verdict) -> Option<Cause> {
        Some(match verdict {
            // A first request writes what it sends (a warm one reads some of it).
            Verdict::First | Verdict::WarmStart => Cause::ColdStart,
            Verdict::Compaction => Cause::Compaction,
            Verdict::Rollback => Cause::Rollback,
            Verdict::ComponentChanged(c) => Cause::PrefixBroken(c),
            Verdict::HistoryRewritten(_) => Cause::PrefixBroken("history"),
            // A recorded turn-context field that feeds a part the rollout does not record.
            Verdict::ContextChanged { field, .. } => Cause::PrefixBroken(field),
            // The compaction's own request, sent without the tools.
            Verdict::CompactionRequest => Cause::Compaction,
            Verdict::IdleGap(_) => Cause::IdleGap,
            // A cache with an exact TTL (Anthropic's) names its own causes.
            Verdict::TtlExpired { .. } => Cause::TtlExpired,
            Verdict::ModelSwitch { .. } => Cause::ModelSwitch,
            Verdict::LookbackExceeded => Cause::LookbackExceeded,
            // A part the session does not record changed, or the build rewrote its prefix.
            Verdict::UnrecordedChange(_) => Cause::UnrecordedChange,
            Verdict::KnownRewrite { name, .. } => Cause::KnownRewrite(name),
            Verdict::ProviderMiss => Cause::ProviderMiss,
            Verdict::Hit
            | Verdict::NoUsage
            | Verdict::NoCacheFields
            | Verdict::EarlierFile
            | Verdict::NoBreakpoint
            | Verdict::Copied => return None,
        })
    }

    /// Stable name used in output.
    pub fn name(&self) -> String {
        match self {
            Cause::ProviderMiss => "provider_miss".into(),
            Cause::IdleGap => "idle_gap".into(),
            Cause::Compaction => "compaction".into(),
            Cause::Rollback => "rollback".into(),
            Cause::PrefixBroken(part) => format!("prefix_broken:{part}"),
            Cause::ModelSwitch => "model_switch".into(),
            Cause::TtlExpired => "ttl_expired".into(),
            Cause::LookbackExceeded => "lookback_exceeded".into(),
            Cause::UnrecordedChange => "unrecorded_change".into(),
            Cause::KnownRewrite(name) => (*name).into(),
            Cause::ColdStart => "cold_start".into(),
        }
    }

    /// A few words, for tables.
    pub fn label(&self) -> String {
        match self {
            Cause::ProviderMiss => "provider miss".into(),
            Cause::IdleGap => "idle gap".into(),
            Cause::Compaction => "compaction".into(),
            Cause::Rollback => "rollback".into(),
            Cause::PrefixBroken(part) => format!("prefix broken: {part}"),
            Cause::ModelSwitch => "model switch".into(),
            Cause::TtlExpired => "ttl expired".into(),
            Cause::LookbackExceeded => "lookback exceeded".into(),
            Cause::UnrecordedChange => "unrecorded change".into(),
            Cause::KnownRewrite(name) => name.replace('_', " "),
            Cause::ColdStart => "cold start (not a loss)".into(),
        }
    }
}

/// One model request, as its usage counters record it.
#[derive(Debug, Clone)]
pub struct Request {
    /// Line of the `token_count` event.
    pub line: usize,
    /// Its time (the last time read before it when the line has none).
    pub unix_seconds: Option<i64>,
    /// Shared by the requests of a run: a string per request was most of a report's memory.
    pub model: Option<Arc<str>>,
    pub cwd: Option<Arc<str>>,
    /// The growth of the cumulative counters at this request.
    pub tokens: Tokens,
    /// The cumulative counters after it, as written.
    pub total: Tokens,
    /// Input tokens the previous request's size says the cache could have served but did not
    /// (for a cold start: the cacheable input, not a loss).
    pub lost: u64,
    pub cause: Option<Cause>,
    /// Copied from the parent by a fork: not this session's.
    pub inherited: bool,
    /// A side request (Claude Code 2.0.x's subagent warmups): counted, and shown apart.
    pub side: bool,
}

/// How a fork's share of its parent's counters was treated. A fork's counters go on from its
/// parent's at the fork (Codex seeds them from the parent's last `token_count`); forks by
/// builds before `forked_from_id` also copied the parent's lines, counters included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fork {
    /// Not a fork.
    None,
    /// The parent was read: the counters the fork's file repeats from it (its first
    /// `requests`) were not counted again, nor the counters the file starts from.
    Subtracted { parent: String, requests: usize },
    /// The parent was not read, and the file copies none of its lines: the counters it starts
    /// from, the parent's, were not counted.
    Seeded { parent: String },
    /// The parent was not read and the file copies its lines: which of its counters are the
    /// parent's cannot be known; they are counted whole.
    Unknown { parent: String },
}

/// What a rollout says about its usage.
#[derive(Debug, Clone)]
pub struct SessionUsage {
    pub agent: Agent,
    pub path: String,
    /// The session id: from the file name, else the first `session_meta`.
    pub id: Option<String>,
    /// `forked_from_id`, or the id of a later `session_meta` that copied another session's lines.
    pub parent: Option<String>,
    pub fork: Fork,
    /// The file holds another session's `session_meta`: a fork that copied its parent's lines.
    pub copied: bool,
    /// The counters the file starts from: its first counters less that request's own usage
    /// (`last_token_usage`). Zero but for a fork, whose counters go on from its parent's.
    pub opening: Tokens,
    pub requests: Vec<Request>,
    /// Times the counters went down (a resume by a build that did not restore them): each run
    /// then counts from zero, and the session's tokens are the sum of each run's last counters.
    pub counter_restarts: usize,
    /// Lines that could not be read.
    pub skipped_lines: usize,
}

impl SessionUsage {
    /// A session with no requests yet: not a fork, counters from zero.
    pub fn new(
        agent: Agent,
        path: String,
        id: Option<String>,
        skipped_lines: usize,
    ) -> SessionUsage {
        SessionUsage {
            agent,
            path,
            id,
            parent: None,
            fork: Fork::None,
            copied: false,
            opening: Tokens::default(),
            requests: Vec::new(),
            counter_restarts: 0,
            skipped_lines,
        }
    }
}

/// How requests are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Day,
    Week,
    Month,
    Model,
    Session,
    Cwd,
    Cause,
    Agent,
}

impl GroupBy {
    pub const ALL: [GroupBy; 8] = [
        GroupBy::Day,
        GroupBy::Week,
        GroupBy::Month,
        GroupBy::Model,
        GroupBy::Session,
        GroupBy::Cwd,
        GroupBy::Cause,
        GroupBy::Agent,
    ];

    /// The one named `name` (as [`GroupBy::name`] writes it).
    pub fn from_name(name: &str) -> Option<GroupBy> {
        GroupBy::ALL.into_iter().find(|by| by.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Day => "day",
            GroupBy::Week => "week",
            GroupBy::Month => "month",
            GroupBy::Model => "model",
            GroupBy::Session => "session",
            GroupBy::Cwd => "cwd",
            GroupBy::Cause => "cause",
            GroupBy::Agent => "agent",
        }
    }
}

/// What [`build`] is asked.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Dates and days are read in this zone.
    pub time_zone: TimeZone,
    /// First and last day counted, inclusive (in `time_zone`).
    pub since: Option<Date>,
    pub until: Option<Date>,
    pub by: GroupBy,
    /// Sessions listed in the top table.
    pub top: usize,
    pub prices: PriceTable,
    /// Claude Code requests: Anthropic's list prices.
    pub claude_prices: AnthropicPrices,
    /// Claude Code requests: prices given for their models (`--pricing`), before Anthropic's.
    pub claude_overrides: Option<PriceTable>,
}

impl ReportOptions {
    /// Why the price tables leave `model` unpriced on purpose, when they say.
    pub fn unpriced_reason(&self, model: &str) -> Option<&str> {
        self.prices
            .unpriced_reason(model)
            .or_else(|| match self.claude_prices.price(model, None) {
                Priced::Unpriced(reason) => Some(reason),
                _ => None,
            })
    }
}

/// A date that a request without a time takes: it is counted only without `--since`/`--until`.
pub const NO_DATE: &str = "(no date)";
/// A group key that is not known (no model, no working directory).
pub const UNKNOWN: &str = "(unknown)";

/// The local date of a time.
pub fn local_date(unix_seconds: i64, time_zone: &TimeZone) -> Option<Date> {
    let timestamp = Timestamp::from_second(unix_seconds).ok()?;
    Some(time_zone.to_datetime(timestamp).date())
}

/// The key of a request's group.
pub(crate) fn group_key(
    by: GroupBy,
    date: Option<Date>,
    session: &SessionUsage,
    request: &Request,
) -> String {
    let date_key = |format: fn(Date) -> String| date.map_or(NO_DATE.to_string(), format);
    match by {
        GroupBy::Day => date_key(|d| d.to_string()),
        GroupBy::Week => date_key(|d| {
            let week = d.iso_week_date();
            format!("{}-W{:02}", week.year(), week.week())
        }),
        GroupBy::Month => date_key(|d| format!("{:04}-{:02}", d.year(), d.month())),
        GroupBy::Model => request.model.as_deref().unwrap_or(UNKNOWN).to_string(),
        GroupBy::Session => session.id.clone().unwrap_or_else(|| session.path.clone()),
        GroupBy::Cwd => request.cwd.as_deref().unwrap_or(UNKNOWN).to_string(),
        GroupBy::Cause => request.cause.map_or_else(|| "none".into(), |c| c.name()),
        GroupBy::Agent => session.agent.name().to_string(),
    }
}

mod build;
mod resolve;
pub use build::{CauseSum, Group, Report, SessionRow, build};
pub use resolve::{ClaudeNotes, Duplicate, Notes, PartlyRead, Skipped, resolve};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::codex::usage::tests::{chain, count, usage};

    #[test]
    fn a_second_file_of_a_session_counts_once_and_forks_drop_what_they_copied() {
        let parent = usage("p1", "p", &chain(&[(100, 0, 1), (300, 0, 2)]));
        let longer = usage("p2", "p", &chain(&[(100, 0, 1), (300, 0, 2), (600, 0, 3)]));
        // Copied the parent's first counters, then its own.
        let mut fork = usage("f", "f", &chain(&[(100, 0, 1), (700, 0, 4)]));
        fork.parent = Some("p".into());
        let mut orphan = usage("o", "o", &[count(50, 0, 1)]);
        orphan.parent = Some("missing".into());
        orphan.copied = true;
        let mut notes = Notes::default();
        let kept = resolve(vec![parent, fork, longer, orphan], &mut notes);
        let paths: Vec<&str> = kept.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["p2", "f", "o"]);
        assert_eq!(notes.duplicates.len(), 1);
        assert_eq!(notes.duplicates[0].path, "p1");
        // The fork repeats the parent's first counters only.
        assert_eq!(
            kept[1].fork,
            Fork::Subtracted {
                parent: "p".into(),
                requests: 1
            }
        );
        let own: u64 = kept[1]
            .requests
            .iter()
            .filter(|r| !r.inherited)
            .map(|r| r.tokens.input)
            .sum();
        assert_eq!(own, 600);
        assert_eq!(
            kept[2].fork,
            Fork::Unknown {
                parent: "missing".into()
            }
        );
        assert_eq!(notes.forks_unknown_parent, ["o"]);
    }
}

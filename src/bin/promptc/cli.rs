//! The command line, as clap types. Completions and the man page are generated from this.

use clap::{Args, Parser, Subcommand, ValueEnum};

use promptc::TurnSelector;

/// Inspect Codex rollout files and Claude Code transcripts: the history, the model view, the
/// request of every step, its fingerprint, and why the prompt cache missed.
#[derive(Debug, Parser)]
// `--version` adds the commit of a build from a git checkout (build.rs); `-V` and the man page say
// the version alone, so the committed man page does not change with every commit.
#[command(name = "promptc", version, long_version = env!("PROMPTC_LONG_VERSION"), about, long_about = None)]
#[command(after_help = "Exit status: 0 success, 1 differences or failed checks, 2 errors.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// When to use colour on stdout and stderr.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,

    /// Output width in columns (default: $COLUMNS, else 100).
    #[arg(long, global = true, value_name = "COLUMNS")]
    pub width: Option<usize>,

    /// Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it
    /// still run.
    #[arg(long, global = true, hide = true)]
    pub no_mmap: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the raw history and the model view of a session, side by side.
    View(ViewArgs),
    /// Compile the request the agent sent (or would send on resume) at a turn and step.
    Compile(CompileArgs),
    /// Fingerprint every step's request, component by component.
    Fingerprint(FingerprintArgs),
    /// One row per step: observed and predicted prompt-cache use, and why.
    Steps(StepsArgs),
    /// Compare two sessions request by request and name every drift.
    Diff(DiffArgs),
    /// Check invariants of sessions and compare their fingerprints with a baseline (for CI).
    Check(CheckArgs),
    /// List the sessions under the Codex home and the Claude Code home, newest first.
    Sessions(SessionsArgs),
    /// Tokens, cache hits, losses by cause and dollars across many sessions.
    Report(ReportArgs),
    /// Follow a live session of either agent: each request's `steps` row once it is final.
    Watch(WatchArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print the man page (roff).
    #[command(hide = true)]
    Man,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// `--format` and its `--json` alias.
#[derive(Debug, Args)]
pub struct FormatArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Short for `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

impl FormatArgs {
    pub fn format(&self) -> Format {
        if self.json { Format::Json } else { self.format }
    }
}

/// A rollout argument and how strictly to load it.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// A rollout file (`.jsonl`, or zstd-compressed `.jsonl.zst`) or a Claude Code transcript
    /// (`~/.claude/projects/<project>/<session>.jsonl`, known by its lines), `-` for standard
    /// input, `latest` for the session that started last under the Codex home ($CODEX_HOME)
    /// or the Claude Code home ($CLAUDE_CONFIG_DIR, else ~/.claude), or a session id of either
    /// (or a unique prefix of one).
    #[arg(value_name = "ROLLOUT")]
    pub rollout: String,

    /// Fail on the first line that cannot be read, instead of skipping it with a warning.
    #[arg(long)]
    pub strict: bool,
}

/// `--turn` and `--step`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// A turn: its number (from 1) or its turn id.
    #[arg(long, value_name = "N|ID")]
    pub turn: Option<TurnSelector>,

    /// A step (sampling request) within the turn, from 1.
    #[arg(long, value_name = "N", requires = "turn")]
    pub step: Option<usize>,
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub format: PageFormatArgs,
}

/// `view --format` and `diff --format`: text, JSON, or a self-contained HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum PageFormat {
    #[default]
    Text,
    Json,
    /// One self-contained page: every request, its cache bar and its difference from the
    /// one before.
    Html,
}

/// `--format`, `--json` and `-o` of `view` and `diff`.
#[derive(Debug, Args)]
pub struct PageFormatArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = PageFormat::Text)]
    pub format: PageFormat,

    /// Short for `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write the page to FILE instead of standard output (`--format html`; `-` is standard
    /// output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

impl PageFormatArgs {
    /// Text or JSON (the page is dispatched before, see [`PageFormatArgs::html`]).
    pub fn format(&self) -> Format {
        match (self.json, self.format) {
            (true, _) | (false, PageFormat::Json) => Format::Json,
            _ => Format::Text,
        }
    }

    pub fn html(&self) -> bool {
        !self.json && self.format == PageFormat::Html
    }
}

/// `--agent`: the agent whose sessions a command reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentChoice {
    /// OpenAI Codex CLI rollouts.
    Codex,
    /// Claude Code transcripts.
    Claude,
}

/// Which homes a command reads.
#[derive(Debug, Args)]
pub struct HomeArgs {
    /// Only this agent's sessions (default: both).
    #[arg(long, value_enum)]
    pub agent: Option<AgentChoice>,
    /// The Codex home (default: $CODEX_HOME, else ~/.codex).
    #[arg(long, value_name = "DIR")]
    pub codex_home: Option<std::path::PathBuf>,
    /// The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else
    /// ~/.claude).
    #[arg(long, value_name = "DIR")]
    pub claude_home: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(flatten)]
    pub homes: HomeArgs,
    #[command(flatten)]
    pub format: FormatArgs,
}

/// `report --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ReportFormat {
    #[default]
    Text,
    Json,
    /// One self-contained page (charts drawn as inline SVG; no network, no scripts).
    Html,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Rollout files and Claude Code transcripts, and folders to search: a Codex home (its
    /// `sessions/` and `archived_sessions/`), a Claude Code home (its `projects/`), or any
    /// folder (every `*.jsonl` and `*.jsonl.zst` under it). Default: the Codex home and the
    /// Claude Code home.
    #[arg(value_name = "ROLLOUT|DIR")]
    pub paths: Vec<std::path::PathBuf>,
    /// The homes read when no ROLLOUT or DIR is given (`--agent` also narrows the files given).
    #[command(flatten)]
    pub homes: HomeArgs,
    /// Count requests from this day on (YYYY-MM-DD, in --timezone).
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub since: Option<jiff::civil::Date>,
    /// Count requests up to this day, inclusive (YYYY-MM-DD, in --timezone).
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub until: Option<jiff::civil::Date>,
    /// The time zone of dates and days: an IANA name (Europe/Paris) or UTC (default: the
    /// system's local zone).
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
    /// Group requests by this.
    #[arg(long, default_value = "day", value_parser = group_by())]
    pub by: promptc::report::GroupBy,
    /// Sessions listed in the table of those that lost the most.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Short for `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Write the report to FILE instead of standard output (`-` is standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// A JSON price table that extends the built-in one (or replaces it, with
    /// `"replace": true`): `{"as_of": "...", "source": "...", "models": {"MODEL": {"input": 1.25,
    /// "cached_input": 0.125, "output": 10}}}`, USD per million tokens. A price may say the day it
    /// took effect and carry its earlier prices (`"from": "YYYY-MM-DD", "history": [{..., "from":
    /// ...}]`): each request is priced at its UTC day's; `"cache_write"` prices cache writes.
    /// See PRICING.md.
    #[arg(long, value_name = "FILE")]
    pub pricing: Option<std::path::PathBuf>,
}

impl ReportArgs {
    /// The format asked for, by `--format` or `--json`.
    pub fn format(&self) -> ReportFormat {
        if self.json {
            ReportFormat::Json
        } else {
            self.format
        }
    }
}

/// `--by`'s values: the library's names, so the two lists cannot part.
fn group_by() -> impl clap::builder::TypedValueParser<Value = promptc::report::GroupBy> {
    use clap::builder::TypedValueParser as _;
    use promptc::report::GroupBy;
    clap::builder::PossibleValuesParser::new(GroupBy::ALL.map(GroupBy::name))
        .map(|name: String| GroupBy::from_name(&name).expect("invariant: a name from GroupBy::ALL"))
}

fn parse_date(text: &str) -> Result<jiff::civil::Date, String> {
    text.parse()
        .map_err(|e| format!("{text:?} is not a date (YYYY-MM-DD): {e}"))
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// What a request is compiled with, beyond the session's file.
#[derive(Debug, Default, Args)]
pub struct PlanArgs {
    /// A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API
    /// takes them), or a captured request with a `tools` field. Without it the tools are unknown.
    #[arg(long, value_name = "FILE")]
    pub tools: Option<std::path::PathBuf>,

    /// Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the
    /// leading developer message). Without it: `session_meta.base_instructions` or a
    /// `turn_context` override when recorded, else unknown.
    #[arg(long, value_name = "FILE")]
    pub instructions: Option<std::path::PathBuf>,

    /// Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a
    /// captured request with a `system` field). Builds before 2.1.3xx do not record them.
    #[arg(long, value_name = "FILE")]
    pub system: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompileArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub format: FormatArgs,
    /// The JSON schema given to `codex exec --output-schema`, sent as `text.format`. Codex
    /// 0.104 and 0.122 record it; the other builds do not, and without it it is unknown.
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<std::path::PathBuf>,
    /// Print long texts whole instead of folding them.
    #[arg(long)]
    pub full: bool,
}

#[derive(Debug, Args)]
pub struct FingerprintArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Debug, Args)]
pub struct StepsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rows: RowsArgs,
}

/// What decides `steps`' rows and how they are written (`steps` and `watch`).
#[derive(Debug, Args)]
pub struct RowsArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Skip token estimation (faster; estimated and predicted columns show `-`).
    #[arg(long)]
    pub no_tokens: bool,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// A Codex rollout or a Claude Code transcript (the agent is told by the file's first lines;
    /// an empty file waits for its first line), `latest` for the session that started last
    /// under the Codex home or the Claude Code home, or a session id of either (or a unique
    /// prefix of one).
    #[arg(value_name = "ROLLOUT", default_value = "latest")]
    pub rollout: String,
    /// Only this agent's sessions for `latest`, session ids and `--next` (default: both); the
    /// file given must be this agent's (an empty one is taken as its).
    #[arg(long, value_enum)]
    pub agent: Option<AgentChoice>,
    /// The Codex home to look `latest` and session ids up in (default: $CODEX_HOME, else
    /// ~/.codex).
    #[arg(long, value_name = "DIR")]
    pub codex_home: Option<std::path::PathBuf>,
    /// The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else
    /// ~/.claude).
    #[arg(long, value_name = "DIR")]
    pub claude_home: Option<std::path::PathBuf>,
    /// Also follow the next session either agent starts: when a newer session appears under
    /// the homes, switch to it.
    #[arg(long)]
    pub next: bool,
    /// How often to look for new bytes, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub interval: u64,
    /// Exit with status 1 at the first unexpected drift (a prefix that broke).
    #[arg(long)]
    pub exit_on_drift: bool,
    #[command(flatten)]
    pub rows: RowsArgs,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first rollout or transcript (`-` for standard input).
    #[arg(value_name = "A")]
    pub a: String,
    /// The second: a resume, a fork, or the same session recorded again.
    #[arg(value_name = "B")]
    pub b: String,
    /// Fail on the first line that cannot be read.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub format: PageFormatArgs,
    /// Skip token estimation (faster; the common prefix is given in items only).
    #[arg(long)]
    pub no_tokens: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Rollout files and Claude Code transcripts to check.
    #[arg(value_name = "ROLLOUT", required = true)]
    pub rollouts: Vec<String>,
    /// A JSON file of every step's fingerprint per file: any difference fails.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<std::path::PathBuf>,
    /// Write the baseline file from these files instead of comparing.
    #[arg(long, requires = "baseline")]
    pub update_baseline: bool,
    /// Fail on the first line that cannot be read.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}

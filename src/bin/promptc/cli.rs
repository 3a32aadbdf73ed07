//! The command line, as clap types. Completions and the man page are generated from this.

use clap::{Args, Parser, Subcommand, ValueEnum};

use promptc::TurnSelector;

/// Inspect Codex rollout files: the history, the model view, the request of every step, its
/// fingerprint, and why the prompt cache missed.
#[derive(Debug, Parser)]
#[command(name = "promptc", version, about, long_about = None)]
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
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the raw history and the model view of a rollout, side by side.
    View(ViewArgs),
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
    /// A rollout file (`.jsonl`), or `-` for standard input.
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

//! The environment variables promptc reads, and the only module that reads them.

/// Columns of the terminal, when the shell exports it.
pub const COLUMNS: &str = "COLUMNS";
/// Disables colour when set and non-empty (no-color.org).
pub const NO_COLOR: &str = "NO_COLOR";
/// Forces colour when set to anything but `0`.
pub const CLICOLOR_FORCE: &str = "CLICOLOR_FORCE";
/// `0` disables colour.
pub const CLICOLOR: &str = "CLICOLOR";
/// `dumb` disables colour.
pub const TERM: &str = "TERM";
/// Where Codex keeps its sessions (default `~/.codex`).
pub const CODEX_HOME: &str = "CODEX_HOME";
/// Where Claude Code keeps its configuration and sessions (default `~/.claude`; sessions in its
/// `projects/`).
pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Home directory, for the default `CODEX_HOME` and `CLAUDE_CONFIG_DIR`.
pub const HOME: &str = "HOME";

/// A variable's value, when set and valid UTF-8.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

//! `promptc sessions`: the sessions under the Codex home and the Claude Code home, newest first,
//! one line each. Listed alone, Codex's rollouts are shown as they always were; with Claude
//! Code sessions the list gains the agent, the subagents and the project (the session's cwd).

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::cli::{Format, SessionsArgs};
use crate::commands::{Context, threads, with_stdout};
use crate::exit::ExitStatus;
use crate::input::{self, Rollout};
use promptc::agents::codex::discover::{SessionSummary, summarize};
use promptc::core::ids::unique_prefix_len;
use promptc::core::sanitize::{escape_line, truncate};
use promptc::render::{RenderOptions, Tone, human_size, paint, write_json, write_painted};

mod claude;

use claude::ClaudeRow;

pub fn run(args: SessionsArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let homes = crate::homes::choose(
        args.homes.agent,
        args.homes.codex_home.as_deref(),
        args.homes.claude_home.as_deref(),
    )?;
    let codex = match &homes.codex {
        Some(home) => summarize_all(input::find_rollouts(home)?),
        None => Vec::new(),
    };
    let (claude, failed) = match &homes.claude {
        Some(home) => claude::rows(home)?,
        None => (Vec::new(), Vec::new()),
    };
    warn_failures(&codex, &failed, context);
    let rows = merge(codex, claude);
    if rows.is_empty() && args.format.format() == Format::Text {
        let places: Vec<String> = [&homes.codex, &homes.claude]
            .into_iter()
            .flatten()
            .map(|h| escape_line(&h.display().to_string()).into_owned())
            .collect();
        let what = if homes.claude.is_some() {
            "sessions"
        } else {
            "rollouts"
        };
        let _ = writeln!(
            io::stderr().lock(),
            "no {what} under {}",
            places.join(" or ")
        );
    }
    with_stdout(|out| match args.format.format() {
        Format::Json => write_json_list(out, &homes, &rows),
        Format::Text => write_text_list(out, &rows, &context.stdout),
    })?;
    Ok(ExitStatus::Success)
}

/// One listed session of either agent.
enum Row {
    Codex(Box<CodexRow>),
    Claude(Box<ClaudeRow>),
}

impl Row {
    fn id(&self) -> Option<&str> {
        match self {
            Row::Codex(row) => row.id(),
            Row::Claude(row) => Some(&row.id),
        }
    }

    /// When it started, in local time (`YYYY-MM-DDThh:mm:ss`).
    fn date(&self) -> Option<&str> {
        match self {
            Row::Codex(row) => row.rollout.name.as_ref().map(|n| n.timestamp.as_str()),
            Row::Claude(row) => row.date.as_deref(),
        }
    }
}

/// Both lists in one, newest first: Codex's in its own order (by file name), Claude Code's by
/// when each started; a session without a time after those with one.
fn merge(codex: Vec<CodexRow>, claude: Vec<ClaudeRow>) -> Vec<Row> {
    let mut rows = Vec::with_capacity(codex.len() + claude.len());
    let mut codex = codex
        .into_iter()
        .map(|row| Row::Codex(Box::new(row)))
        .peekable();
    let mut claude = claude
        .into_iter()
        .map(|row| Row::Claude(Box::new(row)))
        .peekable();
    loop {
        let take_claude = match (codex.peek(), claude.peek()) {
            (None, None) => break,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => b.date().is_some() && a.date() < b.date(),
        };
        let next = if take_claude {
            claude.next()
        } else {
            codex.next()
        };
        rows.extend(next);
    }
    rows
}

/// One listed rollout: where it is and what reading it gave.
struct CodexRow {
    rollout: Rollout,
    /// Bytes on disk.
    size: u64,
    /// The file held zstd data.
    compressed: bool,
    summary: Result<SessionSummary, String>,
}

impl CodexRow {
    /// The session id: from the file name, else from the file's `session_meta`.
    fn id(&self) -> Option<&str> {
        self.rollout
            .name
            .as_ref()
            .map(|n| n.id.as_str())
            .or_else(|| self.summary.as_ref().ok()?.meta_id.as_deref())
    }
}

/// Read and summarize every rollout, in order, on all available cores.
fn summarize_all(rollouts: Vec<Rollout>) -> Vec<CodexRow> {
    let read = promptc::core::parallel::map(rollouts.len(), threads(), |index| {
        read_summary(&rollouts[index].path)
    });
    rollouts
        .into_iter()
        .zip(read)
        .map(|(rollout, (size, compressed, summary))| CodexRow {
            rollout,
            size,
            compressed,
            summary,
        })
        .collect()
}

/// A rollout file's size on disk, whether it held zstd data, and its summary (or why not).
fn read_summary(path: &Path) -> (u64, bool, Result<SessionSummary, String>) {
    let name = path.display().to_string();
    match std::fs::read(path) {
        Err(error) => (0, false, Err(format!("cannot read: {error}"))),
        Ok(bytes) => {
            let size = bytes.len() as u64;
            let compressed = input::is_zstd(&bytes);
            let summary = input::decompress_if_zstd(bytes)
                .map_err(|e| format!("cannot read: {e:#}"))
                .and_then(|bytes| {
                    summarize(&name, &bytes).map_err(|e| {
                        // Load errors start with the name; the row and the warning add it.
                        let message = e.to_string();
                        match message.strip_prefix(&format!("{name}: ")) {
                            Some(reason) => reason.to_string(),
                            None => message,
                        }
                    })
                });
            (size, compressed, summary)
        }
    }
}

/// A warning on stderr for every file that could not be read; the list goes on.
fn warn_failures(codex: &[CodexRow], claude: &claude::Failed, context: &Context) {
    let mut stderr = io::stderr().lock();
    let label = paint(
        &RenderOptions {
            color: context.stderr_color,
            ..RenderOptions::default()
        },
        Tone::Warning,
        "warning",
    );
    let failures = codex
        .iter()
        .filter_map(|row| Some((&row.rollout.path, row.summary.as_ref().err()?)))
        .chain(claude.iter().map(|(path, error)| (path, error)));
    for (path, error) in failures {
        let _ = writeln!(
            stderr,
            "{label}: {}: {}",
            escape_line(&path.display().to_string()),
            escape_line(error)
        );
    }
}

#[derive(Serialize)]
struct SessionsDocument<'a> {
    schema_version: u32,
    /// `null` when no Codex home was read (`--agent claude`, or none there).
    codex_home: Option<String>,
    /// With Claude Code sessions listed: the Claude Code home.
    #[serde(skip_serializing_if = "Option::is_none")]
    claude_home: Option<String>,
    sessions: Vec<SessionDocument<'a>>,
}

#[derive(Serialize)]
struct SessionDocument<'a> {
    /// With Claude Code sessions listed: `codex` or `claude`.
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'static str>,
    path: String,
    /// `YYYY-MM-DDThh:mm:ss`, local time: from the file name (as Codex writes it); Claude
    /// Code's first line's time, made local.
    date: Option<&'a str>,
    id: Option<&'a str>,
    archived: bool,
    compressed: bool,
    size: u64,
    cli_version: Option<&'a str>,
    models: Option<&'a [String]>,
    turns: Option<usize>,
    steps: Option<usize>,
    observed_steps: Option<usize>,
    input_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    cache_hit_rate: Option<f64>,
    first_user_message: Option<&'a str>,
    skipped_lines: Option<usize>,
    error: Option<&'a str>,
    /// With Claude Code sessions listed: the session's working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<Option<&'a str>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    claude: Option<claude::ClaudeDocument<'a>>,
}

fn write_json_list(
    out: &mut dyn Write,
    homes: &crate::homes::Homes,
    rows: &[Row],
) -> io::Result<()> {
    let with_claude = rows.iter().any(|r| matches!(r, Row::Claude(_)));
    let sessions = rows
        .iter()
        .map(|row| match row {
            Row::Codex(row) => {
                let summary = row.summary.as_ref().ok();
                SessionDocument {
                    agent: with_claude.then_some("codex"),
                    path: row.rollout.path.display().to_string(),
                    date: row.rollout.name.as_ref().map(|n| n.timestamp.as_str()),
                    id: row.id(),
                    archived: row.rollout.archived,
                    compressed: row.compressed,
                    size: row.size,
                    cli_version: summary.and_then(|s| s.cli_version.as_deref()),
                    models: summary.map(|s| s.models.as_slice()),
                    turns: summary.map(|s| s.turns),
                    steps: summary.map(|s| s.steps),
                    observed_steps: summary.map(|s| s.observed_steps),
                    input_tokens: summary.map(|s| s.input_tokens),
                    cached_input_tokens: summary.map(|s| s.cached_input_tokens),
                    cache_hit_rate: summary.and_then(SessionSummary::cache_hit_rate),
                    first_user_message: summary.and_then(|s| s.first_user_message.as_deref()),
                    skipped_lines: summary.map(|s| s.skipped_lines),
                    error: row.summary.as_ref().err().map(String::as_str),
                    cwd: with_claude.then(|| summary.and_then(|s| s.cwd.as_deref())),
                    claude: None,
                }
            }
            Row::Claude(row) => SessionDocument {
                agent: Some("claude"),
                path: row.path.display().to_string(),
                date: row.date.as_deref(),
                id: Some(&row.id),
                archived: false,
                compressed: false,
                size: row.size,
                cli_version: row.version.as_deref(),
                models: Some(&row.models),
                turns: Some(row.info.turns),
                steps: Some(row.info.conversation_requests),
                observed_steps: Some(row.info.conversation_requests),
                input_tokens: Some(row.prompt_tokens()),
                cached_input_tokens: Some(row.info.tokens.cache_read),
                cache_hit_rate: row.hit_rate(),
                first_user_message: row.info.first_prompt.as_deref(),
                skipped_lines: Some(row.info.skipped_lines),
                error: None,
                cwd: Some(row.info.cwd.as_deref()),
                claude: Some(row.document()),
            },
        })
        .collect();
    write_json(
        out,
        &SessionsDocument {
            schema_version: promptc::SCHEMA_VERSION,
            codex_home: homes.codex.as_ref().map(|h| h.display().to_string()),
            claude_home: homes
                .claude
                .as_ref()
                .filter(|_| with_claude)
                .map(|h| h.display().to_string()),
            sessions,
        },
    )
}

/// The text cells of one row, escaped, before padding.
struct Cells {
    date: String,
    agent: String,
    id: String,
    version: String,
    model: String,
    turns: String,
    steps: String,
    subagents: String,
    size: String,
    hit: String,
    project: String,
    message: String,
}

const MODEL_MAX: usize = 24;
const VERSION_MAX: usize = 16;
/// The project (the session's cwd) is shown by its end, at most this long.
const PROJECT_MAX: usize = 24;

/// Ids are shown abbreviated to the shortest unique prefix, at least this long.
const ID_MIN: usize = 8;

fn cell(text: Option<&str>, max: usize) -> String {
    text.map_or("-".into(), |t| truncate(&escape_line(t), max).into_owned())
}

/// The end of a path, at most `max` characters, `…` where it was cut.
fn path_end(path: Option<&str>, max: usize) -> String {
    let Some(path) = path else {
        return "-".into();
    };
    let escaped = escape_line(path);
    let count = escaped.chars().count();
    if count <= max {
        return escaped.into_owned();
    }
    let tail: String = escaped.chars().skip(count + 1 - max).collect();
    format!("…{tail}")
}

/// The model cell: the first model, and how many more.
fn models_cell(models: &[String]) -> String {
    let mut model = cell(models.first().map(String::as_str), MODEL_MAX);
    if models.len() > 1 {
        model.push_str(&format!(" +{}", models.len() - 1));
    }
    model
}

fn percent_cell(rate: Option<f64>) -> String {
    rate.map_or("-".into(), |r| format!("{:.0}%", r * 100.0))
}

fn cells(row: &Row, id_len: usize) -> Cells {
    let date = row.date().map_or_else(
        || "-".to_string(),
        |d| d.replacen('T', " ", 1)[..16].to_string(),
    );
    let id = row.id().map_or("-".into(), |id| {
        escape_line(&id.chars().take(id_len).collect::<String>()).into_owned()
    });
    match row {
        Row::Claude(row) => Cells {
            date,
            agent: "claude".into(),
            id,
            version: cell(row.version.as_deref(), VERSION_MAX),
            model: models_cell(&row.models),
            turns: row.info.turns.to_string(),
            steps: row.info.conversation_requests.to_string(),
            subagents: row.info.subagents.len().to_string(),
            size: human_size(usize::try_from(row.size).unwrap_or(usize::MAX)),
            hit: percent_cell(row.hit_rate()),
            project: path_end(row.info.cwd.as_deref(), PROJECT_MAX),
            // One line: a prompt's lines and runs of spaces as one space each.
            message: row.info.first_prompt.as_deref().map_or(String::new(), |m| {
                escape_line(&m.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned()
            }),
        },
        Row::Codex(row) => {
            let size = human_size(usize::try_from(row.size).unwrap_or(usize::MAX));
            match &row.summary {
                Err(error) => Cells {
                    date,
                    agent: "codex".into(),
                    id,
                    version: "-".into(),
                    model: "-".into(),
                    turns: "-".into(),
                    steps: "-".into(),
                    subagents: "-".into(),
                    size,
                    hit: "-".into(),
                    project: "-".into(),
                    message: format!("[{}]", escape_line(error)),
                },
                Ok(summary) => Cells {
                    date,
                    agent: "codex".into(),
                    id,
                    version: cell(summary.cli_version.as_deref(), VERSION_MAX),
                    model: models_cell(&summary.models),
                    turns: summary.turns.to_string(),
                    steps: summary.steps.to_string(),
                    subagents: "-".into(),
                    size,
                    hit: percent_cell(summary.cache_hit_rate()),
                    project: path_end(summary.cwd.as_deref(), PROJECT_MAX),
                    message: summary
                        .first_user_message
                        .as_deref()
                        .map_or(String::new(), |m| escape_line(m.trim()).into_owned()),
                },
            }
        }
    }
}

/// A column of the text list: the gap before it, its cell, whether it is aligned right.
struct Column {
    gap: &'static str,
    cell: fn(&Cells) -> &String,
    right: bool,
    /// Shown only when Claude Code sessions are listed: Codex's rollouts alone keep the columns
    /// they always had.
    claude_only: bool,
}

impl Column {
    const fn left(gap: &'static str, cell: fn(&Cells) -> &String) -> Column {
        Column {
            gap,
            cell,
            right: false,
            claude_only: false,
        }
    }

    const fn right(gap: &'static str, cell: fn(&Cells) -> &String) -> Column {
        Column {
            right: true,
            ..Column::left(gap, cell)
        }
    }

    const fn claude_only(self) -> Column {
        Column {
            claude_only: true,
            ..self
        }
    }
}

const COLUMNS: [Column; 11] = [
    Column::left("", |c| &c.date),
    Column::left("  ", |c| &c.agent).claude_only(),
    Column::left("  ", |c| &c.id),
    Column::left("  ", |c| &c.version),
    Column::left("  ", |c| &c.model),
    Column::right(" ", |c| &c.turns),
    Column::right(" ", |c| &c.steps),
    Column::right(" ", |c| &c.subagents).claude_only(),
    Column::right(" ", |c| &c.size),
    Column::right(" ", |c| &c.hit),
    Column::left("  ", |c| &c.project).claude_only(),
];

fn write_text_list(out: &mut dyn Write, rows: &[Row], options: &RenderOptions) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let with_claude = rows.iter().any(|r| matches!(r, Row::Claude(_)));
    let header = Cells {
        date: "DATE".into(),
        agent: "AGENT".into(),
        id: "SESSION".into(),
        version: "VERSION".into(),
        model: "MODEL".into(),
        turns: "TURNS".into(),
        steps: "STEPS".into(),
        subagents: "SUBAGENTS".into(),
        size: "SIZE".into(),
        hit: "HIT".into(),
        project: "PROJECT".into(),
        message: "FIRST MESSAGE".into(),
    };
    let id_len = unique_prefix_len(rows.iter().filter_map(Row::id), ID_MIN);
    let body: Vec<Cells> = rows.iter().map(|row| cells(row, id_len)).collect();
    let all = || std::iter::once(&header).chain(&body);
    let width = |f: fn(&Cells) -> &String| all().map(|c| f(c).chars().count()).max().unwrap_or(0);
    let columns: Vec<(&Column, usize)> = COLUMNS
        .iter()
        .filter(|column| with_claude || !column.claude_only)
        .map(|column| (column, width(column.cell)))
        .collect();
    for (index, c) in all().enumerate() {
        let mut line = String::new();
        for &(column, width) in &columns {
            line.push_str(column.gap);
            let cell = (column.cell)(c);
            line.push_str(&if column.right {
                format!("{cell:>width$}")
            } else {
                format!("{cell:<width$}")
            });
        }
        let room = options.width.saturating_sub(line.chars().count() + 2);
        if room > 0 && !c.message.is_empty() {
            line.push_str("  ");
            line.push_str(&truncate(&c.message, room));
        }
        let line = if with_claude {
            line.trim_end().to_string()
        } else {
            line
        };
        if index == 0 {
            write_painted(out, options, Tone::Heading, &line)?;
        } else {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

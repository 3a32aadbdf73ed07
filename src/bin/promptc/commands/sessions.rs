//! `promptc sessions`: the rollouts under the Codex home, newest first, one line each.

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
use promptc::render::{RenderOptions, Tone, human_size, paint, write_json};

pub fn run(args: SessionsArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let home = match args.codex_home {
        Some(home) => home,
        None => input::codex_home()?,
    };
    if !home.is_dir() {
        anyhow::bail!("{}: no such directory (the Codex home)", home.display());
    }
    let rollouts = input::find_rollouts(&home)?;
    let rows = summarize_all(rollouts);
    warn_failures(&rows, context);
    if rows.is_empty() && args.format.format() == Format::Text {
        let mut stderr = io::stderr().lock();
        let _ = writeln!(
            stderr,
            "no rollouts under {}",
            escape_line(&home.display().to_string())
        );
    }
    with_stdout(|out| match args.format.format() {
        Format::Json => write_json_list(out, &home, &rows),
        Format::Text => write_text_list(out, &rows, &context.stdout),
    })?;
    Ok(ExitStatus::Success)
}

/// One listed rollout: where it is and what reading it gave.
struct Row {
    rollout: Rollout,
    /// Bytes on disk.
    size: u64,
    /// The file held zstd data.
    compressed: bool,
    summary: Result<SessionSummary, String>,
}

impl Row {
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
fn summarize_all(rollouts: Vec<Rollout>) -> Vec<Row> {
    let read = promptc::core::parallel::map(rollouts.len(), threads(), |index| {
        read_summary(&rollouts[index].path)
    });
    rollouts
        .into_iter()
        .zip(read)
        .map(|(rollout, (size, compressed, summary))| Row {
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

/// A warning on stderr for every file that could not be summarized; the list goes on.
fn warn_failures(rows: &[Row], context: &Context) {
    let mut stderr = io::stderr().lock();
    let label = paint(
        &RenderOptions {
            color: context.stderr_color,
            ..RenderOptions::default()
        },
        Tone::Warning,
        "warning",
    );
    for row in rows {
        if let Err(error) = &row.summary {
            let path = row.rollout.path.display().to_string();
            let _ = writeln!(
                stderr,
                "{label}: {}: {}",
                escape_line(&path),
                escape_line(error)
            );
        }
    }
}

#[derive(Serialize)]
struct SessionsDocument<'a> {
    schema_version: u32,
    codex_home: String,
    sessions: Vec<SessionDocument<'a>>,
}

#[derive(Serialize)]
struct SessionDocument<'a> {
    path: String,
    /// `YYYY-MM-DDThh:mm:ss` from the file name (local time, as Codex writes it).
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
}

fn write_json_list(out: &mut dyn Write, home: &Path, rows: &[Row]) -> io::Result<()> {
    let sessions = rows
        .iter()
        .map(|row| {
            let summary = row.summary.as_ref().ok();
            SessionDocument {
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
            }
        })
        .collect();
    write_json(
        out,
        &SessionsDocument {
            schema_version: promptc::SCHEMA_VERSION,
            codex_home: home.display().to_string(),
            sessions,
        },
    )
}

/// The text cells of one row, escaped, before padding.
struct Cells {
    date: String,
    id: String,
    version: String,
    model: String,
    turns: String,
    steps: String,
    size: String,
    hit: String,
    message: String,
}

const MODEL_MAX: usize = 24;
const VERSION_MAX: usize = 16;

/// Ids are shown abbreviated to the shortest unique prefix, at least this long.
const ID_MIN: usize = 8;

fn cells(row: &Row, id_len: usize) -> Cells {
    let date = row.rollout.name.as_ref().map_or_else(
        || "-".to_string(),
        |n| n.timestamp.replacen('T', " ", 1)[..16].to_string(),
    );
    let id = row.id().map_or("-".into(), |id| {
        escape_line(&id.chars().take(id_len).collect::<String>()).into_owned()
    });
    let size = human_size(usize::try_from(row.size).unwrap_or(usize::MAX));
    let cell = |text: Option<&str>, max: usize| {
        text.map_or("-".into(), |t| truncate(&escape_line(t), max).into_owned())
    };
    match &row.summary {
        Err(error) => Cells {
            date,
            id,
            version: "-".into(),
            model: "-".into(),
            turns: "-".into(),
            steps: "-".into(),
            size,
            hit: "-".into(),
            message: format!("[{}]", escape_line(error)),
        },
        Ok(summary) => {
            let mut model = cell(summary.models.first().map(String::as_str), MODEL_MAX);
            if summary.models.len() > 1 {
                model.push_str(&format!(" +{}", summary.models.len() - 1));
            }
            Cells {
                date,
                id,
                version: cell(summary.cli_version.as_deref(), VERSION_MAX),
                model,
                turns: summary.turns.to_string(),
                steps: summary.steps.to_string(),
                size,
                hit: summary
                    .cache_hit_rate()
                    .map_or("-".into(), |r| format!("{:.0}%", r * 100.0)),
                message: summary
                    .first_user_message
                    .as_deref()
                    .map_or(String::new(), |m| escape_line(m.trim()).into_owned()),
            }
        }
    }
}

fn write_text_list(out: &mut dyn Write, rows: &[Row], options: &RenderOptions) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let header = Cells {
        date: "DATE".into(),
        id: "SESSION".into(),
        version: "VERSION".into(),
        model: "MODEL".into(),
        turns: "TURNS".into(),
        steps: "STEPS".into(),
        size: "SIZE".into(),
        hit: "HIT".into(),
        message: "FIRST MESSAGE".into(),
    };
    let id_len = unique_prefix_len(rows.iter().filter_map(Row::id), ID_MIN);
    let body: Vec<Cells> = rows.iter().map(|row| cells(row, id_len)).collect();
    let all = || std::iter::once(&header).chain(&body);
    let width = |f: fn(&Cells) -> &String| all().map(|c| f(c).chars().count()).max().unwrap_or(0);
    let widths = [
        width(|c| &c.date),
        width(|c| &c.id),
        width(|c| &c.version),
        width(|c| &c.model),
        width(|c| &c.turns),
        width(|c| &c.steps),
        width(|c| &c.size),
        width(|c| &c.hit),
    ];
    for (index, c) in all().enumerate() {
        let mut line = format!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {:<w3$} {:>w4$} {:>w5$} {:>w6$} {:>w7$}",
            c.date,
            c.id,
            c.version,
            c.model,
            c.turns,
            c.steps,
            c.size,
            c.hit,
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
            w5 = widths[5],
            w6 = widths[6],
            w7 = widths[7],
        );
        let room = options.width.saturating_sub(line.chars().count() + 2);
        if room > 0 && !c.message.is_empty() {
            line.push_str("  ");
            line.push_str(&truncate(&c.message, room));
        }
        if index == 0 {
            writeln!(out, "{}", paint(options, Tone::Heading, &line))?;
        } else {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

//! `promptc report`: read every rollout given (or under the Codex home), and sum what the
//! library says about each.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cli::{ReportArgs, ReportFormat};
use crate::commands::{Context, with_stdout};
use crate::exit::ExitStatus;
use crate::input;
use promptc::agents::codex::discover::parse_file_name;
use promptc::pricing::PriceTable;
use promptc::report::{Notes, ReportOptions, SessionUsage, Skipped};

pub fn run(args: ReportArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    // jiff reads the zone database and the local zone ($TZ, /etc/localtime): the binary's
    // business, so the library gets a `TimeZone` and no environment.
    let time_zone = match &args.timezone {
        Some(name) => jiff::tz::TimeZone::get(name)
            .with_context(|| format!("--timezone {name}: not a time zone"))?,
        None => jiff::tz::TimeZone::system(),
    };
    let mut prices = PriceTable::builtin();
    if let Some(path) = &args.pricing {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let table =
            PriceTable::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        prices = prices.with(table);
    }
    let files = find(&args)?;
    let progress = progress_bar(files.len(), args.format);
    let read = promptc::core::parallel::map(files.len(), crate::commands::threads(), |index| {
        let usage = read_usage(&files[index]);
        if let Some(bar) = &progress {
            bar.inc(1);
        }
        usage
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut notes = Notes::default();
    let mut sessions = Vec::with_capacity(read.len());
    for (path, usage) in files.iter().zip(read) {
        match usage {
            Ok(usage) => sessions.push(usage),
            Err(reason) => notes.skipped.push(Skipped {
                path: path.display().to_string(),
                reason,
            }),
        }
    }
    let sessions = promptc::report::resolve(sessions, &mut notes);
    let report = promptc::report::build(
        &sessions,
        files.len(),
        notes,
        ReportOptions {
            time_zone,
            since: args.since,
            until: args.until,
            by: args.by,
            top: args.top,
            prices,
        },
    );
    warn_skipped(&report.notes, context);
    let write = |out: &mut dyn Write| match args.format {
        ReportFormat::Json => promptc::render::report::write_report_json(out, &report),
        ReportFormat::Text => {
            let options = if args.output.is_some() {
                promptc::render::RenderOptions {
                    color: false,
                    ..context.stdout
                }
            } else {
                context.stdout
            };
            promptc::render::report::write_report_text(out, &report, &options)
        }
        ReportFormat::Html => promptc::render::report_html::write_report_html(out, &report),
    };
    match &args.output {
        None => with_stdout(write)?,
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?;
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)
                .and_then(|()| out.flush())
                .with_context(|| format!("{}: cannot write", path.display()))?;
        }
    }
    Ok(ExitStatus::Success)
}

/// A bar on stderr while reading, only when a person watches it and the output is not JSON.
fn progress_bar(files: usize, format: ReportFormat) -> Option<indicatif::ProgressBar> {
    if format == ReportFormat::Json || !std::io::stderr().is_terminal() || files < 2 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("reading rollouts {bar:30} {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// The rollout files to read: the paths given (files as they are, folders searched), else the
/// Codex home. Each file once, in a stable order.
fn find(args: &ReportArgs) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if args.paths.is_empty() {
        let home = match &args.codex_home {
            Some(home) => home.clone(),
            None => input::codex_home()?,
        };
        if !home.is_dir() {
            anyhow::bail!("{}: no such directory (the Codex home)", home.display());
        }
        files.extend(input::find_rollouts(&home)?.into_iter().map(|r| r.path));
    }
    for path in &args.paths {
        let metadata =
            std::fs::metadata(path).with_context(|| format!("{}: cannot read", path.display()))?;
        if !metadata.is_dir() {
            files.push(path.clone());
        } else if path.join("sessions").is_dir() || path.join("archived_sessions").is_dir() {
            files.extend(input::find_rollouts(path)?.into_iter().map(|r| r.path));
        } else {
            let mut found = Vec::new();
            walk(path, &mut found)?;
            found.sort();
            files.extend(found);
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.clone()));
    Ok(files)
}

/// Every `*.jsonl` and `*.jsonl.zst` under a folder that is not a Codex home.
fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("{}: cannot list", dir.display()))?;
        let path = entry.path();
        // Links to folders are not followed (no cycles).
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&path, found)?;
        } else if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.ends_with(".jsonl") || n.ends_with(".jsonl.zst"))
            && path.is_file()
        {
            found.push(path);
        }
    }
    Ok(())
}

/// Read one rollout and what it says about usage, or why it could not be read.
fn read_usage(path: &Path) -> Result<SessionUsage, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let bytes = input::decompress_if_zstd(bytes).map_err(|e| format!("cannot read: {e:#}"))?;
    // Usage, verdicts and losses read hashes and counts, no item's text.
    let options = promptc::LoadOptions {
        keep_item_json: false,
        ..promptc::LoadOptions::default()
    };
    let rollout = promptc::agents::codex::parse::load(&name, &bytes, options).map_err(|e| {
        let message = e.to_string();
        message
            .strip_prefix(&format!("{name}: "))
            .map_or(message.clone(), str::to_string)
    })?;
    // As `steps` loads it: a fork with its parent's history, so that its first request is
    // held to the parent's last one, as the provider's cache saw it.
    let session = crate::fork::session(rollout, options);
    // Usage and verdicts need the fingerprints, not the token estimates (`steps --no-tokens`).
    let plan =
        promptc::agents::codex::plan::plan(&session, &promptc::fingerprint::PlanOptions::default());
    let cache = promptc::cache::analyze(&session, &plan);
    let id = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(parse_file_name)
        .map(|n| n.id);
    Ok(promptc::report::session_usage(
        &session,
        &cache,
        &name,
        id.as_deref(),
    ))
}

/// A warning on stderr for each file that could not be read; the report goes on.
fn warn_skipped(notes: &Notes, context: &Context) {
    let mut stderr = std::io::stderr().lock();
    let label = promptc::render::paint(
        &promptc::render::RenderOptions {
            color: context.stderr_color,
            ..promptc::render::RenderOptions::default()
        },
        promptc::render::Tone::Warning,
        "warning",
    );
    for skipped in &notes.skipped {
        let _ = writeln!(
            stderr,
            "{label}: {}: skipped: {}",
            promptc::core::sanitize::escape_line(&skipped.path),
            promptc::core::sanitize::escape_line(&skipped.reason)
        );
    }
}

//! `promptc report`: read every rollout and transcript given (or under the Codex home and the
//! Claude Code home), and sum what the library says about each.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cli::{AgentChoice, ReportArgs, ReportFormat};
use crate::commands::{Context, with_stdout};
use crate::exit::ExitStatus;
use crate::homes::ClaudeFile;
use crate::input;
use promptc::agents::codex::discover::parse_file_name;
use promptc::pricing::PriceTable;
use promptc::providers::anthropic::prices::AnthropicPrices;
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
    let mut claude_overrides = None;
    if let Some(path) = &args.pricing {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let table =
            PriceTable::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        claude_overrides = Some(table.clone());
        prices = prices.with(table);
    }
    let found = find(&args)?;
    let files = &found.codex;
    let progress = progress_bar(files.len() + found.claude.len(), args.format());
    let read = promptc::core::parallel::map(files.len(), crate::commands::threads(), |index| {
        let usage = read_usage(&files[index]);
        if let Some(bar) = &progress {
            bar.inc(1);
        }
        usage
    });
    let claude = (!found.claude.is_empty()).then(|| {
        crate::homes::read_claude(&found.claude, true, || {
            if let Some(bar) = &progress {
                bar.inc(1);
            }
        })
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
    let mut sessions = promptc::report::resolve(sessions, &mut notes);
    if let Some((home, failed)) = claude {
        for (path, reason) in failed {
            notes.skipped.push(Skipped {
                path: path.display().to_string(),
                reason,
            });
        }
        // Paths as given or found, by their place under `projects/`.
        let shown: std::collections::HashMap<&str, String> = found
            .claude
            .iter()
            .rev()
            .map(|f| (f.rel.as_str(), f.path.display().to_string()))
            .collect();
        let (claude_sessions, claude_notes, partly_read) =
            promptc::agents::claude::report::report_sessions(&home, |rel| {
                shown.get(rel).cloned().unwrap_or_else(|| rel.to_string())
            });
        sessions.extend(claude_sessions);
        notes.partly_read.extend(partly_read);
        notes.claude = Some(claude_notes);
        crate::commands::keep_until_exit(home);
    }
    let report = promptc::report::build(
        &sessions,
        files.len() + found.claude.len(),
        notes,
        ReportOptions {
            time_zone,
            since: args.since,
            until: args.until,
            by: args.by,
            top: args.top,
            prices,
            claude_prices: AnthropicPrices::builtin(),
            claude_overrides,
        },
    );
    warn_skipped(&report.notes, context);
    let write = |out: &mut dyn Write| match args.format() {
        ReportFormat::Json => promptc::render::report::write_report_json(out, &report),
        ReportFormat::Text => {
            let output = crate::commands::output_file(args.output.as_deref());
            let options = if output.is_some() {
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
    match crate::commands::output_file(args.output.as_deref()) {
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
    crate::commands::keep_until_exit((sessions, report));
    Ok(ExitStatus::Success)
}

/// A bar on stderr while reading, only when a person watches it and the output is not JSON.
fn progress_bar(files: usize, format: ReportFormat) -> Option<indicatif::ProgressBar> {
    if format == ReportFormat::Json || !std::io::stderr().is_terminal() || files < 2 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("reading sessions {bar:30} {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// The files a report reads, by agent.
struct Found {
    codex: Vec<PathBuf>,
    claude: Vec<ClaudeFile>,
}

/// The files to read: the paths given (files as they are, folders searched, each file's agent
/// told by its first lines), else the homes. `--agent` keeps one agent's. Each file once, in a
/// stable order.
fn find(args: &ReportArgs) -> anyhow::Result<Found> {
    let agent = args.homes.agent;
    let wants = |a: AgentChoice| agent.is_none_or(|chosen| chosen == a);
    let mut found = Found {
        codex: Vec::new(),
        claude: Vec::new(),
    };
    if args.paths.is_empty() {
        let homes = crate::homes::choose(
            agent,
            args.homes.codex_home.as_deref(),
            args.homes.claude_home.as_deref(),
        )?;
        if let Some(home) = &homes.codex {
            found
                .codex
                .extend(input::find_rollouts(home)?.into_iter().map(|r| r.path));
        }
        if let Some(home) = &homes.claude {
            found.claude.extend(crate::homes::claude_files(home)?);
        }
    }
    for path in &args.paths {
        let metadata =
            std::fs::metadata(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let codex_home = path.join("sessions").is_dir() || path.join("archived_sessions").is_dir();
        let claude_home = path.join(crate::homes::PROJECTS).is_dir();
        if !metadata.is_dir() {
            found.push(path.clone());
        } else if codex_home || claude_home {
            if codex_home {
                found
                    .codex
                    .extend(input::find_rollouts(path)?.into_iter().map(|r| r.path));
            }
            if claude_home {
                found.claude.extend(crate::homes::claude_files(path)?);
            }
        } else {
            let mut files = Vec::new();
            walk(path, &mut files)?;
            files.sort();
            for file in files {
                found.push(file);
            }
        }
    }
    if !wants(AgentChoice::Codex) {
        found.codex.clear();
    }
    if !wants(AgentChoice::Claude) {
        found.claude.clear();
    }
    let mut seen = std::collections::HashSet::new();
    found.codex.retain(|f| seen.insert(f.clone()));
    found.claude.retain(|f| seen.insert(f.path.clone()));
    Ok(found)
}

impl Found {
    /// A file given or found in a folder: a Claude Code transcript by its first lines, else a
    /// rollout (which the rollout reader accepts or names).
    fn push(&mut self, path: PathBuf) {
        if is_transcript(&path) {
            let rel = crate::homes::rel_of_loose_file(&path);
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            self.claude.push(ClaudeFile { path, rel, size });
        } else {
            self.codex.push(path);
        }
    }
}

/// Whether the file's first lines are a Claude Code transcript's.
fn is_transcript(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::new();
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if file.take(64 << 10).read_to_end(&mut head).is_err() || input::is_zstd(&head) {
        return false;
    }
    promptc::agents::claude::is_transcript(&head) == Some(true)
}

/// Every `*.jsonl` and `*.jsonl.zst` under a folder that is no agent's home. A folder below it
/// that cannot be listed is left out with a warning; the folder given is listed or an error.
fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?;
    crate::homes::walk_files(dir, true, &mut |entry, _| {
        let path = entry.path();
        let name = entry.file_name();
        if name
            .to_str()
            .is_some_and(|n| n.ends_with(".jsonl") || n.ends_with(".jsonl.zst"))
            && path.is_file()
        {
            found.push(path);
        }
        Ok(())
    })
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
    Ok(promptc::agents::codex::usage::session_usage(
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

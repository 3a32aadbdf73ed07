//! The commands on a Claude Code transcript: found by its content, no flag needed.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use promptc::agents::claude::cache::{Step, steps};
use promptc::agents::claude::conversation;
use promptc::agents::claude::load::Transcript;
use promptc::agents::claude::thread::Conversation;
use promptc::agents::claude::wire::{Given, compile};
use promptc::render::claude::{write_compile, write_fingerprints, write_steps};
use promptc::render::claude_diff::write_diff;

use crate::cli::{
    CompileArgs, DiffArgs, FingerprintArgs, Format, PlanArgs, SelectArgs, StepsArgs, ViewArgs,
};
use crate::commands::{Context, keep_until_exit, with_stdout};
use crate::exit::ExitStatus;

/// Bytes of a file's head read to tell which agent wrote it.
const HEAD: u64 = 64 << 10;
/// How far a first line is read when it is longer than the head.
const LONGEST_FIRST_LINE: u64 = 256 << 20;

/// The path of `argument` when it is a Claude Code transcript (by its first lines).
pub fn detect(argument: &str) -> anyhow::Result<Option<PathBuf>> {
    if argument == "-" {
        return Ok(None);
    }
    let path = crate::input::resolve(argument)?;
    let Ok(file) = std::fs::File::open(&path) else {
        return Ok(None);
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let mut head = Vec::new();
    let mut reader = std::io::BufReader::new(file);
    (&mut reader).take(HEAD).read_to_end(&mut head).ok();
    // A first line longer than the head (a long pasted prompt): read on to its end, bounded.
    if !head.contains(&b'\n') && head.len() as u64 == HEAD {
        let mut rest = Vec::new();
        std::io::BufRead::read_until(
            &mut (&mut reader).take(LONGEST_FIRST_LINE),
            b'\n',
            &mut rest,
        )
        .ok();
        head.extend(rest);
    }
    Ok((promptc::agents::claude::is_transcript(&head) == Some(true)).then_some(path))
}

/// Load a transcript a piece at a time (the file is never held whole: only what its lines
/// say), a warning on stderr for every skipped line.
pub fn load_file(path: &Path) -> anyhow::Result<(Transcript, Conversation)> {
    load(path, false)
}

/// Load a transcript for `steps`, which reads no message's text: lean (`Loader::lean`), and
/// again whole where its lines call for the texts after all.
pub fn load_for_steps(path: &Path) -> anyhow::Result<(Transcript, Conversation)> {
    match load(path, true)? {
        (t, _) if t.needs_content => load(path, false),
        loaded => Ok(loaded),
    }
}

fn load(path: &Path, lean: bool) -> anyhow::Result<(Transcript, Conversation)> {
    let name = path.display().to_string();
    let cannot_read = || format!("{name}: cannot read");
    let mut file = std::fs::File::open(path).with_context(cannot_read)?;
    let threads = crate::commands::threads();
    let mut loader = if lean {
        promptc::agents::claude::load::Loader::lean(&name, threads)
    } else {
        promptc::agents::claude::load::Loader::with_threads(&name, threads)
    };
    let mut piece = vec![0; 1 << 20];
    loop {
        let read = match file.read(&mut piece) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => other.with_context(cannot_read)?,
        };
        if read == 0 {
            break;
        }
        loader.push(&piece[..read]);
    }
    let t = loader.finish()?;
    if t.needs_content {
        // Read again whole: the warnings come with that reading.
        return Ok((t, Conversation::default()));
    }
    let mut stderr = std::io::stderr().lock();
    for s in &t.skipped {
        use std::io::Write as _;
        let column = s.column.map(|c| format!(":{c}")).unwrap_or_default();
        let _ = writeln!(
            stderr,
            "warning: {}:{}{column}: skipped: {} (near: {})",
            promptc::core::sanitize::escape_line(&name),
            s.line,
            promptc::core::sanitize::escape_line(&s.reason),
            promptc::core::sanitize::escape_line(&s.excerpt),
        );
    }
    let c = conversation(&t);
    Ok((t, c))
}

pub fn run_steps(path: &Path, args: &StepsArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let (t, c) = load_for_steps(path)?;
    let rows = steps(&t, &c, &c.shown_thread());
    let json = args.rows.format.format() == Format::Json;
    with_stdout(|out| write_steps(out, &t, &c, &rows, json, &context.stdout))?;
    keep_until_exit((t, c, rows));
    Ok(ExitStatus::Success)
}

pub fn run_compile(
    path: &Path,
    args: &CompileArgs,
    context: &Context,
) -> anyhow::Result<ExitStatus> {
    let (t, c) = load_file(path)?;
    let rows = steps(&t, &c, &c.shown_thread());
    let step = select(&rows, &args.select)?;
    let given = given(&args.plan)?;
    let compiled = compile(&t, &c, &c.requests[step.request], &given);
    let options = promptc::render::RenderOptions {
        full: args.full,
        ..context.stdout
    };
    let json = args.format.format() == Format::Json;
    with_stdout(|out| write_compile(out, &t, step, &compiled, json, &options))?;
    Ok(ExitStatus::Success)
}

/// `--turn N [--step S]`: that request; without them, the last one.
fn select<'a>(rows: &'a [Step], select: &SelectArgs) -> anyhow::Result<&'a Step> {
    let Some(turn) = &select.turn else {
        return rows.last().context("the transcript records no request");
    };
    let promptc::TurnSelector::Number(turn) = turn else {
        bail!("a Claude Code transcript's turns are numbered: --turn takes a number");
    };
    let in_turn: Vec<&Step> = rows.iter().filter(|s| s.turn == *turn).collect();
    if in_turn.is_empty() {
        bail!(
            "no turn {turn}: the transcript has {} turns",
            rows.last().map_or(0, |s| s.turn)
        );
    }
    match select.step {
        None => Ok(in_turn[in_turn.len() - 1]),
        Some(step) => in_turn
            .iter()
            .find(|s| s.step == step)
            .copied()
            .with_context(|| format!("no step {step} in turn {turn}: it has {}", in_turn.len())),
    }
}

/// `--system` and `--tools`: a JSON value, or a captured request holding it.
fn given(args: &PlanArgs) -> anyhow::Result<Given> {
    let read = |path: &Option<PathBuf>, key: &str| -> anyhow::Result<Option<serde_json::Value>> {
        let Some(path) = path else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        Ok(Some(match value.get(key) {
            Some(inner) if value.get("messages").is_some() => inner.clone(),
            _ => value,
        }))
    };
    Ok(Given {
        system: read(&args.system, "system")?,
        tools: read(&args.tools, "tools")?,
    })
}

pub fn run_diff(
    a: &Path,
    b: &Path,
    args: &DiffArgs,
    context: &Context,
) -> anyhow::Result<ExitStatus> {
    let (ta, ca) = load_file(a)?;
    let (tb, cb) = load_file(b)?;
    let d = promptc::agents::claude::compare::diff(&ta, &ca, &tb, &cb);
    let json = args.format.format() == Format::Json;
    with_stdout(|out| write_diff(out, &ta, &tb, &d, json, &context.stdout))?;
    Ok(if d.unexpected() > 0 {
        ExitStatus::Differences
    } else {
        ExitStatus::Success
    })
}

/// A finding of `check`, with the turn and step it is about.
pub type Located = (promptc::check::Finding, Option<(usize, usize)>);

/// `check`'s findings for one Claude Code transcript (held to `baseline` when one is given),
/// its requests, and its baseline entries.
pub fn check_file(
    path: &Path,
    baseline: Option<&[promptc::agents::claude::fingerprint::BaselineStep]>,
) -> anyhow::Result<(
    usize,
    Vec<Located>,
    Vec<promptc::agents::claude::fingerprint::BaselineStep>,
)> {
    use promptc::agents::claude::fingerprint::{BaselineStep, compare_baseline, fingerprint};
    let (t, c) = load_file(path)?;
    let (requests, failures) = promptc::agents::claude::compare::check(&t, &c);
    let mut findings: Vec<Located> = failures
        .into_iter()
        .map(|f| {
            (
                promptc::check::Finding {
                    name: f.invariant.to_string(),
                    step: None,
                    detail: f.detail,
                },
                Some((f.turn, f.step)),
            )
        })
        .collect();
    let rows: Vec<Step> = steps(&t, &c, &c.shown_thread())
        .into_iter()
        .filter(|s| s.kind == promptc::agents::claude::thread::RequestKind::Sampling && !s.copied)
        .collect();
    let entries: Vec<BaselineStep> = rows
        .iter()
        .map(|s| {
            let compiled = compile(&t, &c, &c.requests[s.request], &Given::default());
            BaselineStep::new(s.turn, s.step, &fingerprint(&compiled))
        })
        .collect();
    if let Some(expected) = baseline {
        for finding in compare_baseline(expected, &entries) {
            let at = finding
                .step
                .and_then(|k| rows.get(k))
                .map(|s| (s.turn, s.step));
            findings.push((finding, at));
        }
    }
    Ok((requests, findings, entries))
}

pub fn run_fingerprint(
    path: &Path,
    args: &FingerprintArgs,
    context: &Context,
) -> anyhow::Result<ExitStatus> {
    let _ = context;
    let (t, c) = load_file(path)?;
    let rows = steps(&t, &c, &c.shown_thread());
    let given = given(&args.plan)?;
    let chosen: Vec<&Step> = match &args.select.turn {
        Some(_) => vec![select(&rows, &args.select)?],
        None => rows.iter().collect(),
    };
    let printed: Vec<_> = chosen
        .into_iter()
        .map(|s| {
            let fp = (s.kind == promptc::agents::claude::thread::RequestKind::Sampling
                && !s.copied)
                .then(|| {
                    promptc::agents::claude::fingerprint::fingerprint(&compile(
                        &t,
                        &c,
                        &c.requests[s.request],
                        &given,
                    ))
                });
            (s, fp)
        })
        .collect();
    let json = args.format.format() == Format::Json;
    with_stdout(|out| write_fingerprints(out, &t, &printed, json))?;
    Ok(ExitStatus::Success)
}

pub fn run_view(path: &Path, args: &ViewArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let (t, c) = load_file(path)?;
    let rows = steps(&t, &c, &c.shown_thread());
    let step = select(&rows, &args.select)?;
    let compiled = compile(&t, &c, &c.requests[step.request], &Given::default());
    let json = args.format.format() == Format::Json;
    with_stdout(|out| {
        promptc::render::claude_view::write_view(
            out,
            &t,
            &c,
            step,
            &compiled,
            json,
            &context.stdout,
        )
    })?;
    Ok(ExitStatus::Success)
}

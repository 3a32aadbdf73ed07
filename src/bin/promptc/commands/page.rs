//! `view --format html` and `diff --format html`: a session's (or a pair's) page, to `-o FILE`
//! or standard output.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use promptc::render::page::{self, Page};

use crate::cli::{DiffArgs, InputArgs, ViewArgs};
use crate::commands::{Context, Items, keep_until_exit, load, plan, threads, with_stdout};
use crate::exit::ExitStatus;

/// Write `write`'s page to `output`, or standard output without one.
fn emit(
    output: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    match output {
        None => with_stdout(write),
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?;
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)
                .and_then(|()| out.flush())
                .with_context(|| format!("{}: cannot write", path.display()))
        }
    }
}

/// `-o` names the page's file: the text and JSON forms go to standard output.
pub fn refuse_output(output: Option<&Path>) -> anyhow::Result<()> {
    match output {
        Some(path) => anyhow::bail!(
            "-o {}: only the page (--format html) is written to a file",
            path.display()
        ),
        None => Ok(()),
    }
}

fn codex_page(
    input: &InputArgs,
    context: &Context,
    plan_args: Option<&crate::cli::PlanArgs>,
) -> anyhow::Result<(promptc::Session, promptc::fingerprint::Plan, Page)> {
    let session = load(input, context, Items::Json)?;
    let p = match plan_args {
        Some(args) => plan(&session, args, true)?,
        None => promptc::fingerprint::plan(
            &session,
            &promptc::fingerprint::PlanOptions {
                threads: threads(),
                estimate_tokens: true,
                ..Default::default()
            },
        ),
    };
    let rows = promptc::cache::analyze(&session, &p);
    let page = page::page(&session, &p, &rows);
    Ok((session, p, page))
}

fn claude_page(path: &Path) -> anyhow::Result<Page> {
    let (t, c) = crate::commands::claude::load_file(path)?;
    let rows = promptc::agents::claude::cache::steps(&t, &c, &c.shown_thread());
    let page = promptc::agents::claude::render::page::page(&t, &c, &rows);
    keep_until_exit((t, c, rows));
    Ok(page)
}

pub fn run_view(args: &ViewArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    if args.select.turn.is_some() {
        anyhow::bail!("--format html shows every request: --turn and --step are for text and JSON");
    }
    let page = match crate::commands::claude::detect(&args.input.rollout)? {
        Some(path) => claude_page(&path)?,
        None => {
            let (session, plan, page) = codex_page(&args.input, context, None)?;
            keep_until_exit((session, plan));
            page
        }
    };
    emit(args.format.output.as_deref(), |out| {
        page::write_page(out, &page)
    })?;
    keep_until_exit(page);
    Ok(ExitStatus::Success)
}

/// Pairs of page step indices: `pairs` of step indices first, then the steps only one side has.
fn page_pairs(
    pairs: &[(usize, usize)],
    a_only: &[usize],
    b_only: &[usize],
) -> Vec<(Option<usize>, Option<usize>)> {
    let mut out: Vec<(Option<usize>, Option<usize>)> =
        pairs.iter().map(|&(a, b)| (Some(a), Some(b))).collect();
    out.extend(a_only.iter().map(|&a| (Some(a), None)));
    out.extend(b_only.iter().map(|&b| (None, Some(b))));
    out
}

pub fn run_diff(args: &DiffArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let claude = (
        crate::commands::claude::detect(&args.a)?,
        crate::commands::claude::detect(&args.b)?,
    );
    let output = args.format.output.as_deref();
    match claude {
        (Some(a), Some(b)) => {
            let (ta, ca) = crate::commands::claude::load_file(&a)?;
            let (tb, cb) = crate::commands::claude::load_file(&b)?;
            let d = promptc::agents::claude::compare::diff(&ta, &ca, &tb, &cb);
            let (pa, pb) = (claude_page(&a)?, claude_page(&b)?);
            // Steps are aligned by their turn and step numbers; the first break is B's first
            // request of its own when the two share requests, else the first pair.
            let mut pairs = Vec::new();
            let mut used = vec![false; pb.steps.len()];
            for (i, s) in pa.steps.iter().enumerate() {
                let j = pb
                    .steps
                    .iter()
                    .position(|t| t.turn == s.turn && t.step == s.step);
                if let Some(j) = j {
                    used[j] = true;
                }
                pairs.push((Some(i), j));
            }
            pairs.extend(
                (0..pb.steps.len())
                    .filter(|&j| !used[j])
                    .map(|j| (None, Some(j))),
            );
            let first_break = d.b_first.and_then(|(turn, step)| {
                pairs.iter().position(|(_, j)| {
                    j.is_some_and(|j| pb.steps[j].turn == turn && pb.steps[j].step == step)
                })
            });
            let mut summary = vec![format!(
                "A: {} requests, B: {} requests, {} shared",
                d.a_requests, d.b_requests, d.shared
            )];
            let mut evidence = Vec::new();
            for drift in &d.drifts {
                summary.push(format!(
                    "{} at {}{}: {}",
                    drift.class,
                    drift.part,
                    if drift.expected { " (expected)" } else { "" },
                    drift.detail
                ));
                if !drift.lines.is_empty() {
                    let side = |prefix: &str| {
                        drift
                            .lines
                            .iter()
                            .filter_map(|l| l.strip_prefix(prefix))
                            .collect::<Vec<_>>()
                            .join("\n")
                    };
                    evidence.push((
                        format!("{}: {}", drift.class, drift.part),
                        side("- "),
                        side("+ "),
                    ));
                }
            }
            emit(output, |out| {
                page::write_diff_page(out, &pa, &pb, &pairs, first_break, &summary, &evidence)
            })?;
            let status = if d.unexpected() > 0 {
                ExitStatus::Differences
            } else {
                ExitStatus::Success
            };
            keep_until_exit((ta, ca, tb, cb, pa, pb));
            return Ok(status);
        }
        (Some(_), None) | (None, Some(_)) => anyhow::bail!(
            "{} and {}: one is a Claude Code transcript and the other is not: a diff holds two sessions of one agent",
            args.a,
            args.b
        ),
        (None, None) => {}
    }
    let input = |rollout: &str| InputArgs {
        rollout: rollout.to_string(),
        strict: args.strict,
    };
    let (a, plan_a, pa) = codex_page(&input(&args.a), context, Some(&args.plan))?;
    let (b, plan_b, pb) = codex_page(&input(&args.b), context, Some(&args.plan))?;
    let d = promptc::diff::diff(&a, &plan_a, &b, &plan_b, None);
    // Page steps are `cache::analyze`'s rows: one per step, in step order.
    let pairs = page_pairs(&d.pairs, &d.a_only, &d.b_only);
    let first_break = d.common_prefix.and_then(|c| {
        pairs
            .iter()
            .position(|&(x, y)| x == Some(c.a_step) && y == Some(c.b_step))
    });
    let mut summary = Vec::new();
    match &d.common_prefix {
        Some(c) => summary.push(format!(
            "first difference: A turn {} step {} / B turn {} step {}: {} input items shared{}",
            pa.steps[c.a_step].turn,
            pa.steps[c.a_step].step,
            pb.steps[c.b_step].turn,
            pb.steps[c.b_step].step,
            c.items,
            c.tokens
                .map(|t| format!(" (~{t} tokens)"))
                .unwrap_or_default()
        )),
        None if d.identical() => {
            summary.push("identical: every aligned request is the same".into())
        }
        None => {}
    }
    let mut evidence = Vec::new();
    for drift in &d.drifts {
        summary.push(format!(
            "{} {} (A step {}, B step {}{}): {}",
            drift.class.name(),
            drift.component,
            drift.a_step + 1,
            drift.b_step + 1,
            if drift.expected() { ", expected" } else { "" },
            drift.detail
        ));
        if let Some((old, new)) = &drift.evidence {
            evidence.push((
                format!("{} {}", drift.class.name(), drift.component),
                old.clone(),
                new.clone(),
            ));
        }
    }
    emit(output, |out| {
        page::write_diff_page(out, &pa, &pb, &pairs, first_break, &summary, &evidence)
    })?;
    let status = if d.has_unexpected() {
        ExitStatus::Differences
    } else {
        ExitStatus::Success
    };
    keep_until_exit((a, b, plan_a, plan_b, d, pa, pb));
    Ok(status)
}

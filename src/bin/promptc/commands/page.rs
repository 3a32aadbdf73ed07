//! `view --format html` and `diff --format html`: a session's (or a pair's) page, to `-o FILE`
//! or standard output.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use promptc::render::page::{self, Page};

use crate::cli::{DiffArgs, InputArgs, ViewArgs};
use crate::commands::{Context, Items, keep_until_exit, load, plan, threads, with_stdout};
use crate::exit::ExitStatus;
use promptc::AgentSession;

/// Write `write`'s page to `output`, or standard output without one.
fn emit(
    output: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    match crate::commands::output_file(output) {
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
    match crate::commands::output_file(output) {
        Some(path) => anyhow::bail!(
            "-o {}: only the page (--format html) is written to a file",
            path.display()
        ),
        None => Ok(()),
    }
}

/// A session's page, with the session and plan it was made from.
fn session_page(
    input: &InputArgs,
    context: &Context,
    plan_args: Option<&crate::cli::PlanArgs>,
) -> anyhow::Result<(promptc::Session, promptc::fingerprint::Plan, Page)> {
    let session = load(input, context, Items::Json)?;
    let (p, rows) = promptc::cache::plan_and_analyze(&session, threads(), || {
        plan(
            &session,
            plan_args.unwrap_or(&Default::default()),
            true,
            context,
        )
    })?;
    let page = page::page(&session, &p, &rows);
    Ok((session, p, page))
}

pub fn run_view(args: &ViewArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    if args.select.turn.is_some() {
        anyhow::bail!("--format html shows every request: --turn and --step are for text and JSON");
    }
    let (session, plan, page) = session_page(&args.input, context, None)?;
    keep_until_exit((session, plan));
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
    let output = args.format.output.as_deref();
    let input = |rollout: &str| InputArgs {
        rollout: rollout.to_string(),
        strict: args.strict,
    };
    let (a, plan_a, pa) = session_page(&input(&args.a), context, Some(&args.plan))?;
    let (b, plan_b, pb) = session_page(&input(&args.b), context, Some(&args.plan))?;
    if a.agent_name() != b.agent_name() {
        anyhow::bail!(
            "{} and {}: one is a Claude Code transcript and the other is not: a diff holds two sessions of one agent",
            args.a,
            args.b
        );
    }
    let d = promptc::diff::diff(&a, &plan_a, &b, &plan_b, None);
    // Page steps are `cache::analyze`'s rows: one per step, in step order.
    let pairs = page_pairs(&d.pairs, &d.a_only, &d.b_only);
    // The first break: where the aligned requests part, else the first unexpected drift's
    // request of B (a resume's first request of its own); an expected reset is no break.
    let first_break = d
        .common_prefix
        .map(|c| (Some(c.a_step), Some(c.b_step)))
        .or_else(|| {
            d.drifts.iter().find(|d| !d.expected()).map(|drift| {
                let paired = d.pairs.iter().any(|&(_, y)| y == drift.b_step);
                (paired.then_some(drift.a_step), Some(drift.b_step))
            })
        })
        .and_then(|target| pairs.iter().position(|&pair| pair == target));
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

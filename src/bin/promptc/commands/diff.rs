//! `promptc diff`.

use crate::cli::{DiffArgs, Format, InputArgs};
use crate::commands::{Context, Items, keep_until_exit, load, plan, with_stdout};
use crate::exit::ExitStatus;
use promptc::AgentSession;
use promptc::render::diff::{write_diff_json, write_diff_text};

pub fn run(args: DiffArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    if args.format.html() {
        return crate::commands::page::run_diff(&args, context);
    }
    crate::commands::page::refuse_output(args.format.output.as_deref())?;
    let input = |rollout: &str| InputArgs {
        rollout: rollout.to_string(),
        strict: args.strict,
    };
    let a = load(&input(&args.a), context, Items::Json)?;
    let b = load(&input(&args.b), context, Items::Json)?;
    if a.agent_name() != b.agent_name() {
        anyhow::bail!(
            "{} and {}: one is a Claude Code transcript and the other is not: a diff holds two sessions of one agent",
            args.a,
            args.b
        );
    }
    let pa = plan(&a, &args.plan, !args.no_tokens, context)?;
    let pb = plan(&b, &args.plan, !args.no_tokens, context)?;
    let only = match &args.select.turn {
        None => None,
        Some(turn) => Some((
            a.select_step(Some(turn), args.select.step)
                .map_err(|e| anyhow::anyhow!("{}: {e}", args.a))?,
            b.select_step(Some(turn), args.select.step)
                .map_err(|e| anyhow::anyhow!("{}: {e}", args.b))?,
        )),
    };
    let diff = promptc::diff::diff(&a, &pa, &b, &pb, only);
    with_stdout(|out| match args.format.format() {
        Format::Json => write_diff_json(out, &a, &b, &diff),
        Format::Text => write_diff_text(out, &a, &b, &diff, &context.stdout),
    })?;
    let status = if diff.has_unexpected() {
        ExitStatus::Differences
    } else {
        ExitStatus::Success
    };
    keep_until_exit((a, b, pa, pb, diff));
    Ok(status)
}

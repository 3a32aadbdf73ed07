//! `promptc diff`.

use crate::cli::{DiffArgs, Format, InputArgs};
use crate::commands::{Context, Items, keep_until_exit, load, plan, with_stdout};
use crate::exit::ExitStatus;
use promptc::render::diff::{write_diff_json, write_diff_text};

pub fn run(args: DiffArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    if args.format.html() {
        return crate::commands::page::run_diff(&args, context);
    }
    crate::commands::page::refuse_output(args.format.output.as_deref())?;
    let claude = (
        crate::commands::claude::detect(&args.a)?,
        crate::commands::claude::detect(&args.b)?,
    );
    match claude {
        (Some(a), Some(b)) => return crate::commands::claude::run_diff(&a, &b, &args, context),
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
    let a = load(&input(&args.a), context, Items::Json)?;
    let b = load(&input(&args.b), context, Items::Json)?;
    let pa = plan(&a, &args.plan, !args.no_tokens)?;
    let pb = plan(&b, &args.plan, !args.no_tokens)?;
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

//! `promptc steps`.

use crate::cli::{Format, StepsArgs};
use crate::commands::{Context, Items, keep_until_exit, load, plan, threads, with_stdout};
use crate::exit::ExitStatus;
use promptc::render::steps::write_steps;

pub fn run(args: StepsArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let items = if args.rows.no_tokens {
        Items::Counts
    } else {
        Items::Tokens
    };
    let session = load(&args.input, context, items)?;
    let (plan, rows) = promptc::cache::plan_and_analyze(&session, threads(), || {
        plan(&session, &args.rows.plan, !args.rows.no_tokens, context)
    })?;
    let json = args.rows.format.format() == Format::Json;
    with_stdout(|out| write_steps(out, &session, &plan, &rows, json, &context.stdout))?;
    keep_until_exit((session, plan, rows));
    Ok(ExitStatus::Success)
}

//! `promptc view`.

use crate::cli::{Format, ViewArgs};
use crate::commands::{Context, Items, keep_until_exit, load, threads, with_stdout};
use crate::exit::ExitStatus;
use promptc::agents::codex::render::view::{scope, write_json_view, write_text_view};

pub fn run(args: ViewArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    if args.format.html() {
        return crate::commands::page::run_view(&args, context);
    }
    crate::commands::page::refuse_output(args.format.output.as_deref())?;
    let session = match load(&args.input, context, Items::Json)? {
        promptc::Session::Claude(session) => {
            let status = crate::commands::claude::run_view(&session, &args, context);
            keep_until_exit(session);
            return status;
        }
        promptc::Session::Codex(session) => session,
    };
    let scope = scope(&session, args.select.turn.as_ref(), args.select.step)?;
    with_stdout(|out| match args.format.format() {
        Format::Json => {
            // Each step's request size comes from the plan; instructions and tools do not
            // change it.
            let options = promptc::fingerprint::PlanOptions {
                threads: threads(),
                ..Default::default()
            };
            let plan = promptc::agents::codex::plan::plan(&session, &options);
            let written = write_json_view(out, &session, &scope, &plan);
            keep_until_exit(plan);
            written
        }
        Format::Text => write_text_view(out, &session, &scope, &context.stdout),
    })?;
    keep_until_exit(session);
    Ok(ExitStatus::Success)
}

//! `promptc compile`.

use crate::cli::{CompileArgs, Format};
use crate::commands::{Context, keep_until_exit, load, plan, with_stdout};
use crate::exit::ExitStatus;
use promptc::render::request::{write_compile_json, write_compile_text};

pub fn run(args: CompileArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let session = load(&args.input, context)?;
    let step = session.select_step(args.select.turn.as_ref(), args.select.step)?;
    let plan = plan(&session, &args.plan, false)?;
    let options = promptc::render::RenderOptions {
        full: args.full,
        ..context.stdout
    };
    with_stdout(|out| match args.format.format() {
        Format::Json => write_compile_json(out, &session, &plan, step),
        Format::Text => write_compile_text(out, &session, &plan, step, &options),
    })?;
    keep_until_exit((session, plan));
    Ok(ExitStatus::Success)
}

//! `promptc view`.

use crate::cli::{Format, ViewArgs};
use crate::commands::{Context, load, with_stdout};
use crate::exit::ExitStatus;
use promptc::render::view::{scope, write_json_view, write_text_view};

pub fn run(args: ViewArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let session = load(&args.input, context)?;
    let scope = scope(&session, args.select.turn.as_ref(), args.select.step)?;
    with_stdout(|out| match args.format.format() {
        Format::Json => write_json_view(out, &session, &scope),
        Format::Text => write_text_view(out, &session, &scope, &context.stdout),
    })?;
    Ok(ExitStatus::Success)
}

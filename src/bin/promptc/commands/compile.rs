//! `promptc compile`.

use crate::cli::{CompileArgs, Format};
use crate::commands::{
    Context, Items, keep_until_exit, load, plan_with_output_schema, with_stdout,
};
use crate::exit::ExitStatus;
use anyhow::Context as _;
use promptc::AgentSession;
use promptc::agents::codex::compile::CompileOptions;
use promptc::agents::codex::render::compile::{write_compile_json_with, write_compile_text_with};

pub fn run(args: CompileArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let session = match load(&args.input, context, Items::Json)? {
        promptc::Session::Claude(session) => {
            let (name, schema) = (&session.transcript.name, args.output_schema.as_deref());
            crate::commands::warn_other_agents_flags(name, true, &args.plan, schema, context);
            let status = crate::commands::claude::run_compile(&session, &args, context);
            keep_until_exit(session);
            return status;
        }
        codex => codex,
    };
    let step = session.select_step(args.select.turn.as_ref(), args.select.step)?;
    let output_schema = match &args.output_schema {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read", path.display()))?;
            let schema: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a JSON schema", path.display()))?;
            // Compact, keys in the file's order: as Codex sends it.
            Some(schema.to_string())
        }
    };
    // The plan's `params` fingerprint holds the schema the body is compiled with.
    let plan =
        plan_with_output_schema(&session, &args.plan, false, output_schema.clone(), context)?;
    let promptc::Session::Codex(session) = session else {
        unreachable!("a Claude Code transcript returned above");
    };
    let compile_options = CompileOptions { output_schema };
    let options = promptc::render::RenderOptions {
        full: args.full,
        ..context.stdout
    };
    with_stdout(|out| match args.format.format() {
        Format::Json => write_compile_json_with(out, &session, &plan, step, &compile_options),
        Format::Text => {
            write_compile_text_with(out, &session, &plan, step, &options, &compile_options)
        }
    })?;
    keep_until_exit((session, plan));
    Ok(ExitStatus::Success)
}

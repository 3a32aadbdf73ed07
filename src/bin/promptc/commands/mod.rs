//! One module per subcommand, each with `run(args, &Context) -> Result<ExitStatus>`.

mod view;

use std::io::{BufWriter, Write};

use anyhow::Context as _;

use crate::cli::{Cli, Command, InputArgs};
use crate::exit::ExitStatus;
use crate::term::{self, Stream};
use promptc::Session;
use promptc::render::RenderOptions;

/// What every command gets: rendering decisions for stdout and stderr.
pub struct Context {
    pub stdout: RenderOptions,
    pub stderr_color: bool,
}

pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    let context = Context {
        stdout: RenderOptions {
            color: term::use_color(cli.color, Stream::Stdout),
            width: term::width(cli.width),
            full: false,
        },
        stderr_color: term::use_color(cli.color, Stream::Stderr),
    };
    match cli.command {
        Command::View(args) => view::run(args, &context),
    }
}

/// Load a rollout, printing a warning on stderr for every skipped line.
pub fn load(input: &InputArgs, context: &Context) -> anyhow::Result<Session> {
    let bytes = crate::input::read(&input.rollout)?;
    let session = Session::load(
        &input.rollout,
        bytes,
        promptc::LoadOptions {
            strict: input.strict,
        },
    )?;
    warn_skipped(&session, context);
    Ok(session)
}

fn warn_skipped(session: &Session, context: &Context) {
    let mut stderr = std::io::stderr().lock();
    let label = if context.stderr_color {
        promptc::render::paint(
            &RenderOptions {
                color: true,
                ..RenderOptions::default()
            },
            promptc::render::Tone::Warning,
            "warning",
        )
    } else {
        "warning".to_string()
    };
    for skipped in &session.rollout.skipped {
        let column = skipped.column.map(|c| format!(":{c}")).unwrap_or_default();
        let _ = writeln!(
            stderr,
            "{label}: {}:{}{}: skipped: {} (line starts: {})",
            promptc::sanitize::escape_line(&session.rollout.name),
            skipped.line,
            column,
            promptc::sanitize::escape_line(&skipped.reason),
            promptc::sanitize::escape_line(&skipped.excerpt),
        );
    }
}

/// Run `write` against a buffered stdout and flush it, with context on failure.
pub fn with_stdout(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    write(&mut out).context("cannot write to standard output")?;
    out.flush().context("cannot write to standard output")?;
    Ok(())
}

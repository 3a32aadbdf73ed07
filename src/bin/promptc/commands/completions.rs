//! `promptc completions SHELL` and the hidden `promptc man`: generated from the clap definition,
//! and committed under `completions/` (a test keeps the committed files current).

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::commands::with_stdout;
use crate::exit::ExitStatus;

pub fn run(args: CompletionsArgs) -> anyhow::Result<ExitStatus> {
    // Generated in memory: clap_complete panics on write errors (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "promptc", &mut script);
    with_stdout(|out| out.write_all(&script))?;
    Ok(ExitStatus::Success)
}

pub fn run_man() -> anyhow::Result<ExitStatus> {
    let man = clap_mangen::Man::new(Cli::command());
    with_stdout(|out| man.render(out))?;
    Ok(ExitStatus::Success)
}

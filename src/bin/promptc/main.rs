//! The `promptc` command: parse arguments, run one command, map the outcome to an exit status.

mod cli;
mod commands;
mod env;
mod exit;
mod fork;
mod homes;
mod input;
mod term;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(status) => status.into(),
        Err(error) => exit::report(&error),
    }
}

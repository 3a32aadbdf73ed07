//! `promptc completions SHELL` and the hidden `promptc man`: generated from the clap definition,
//! and committed under `completions/` (a test keeps the committed files current).

use std::io;

use clap::CommandFactory;
use clap_mangen::Man;

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
    let page = man_page()?;
    with_stdout(|out| out.write_all(page.as_bytes()))?;
    Ok(ExitStatus::Success)
}

/// One page for the whole command: clap_mangen's sections for `promptc`, then a COMMANDS
/// section with the synopsis, description and options of every subcommand (clap_mangen alone
/// would point at `promptc-view(1)` and other pages that do not exist).
fn man_page() -> io::Result<String> {
    // The version alone, without `--version`'s commit: the committed page stays the same from
    // one commit to the next.
    let command = Cli::command().long_version(None::<&str>);
    let man = Man::new(command.clone());
    let mut page = String::new();
    let mut preamble = 0;
    let mut push = |fragment: String, demote: bool| {
        // Every fragment starts with the same two-line roff preamble: keep the first only. In
        // the COMMANDS section, a subcommand's section headings become paragraph breaks.
        for line in fragment.lines() {
            if is_preamble(line) {
                preamble += 1;
                if preamble > 2 {
                    continue;
                }
            }
            if demote && line.starts_with(".SH ") {
                page.push_str(".PP\n");
                continue;
            }
            page.push_str(line);
            page.push('\n');
        }
    };
    push(
        render(|out| {
            man.render_title(out)?;
            man.render_name_section(out)?;
            man.render_synopsis_section(out)?;
            man.render_description_section(out)?;
            man.render_options_section(out)
        })?,
        false,
    );
    push(".SH COMMANDS\n".to_string(), false);
    // Subcommands of the unbuilt command: the global options are documented once, above.
    for sub in command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("promptc {}", sub.get_name());
        let man = Man::new(sub.clone().bin_name(&name));
        push(format!(".SS \"{name}\"\n"), false);
        push(
            render(|out| {
                man.render_description_section(out)?;
                man.render_synopsis_section(out)?;
                man.render_options_section(out)
            })?,
            true,
        );
    }
    push(
        render(|out| {
            man.render_extra_section(out)?;
            man.render_version_section(out)
        })?,
        false,
    );
    Ok(page)
}

fn render(write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>) -> io::Result<String> {
    let mut bytes = Vec::new();
    write(&mut bytes)?;
    String::from_utf8(bytes).map_err(io::Error::other)
}

/// The two lines roff writers start every fragment with.
fn is_preamble(line: &str) -> bool {
    line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq")
}

//! Every `promptc` command shown in README.md runs against the bundled fixtures with the exit
//! status the README says and no message, and its output is what the README shows: the lines
//! shown, in order, consecutive between the `…` that mark what is left out, so the README
//! cannot rot.

use crate::support::{promptc, root};

struct Example {
    env: Vec<(String, String)>,
    args: Vec<String>,
    expected_code: i32,
    shown_output: Vec<String>,
}

fn parse_command(line: &str) -> Option<Example> {
    let (command, comment) = match line.split_once("  # ") {
        Some((c, comment)) => (c, Some(comment)),
        None => (line, None),
    };
    let expected_code = comment
        .and_then(|c| c.strip_prefix("exits "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let mut words = command.split_whitespace();
    let mut env = Vec::new();
    for word in words.by_ref() {
        if word == "promptc" {
            let args = words.map(str::to_string).collect();
            return Some(Example {
                env,
                args,
                expected_code,
                shown_output: Vec::new(),
            });
        }
        let (key, value) = word.split_once('=')?;
        env.push((key.to_string(), value.to_string()));
    }
    None
}

fn examples() -> Vec<Example> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md exists");
    let mut examples: Vec<Example> = Vec::new();
    // The set-up command in the first lines.
    let setup = readme
        .lines()
        .take(10)
        .find_map(|l| l.split_once("&& ").map(|(_, c)| c.to_string()))
        .expect("the README opens with `cargo install --path . && promptc …`");
    examples.push(parse_command(&setup).expect("a promptc command"));
    let mut in_console = false;
    for line in readme.lines() {
        if line.starts_with("```console") {
            in_console = true;
            continue;
        }
        if line.starts_with("```") {
            in_console = false;
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            examples.push(parse_command(command).expect("console lines run promptc"));
        } else if let Some(example) = examples.last_mut() {
            example.shown_output.push(line.trim_end().to_string());
        }
    }
    examples
}

#[test]
fn every_readme_command_runs_and_shows_real_output() {
    let examples = examples();
    assert!(
        examples.len() >= 8,
        "the README shows view, steps, compile, diff, check and sessions"
    );
    for example in examples {
        let mut command = promptc();
        command.args(&example.args).env("COLUMNS", "100");
        for (key, value) in &example.env {
            command.env(key, value);
        }
        let output = command.output().expect("promptc runs");
        let shown = format!("promptc {}", example.args.join(" "));
        assert_eq!(
            output.status.code(),
            Some(example.expected_code),
            "{shown}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            output.stderr.is_empty(),
            "{shown}: the README shows no message, and it writes: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let actual: Vec<&str> = stdout.lines().map(str::trim_end).collect();
        if let Err(why) = shows(&example.shown_output, &actual) {
            panic!(
                "{shown}: {why}\n--- shown:\n{}\n--- actual:\n{stdout}",
                example.shown_output.join("\n")
            );
        }
    }
}

/// Whether `actual` is what `shown` shows: its runs of lines between `…` lines are runs of
/// consecutive lines of `actual`, in order; without a `…` first (last), the first (last) run
/// starts (ends) the output. Nothing shown (the set-up command): anything.
fn shows(shown: &[String], actual: &[&str]) -> Result<(), String> {
    if shown.is_empty() {
        return Ok(());
    }
    let runs: Vec<&[String]> = shown.split(|line| line.trim() == "…").collect();
    let last = runs.len() - 1;
    let mut at = 0;
    for (index, run) in runs.iter().enumerate() {
        if run.is_empty() {
            continue;
        }
        let fits = |start: usize| {
            actual.len() >= start + run.len()
                && run.iter().zip(&actual[start..]).all(|(a, b)| a == b)
        };
        let start = if index == 0 {
            // No `…` before the first run: it is the start of the output.
            fits(0).then_some(0)
        } else {
            (at..=actual.len().saturating_sub(run.len())).find(|&start| fits(start))
        }
        .ok_or_else(|| {
            format!(
                "the lines {run:?} are not in the output, in this order, from line {}",
                at + 1
            )
        })?;
        at = start + run.len();
        if index == last && at != actual.len() {
            return Err(format!(
                "the output goes on after the last line shown (line {at}); end the block with …"
            ));
        }
    }
    Ok(())
}

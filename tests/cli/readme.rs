//! Every `promptc` command shown in README.md runs against the bundled fixtures with the exit
//! status the README says, and every output line the README shows is in its real output, so the
//! README cannot rot.

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
        } else if line.trim() != "…"
            && !line.trim().is_empty()
            && let Some(example) = examples.last_mut()
        {
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
        let stdout = String::from_utf8_lossy(&output.stdout);
        let actual: Vec<&str> = stdout.lines().map(str::trim_end).collect();
        for line in &example.shown_output {
            assert!(
                actual.contains(&line.as_str()),
                "{shown}: the README shows a line it does not print:\n{line}\n--- actual:\n{stdout}"
            );
        }
    }
}

//! `promptc completions SHELL` and the hidden `promptc man`, and the generated files committed
//! under `completions/`: a stale committed file makes the test fail, and outside CI
//! (`CI=true`) it is rewritten too, so running the tests once regenerates everything.

use crate::support::{root, run, under_ci};

/// Each committed file and the command that prints it.
const GENERATED: &[(&str, &[&str])] = &[
    ("promptc.bash", &["completions", "bash"]),
    ("_promptc", &["completions", "zsh"]),
    ("promptc.fish", &["completions", "fish"]),
    ("_promptc.ps1", &["completions", "powershell"]),
    ("promptc.elv", &["completions", "elvish"]),
    ("promptc.1", &["man"]),
];

fn generate(args: &[&str]) -> Vec<u8> {
    let output = run(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "promptc {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty(), "promptc {args:?} wrote to stderr");
    output.stdout
}

#[test]
fn committed_completions_and_man_page_are_current() {
    let dir = root().join("completions");
    let mut stale = Vec::new();
    for (file, args) in GENERATED {
        let fresh = generate(args);
        let path = dir.join(file);
        if std::fs::read(&path).ok().as_deref() != Some(fresh.as_slice()) {
            // Under CI the committed files are what is checked: never rewrite them there.
            if !under_ci() {
                std::fs::create_dir_all(&dir).expect("create completions/");
                std::fs::write(&path, &fresh).expect("write the regenerated file");
            }
            stale.push(*file);
        }
    }
    let done = if under_ci() {
        "run `cargo test` outside CI to regenerate it, then commit it"
    } else {
        "it has been regenerated; commit it"
    };
    assert!(
        stale.is_empty(),
        "completions/ is stale ({}): {done}",
        stale.join(", ")
    );
}

#[test]
fn scripts_complete_every_subcommand() {
    let help = String::from_utf8(run(&["--help"]).stdout).expect("UTF-8 help");
    // Subcommands as `--help` lists them: indented names under "Commands:".
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .expect("a Commands section")
        .lines()
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.contains(&"sessions") && commands.contains(&"view"));
    for (file, args) in GENERATED
        .iter()
        .filter(|(_, args)| args[0] == "completions")
    {
        let script = String::from_utf8(generate(args)).expect("UTF-8 script");
        for command in &commands {
            assert!(script.contains(command), "{file} lacks {command}");
        }
        assert!(script.contains("codex-home"), "{file} lacks --codex-home");
    }
    let man = String::from_utf8(generate(&["man"])).expect("UTF-8 man page");
    assert!(man.starts_with(".ie \\n(.g .ds Aq"), "roff: {}", &man[..40]);
    assert!(man.contains(".TH promptc 1"), "a man(7) title line");
    for command in &commands {
        assert!(man.contains(command), "the man page lacks {command}");
    }
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let output = run(&["completions", "tcsh"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("tcsh"));
}

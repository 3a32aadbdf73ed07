//! Colour decisions (flag, `NO_COLOR`, `CLICOLOR_FORCE`, not a terminal) and the sanitizing of
//! session text: hostile terminal sequences in a rollout never reach stdout raw in text mode,
//! with or without colour; JSON output relies on JSON escaping.

use std::process::Output;

use crate::support::{code, root, run, run_env, transcript_of};

const ESC: u8 = 0x1b;

fn has_escape(output: &Output) -> bool {
    output.stdout.contains(&ESC)
}

/// Commands whose text output is coloured when colour is on.
const COLOURED: &[&[&str]] = &[
    &["view", "fixtures/rollouts/era_c_turns.jsonl"],
    &["steps", "fixtures/rollouts/era_c_turns.jsonl"],
    &["compile", "fixtures/rollouts/era_c_turns.jsonl"],
    &[
        "diff",
        "fixtures/diff/tools_changed/a.jsonl",
        "fixtures/diff/tools_changed/b.jsonl",
    ],
    &[
        "check",
        "fixtures/diff/volatile_prefix/a.jsonl",
        "fixtures/rollouts/era_a_bare.jsonl",
    ],
];

fn with_color(args: &[&str], choice: &str) -> Vec<String> {
    let mut v = vec!["--color".to_string(), choice.to_string()];
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn piped_default_has_no_colour() {
    for args in COLOURED {
        let output = run(args);
        assert!(matches!(code(&output), 0 | 1), "{args:?}");
        assert!(!has_escape(&output), "promptc {args:?} wrote ESC to a pipe");
    }
}

#[test]
fn color_always_colours() {
    for args in COLOURED {
        let always = with_color(args, "always");
        let output = run(&strs(&always));
        assert!(has_escape(&output), "promptc {always:?} has no ESC");
        let never = with_color(args, "never");
        let output = run_env(&strs(&never), &[("CLICOLOR_FORCE", "1")]);
        assert!(!has_escape(&output), "promptc {never:?} has ESC");
    }
}

#[test]
fn no_color_turns_auto_off() {
    for args in COLOURED {
        let auto = with_color(args, "auto");
        let output = run_env(&strs(&auto), &[("NO_COLOR", "1")]);
        assert!(!has_escape(&output), "NO_COLOR=1 promptc {auto:?}");
        // NO_COLOR wins over CLICOLOR_FORCE.
        let output = run_env(&strs(&auto), &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]);
        assert!(
            !has_escape(&output),
            "NO_COLOR=1 CLICOLOR_FORCE=1 promptc {auto:?}"
        );
        // The flag wins over NO_COLOR.
        let always = with_color(args, "always");
        let output = run_env(&strs(&always), &[("NO_COLOR", "1")]);
        assert!(has_escape(&output), "NO_COLOR=1 promptc {always:?}");
    }
}

#[test]
fn clicolor_force_forces_colour() {
    for args in COLOURED {
        let output = run_env(args, &[("CLICOLOR_FORCE", "1")]);
        assert!(has_escape(&output), "CLICOLOR_FORCE=1 promptc {args:?}");
        let output = run_env(args, &[("CLICOLOR_FORCE", "0")]);
        assert!(!has_escape(&output), "CLICOLOR_FORCE=0 promptc {args:?}");
    }
}

/// ESC shown as `⟨ESC⟩` so the snapshot shows where the escapes are.
fn visible(text: String) -> String {
    text.replace('\x1b', "⟨ESC⟩")
}

#[test]
fn diff_snapshots_with_and_without_colour() {
    let (a, b) = crate::support::diff_pair("tools_changed");
    // `auto` on a pipe is colourless, like `never`.
    for choice in ["auto", "never", "always"] {
        let args = ["--color", choice, "diff", a.as_str(), b.as_str()];
        let output = run(&args);
        assert_eq!(code(&output), 1);
        insta::assert_snapshot!(
            format!("diff_color_{choice}__tools_changed"),
            visible(transcript_of(
                &format!("promptc {}", args.join(" ")),
                &output
            ))
        );
    }
}

/// Raw bytes a terminal would act on, and their names.
fn hostile(stdout: &[u8]) -> Vec<&'static str> {
    let text = String::from_utf8_lossy(stdout);
    let mut found = Vec::new();
    if stdout.windows(2).any(|w| w == b"\x1b]") {
        found.push("OSC (ESC ])");
    }
    if stdout.contains(&0x07) {
        found.push("BEL");
    }
    if stdout.contains(&b'\r') {
        found.push("CR");
    }
    if text.contains('\u{9b}') {
        found.push("C1 CSI U+009B");
    }
    if text.contains('\u{202e}') {
        found.push("RLO U+202E");
    }
    if text.contains('\u{200b}') {
        found.push("ZWSP U+200B");
    }
    found
}

/// A copy of escape_sequences.jsonl whose tool output (line 7) says 1.6 seconds instead of 1.5,
/// so a diff shows the hostile text in its hunk.
fn modified_escape_copy() -> tempfile::NamedTempFile {
    let text = std::fs::read_to_string(root().join("fixtures/rollouts/escape_sequences.jsonl"))
        .expect("fixture");
    assert!(text.contains("Wall time: 1.5 seconds"));
    let changed = text.replace("Wall time: 1.5 seconds", "Wall time: 1.6 seconds");
    let file = tempfile::Builder::new()
        .suffix(".jsonl")
        .tempfile()
        .expect("temp file");
    std::fs::write(file.path(), changed).expect("write");
    file
}

#[test]
fn session_escapes_never_reach_stdout_raw_in_text_mode() {
    let fixture = "fixtures/rollouts/escape_sequences.jsonl";
    let copy = modified_escape_copy();
    let copy = copy.path().to_str().expect("UTF-8 path");
    let commands: Vec<Vec<&str>> = vec![
        vec!["view", fixture],
        vec!["view", "--width", "200", fixture],
        vec!["view", "--turn", "1", "--step", "2", fixture],
        vec!["compile", fixture],
        vec!["compile", "--full", fixture],
        vec!["compile", "--turn", "1", "--step", "1", fixture],
        vec!["steps", fixture],
        vec!["fingerprint", fixture],
        vec!["diff", fixture, copy],
        vec!["diff", copy, fixture],
    ];
    for command in commands {
        for choice in ["auto", "never", "always"] {
            let mut args = vec!["--color", choice];
            args.extend(&command);
            let output = run(&args);
            assert!(matches!(code(&output), 0 | 1), "promptc {args:?}");
            let found = hostile(&output.stdout);
            assert!(found.is_empty(), "promptc {args:?} wrote raw {found:?}");
            assert!(
                !hostile(&output.stderr).contains(&"OSC (ESC ])"),
                "promptc {args:?}: stderr"
            );
        }
    }
    // The diff does show the changed hostile output, escaped.
    let output = run(&["diff", fixture, copy]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("1.6 seconds"), "{text}");
    assert!(
        text.contains("\\u{202e}") || text.contains("\\u{202E}"),
        "{text}"
    );
}

#[test]
fn the_text_view_shows_escapes_visibly() {
    let output = run(&[
        "view",
        "--width",
        "400",
        "fixtures/rollouts/escape_sequences.jsonl",
    ]);
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let lower = text.to_lowercase();
    for visible in [
        "\\x1b]0;pwned\\x07",
        "\\x1b[2j",
        "\\r",
        "\\u{202e}",
        "\\u{200b}",
    ] {
        assert!(lower.contains(visible), "{visible} is not shown: {text}");
    }
    assert!(
        lower.contains("\\u{9b}") || lower.contains("\\x9b"),
        "{text}"
    );
}

/// JSON output keeps the text exact, escaped the JSON way: control characters as `\u001b`, never
/// a raw ESC or BEL; parsing it back gives the rollout's exact text.
#[test]
fn json_output_keeps_json_escaping() {
    let fixture = "fixtures/rollouts/escape_sequences.jsonl";
    for args in [
        vec!["--color", "always", "view", "--json", fixture],
        vec!["--color", "always", "compile", "--json", fixture],
    ] {
        let output = run(&args);
        assert_eq!(code(&output), 0);
        assert!(!output.stdout.contains(&ESC), "promptc {args:?}: raw ESC");
        assert!(!output.stdout.contains(&0x07), "promptc {args:?}: raw BEL");
        assert!(!output.stdout.contains(&b'\r'), "promptc {args:?}: raw CR");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("\\u001b]0;pwned\\u0007"), "promptc {args:?}");
    }
    let view = crate::support::json(&["view", "--json", fixture]);
    assert_eq!(
        view["model_view"][0]["item"]["content"][0]["text"],
        "Print the banner \u{1b}]0;pwned\u{7} and then \u{1b}[2J clear\r\nthe screen."
    );
    assert_eq!(
        view["model_view"][3]["item"]["content"][0]["text"],
        "The build failed.\u{202e} (rtl) \u{200b}(zero width) \u{1b}[1mbold\u{1b}[0m\rOVERWRITE"
    );
}

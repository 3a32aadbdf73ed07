//! Inputs built at run time that are too big to commit, and promptc's promise to never write
//! next to its input.

use std::time::SystemTime;

use crate::support::{promptc, root};

fn listing(dir: &std::path::Path) -> Vec<(String, u64, SystemTime)> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("temp dir")
        .flatten()
        .map(|e| {
            let meta = e.metadata().expect("metadata");
            (
                e.file_name().to_string_lossy().into_owned(),
                meta.len(),
                meta.modified().expect("mtime"),
            )
        })
        .collect();
    entries.sort();
    entries
}

#[test]
fn a_single_100_mb_line_is_reported_briefly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("huge.jsonl");
    let huge = format!(
        "{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"{}",
        "a".repeat(100 * 1024 * 1024)
    );
    let valid = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#;
    std::fs::write(&path, format!("{valid}\n{huge}\n")).expect("write");
    let output = promptc()
        .args(["view", path.to_str().expect("utf-8 path")])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(":2:"), "names line 2: {stderr}");
    assert!(stderr.contains("EOF while parsing a string"), "{stderr}");
    assert!(
        stderr.len() < 400,
        "a short excerpt, not the line: {} bytes",
        stderr.len()
    );
}

#[test]
fn deeply_nested_json_does_not_overflow_the_stack() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("deep.jsonl");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let lines = [
        r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#.to_string(),
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#.to_string(),
        format!(
            r#"{{"timestamp":"t","type":"response_item","payload":{{"type":"message","role":"user","content":{deep}}}}}"#
        ),
        format!(
            r#"{{"timestamp":"t","type":"event_msg","payload":{{"type":"token_count","info":{deep}}}}}"#
        ),
        deep.clone(),
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    for command in ["view", "steps", "compile", "fingerprint", "check"] {
        let output = promptc()
            .args([command, path.to_str().expect("utf-8 path")])
            .output()
            .expect("runs");
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{command}: {:?} {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn promptc_never_writes_to_the_input_or_its_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["era_b_steps.jsonl", "compaction_legacy.jsonl"] {
        std::fs::copy(
            root().join("fixtures/rollouts").join(name),
            dir.path().join(name),
        )
        .expect("copy");
    }
    let before = listing(dir.path());
    let a = dir.path().join("era_b_steps.jsonl");
    let b = dir.path().join("compaction_legacy.jsonl");
    let (a, b) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    // Each with the exit code it has on these files: a panic (101 in a dev build) fails.
    let runs: [(&[&str], i32); 8] = [
        (&["view", a], 0),
        (&["view", a, "--json"], 0),
        (&["compile", a], 0),
        (&["fingerprint", a, "--json"], 0),
        (&["steps", a], 0),
        (&["diff", a, b], 1),
        (&["check", a, b], 0),
        (
            &[
                "sessions",
                "--codex-home",
                dir.path().to_str().expect("utf-8"),
            ],
            0,
        ),
    ];
    for (args, code) in runs {
        let output = promptc()
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("runs");
        assert_eq!(
            output.status.code(),
            Some(code),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert_eq!(listing(dir.path()), before);
}

/// A file big enough to be mapped (or, with `--no-mmap`, read in parts) and parsed in parts on
/// several threads gives the same output as the same bytes read from standard input in one
/// piece: the parts join exactly, and the pages of the map that the parse gave back read the
/// same when printing items (`view`) or counting their tokens (`steps`) reads them again. On one
/// core the file is read and parsed in one part, and the map and its releases are still checked
/// (the library's parts are checked on any machine by `tests/cli/fuzz_bodies.rs`).
#[test]
fn a_big_file_mapped_or_read_in_parts_loads_like_one_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.jsonl");
    let fixture = std::fs::read_to_string(root().join("fixtures/rollouts/era_b_steps.jsonl"))
        .expect("fixture");
    let (meta, body) = fixture
        .split_once('\n')
        .expect("a meta line, then the rest");
    let mut text = format!("{meta}\n");
    let mut copies = 0;
    // Past 8 MB a file is read in parts; a bad line and a late session_meta in the middle.
    while text.len() < 9 << 20 {
        text.push_str(body);
        copies += 1;
        if copies == 700 {
            text.push_str("{not json\n");
            text.push_str(meta);
            text.push('\n');
        }
    }
    std::fs::write(&path, &text).expect("write");
    let path = path.to_str().expect("utf-8 path");
    let line = 1
        + 700
            * fixture
                .split_once('\n')
                .map_or(0, |(_, b)| b.lines().count())
        + 1;
    for command in ["view", "fingerprint", "steps"] {
        // Mapped (the default for a file this big), read in parts (`--no-mmap`), and from stdin.
        let mapped = promptc()
            .args([command, "--format", "json", path])
            .output()
            .expect("runs");
        let read = promptc()
            .args(["--no-mmap", command, "--format", "json", path])
            .output()
            .expect("runs");
        let from_stdin = promptc()
            .args([command, "--format", "json", "-"])
            .stdin(std::fs::File::open(path).expect("open"))
            .output()
            .expect("runs");
        assert_eq!(from_stdin.status.code(), Some(0), "{command}");
        assert!(
            from_stdin.stdout.len() > 1 << 20,
            "{command}: a whole session"
        );
        let stdout =
            |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).replace(path, "-");
        let stderr =
            |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).replace(path, "-");
        assert!(
            stderr(&from_stdin).contains(&format!("-:{line}:")),
            "{command}: {}",
            stderr(&from_stdin)
        );
        for (how, from_file) in [("mapped", &mapped), ("read", &read)] {
            assert_eq!(from_file.status.code(), Some(0), "{command} {how}");
            assert!(
                stdout(from_file) == stdout(&from_stdin),
                "{command} {how}: same output from a file and from stdin"
            );
            assert_eq!(stderr(from_file), stderr(&from_stdin), "{command} {how}");
        }
    }
}

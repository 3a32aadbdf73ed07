//! Inputs built at run time that are too big to commit, and promptc's promise to never write
//! next to its input.

use std::time::SystemTime;

use crate::support::{code, promptc, root, run};

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

/// The era B fixture's meta line and the lines after it, to build big rollouts from.
fn era_b_meta_and_body() -> (String, String) {
    let fixture = std::fs::read_to_string(root().join("fixtures/rollouts/era_b_steps.jsonl"))
        .expect("fixture");
    let (meta, body) = fixture
        .split_once('\n')
        .expect("a meta line, then the rest");
    (meta.to_string(), body.to_string())
}

/// A big file (9 MB, which promptc once mapped and parsed in parts) gives the same output as
/// the same bytes read from standard input, with `--no-mmap` (now a no-op, still accepted)
/// too. On one core the file is read in one part (the library's parts are checked on any
/// machine by `tests/cli/fuzz_bodies.rs`).
#[test]
fn a_big_file_mapped_or_read_in_parts_loads_like_one_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.jsonl");
    let (meta, body) = era_b_meta_and_body();
    let mut text = format!("{meta}\n");
    let mut copies = 0;
    // Past 8 MB a file is read in parts; a bad line and a late session_meta in the middle.
    while text.len() < 9 << 20 {
        text.push_str(&body);
        copies += 1;
        if copies == 700 {
            text.push_str("{not json\n");
            text.push_str(&meta);
            text.push('\n');
        }
    }
    std::fs::write(&path, &text).expect("write");
    let path = path.to_str().expect("utf-8 path");
    let line = 1 + 700 * body.lines().count() + 1;
    for command in ["view", "fingerprint", "steps"] {
        // Read from the file, with `--no-mmap` (a no-op now), and from stdin.
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

/// A rollout truncated while promptc reads it gives an answer, never a signal: promptc reads
/// the file into memory (no map whose missing pages would end it with SIGBUS, exit 135), so it
/// sees the bytes as they were when read. Whatever the moment of the cut, promptc either reads
/// the file whole or in part (exit 0, a cut last line skipped with a warning) or says what is
/// wrong with the file it names (exit 2). The file is 12 MB: files of 8 MB or more were mapped.
#[test]
fn a_rollout_truncated_while_read_gives_an_answer_not_a_signal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("shrinking.jsonl");
    let (meta, body) = era_b_meta_and_body();
    let mut text = format!("{meta}\n");
    while text.len() < 12 << 20 {
        text.push_str(&body);
    }
    let name = path.to_str().expect("utf-8 path");
    for (round, delay_ms) in [0u64, 1, 3, 10, 30, 100, 300].into_iter().enumerate() {
        std::fs::write(&path, &text).expect("write");
        let child = promptc()
            .args(["steps", name])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("runs");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // Cut to a few lines (mid-line), or to nothing.
        let keep = if round % 2 == 0 { 1000 } else { 0 };
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_len(keep))
            .expect("truncate");
        let output = child.wait_with_output().expect("waits");
        let stderr = String::from_utf8_lossy(&output.stderr);
        match output.status.code() {
            Some(0) => {}
            Some(2) => assert!(stderr.contains(name), "round {round}: {stderr}"),
            other => panic!(
                "round {round} ({delay_ms} ms): exit {other:?}, {:?}: {stderr}",
                output.status
            ),
        }
    }
}

/// A UTF-8 byte order mark at a file's start (an editor's save) is passed over, as jq and
/// Python's `json.loads` pass over it: the first line is read, not skipped (a rollout's is its
/// `session_meta`). A bad first line is still skipped, its column counting the mark's bytes.
#[test]
fn a_byte_order_mark_at_a_files_start_is_passed_over() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marked = dir.path().join("marked.jsonl");
    let marked_name = marked.to_str().unwrap();
    for fixture in [
        "fixtures/rollouts/era_b_steps.jsonl",
        "fixtures/claude/tool_call_2.1.100.jsonl",
    ] {
        let plain = root().join(fixture);
        let bytes = std::fs::read(&plain).unwrap();
        std::fs::write(&marked, [b"\xEF\xBB\xBF".as_slice(), &bytes].concat()).unwrap();
        for command in ["steps", "fingerprint", "view"] {
            let expected = run(&[command, plain.to_str().unwrap(), "--json"]);
            let got = run(&[command, marked_name, "--json"]);
            assert_eq!(code(&got), 0, "{command} {fixture}");
            assert_eq!(
                String::from_utf8_lossy(&got.stderr),
                "",
                "{command} {fixture}"
            );
            let got = String::from_utf8(got.stdout).unwrap();
            let expected = String::from_utf8(expected.stdout).unwrap();
            assert_eq!(
                got.replace(marked_name, "FILE"),
                expected.replace(plain.to_str().unwrap(), "FILE"),
                "{command} {fixture}"
            );
        }
        // The first line made bad after the mark: `{"type":x` is cut at `x`, the 9th byte of the
        // line and the 12th of the file's.
        let rest = &bytes[bytes.iter().position(|&b| b == b'\n').unwrap()..];
        let broken = [b"\xEF\xBB\xBF{\"type\":x}".as_slice(), rest].concat();
        std::fs::write(&marked, broken).unwrap();
        let view = run(&["view", marked_name, "--json"]);
        let view: serde_json::Value = serde_json::from_slice(&view.stdout).unwrap();
        assert_eq!(view["skipped_lines"][0]["line"], 1, "{fixture}");
        assert_eq!(view["skipped_lines"][0]["column"], 12, "{fixture}");
    }
}

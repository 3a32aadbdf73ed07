//! `promptc watch`: a writer appends a rollout in uneven chunks (cut inside lines and inside
//! UTF-8 sequences) while `watch` follows it; after Ctrl-C (exit 0) its step rows are `steps`'
//! rows on the whole file. Truncation and replacement start over, a partial last line waits,
//! `--exit-on-drift` exits 1.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use crate::support::{all_samples, fixtures, promptc, root, run, stdout_json};

/// A running `promptc watch`, its stdout read line by line on a thread.
struct Watching {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Watching {
    fn start(file: &Path, extra: &[&str]) -> Watching {
        let mut command = promptc();
        command.arg("watch").arg(file).args(extra);
        let mut watching = Watching::spawn(command);
        // It has opened the file and read what is there once it says so.
        watching.wait_for(|l| l.contains("watching"));
        watching
    }

    /// `promptc watch …` polling every 10 ms.
    fn spawn(mut command: std::process::Command) -> Watching {
        let mut child = command
            .args(["--interval", "10"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promptc watch starts");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if send.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Watching {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Wait (up to 20 s) for a line that `matches`; the lines so far are in `seen`.
    fn wait_for(&mut self, matches: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => panic!("no such line in time; so far:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// No line that `matches` within `wait`.
    fn none_for(&mut self, wait: Duration, matches: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + wait;
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            assert!(!matches(&line), "unexpected line: {line}");
            self.seen.push(line);
        }
    }

    /// Ctrl-C, then every line and the exit code.
    fn interrupt(mut self) -> (Vec<String>, Option<i32>, String) {
        let status = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let output = self.child.wait_with_output().unwrap();
        self.seen.extend(self.lines.iter());
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (self.seen, output.status.code(), stderr)
    }
}

/// Cut points: inside every line (a third of the way), after the lead byte of multi-byte
/// characters, and at pseudo-random sizes between.
fn cuts(bytes: &[u8]) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut line_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            cuts.push(line_start + (i - line_start) / 3);
            line_start = i + 1;
        }
        if b >= 0xC0 && cuts.len() % 3 == 0 {
            cuts.push(i + 1);
        }
    }
    let mut seed = 12345u64;
    let mut at = 0;
    while at < bytes.len() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        at += 1 + (seed >> 33) as usize % 3000;
        cuts.push(at.min(bytes.len()));
    }
    cuts.push(bytes.len());
    cuts.sort();
    cuts.dedup();
    cuts
}

/// Append `bytes` to `path` cut at `cuts`, with pauses so that the watch reads between cuts.
fn append_in_chunks(path: &Path, bytes: &[u8], cuts: &[usize]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    let mut from = 0;
    for (k, &to) in cuts.iter().enumerate() {
        file.write_all(&bytes[from..to]).unwrap();
        file.flush().unwrap();
        from = to;
        // Often enough that the watch sees partial lines, rarely enough to stay quick.
        if k % 7 == 0 {
            std::thread::sleep(Duration::from_millis(3));
        }
    }
}

fn temp_rollout(dir: &Path) -> PathBuf {
    let path = dir.join("rollout.jsonl");
    std::fs::write(&path, b"").unwrap();
    path
}

fn step_rows(lines: &[String]) -> Vec<serde_json::Value> {
    lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .inspect(|e| assert_eq!(e["schema_version"], 1, "{e}"))
        .filter(|e| e["event"] == "step")
        .map(|e| e["row"].clone())
        .collect()
}

/// Watch `source` being appended, JSON and text, and compare with `steps` on the whole file.
fn rows_are_steps_rows(source: &Path) {
    let bytes = std::fs::read(source).unwrap();
    let cuts = cuts(&bytes);
    let expected = {
        let args = ["steps", source.to_str().unwrap(), "--format", "json"];
        let output = run(&args);
        if output.status.code() != Some(0) {
            // Not a rollout `steps` reads (session_meta only): nothing to compare.
            return;
        }
        stdout_json(&args, &output)["steps"].clone()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let watching = Watching::start(&path, &["--format", "json"]);
    append_in_chunks(&path, &bytes, &cuts);
    let (lines, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "Ctrl-C exits 0: {stderr}");
    assert_eq!(
        serde_json::Value::Array(step_rows(&lines)),
        expected,
        "{}",
        source.display()
    );

    // Text: the rows are `steps`' table rows, line for line.
    let text = run(&["steps", source.to_str().unwrap()]);
    let text = String::from_utf8(text.stdout).unwrap();
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("turn step"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let path = dir.path().join("text.jsonl");
    std::fs::write(&path, b"").unwrap();
    let watching = Watching::start(&path, &[]);
    append_in_chunks(&path, &bytes, &cuts);
    let (lines, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    // Session text reaches the terminal escaped: no control or bidi character survives.
    assert!(
        lines.iter().all(|l| !l
            .chars()
            .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c))),
        "{}: unescaped text",
        source.display()
    );
    let rows: Vec<&str> = lines
        .iter()
        .skip(2)
        .map(String::as_str)
        .filter(|l| !l.starts_with("-- "))
        .collect();
    assert_eq!(rows, table, "{}", source.display());
}

#[test]
fn fixtures_watched_in_chunks_give_steps_rows() {
    let mut files: Vec<PathBuf> = fixtures("rollouts")
        .iter()
        .map(|f| root().join(f))
        .collect();
    files.push(root().join("fixtures/diff/resumed_model_switch/b.jsonl"));
    files.push(root().join("fixtures/diff/rollback/b.jsonl"));
    files.push(root().join("fixtures/diff/compaction/b.jsonl"));
    for file in files {
        rows_are_steps_rows(&file);
    }
}

/// Real rollouts (when the samples folder is there): the largest few, for time.
#[test]
fn real_samples_watched_in_chunks_give_steps_rows() {
    let mut samples = all_samples();
    if samples.is_empty() {
        crate::support::skip("no samples folder");
        return;
    }
    samples.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
    // One with non-ASCII text, so that cuts fall inside UTF-8 sequences.
    let utf8 = samples
        .iter()
        .find(|p| std::fs::read(p).unwrap().iter().any(|&b| b >= 0xC0))
        .cloned();
    let mut chosen: Vec<PathBuf> = samples.into_iter().take(2).collect();
    chosen.extend(utf8);
    for sample in chosen {
        rows_are_steps_rows(&sample);
    }
}

/// A fork (its parent in the Codex home that holds it) watched in chunks: its rows are `steps`'
/// rows, which start with the parent's history; the parent is read once, at the first load.
#[test]
fn a_fork_watched_in_chunks_gives_steps_rows() {
    let folder = "sessions/2026/12/02";
    let parent = "rollout-2026-12-02T09-02-58-01a235fe-2931-7c83-aca7-0875ae32363a.jsonl";
    let fork = "rollout-2026-12-02T09-02-59-01a235fe-2b89-7a80-8bb7-5c585a098b44.jsonl";
    let source = root().join("fixtures/fork-home").join(folder);
    let forked = source.join(fork);
    let expected = {
        let args = ["steps", forked.to_str().unwrap(), "--format", "json"];
        stdout_json(&args, &run(&args))["steps"].clone()
    };
    assert!(expected.as_array().is_some_and(|rows| !rows.is_empty()));
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(folder);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(source.join(parent), home.join(parent)).unwrap();
    let path = home.join(fork);
    std::fs::write(&path, b"").unwrap();
    let bytes = std::fs::read(&forked).unwrap();
    let watching = Watching::start(&path, &["--format", "json"]);
    append_in_chunks(&path, &bytes, &cuts(&bytes));
    let (lines, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(serde_json::Value::Array(step_rows(&lines)), expected);
}

/// The first lines of a fixture, up to and including the first `token_count`.
fn up_to_first_usage(fixture: &str) -> (Vec<u8>, Vec<u8>) {
    let bytes = std::fs::read(root().join(fixture)).unwrap();
    let at = bytes
        .windows(11)
        .position(|w| w == b"token_count")
        .expect("a token_count line");
    let end = at + memchr_newline(&bytes[at..]);
    (bytes[..end].to_vec(), bytes[end..].to_vec())
}

fn memchr_newline(bytes: &[u8]) -> usize {
    bytes.iter().position(|&b| b == b'\n').unwrap()
}

#[test]
fn a_partial_last_line_waits_for_its_newline() {
    let (head, rest) = up_to_first_usage("fixtures/diff/resumed_model_switch/b.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let mut watching = Watching::start(&path, &["--format", "json"]);
    // Everything up to the usage line, without its newline: no row yet.
    append_in_chunks(&path, &head, &[head.len()]);
    watching.none_for(Duration::from_millis(400), |l| {
        l.contains("\"event\":\"step\"")
    });
    append_in_chunks(&path, &rest[..1], &[1]);
    let row = watching.wait_for(|l| l.contains("\"event\":\"step\""));
    assert!(row.contains("\"step\":1"), "{row}");
    let (_, code, _) = watching.interrupt();
    assert_eq!(code, Some(0));
}

#[test]
fn truncation_and_replacement_start_over() {
    let source = root().join("fixtures/rollouts/era_b_steps.jsonl");
    let bytes = std::fs::read(&source).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let mut watching = Watching::start(&path, &["--format", "json"]);
    append_in_chunks(&path, &bytes, &[bytes.len() / 2, bytes.len()]);
    watching.wait_for(|l| l.contains("\"event\":\"step\""));

    // Truncated, then written again: said, and the rows come again from the first step.
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    watching.wait_for(|l| l.contains("\"event\":\"restart\"") && l.contains("truncated"));
    append_in_chunks(&path, &bytes, &[bytes.len()]);
    let first = watching.wait_for(|l| l.contains("\"event\":\"step\""));
    assert!(first.contains("\"turn\":1,\"step\":1,"), "{first}");

    // Another file renamed over it.
    let other = dir.path().join("other.jsonl");
    std::fs::write(&other, &bytes).unwrap();
    std::fs::rename(&other, &path).unwrap();
    watching.wait_for(|l| l.contains("\"event\":\"restart\"") && l.contains("replaced"));
    let first = watching.wait_for(|l| l.contains("\"event\":\"step\""));
    assert!(first.contains("\"turn\":1,\"step\":1,"), "{first}");
    let (lines, code, _) = watching.interrupt();
    assert_eq!(code, Some(0));
    // After the last restart: exactly `steps`' rows.
    let last = lines.iter().rposition(|l| l.contains("restart")).unwrap();
    let expected = stdout_json(
        &["steps", source.to_str().unwrap(), "--format", "json"],
        &run(&["steps", source.to_str().unwrap(), "--format", "json"]),
    )["steps"]
        .clone();
    assert_eq!(
        serde_json::Value::Array(step_rows(&lines[last + 1..])),
        expected
    );
}

#[test]
fn exit_on_drift_exits_1_at_the_first_unexpected_drift() {
    let source = root().join("fixtures/diff/resumed_model_switch/b.jsonl");
    let bytes = std::fs::read(&source).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let child = promptc()
        .arg("watch")
        .arg(&path)
        .args(["--interval", "10", "--exit-on-drift"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    append_in_chunks(&path, &bytes, &cuts(&bytes));
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    // The drift is the last line, after its step's row.
    let last = stdout.lines().last().unwrap();
    assert!(last.starts_with("-- UNEXPECTED DRIFT at turn"), "{stdout}");

    // Without the flag the same file runs on to Ctrl-C, which exits 0.
    let path = dir.path().join("again.jsonl");
    std::fs::write(&path, b"").unwrap();
    let watching = Watching::start(&path, &[]);
    append_in_chunks(&path, &bytes, &[bytes.len()]);
    let (lines, code, _) = watching.interrupt();
    assert_eq!(code, Some(0));
    assert!(
        lines.iter().any(|l| l.contains("UNEXPECTED DRIFT")),
        "{lines:?}"
    );
}

/// `--next` in an empty Codex home waits for the first rollout, then switches to the next one
/// Codex starts: said, and its rows follow.
#[test]
fn next_follows_the_session_codex_starts_next() {
    let bytes = std::fs::read(root().join("fixtures/rollouts/era_b_steps.jsonl")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join("sessions/2026/01/05");
    std::fs::create_dir_all(&day).unwrap();
    let mut command = promptc();
    command
        .args(["watch", "--next", "--format", "json", "--codex-home"])
        .arg(home.path());
    let mut watching = Watching::spawn(command);
    std::thread::sleep(Duration::from_millis(200));
    let first = day.join("rollout-2026-01-05T10-00-00-019b8e10-0000-7000-8000-000000000001.jsonl");
    std::fs::write(&first, &bytes).unwrap();
    watching.wait_for(|l| l.contains("\"event\":\"watching\"") && l.contains("000000000001"));
    watching.wait_for(|l| l.contains("\"event\":\"step\""));
    let second = day.join("rollout-2026-01-05T11-00-00-019b8e10-0000-7000-8000-000000000002.jsonl");
    std::fs::write(&second, &bytes).unwrap();
    let restart = watching.wait_for(|l| l.contains("\"event\":\"restart\""));
    assert!(
        restart.contains("new_session") && restart.contains("000000000002"),
        "{restart}"
    );
    let row = watching.wait_for(|l| l.contains("\"event\":\"step\""));
    assert!(row.contains("\"turn\":1,\"step\":1,"), "{row}");
    let (_, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A turn id with a terminal escape and a bidi override is written escaped.
#[test]
fn session_text_is_escaped() {
    let bytes = std::fs::read(root().join("fixtures/diff/resumed_model_switch/b.jsonl")).unwrap();
    let text = String::from_utf8(bytes).unwrap().replace(
        "01a235ff-4ffb-7233-90d8-e2836cbe34a2",
        "evil\\u001b[2J\\u202eid",
    );
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let watching = Watching::start(&path, &[]);
    append_in_chunks(&path, text.as_bytes(), &[text.len()]);
    let (lines, code, _) = watching.interrupt();
    assert_eq!(code, Some(0));
    let started = lines
        .iter()
        .find(|l| l.contains("evil"))
        .expect("the turn line");
    assert!(
        !started.chars().any(|c| c.is_control() || c == '\u{202e}'),
        "{started:?}"
    );
}

/// End to end: a real Codex (0.171.0, from the conformance recorder's cache) runs against the
/// mock server while `watch --next` follows it; `conformance/watch_live.py` checks that rows
/// arrived while Codex was running, equal `steps`' rows on the final file, and that the sandbox
/// change of the resumed run is an unexpected drift. Without that Codex the test says so and
/// passes, except under `CI=true`, where `.ci/run` installs it.
#[test]
fn a_live_codex_session_is_watched() {
    let cache = std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cache/promptc-conformance"))
        .expect("HOME is set");
    let codex = cache.join("codex-0.171.0/node_modules/.bin/codex");
    if !codex.exists() {
        let message = format!(
            "{} is not installed: `.ci/run` (or `conformance/record.py --install --versions 0.171.0`) installs it",
            codex.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!("skipped: {message}");
        return;
    }
    let output = std::process::Command::new("python3")
        .arg(root().join("conformance/watch_live.py"))
        .arg("--promptc")
        .arg(env!("CARGO_BIN_EXE_promptc"))
        .arg("--cache")
        .arg(&cache)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("ok: Codex 0.171.0"), "{stdout}\n{stderr}");
}

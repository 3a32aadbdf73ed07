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

/// Watch `source` being appended, JSON and text, and compare with `steps` on the whole file:
/// the rows compared.
fn rows_are_steps_rows(source: &Path) -> usize {
    let bytes = std::fs::read(source).unwrap();
    let cuts = cuts(&bytes);
    let expected = {
        let args = ["steps", source.to_str().unwrap(), "--format", "json"];
        let output = run(&args);
        if output.status.code() != Some(0) {
            // Not a rollout `steps` reads (session_meta only): nothing to compare.
            return 0;
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
    table.len()
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

/// A watch of a rollout written up to its first usage line, that line without its newline: no
/// row yet. The rollout's bytes up to there, and the rest.
fn watching_up_to_a_usage_line_without_its_newline(path: &Path) -> (Watching, Vec<u8>, Vec<u8>) {
    let (head, rest) = up_to_first_usage("fixtures/diff/resumed_model_switch/b.jsonl");
    let mut watching = Watching::start(path, &["--format", "json"]);
    append_in_chunks(path, &head, &[head.len()]);
    watching.none_for(Duration::from_millis(400), |l| {
        l.contains("\"event\":\"step\"")
    });
    (watching, head, rest)
}

#[test]
fn a_partial_last_line_waits_for_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let (mut watching, _, rest) = watching_up_to_a_usage_line_without_its_newline(&path);
    append_in_chunks(&path, &rest[..1], &[1]);
    let row = watching.wait_for(|l| l.contains("\"event\":\"step\""));
    assert!(row.contains("\"step\":1"), "{row}");
    let (_, code, _) = watching.interrupt();
    assert_eq!(code, Some(0));
}

/// When the watch ends, a last line still without its newline is read as `steps` reads it: the
/// session's last row comes then (a file an agent left without a final newline gives the rows
/// `steps` gives), and a line cut short is warned about, not dropped in silence.
#[test]
fn a_last_line_without_its_newline_is_read_when_the_watch_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let (watching, head, _) = watching_up_to_a_usage_line_without_its_newline(&path);
    let (lines, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0));
    assert_eq!(stderr, "");
    let args = ["steps", path.to_str().unwrap(), "--format", "json"];
    let expected = stdout_json(&args, &run(&args))["steps"].clone();
    assert_eq!(
        expected[0]["observed_input_tokens"], 7503,
        "the usage line is read"
    );
    assert_eq!(serde_json::Value::Array(step_rows(&lines)), expected);

    // Cut inside the usage line: warned when the watch ends, as `steps` warns.
    let cut = &head[..head.len() - 10];
    let path = dir.path().join("cut.jsonl");
    std::fs::write(&path, b"").unwrap();
    let watching = Watching::start(&path, &["--format", "json"]);
    append_in_chunks(&path, cut, &[cut.len()]);
    std::thread::sleep(Duration::from_millis(400));
    let (_, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0));
    let line = cut.iter().filter(|&&b| b == b'\n').count() + 1;
    assert!(
        stderr.starts_with(&format!("warning: {}:{line}:", path.display()))
            && stderr.contains("skipped"),
        "{stderr}"
    );
}

/// `--tools` with a Codex tool list (tools without a `name`, as `web_search`) follows a rollout:
/// it is read as Claude Code's only when a transcript is followed.
#[test]
fn a_codex_tool_list_follows_a_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"type": "web_search"}, {"type": "function", "name": "shell"}]"#,
    )
    .unwrap();
    let path = dir.path().join("rollout.jsonl");
    std::fs::copy(root().join("fixtures/rollouts/era_b_steps.jsonl"), &path).unwrap();
    let mut watching = Watching::start(
        &path,
        &["--format", "json", "--tools", tools.to_str().unwrap()],
    );
    watching.wait_for(|l| l.contains(r#""event":"step""#));
    let (_, code, stderr) = watching.interrupt();
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
}

/// The other agent's flags are named as not used once the file's agent is known, as the other
/// commands name them: `--system` for a rollout, `--instructions` for a transcript.
#[test]
fn the_other_agents_flags_are_named_once_the_agent_is_known() {
    let dir = tempfile::tempdir().unwrap();
    let given = dir.path().join("given.txt");
    std::fs::write(&given, "you are a test").unwrap();
    let given = given.to_str().unwrap();
    let rollout = root().join("fixtures/rollouts/era_b_steps.jsonl");
    let transcript = root().join("fixtures/claude/tool_call_2.1.100.jsonl");
    for (path, flag, message) in [
        (
            &rollout,
            "--system",
            "--system is for Claude Code transcripts, and {} is a Codex rollout: not used for it",
        ),
        (
            &transcript,
            "--instructions",
            "--instructions is for Codex rollouts, and {} is a Claude Code transcript: not used for it",
        ),
    ] {
        let mut watching = Watching::start(path, &["--format", "json", flag, given]);
        watching.wait_for(|l| l.contains(r#""event":"step""#));
        let (_, code, stderr) = watching.interrupt();
        assert_eq!(code, Some(0));
        let name = path.display().to_string();
        assert_eq!(
            stderr,
            format!("warning: {}\n", message.replace("{}", &name)),
            "{flag}"
        );
    }
}

/// A path that does not exist yet is said so on stderr (a mistyped path would otherwise wait in
/// silence), and is followed once it is written.
#[test]
fn a_path_not_written_yet_is_warned_about_and_waited_for() {
    let source = root().join("fixtures/rollouts/era_b_steps.jsonl");
    let bytes = std::fs::read(&source).unwrap();
    let args = ["steps", source.to_str().unwrap(), "--format", "json"];
    let expected = stdout_json(&args, &run(&args))["steps"].clone();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("later.jsonl");
    let mut watching = Watching::start(&path, &["--format", "json"]);
    std::fs::write(&path, &bytes).unwrap();
    watching.wait_for(|l| l.contains(r#""event":"step""#));
    std::thread::sleep(Duration::from_millis(200));
    let (lines, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0));
    assert_eq!(
        stderr,
        format!(
            "warning: {} does not exist yet: waiting for it to be written (Ctrl-C to stop)\n",
            path.display()
        )
    );
    assert_eq!(serde_json::Value::Array(step_rows(&lines)), expected);
}

/// A byte order mark at the start of a watched file is passed over as `steps` passes over it
/// (`hostile::a_byte_order_mark_at_a_files_start_is_passed_over` holds those rows to the file's
/// without the mark), for both agents, the mark written in a chunk of its own.
#[test]
fn a_byte_order_mark_at_a_watched_files_start_is_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    for fixture in [
        "fixtures/rollouts/era_b_steps.jsonl",
        "fixtures/claude/tool_call_2.1.100.jsonl",
    ] {
        let bytes = std::fs::read(root().join(fixture)).unwrap();
        let marked = dir.path().join("marked.jsonl");
        std::fs::write(&marked, [b"\xEF\xBB\xBF".as_slice(), &bytes].concat()).unwrap();
        let args = ["steps", marked.to_str().unwrap(), "--format", "json"];
        let expected = stdout_json(&args, &run(&args))["steps"].clone();
        assert!(!expected.as_array().unwrap().is_empty(), "{fixture}");
        let path = dir.path().join("watched.jsonl");
        std::fs::write(&path, b"").unwrap();
        let watching = Watching::start(&path, &["--format", "json"]);
        let marked = std::fs::read(&marked).unwrap();
        append_in_chunks(&path, &marked, &[3, marked.len() / 2, marked.len()]);
        std::thread::sleep(Duration::from_millis(200));
        let (lines, code, stderr) = watching.interrupt();
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{fixture}");
        assert_eq!(
            serde_json::Value::Array(step_rows(&lines)),
            expected,
            "{fixture}"
        );
    }
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

/// The recorded Claude Code transcripts of a few scenarios of every build, main files and
/// subagents', and the fixtures of `fixtures/claude/`.
fn claude_transcripts() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let base = root().join("tests/conformance/claude");
    for version in ["1.0.30", "1.0.128", "2.0.77", "2.1.100", "2.1.332"] {
        for scenario in [
            "tool_call",
            "parallel_calls",
            "compact",
            "auto_compaction",
            "subagent",
        ] {
            let mut stack = vec![base.join(version).join(scenario).join("home")];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "jsonl")
                        && std::fs::metadata(&path).is_ok_and(|m| m.len() > 0)
                    {
                        files.push(path);
                    }
                }
            }
        }
    }
    files.sort();
    assert!(files.len() > 20, "{} recorded transcripts", files.len());
    for name in ["tool_call_2.1.100", "parallel_calls_1.0.30", "bad_lines"] {
        files.push(root().join(format!("fixtures/claude/{name}.jsonl")));
    }
    files
}

/// Claude Code transcripts appended in uneven chunks, watched from an empty file: the rows are
/// `steps`' rows (JSON and text, Anthropic's columns), on recorded transcripts of every build.
#[test]
fn claude_transcripts_watched_in_chunks_give_steps_rows() {
    let rows: usize = claude_transcripts()
        .iter()
        .map(|file| rows_are_steps_rows(file))
        .sum();
    assert!(rows > 100, "{rows} rows");
}

/// Real Claude Code transcripts (when the samples folder is there): the largest, one with
/// non-ASCII text, a subagent's own file.
#[test]
fn real_claude_transcripts_watched_in_chunks_give_steps_rows() {
    let dir = root().join("../shared/claude-code-samples");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} is missing under CI=true",
            dir.display()
        );
        crate::support::skip("no Claude Code samples folder");
        return;
    };
    let mut samples: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    samples.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
    let mut chosen: Vec<PathBuf> = samples.iter().take(2).cloned().collect();
    chosen.extend(
        samples
            .iter()
            .rev()
            .find(|p| std::fs::read(p).unwrap().iter().any(|&b| b >= 0xC0))
            .cloned(),
    );
    chosen.extend(
        samples
            .iter()
            .find(|p| p.file_name().unwrap().to_string_lossy().contains("agent-"))
            .cloned(),
    );
    let rows: usize = chosen.iter().map(|file| rows_are_steps_rows(file)).sum();
    assert!(rows > 100, "{rows} rows");
}

/// An empty file: the watch says what it follows and waits; the heading comes with the first
/// line, whose agent it tells (Claude Code's: Anthropic's columns).
#[test]
fn an_empty_file_waits_for_its_first_line_to_tell_the_agent() {
    let source = root().join("fixtures/claude/tool_call_2.1.100.jsonl");
    let bytes = std::fs::read(&source).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = temp_rollout(dir.path());
    let mut watching = Watching::start(&path, &[]);
    watching.none_for(Duration::from_millis(300), |l| l.starts_with("turn step"));
    // Half of the first line: still no heading.
    let first = memchr_newline(&bytes);
    append_in_chunks(&path, &bytes, &[first / 2]);
    watching.none_for(Duration::from_millis(300), |l| l.starts_with("turn step"));
    append_in_chunks(&path, &bytes[first / 2..], &[bytes.len() - first / 2]);
    let heading = watching.wait_for(|l| l.starts_with("turn step"));
    assert!(heading.contains("write5m"), "{heading}");
    let (lines, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("turn step")).count(),
        1,
        "{lines:?}"
    );
}

/// `--agent` names the agent a file must be: another agent's file is an error (exit 2).
#[test]
fn agent_names_the_agent_a_file_must_be() {
    let source = root().join("fixtures/claude/tool_call_2.1.100.jsonl");
    let output = promptc()
        .args(["watch", "--agent", "codex", "--interval", "10"])
        .arg(&source)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("a Claude Code transcript, not a Codex rollout (--agent codex)"),
        "{stderr}"
    );
}

/// A Claude Code home's session as a file `latest` and `--next` find (the newest of either
/// agent, by its first line's time): `projects/<project>/<session>.jsonl`.
fn claude_session(home: &Path, id: &str, time: &str, bytes: &[u8]) -> PathBuf {
    let project = home.join("projects/-tmp-work");
    std::fs::create_dir_all(&project).unwrap();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    // Every line's time: the session started then.
    let re_time = |line: &str| -> String {
        let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
        if value.get("timestamp").is_some() {
            value["timestamp"] = time.into();
        }
        value.to_string()
    };
    let text: String = text.lines().map(|l| re_time(l) + "\n").collect();
    let path = project.join(format!("{id}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `--next` with both homes empty waits for the first session of either agent, then switches
/// to a newer one of the other: a Claude Code transcript, then a Codex rollout, each followed
/// with its own table heading.
#[test]
fn next_follows_the_newest_session_of_either_agent() {
    let claude_bytes =
        std::fs::read(root().join("fixtures/claude/tool_call_2.1.100.jsonl")).unwrap();
    let codex_bytes = std::fs::read(root().join("fixtures/rollouts/era_b_steps.jsonl")).unwrap();
    let claude_home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(claude_home.path().join("projects")).unwrap();
    let codex_home = tempfile::tempdir().unwrap();
    let day = codex_home.path().join("sessions/2026/01/05");
    std::fs::create_dir_all(&day).unwrap();
    let mut command = promptc();
    command
        .env("TZ", "UTC")
        .args(["watch", "--next", "--codex-home"])
        .arg(codex_home.path())
        .arg("--claude-home")
        .arg(claude_home.path());
    let mut watching = Watching::spawn(command);
    std::thread::sleep(Duration::from_millis(200));
    let id = "6f0c9a7e-0000-4000-8000-000000000001";
    claude_session(
        claude_home.path(),
        id,
        "2026-01-05T09:00:00.000Z",
        &claude_bytes,
    );
    watching.wait_for(|l| l.starts_with("watching") && l.contains(id));
    let heading = watching.wait_for(|l| l.starts_with("turn step"));
    assert!(heading.contains("write5m"), "{heading}");
    watching.wait_for(|l| l.starts_with("   1    1"));
    // A Codex session an hour later (its name's time is local: TZ=UTC).
    let rollout =
        day.join("rollout-2026-01-05T10-00-00-019b8e10-0000-7000-8000-000000000001.jsonl");
    std::fs::write(&rollout, &codex_bytes).unwrap();
    let restart = watching.wait_for(|l| l.contains("is the newest session"));
    assert!(restart.contains("000000000001.jsonl"), "{restart}");
    let heading = watching.wait_for(|l| l.starts_with("turn step"));
    assert!(!heading.contains("write5m"), "{heading}");
    let (_, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
}

/// `watch latest` is the newest session of either agent: here a Claude Code transcript newer
/// than the Codex rollout.
#[test]
fn latest_is_the_newest_session_of_either_agent() {
    let claude_bytes =
        std::fs::read(root().join("fixtures/claude/tool_call_2.1.100.jsonl")).unwrap();
    let claude_home = tempfile::tempdir().unwrap();
    let codex_home = tempfile::tempdir().unwrap();
    let day = codex_home.path().join("sessions/2026/01/05");
    std::fs::create_dir_all(&day).unwrap();
    let rollout =
        day.join("rollout-2026-01-05T08-00-00-019b8e10-0000-7000-8000-000000000001.jsonl");
    std::fs::copy(root().join("fixtures/rollouts/era_b_steps.jsonl"), &rollout).unwrap();
    let id = "6f0c9a7e-0000-4000-8000-000000000002";
    claude_session(
        claude_home.path(),
        id,
        "2026-01-05T09:00:00.000Z",
        &claude_bytes,
    );
    let mut command = promptc();
    command
        .env("TZ", "UTC")
        .args(["watch", "latest", "--format", "json", "--codex-home"])
        .arg(codex_home.path())
        .arg("--claude-home")
        .arg(claude_home.path());
    let mut watching = Watching::spawn(command);
    let first = watching.wait_for(|l| l.contains("\"event\":\"watching\""));
    assert!(first.contains(id), "{first}");
    watching.wait_for(|l| l.contains("\"event\":\"step\""));
    let (_, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    // `--agent codex` narrows `latest` to the Codex home.
    let mut command = promptc();
    command
        .env("TZ", "UTC")
        .args([
            "watch",
            "--agent",
            "codex",
            "--format",
            "json",
            "--codex-home",
        ])
        .arg(codex_home.path());
    let mut watching = Watching::spawn(command);
    let first = watching.wait_for(|l| l.contains("\"event\":\"watching\""));
    assert!(first.contains("rollout-2026-01-05T08-00-00"), "{first}");
    let (_, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A transcript whose first requests are a subagent's (its lines before the main thread's):
/// the rows shown first are the subagent's; once the main thread comes, `steps` shows that one,
/// and the watch says the rows it printed were revised and prints the main thread's.
#[test]
fn rows_printed_then_changed_by_later_lines_are_revised() {
    let usage = serde_json::json!({"input_tokens": 3, "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 0, "output_tokens": 5});
    let mut subagent = String::new();
    let mut parent = serde_json::Value::Null;
    for i in 0..3 {
        let (u, a) = (format!("s{i}"), format!("t{i}"));
        subagent += &format!(
            "{}\n{}\n",
            serde_json::json!({"type": "user", "uuid": u, "parentUuid": parent,
                "isSidechain": true, "agentId": "ag", "version": "2.1.100",
                "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": format!("subagent prompt {i}")}}),
            serde_json::json!({"type": "assistant", "uuid": a, "parentUuid": u,
                "isSidechain": true, "agentId": "ag", "version": "2.1.100",
                "timestamp": "2026-01-01T00:00:01Z", "requestId": format!("r{i}"),
                "message": {"id": format!("m{i}"), "model": "claude-sonnet-4-6",
                    "role": "assistant", "content": [{"type": "text", "text": "sure"}],
                    "usage": usage}})
        );
        parent = serde_json::Value::String(a);
    }
    let main = format!(
        "{}\n{}\n",
        serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null,
            "version": "2.1.100", "timestamp": "2026-01-01T00:00:02Z",
            "message": {"role": "user", "content": "main"}}),
        serde_json::json!({"type": "assistant", "uuid": "a", "parentUuid": "u",
            "version": "2.1.100", "timestamp": "2026-01-01T00:00:03Z", "requestId": "r9",
            "message": {"id": "m9", "model": "claude-sonnet-4-6", "role": "assistant",
                "content": [{"type": "text", "text": "hi"}], "usage": usage}})
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.jsonl");
    std::fs::write(&path, &subagent).unwrap();
    let mut watching = Watching::start(&path, &["--format", "json"]);
    // The subagent's first two rows are final (the next request came).
    watching.wait_for(|l| l.contains(r#""event":"step""#) && l.contains(r#""input_items":3"#));
    append_in_chunks(&path, main.as_bytes(), &[main.len()]);
    watching.wait_for(|l| l.contains(r#""event":"revised""#));
    let (lines, code, stderr) = watching.interrupt();
    assert_eq!(code, Some(0), "{stderr}");
    let events: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let revised = events
        .iter()
        .position(|e| e["event"] == "revised")
        .expect("a revised event");
    assert_eq!(events[revised]["turn"], 1);
    assert_eq!(events[revised]["step"], 1);
    // What follows it is `steps` on the whole file: the main thread's one request.
    let whole = std::fs::read(&path).unwrap();
    assert_eq!(whole, format!("{subagent}{main}").into_bytes());
    let args = ["steps", path.to_str().unwrap(), "--format", "json"];
    let expected = stdout_json(&args, &run(&args))["steps"].clone();
    assert_eq!(
        serde_json::Value::Array(step_rows(&lines[revised + 1..])),
        expected
    );
    assert_eq!(step_rows(&lines[..revised]).len(), 2, "the subagent's rows");
}

//! A hermetic `promptc` command and helpers shared by the CLI tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root: fixtures are addressed relative to it.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Claude Code home that is not there: the default home of every test's `promptc`, so
/// that no session of the machine's `~/.claude` reaches a test (a home that is not there is
/// passed over when no flag or `--agent` names it).
pub const NO_CLAUDE_HOME: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/no-claude-home");

/// `promptc` with a clean environment: no colour variables, a fixed width, no Claude Code home,
/// run from the root.
pub fn promptc() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_promptc"));
    command.current_dir(root());
    for var in [
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLORTERM",
        "TERM",
        "CODEX_HOME",
    ] {
        command.env_remove(var);
    }
    command.env("CLAUDE_CONFIG_DIR", NO_CLAUDE_HOME);
    command.env("COLUMNS", "100");
    command.stdin(Stdio::null());
    command
}

/// Run and capture.
pub fn run(args: &[&str]) -> Output {
    promptc()
        .args(args)
        .output()
        .expect("the promptc binary runs")
}

/// A transcript of a run for snapshots: the command, exit code, stdout and stderr.
pub fn transcript(args: &[&str]) -> String {
    let output = run(args);
    format!(
        "$ promptc {}\nexit code: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        output
            .status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// stdout parsed as JSON, asserting success and `schema_version: 1`.
pub fn json(args: &[&str]) -> serde_json::Value {
    let output = run(args);
    assert!(
        output.status.code() == Some(0) || output.status.code() == Some(1),
        "promptc {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stdout is one JSON document");
    assert_eq!(
        value["schema_version"], 1,
        "every JSON document carries schema_version 1"
    );
    value
}

/// Fixture files under `fixtures/<dir>`, sorted, as paths relative to the root.
pub fn fixtures(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("fixtures").join(dir))
        .expect("fixture folder exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("under root")
                .display()
                .to_string()
        })
        .collect();
    files.sort();
    files
}

#[path = "../../src/test_support/samples_dir.rs"]
mod samples_dir;
pub use samples_dir::under_ci;

/// The real samples folder beside the repository, when present (a fresh clone has none; under
/// `CI=true` its absence fails the test: see [`samples_dir::samples_dir`]).
pub fn samples() -> Option<PathBuf> {
    samples_dir::samples_dir(&root())
}

/// Name of a file without folders, for snapshot names.
pub fn stem(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A transcript of an already-run command, in the same shape as [`transcript`].
pub fn transcript_of(label: &str, output: &Output) -> String {
    format!(
        "$ {label}\nexit code: {}\n--- stdout\n{}--- stderr\n{}",
        output
            .status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Run with extra environment variables.
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = promptc();
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the promptc binary runs")
}

/// The exit code, or a panic naming the command when a signal ended it.
pub fn code(output: &Output) -> i32 {
    output
        .status
        .code()
        .expect("promptc exited normally, not by a signal")
}

/// stdout of a run as JSON, whatever the exit code (checks `schema_version: 1`).
pub fn stdout_json(args: &[&str], output: &Output) -> serde_json::Value {
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "promptc {args:?}: stdout is not one JSON document ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(
        value["schema_version"], 1,
        "promptc {args:?}: schema_version"
    );
    value
}

/// The diff cases under `fixtures/diff`, sorted by name.
pub fn diff_cases() -> Vec<String> {
    let mut cases: Vec<String> = std::fs::read_dir(root().join("fixtures/diff"))
        .expect("fixtures/diff exists")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    cases
}

/// `fixtures/diff/<case>/a.jsonl` and `…/b.jsonl`.
pub fn diff_pair(case: &str) -> (String, String) {
    (
        format!("fixtures/diff/{case}/a.jsonl"),
        format!("fixtures/diff/{case}/b.jsonl"),
    )
}

/// Every fixture file: `rollouts/`, `malformed/` and both sides of every diff case.
pub fn all_fixture_files() -> Vec<String> {
    let mut files = fixtures("rollouts");
    files.extend(fixtures("malformed"));
    for case in diff_cases() {
        let (a, b) = diff_pair(&case);
        files.push(a);
        files.push(b);
    }
    files
}

/// The 1-based numbers of the non-blank lines of a file, read as bytes: a line is blank when it
/// holds only spaces, tabs and a carriage return (NUL is not blank).
pub fn non_blank_lines(path: &Path) -> Vec<usize> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if bytes.ends_with(b"\n") {
        lines.pop();
    }
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
        .map(|(i, _)| i + 1)
        .collect()
}

/// A real sample file by name, when the samples folder is present.
pub fn sample(name: &str) -> Option<PathBuf> {
    let path = samples()?.join(name);
    assert!(
        path.is_file(),
        "{} is missing from the samples folder",
        path.display()
    );
    Some(path)
}

/// Every `.jsonl` file in the samples folder and its `real-corpus/`, sorted.
pub fn all_samples() -> Vec<PathBuf> {
    let Some(dir) = samples() else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for folder in [dir.clone(), dir.join("real-corpus")] {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl")),
        );
    }
    files.sort();
    files
}

/// One `#[test]` per fixture name, each calling `$check(name)`, plus a test that the names
/// listed are exactly `$all()` (so a new fixture cannot go untested). Attributes before a name
/// (`#[ignore = "bug: …"]`) apply to that test only.
macro_rules! per_fixture {
    ($all:expr, $check:path; $($(#[$attr:meta])* $name:ident),+ $(,)?) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                $check(stringify!($name));
            }
        )+

        #[test]
        fn every_fixture_has_a_test() {
            let mut listed: Vec<String> = vec![$(stringify!($name).to_string()),+];
            listed.sort();
            let all: Vec<String> = $all;
            assert_eq!(listed, all, "the tests listed and the fixtures on disk differ");
        }
    };
}
pub(crate) use per_fixture;

/// The stems of `fixtures/<dir>/*.jsonl`.
pub fn fixture_names(dir: &str) -> Vec<String> {
    fixtures(dir).iter().map(|f| stem(f)).collect()
}

/// Say on stderr (shown by `cargo test -- --nocapture`, and with a failure) why a test did
/// nothing.
#[allow(clippy::print_stderr, reason = "a skipped test says why")]
pub fn skip(reason: &str) {
    eprintln!("skipped: {reason}");
}

/// Call `$mac! { … }` with the name of every fixture in `fixtures/rollouts/` appended, so the
/// list is written once; `per_fixture!` checks it against the files on disk.
macro_rules! rollout_fixtures {
    ($mac:ident { $($head:tt)* }) => {
        $mac! {
            $($head)*
            compaction_legacy,
            compaction_replacement,
            era_a_bare,
            era_a_tagged,
            era_b_steps,
            era_c_turns,
            era_d_newer,
            escape_sequences,
            ghost_snapshot,
            missing_output_no_id,
            missing_output_with_id,
            orphan_outputs,
            plain_items,
            rollback,
            session_meta_only,
            truncated_last_line,
            turn_aborted,
            unknown_types,
        }
    };
}
pub(crate) use rollout_fixtures;

/// Call `$mac! { … }` with the name of every fixture in `fixtures/malformed/` appended, so the
/// list is written once; `per_fixture!` checks it against the files on disk.
macro_rules! malformed_fixtures {
    ($mac:ident { $($head:tt)* }) => {
        $mac! {
            $($head)*
            compaction_orphans,
            duplicate_call_ids,
            empty,
            fuzz_duplicate_turn_id_self_diff,
            fuzz_lone_surrogate_escape,
            invalid_utf8,
            json_not_object,
            non_json_middle,
            nul_byte,
            only_blank_lines,
            output_before_call,
            rollback_too_many,
            session_meta_not_first,
            truncated_last_line,
            two_session_meta,
            unknown_type_every_level,
            wrong_payload_shape,
        }
    };
}
pub(crate) use malformed_fixtures;

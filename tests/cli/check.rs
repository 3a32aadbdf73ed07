//! `promptc check`: invariants over every fixture, the committed baseline
//! `fixtures/baseline.json`, and baseline updates.
//!
//! The baseline is generated with
//! `promptc check --baseline fixtures/baseline.json --update-baseline fixtures/rollouts/*.jsonl fixtures/diff/*/*.jsonl`
//! and must be regenerated (and the change reviewed) whenever a fingerprint changes on purpose.

use std::path::Path;

use serde_json::Value;

use crate::support::{code, diff_pair, fixtures, promptc, root, run, stdout_json};

/// The rollouts the baseline covers, in the order a shell expands the globs above.
fn baseline_rollouts() -> Vec<String> {
    let mut files: Vec<String> = crate::support::diff_cases()
        .iter()
        .flat_map(|case| {
            let (a, b) = diff_pair(case);
            [a, b]
        })
        .collect();
    files.extend(fixtures("rollouts"));
    files.sort();
    files
}

/// (file, check) for every failure of a `check --json` run.
fn failures(document: &Value) -> Vec<(String, String)> {
    document["rollouts"]
        .as_array()
        .expect("rollouts")
        .iter()
        .flat_map(|r| {
            r["failures"]
                .as_array()
                .expect("failures")
                .iter()
                .map(|f| {
                    (
                        r["file"].as_str().expect("file").to_string(),
                        f["check"].as_str().expect("check").to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn check_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--json"];
    all.extend(args);
    let output = run(&all);
    (code(&output), stdout_json(&all, &output))
}

/// The only fixtures that break an invariant are the two with a timestamp in their instructions.
const VOLATILE: [(&str, &str); 2] = [
    (
        "fixtures/diff/volatile_prefix/a.jsonl",
        "no_volatile_prefix",
    ),
    (
        "fixtures/diff/volatile_prefix/b.jsonl",
        "no_volatile_prefix",
    ),
];

#[test]
fn the_committed_baseline_matches_every_fixture() {
    let files = baseline_rollouts();
    let baseline: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/baseline.json")).expect("baseline"),
    )
    .expect("baseline is JSON");
    assert_eq!(baseline["schema_version"], 1);
    let keys: Vec<&String> = baseline["rollouts"]
        .as_object()
        .expect("rollouts")
        .keys()
        .collect();
    assert_eq!(
        keys,
        files.iter().collect::<Vec<_>>(),
        "the baseline covers every fixture"
    );

    let mut args = vec!["--baseline", "fixtures/baseline.json"];
    args.extend(files.iter().map(String::as_str));
    let (exit, document) = check_json(&args);
    let want: Vec<(String, String)> = VOLATILE
        .iter()
        .map(|(f, c)| (f.to_string(), c.to_string()))
        .collect();
    assert_eq!(failures(&document), want);
    assert_eq!(exit, 1);
    assert_eq!(document["passed"], false);
    let passed = document["rollouts"]
        .as_array()
        .expect("rollouts")
        .iter()
        .filter(|r| r["passed"] == true)
        .count();
    assert_eq!(passed, files.len() - 2);
}

/// Text mode says which rollouts fail and why, one line per failure.
#[test]
fn text_report_names_the_failures() {
    let (a, b) = diff_pair("volatile_prefix");
    let output = run(&["check", "fixtures/rollouts/era_c_turns.jsonl", &a, &b]);
    assert_eq!(code(&output), 1);
    insta::assert_snapshot!(
        "check_text__volatile_prefix",
        crate::support::transcript_of(
            "promptc check fixtures/rollouts/era_c_turns.jsonl fixtures/diff/volatile_prefix/a.jsonl fixtures/diff/volatile_prefix/b.jsonl",
            &output
        )
    );
    let output = run(&["check", "fixtures/rollouts/era_c_turns.jsonl"]);
    assert_eq!(code(&output), 0);
}

/// A temp dir holding copies at the same relative paths as in the repository, so the baseline
/// keys still match.
fn sandbox(files: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, bytes) in files {
        let target = dir.path().join(path);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        std::fs::write(target, bytes).expect("write");
    }
    dir
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).expect("fixture")
}

/// Every file under a folder, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(
                    path.strip_prefix(base)
                        .expect("under base")
                        .display()
                        .to_string(),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// One changed tool output in a copy of the identical fixture is a history rewrite.
#[test]
fn a_rewritten_tool_output_fails_the_baseline() {
    let path = "fixtures/diff/identical/a.jsonl";
    let original = String::from_utf8(read(path)).expect("UTF-8");
    assert_eq!(original.matches("Wall time: 2.3 seconds").count(), 1);
    let changed = original.replace("Wall time: 2.3 seconds", "Wall time: 2.4 seconds");
    let dir = sandbox(&[
        (path, changed.into_bytes()),
        ("fixtures/baseline.json", read("fixtures/baseline.json")),
    ]);
    let output = promptc()
        .current_dir(dir.path())
        .args([
            "check",
            "--json",
            "--baseline",
            "fixtures/baseline.json",
            path,
        ])
        .output()
        .expect("runs");
    assert_eq!(code(&output), 1);
    let document = stdout_json(&["check"], &output);
    assert_eq!(
        failures(&document),
        [(path.to_string(), "baseline:history_rewritten".to_string())]
    );
    let failure = &document["rollouts"][0]["failures"][0];
    assert_eq!(
        (failure["turn"].clone(), failure["step"].clone()),
        (1.into(), 2.into())
    );

    // The unchanged copy passes.
    let dir = sandbox(&[
        (path, read(path)),
        ("fixtures/baseline.json", read("fixtures/baseline.json")),
    ]);
    let output = promptc()
        .current_dir(dir.path())
        .args(["check", "--baseline", "fixtures/baseline.json", path])
        .output()
        .expect("runs");
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// A rollout missing from the baseline fails with `baseline:missing`.
#[test]
fn a_rollout_missing_from_the_baseline_fails() {
    let dir = sandbox(&[
        ("new.jsonl", read("fixtures/rollouts/era_c_turns.jsonl")),
        ("fixtures/baseline.json", read("fixtures/baseline.json")),
    ]);
    let output = promptc()
        .current_dir(dir.path())
        .args([
            "check",
            "--json",
            "--baseline",
            "fixtures/baseline.json",
            "new.jsonl",
        ])
        .output()
        .expect("runs");
    assert_eq!(code(&output), 1);
    let document = stdout_json(&["check"], &output);
    assert_eq!(
        failures(&document),
        [("new.jsonl".to_string(), "baseline:missing".to_string())]
    );
}

/// `--update-baseline` writes the named file and nothing else, says so on stderr, and a check
/// against it then passes.
#[test]
fn update_baseline_writes_only_the_named_file() {
    let path = "fixtures/diff/identical/a.jsonl";
    let dir = sandbox(&[(path, read(path))]);
    let before = tree(dir.path());
    let output = promptc()
        .current_dir(dir.path())
        .args([
            "check",
            "--baseline",
            "base.json",
            "--update-baseline",
            path,
        ])
        .output()
        .expect("runs");
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut after = before.clone();
    after.push("base.json".to_string());
    after.sort();
    assert_eq!(tree(dir.path()), after, "only the baseline is written");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("wrote baseline base.json"),
        "stderr: {stderr}"
    );
    let written: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("base.json")).expect("written"))
            .expect("JSON");
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/baseline.json")).expect("baseline"),
    )
    .expect("JSON");
    assert_eq!(
        written["rollouts"][path], committed["rollouts"][path],
        "the same fingerprints as the committed baseline"
    );
    assert_eq!(written["rollouts"].as_object().map(|o| o.len()), Some(1));

    let output = promptc()
        .current_dir(dir.path())
        .args(["check", "--baseline", "base.json", path])
        .output()
        .expect("runs");
    assert_eq!(code(&output), 0);
}

/// `--update-baseline` needs `--baseline`.
#[test]
fn update_baseline_requires_a_baseline() {
    let output = run(&[
        "check",
        "--update-baseline",
        "fixtures/rollouts/era_c_turns.jsonl",
    ]);
    assert_eq!(code(&output), 2);
}

/// A baseline that is not a promptc baseline is an error.
#[test]
fn a_broken_baseline_is_an_error() {
    let output = run(&[
        "check",
        "--baseline",
        "fixtures/rollouts/era_c_turns.jsonl",
        "fixtures/rollouts/era_c_turns.jsonl",
    ]);
    assert_eq!(code(&output), 2);
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: "));
}

/// A baseline from before fingerprints were XXH3 (no `fingerprint_hash`: BLAKE3) cannot be
/// compared: every step would look rewritten. It is an error that says how to rewrite it, and
/// the rewritten baseline passes.
#[test]
fn a_baseline_of_another_hash_is_an_error_until_rewritten() {
    let path = "fixtures/rollouts/era_c_turns.jsonl";
    let current: Value =
        serde_json::from_slice(&read("fixtures/baseline.json")).expect("baseline JSON");
    assert_eq!(current["fingerprint_hash"], "xxh3-128");
    let mut old = current.clone();
    old.as_object_mut()
        .expect("object")
        .remove("fingerprint_hash");
    let dir = sandbox(&[
        (path, read(path)),
        ("base.json", serde_json::to_vec(&old).expect("JSON")),
    ]);
    let check = |extra: &[&str]| {
        promptc()
            .current_dir(dir.path())
            .args(["check", "--baseline", "base.json"])
            .args(extra)
            .arg(path)
            .output()
            .expect("runs")
    };
    let output = check(&[]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("base.json: cannot compare with this baseline: its fingerprints are blake3 hashes and this promptc writes xxh3-128; rewrite it with --update-baseline"),
        "stderr: {stderr}"
    );
    assert!(output.stdout.is_empty());

    assert_eq!(code(&check(&["--update-baseline"])), 0);
    assert_eq!(code(&check(&[])), 0);
}

/// A baseline of another `schema_version` (a later promptc's, or one edited) is an error that
/// says how to rewrite it, not a list of every rollout "missing" from it.
#[test]
fn a_baseline_of_another_schema_version_is_an_error() {
    let path = "fixtures/rollouts/era_c_turns.jsonl";
    let current: Value =
        serde_json::from_slice(&read("fixtures/baseline.json")).expect("baseline JSON");
    assert_eq!(current["schema_version"], 1);
    for version in [0, 2] {
        let mut other = current.clone();
        other["schema_version"] = version.into();
        let dir = sandbox(&[
            (path, read(path)),
            ("base.json", serde_json::to_vec(&other).expect("JSON")),
        ]);
        let output = promptc()
            .current_dir(dir.path())
            .args(["check", "--baseline", "base.json", path])
            .output()
            .expect("runs");
        assert_eq!(code(&output), 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("base.json: cannot compare with this baseline: its schema_version is {version} and this promptc reads 1; rewrite it with --update-baseline")),
            "stderr: {stderr}"
        );
    }
}

/// A file has one name in a baseline however the command line names it: `./a`, `x/../a`, its
/// absolute path from the folder holding it, or `latest` (resolved to the file). A baseline
/// keyed by the argument as an older promptc wrote it (`./a`) is still read.
#[test]
fn a_file_is_found_in_the_baseline_however_it_is_named() {
    let path = "recorded/sessions/2026/01/05/rollout-2026-01-05T10-00-00-019b8e10-0000-7000-8000-000000000004.jsonl";
    let source = "fixtures/codex-home/sessions/2026/01/05/rollout-2026-01-05T10-00-00-019b8e10-0000-7000-8000-000000000004.jsonl";
    let dir = sandbox(&[(path, read(source))]);
    let check = |args: &[&str], env: &[(&str, &Path)]| {
        let mut command = promptc();
        command
            .current_dir(dir.path())
            .args(["check", "--baseline", "base.json"]);
        for (k, v) in env {
            command.env(k, v);
        }
        command.args(args).output().expect("runs")
    };
    let written = check(&["--update-baseline", &format!("./{path}")], &[]);
    assert_eq!(code(&written), 0);
    let baseline: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("base.json")).unwrap()).unwrap();
    let keys: Vec<&String> = baseline["rollouts"].as_object().unwrap().keys().collect();
    assert_eq!(keys, [path]);
    let absolute = dir.path().join(path);
    for named in [
        path.to_string(),
        format!("./{path}"),
        format!("recorded/../{path}"),
        absolute.to_str().unwrap().to_string(),
    ] {
        let output = check(&[&named], &[]);
        assert_eq!(
            code(&output),
            0,
            "{named}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
    // `latest` under a Codex home is the file it resolves to.
    let home = dir.path().join("recorded");
    let output = check(&["latest"], &[("CODEX_HOME", home.as_path())]);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    // An absolute path through a link to the working folder (macOS's /tmp).
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    let output = check(&[link.join(path).to_str().unwrap()], &[]);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    // Not found: the key looked for is named.
    std::fs::write(dir.path().join("other.jsonl"), read(source)).unwrap();
    let output = check(&["other.jsonl"], &[]);
    assert_eq!(code(&output), 1);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("baseline:missing: this rollout is not in the baseline as `other.jsonl`"),
        "{stdout}"
    );
    // An older promptc's key, the argument as given.
    let mut old = baseline.clone();
    let steps = old["rollouts"][path].clone();
    old["rollouts"] = serde_json::json!({ format!("./{path}"): steps });
    std::fs::write(dir.path().join("base.json"), old.to_string()).unwrap();
    assert_eq!(code(&check(&[&format!("./{path}")], &[])), 0);
}

/// (turn, step, detail) of every failure of one rollout's `check --json`.
fn step_failures(file: &str) -> (i32, Vec<(u64, u64, String)>) {
    let (code, document) = check_json(&[file]);
    let found = document["rollouts"][0]["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(|f| {
            assert_eq!(f["check"], "input_extends_previous", "{f}");
            (
                f["turn"].as_u64().expect("turn"),
                f["step"].as_u64().expect("step"),
                f["detail"].as_str().expect("detail").to_string(),
            )
        })
        .collect();
    (code, found)
}

/// Issue 36: a response made three calls at once (function, custom, local shell) and the user
/// interrupted it; none was answered, so each call is sent with its synthetic "aborted" output
/// right after it. The next request is not the previous one plus that response's output, yet
/// nothing was rewritten (fixtures/README.md, `check/interrupted_calls.jsonl`).
#[test]
fn interrupted_calls_of_one_response_extend_the_previous_request() {
    let (code, found) = step_failures("fixtures/check/interrupted_calls.jsonl");
    assert_eq!((code, found), (0, vec![]));
}

/// The same rollout where call_m1's real output is recorded after turn 2's first request was
/// sent with "aborted" for it: the second request replaces input item 6, a rewrite.
#[test]
fn a_late_output_after_interrupted_calls_is_still_a_rewrite() {
    let (code, found) = step_failures("fixtures/check/interrupted_calls_late_output.jsonl");
    assert_eq!(code, 1);
    assert_eq!(
        found,
        vec![(
            2,
            2,
            "the input does not extend the previous request: item 6 differs".to_string()
        )]
    );
}

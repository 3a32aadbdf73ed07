//! Claude Code homes beside the Codex home: `sessions`, `latest`, session ids and prefixes,
//! `--agent`, `--claude-home` and `CLAUDE_CONFIG_DIR`, on homes the real CLI wrote (the recorded
//! conformance cases, `tests/conformance/claude/`) and on the real samples laid out as a home.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{NO_CLAUDE_HOME, code, promptc, root, stdout_json};

/// Whether the recorded cases are here: a packed crate leaves `tests/conformance/` out (the
/// tests that read it skip with a message there).
pub fn recorded() -> bool {
    let here = root().join("tests/conformance/claude").is_dir();
    if !here {
        crate::support::skip("tests/conformance is not present (outside the repository checkout)");
    }
    here
}

/// Every recorded Claude Code case (`case.json` beside `home/.claude/projects/`).
pub fn cases() -> Vec<PathBuf> {
    let dir = root().join("tests/conformance/claude");
    let mut out = Vec::new();
    for version in std::fs::read_dir(&dir)
        .expect("recorded Claude cases")
        .flatten()
    {
        for case in std::fs::read_dir(version.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if case.path().join("case.json").is_file() {
                out.push(case.path());
            }
        }
    }
    out.sort();
    assert!(
        out.len() >= 50,
        "the recorded Claude Code cases are present"
    );
    out
}

/// The case's Claude Code home (`HOME/.claude`).
pub fn home_of(case: &Path) -> PathBuf {
    case.join("home/.claude")
}

pub fn case_json(case: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(case.join("case.json")).expect("case.json"))
        .expect("case.json is JSON")
}

/// What the mock billed, one row per request it answered.
pub fn mock_rows(case: &Path) -> Vec<Value> {
    std::fs::read_to_string(case.join("requests.jsonl"))
        .expect("requests.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a request row"))
        .collect()
}

/// The session id each run of the case ended in.
fn run_sessions(case: &Path) -> BTreeSet<String> {
    case_json(case)["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|r| r["session_id"].as_str().map(str::to_string))
        .collect()
}

/// `promptc ARGS` with these environment variables (and TZ=UTC: dates are local time).
pub fn run_with(env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut command = promptc();
    command.env("TZ", "UTC").args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the promptc binary runs")
}

fn ok_json(env: &[(&str, &Path)], args: &[&str]) -> Value {
    let output = run_with(env, args);
    assert_eq!(
        code(&output),
        0,
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(args, &output)
}

fn ok_text(env: &[(&str, &Path)], args: &[&str]) -> String {
    let output = run_with(env, args);
    assert_eq!(
        code(&output),
        0,
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn sessions_of(listing: &Value) -> &Vec<Value> {
    listing["sessions"].as_array().expect("sessions")
}

/// Every recorded home: one listed session per run's session (2.0.77's warmup-only starts,
/// whose session file stayed empty, are none), every file of the home in one of them, no
/// subagent file a session of its own, and the requests of each kind the mock answered.
#[test]
fn sessions_lists_each_recorded_session_once_with_its_subagents() {
    if !crate::claude_home::recorded() {
        return;
    }
    for case in cases() {
        let name = case.display().to_string();
        let home = home_of(&case);
        let listing = ok_json(
            &[],
            &[
                "sessions",
                "--agent",
                "claude",
                "--claude-home",
                home.to_str().unwrap(),
                "--json",
            ],
        );
        assert_eq!(listing["claude_home"], home.to_str().unwrap(), "{name}");
        let sessions = sessions_of(&listing);
        let ids: BTreeSet<String> = sessions
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids, run_sessions(&case), "{name}");
        assert_eq!(ids.len(), sessions.len(), "{name}: each once");
        for s in sessions {
            assert_eq!(s["agent"], "claude", "{name}");
            assert_eq!(s["cwd"], "/tmp/promptc-claude/work", "{name}");
            let path = s["path"].as_str().unwrap();
            assert!(
                path.ends_with(&format!("{}.jsonl", s["id"].as_str().unwrap())),
                "{name}: {path}"
            );
            let files = s["files"].as_array().unwrap();
            assert_eq!(files[0], path, "{name}: the main file first");
            for f in &files[1..] {
                let file = Path::new(f.as_str().unwrap());
                assert!(
                    file.file_name()
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .starts_with("agent-"),
                    "{name}: {f}"
                );
            }
        }
        // The conversation's, subagents' and warmups' requests, as the mock answered them.
        let rows = mock_rows(&case);
        let kind = |k: &str| rows.iter().filter(|r| r["kind"] == k).count() as u64;
        let sum = |field: &str| -> u64 {
            sessions
                .iter()
                .map(|s| s[field].as_u64().expect(field))
                .sum()
        };
        assert_eq!(sum("steps"), kind("conversation"), "{name}: steps");
        assert_eq!(
            sum("subagent_requests"),
            kind("subagent"),
            "{name}: subagents"
        );
        // 2.0.77's warmups of a start whose session file stayed empty belong to no listed
        // session: at most the mock's.
        assert!(sum("side_requests") <= kind("warmup"), "{name}: warmups");
        let subagents = sum("subagents");
        if case.ends_with("subagent") {
            assert_eq!(subagents, 1, "{name}");
        } else {
            assert_eq!(subagents, 0, "{name}");
        }
    }
}

/// The subagent case of 2.1.332 by hand: one session, its subagent's file under
/// `<session>/subagents/`, and the text listing's columns.
#[test]
fn a_subagent_file_belongs_to_its_session_in_the_text_listing() {
    if !crate::claude_home::recorded() {
        return;
    }
    let case = root().join("tests/conformance/claude/2.1.332/subagent");
    let home = home_of(&case);
    let text = ok_text(
        &[],
        &[
            "sessions",
            "--claude-home",
            home.to_str().unwrap(),
            "--width",
            "200",
        ],
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for column in ["AGENT", "SUBAGENTS", "PROJECT", "FIRST MESSAGE"] {
        assert!(lines[0].contains(column), "{text}");
    }
    let id = case_json(&case)["session_id"].as_str().unwrap().to_string();
    assert!(lines[1].starts_with("2026-12-03 "), "{text}");
    assert!(
        lines[1].contains(&format!("  claude  {}  ", &id[..8])),
        "{text}"
    );
    assert!(lines[1].contains("/tmp/promptc-claude/work"), "{text}");
    assert!(lines[1].contains("Ask a subagent"), "{text}");
    // TURNS STEPS SUBAGENTS: the turns `steps` numbers (2.1.332 tells the main thread when the
    // background subagent is done: a second turn), the main thread's requests (the mock's
    // `conversation` rows), one subagent.
    let at = lines[0].find("SUBAGENTS").unwrap() + "SUBAGENTS".len();
    let mut counts: Vec<&str> = lines[1][..at].split_whitespace().rev().take(3).collect();
    counts.reverse();
    let steps = ok_json(&[("CLAUDE_CONFIG_DIR", &home)], &["steps", &id, "--json"]);
    let rows = steps["steps"].as_array().unwrap();
    let turns = rows
        .iter()
        .map(|r| r["turn"].as_u64().unwrap())
        .max()
        .unwrap();
    let conversation = mock_rows(&case)
        .iter()
        .filter(|r| r["kind"] == "conversation")
        .count();
    assert_eq!(
        counts,
        [turns.to_string(), conversation.to_string(), "1".to_string()]
    );
}

/// A Codex home and a Claude Code home: one list, newest first by when each session started;
/// Codex's alone lists as it always did.
#[test]
fn both_agents_in_one_list_newest_first() {
    if !crate::claude_home::recorded() {
        return;
    }
    let codex = root().join("fixtures/codex-home");
    let claude = home_of(&root().join("tests/conformance/claude/2.1.332/resume"));
    let both = ok_json(
        &[],
        &[
            "sessions",
            "--codex-home",
            codex.to_str().unwrap(),
            "--claude-home",
            claude.to_str().unwrap(),
            "--json",
        ],
    );
    let rows: Vec<(String, String)> = sessions_of(&both)
        .iter()
        .map(|s| {
            (
                s["agent"].as_str().unwrap().to_string(),
                s["date"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let agents: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(agents, ["claude", "codex", "codex"]);
    let mut dates: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let listed = dates.clone();
    dates.sort_by(|a, b| b.cmp(a));
    assert_eq!(listed, dates, "newest first");
    // The Claude session's time: its main file's first line's (in UTC here).
    let main = sessions_of(&both)[0]["path"].as_str().unwrap().to_string();
    let first_line: Value = serde_json::from_str(
        std::fs::read_to_string(&main)
            .unwrap()
            .lines()
            .find(|l| l.contains("\"timestamp\""))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(listed[0], &first_line["timestamp"].as_str().unwrap()[..19]);
    assert_eq!(both["codex_home"], codex.to_str().unwrap());
    assert_eq!(both["claude_home"], claude.to_str().unwrap());

    // Narrowed to one agent; Codex's alone as before: no agent column, no Claude field.
    let only_codex = |args: &[&str]| {
        let mut all = vec!["sessions", "--codex-home", codex.to_str().unwrap()];
        all.extend_from_slice(args);
        ok_text(&[("CLAUDE_CONFIG_DIR", &claude)], &all)
    };
    let narrowed = only_codex(&["--agent", "codex"]);
    assert!(!narrowed.contains("AGENT"), "{narrowed}");
    assert_eq!(narrowed.lines().count(), 3, "{narrowed}");
    let alone = ok_text(&[], &["sessions", "--codex-home", codex.to_str().unwrap()]);
    assert_eq!(narrowed, alone);
    let json = ok_json(
        &[("CLAUDE_CONFIG_DIR", &claude)],
        &["sessions", "--agent", "claude", "--json"],
    );
    assert_eq!(sessions_of(&json).len(), 1);
    assert_eq!(json["claude_home"], claude.to_str().unwrap());
    let codex_json = ok_json(
        &[],
        &[
            "sessions",
            "--codex-home",
            codex.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(codex_json.get("claude_home").is_none());
    assert!(sessions_of(&codex_json)[0].get("agent").is_none());
}

/// `CLAUDE_CONFIG_DIR` moves the Claude Code home, as it moves `~/.claude` for Claude Code;
/// without it, `$HOME/.claude`.
#[test]
fn the_claude_home_comes_from_claude_config_dir_else_home() {
    if !crate::claude_home::recorded() {
        return;
    }
    let claude = home_of(&root().join("tests/conformance/claude/2.1.100/tool_call"));
    let listing = ok_json(
        &[
            ("CLAUDE_CONFIG_DIR", &claude),
            ("CODEX_HOME", Path::new("/nonexistent")),
        ],
        &["sessions", "--json"],
    );
    assert_eq!(listing["claude_home"], claude.to_str().unwrap());
    assert_eq!(sessions_of(&listing).len(), 1);
    // HOME/.claude when CLAUDE_CONFIG_DIR is not set.
    let home = tempfile::tempdir().unwrap();
    copy_dir(&claude, &home.path().join(".claude"));
    let mut command = promptc();
    command
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("HOME", home.path())
        .env("CODEX_HOME", "/nonexistent")
        .args(["sessions", "--json"]);
    let output = command.output().unwrap();
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let listing = stdout_json(&["sessions"], &output);
    assert_eq!(
        listing["claude_home"],
        home.path().join(".claude").to_str().unwrap()
    );
    assert_eq!(sessions_of(&listing).len(), 1);
}

/// What is not there: a home named by a flag, or the only agent asked for, is an error (exit
/// 2, naming it); a Claude Code home without `projects/` too; in the default search a home that
/// is not there is passed over, and none at all is an error naming both.
#[test]
fn missing_homes_are_named() {
    if !crate::claude_home::recorded() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let codex = root().join("fixtures/codex-home");
    let fails = |env: &[(&str, &Path)], args: &[&str], says: &[&str]| {
        let output = run_with(env, args);
        assert_eq!(code(&output), 2, "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        for s in says {
            assert!(stderr.contains(s), "{args:?}: {stderr}");
        }
    };
    let missing_str = missing.to_str().unwrap();
    for command in ["sessions", "report"] {
        fails(
            &[],
            &[command, "--claude-home", missing_str],
            &[missing_str, "no such directory (the Claude Code home)"],
        );
        // A folder without projects/: not a Claude Code home; a Codex home given there is named.
        fails(
            &[],
            &[command, "--claude-home", codex.to_str().unwrap()],
            &["no projects/ folder", "a Codex home, --codex-home"],
        );
        fails(
            &[("CLAUDE_CONFIG_DIR", &missing)],
            &[command, "--agent", "claude"],
            &[missing_str, "(the Claude Code home)"],
        );
        fails(
            &[
                ("CLAUDE_CONFIG_DIR", &missing),
                ("CODEX_HOME", Path::new("/nonexistent")),
            ],
            &[command],
            &[
                "no Codex home (/nonexistent)",
                &format!("no Claude Code home ({missing_str})"),
                "CLAUDE_CONFIG_DIR",
            ],
        );
        fails(
            &[],
            &[command, "--agent", "codex", "--claude-home", missing_str],
            &["--agent codex reads no Claude Code home"],
        );
    }
    // A Codex home's sessions/ given as the home: the folder above it is named.
    let sessions = codex.join("sessions");
    for command in ["sessions", "report"] {
        fails(
            &[],
            &[command, "--codex-home", sessions.to_str().unwrap()],
            &[&format!(
                "holds no sessions/: not a Codex home (give the folder above it: {})",
                codex.display()
            )],
        );
    }
    // A Claude Code home given as --codex-home is named as one.
    let claude = home_of(&root().join("tests/conformance/claude/2.1.100/tool_call"));
    fails(
        &[],
        &["sessions", "--codex-home", claude.to_str().unwrap()],
        &["a Claude Code home (--claude-home)"],
    );
    // The default Claude Code home not there: the Codex home alone, no message.
    let output = run_with(
        &[("CLAUDE_CONFIG_DIR", &missing)],
        &["sessions", "--codex-home", codex.to_str().unwrap()],
    );
    assert_eq!(code(&output), 0);
    assert!(output.stderr.is_empty());
}

/// `latest`, a session id and a unique prefix name a Claude Code session anywhere a file is
/// taken; each gives what the path gives.
#[test]
fn latest_ids_and_prefixes_resolve_to_claude_sessions() {
    if !crate::claude_home::recorded() {
        return;
    }
    let case = root().join("tests/conformance/claude/1.0.30/resume");
    let claude = home_of(&case);
    let runs: Vec<String> = case_json(&case)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap().to_string())
        .collect();
    // 1.0.30's resume starts a new session (a new file that copies the old lines): the
    // second run's is the newest.
    let newest = &runs[1];
    let path_of = |id: &str| {
        let projects = claude.join("projects");
        let project = std::fs::read_dir(&projects)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        project.path().join(format!("{id}.jsonl"))
    };
    let env = [
        ("CLAUDE_CONFIG_DIR", claude.as_path()),
        ("CODEX_HOME", Path::new("/nonexistent")),
    ];
    let same = |args: &[&str], by_path: &[&str]| {
        let got = ok_text(&env, args);
        let want = ok_text(&env, by_path);
        assert_eq!(got, want, "{args:?}");
    };
    let newest_path = path_of(newest);
    let newest_path = newest_path.to_str().unwrap();
    for command in ["steps", "view", "compile", "fingerprint"] {
        same(&[command, "latest"], &[command, newest_path]);
    }
    assert_eq!(
        ok_text(&env, &["check", "latest"]).replace("latest", newest_path),
        ok_text(&env, &["check", newest_path])
    );
    let first = path_of(&runs[0]);
    let first = first.to_str().unwrap();
    for query in [
        runs[0].clone(),
        runs[0][..8].to_string(),
        runs[0][..8].to_ascii_uppercase(),
    ] {
        same(&["steps", &query, "--json"], &["steps", first, "--json"]);
    }
    // Two sessions by prefix: the diff of the two files, exit status and all.
    let by_prefix = run_with(&env, &["diff", &runs[0][..8], &newest[..8]]);
    let by_path = run_with(&env, &["diff", first, newest_path]);
    assert_eq!(code(&by_prefix), code(&by_path));
    assert_eq!(by_prefix.stdout, by_path.stdout);
    assert!(!by_path.stdout.is_empty());
    // The session page too.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("latest.html");
    let output = run_with(
        &env,
        &[
            "view",
            "latest",
            "--format",
            "html",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains(newest.as_str())
    );
    // An id of no session: exit 2, naming where it was looked up.
    let output = run_with(&env, &["steps", "0123abcd"]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: 0123abcd: no such file, and no session id under ")
            && stderr.contains(&claude.join("projects").display().to_string()),
        "{stderr}"
    );
}

/// `latest` across agents is the session that started last; a prefix both homes have lists
/// the candidates of both.
#[test]
fn latest_and_prefixes_across_both_homes() {
    if !crate::claude_home::recorded() {
        return;
    }
    let codex = root().join("fixtures/codex-home");
    let recorded = home_of(&root().join("tests/conformance/claude/2.1.100/tool_call"));
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join(".claude");
    copy_dir(&recorded, &claude);
    // A Claude session whose id starts as the Codex sessions' ids do, and that started before
    // them (2026-01-01): not the latest.
    let project = claude.join("projects/-tmp-promptc-claude-work");
    let original = std::fs::read_dir(&project)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(&original)
        .unwrap()
        .replace("2026-12-03T", "2026-01-01T");
    let twin = project.join("019b8e10-1111-4111-8111-111111111111.jsonl");
    std::fs::write(&twin, text).unwrap();
    let env = [
        ("CLAUDE_CONFIG_DIR", claude.as_path()),
        ("CODEX_HOME", codex.as_path()),
    ];
    // The recorded session (2026-12-03) is newer than any Codex fixture (2026-01-05).
    let latest = ok_text(&env, &["steps", "latest"]);
    assert_eq!(
        latest,
        ok_text(&env, &["steps", original.to_str().unwrap()])
    );
    let output = run_with(&env, &["view", "019"]);
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ambiguous session id: 3 sessions match"),
        "{stderr}"
    );
    for id in [
        "019a9f00-0000-7000-8000-000000000003",
        "019b8e10-0000-7000-8000-000000000004",
        "019b8e10-1111-4111-8111-111111111111",
    ] {
        assert!(stderr.contains(id), "{id}: {stderr}");
    }
    // Longer, it is the Claude session's alone.
    assert_eq!(
        ok_text(&env, &["steps", "019b8e10-1111"]),
        ok_text(&env, &["steps", twin.to_str().unwrap()])
    );
    // Moved later than every Codex rollout, it is the latest of both.
    let text = std::fs::read_to_string(&twin)
        .unwrap()
        .replace("2026-01-01T", "2027-01-01T");
    std::fs::write(&twin, text).unwrap();
    assert_eq!(
        ok_text(&env, &["steps", "latest"]),
        ok_text(&env, &["steps", twin.to_str().unwrap()])
    );
    // Without a Claude Code home, Codex's latest as before.
    let output = run_with(
        &[
            ("CLAUDE_CONFIG_DIR", Path::new(NO_CLAUDE_HOME)),
            ("CODEX_HOME", codex.as_path()),
        ],
        &["steps", "latest"],
    );
    assert_eq!(code(&output), 0);
    assert!(String::from_utf8_lossy(&output.stdout).contains("rollout"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The real samples as a home (`projects/<folder>/…` where SOURCES.md says each file lay; the
/// fixtures of transcript tools, which lay in no home, a project named after their repository),
/// in a temporary folder. `None` when the samples are not beside the repository (a failure
/// under `CI=true`).
pub fn sample_home() -> Option<tempfile::TempDir> {
    let dir = root().join("../shared/claude-code-samples");
    if !dir.is_dir() {
        assert!(
            !crate::support::under_ci(),
            "{} is missing: under CI=true the tests that read the real samples fail without it",
            dir.display()
        );
        crate::support::skip(&format!("{} is not present", dir.display()));
        return None;
    }
    let sources = std::fs::read_to_string(dir.join("SOURCES.md")).expect("SOURCES.md");
    let mut place: BTreeMap<String, String> = BTreeMap::new();
    for row in sources.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if let (Some(file), Some(path)) = (cells.get(1), cells.get(3))
            && let Some((_, rel)) = path.rsplit_once("projects/")
        {
            place.insert(file.to_string(), rel.to_string());
        }
    }
    let home = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".jsonl") {
            continue;
        }
        let rel = place.get(&name).cloned().unwrap_or_else(|| {
            let (repo, file) = name.rsplit_once("__").expect("OWNER__REPO__file");
            format!("{repo}/{file}")
        });
        let target = home.path().join("projects").join(rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(entry.path(), target).unwrap();
    }
    Some(home)
}

/// The real samples: every main file a session (a subagent's file is its session's), each
/// session's id resolvable, `latest` the session that started last.
#[test]
fn real_samples_as_a_home() {
    let Some(home) = sample_home() else {
        return;
    };
    let env = [
        ("CLAUDE_CONFIG_DIR", home.path()),
        ("CODEX_HOME", Path::new("/nonexistent")),
    ];
    let listing = ok_json(&env, &["sessions", "--json"]);
    let sessions = sessions_of(&listing);
    let mut mains = 0;
    let mut files = 0;
    for project in std::fs::read_dir(home.path().join("projects"))
        .unwrap()
        .flatten()
    {
        for entry in walk(&project.path()) {
            files += 1;
            let name = entry.file_name().unwrap().to_str().unwrap().to_string();
            // A main file is a session when one of its lines is a conversation's (has a uuid).
            let conversational = std::fs::read_to_string(&entry)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|v| v["uuid"].is_string());
            if entry.parent() == Some(&project.path())
                && !name.starts_with("agent-")
                && conversational
            {
                mains += 1;
            }
        }
    }
    // Every main file with a conversational line is a session; files are all accounted for.
    let listed_files: usize = sessions
        .iter()
        .map(|s| s["files"].as_array().unwrap().len())
        .sum();
    assert_eq!(sessions.len(), mains);
    assert!(listed_files <= files);
    for s in sessions {
        assert_eq!(s["agent"], "claude");
        let name = Path::new(s["path"].as_str().unwrap());
        assert!(
            !name
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("agent-")
        );
    }
    // Sorted newest first, and `latest` is the first.
    let dates: Vec<&str> = sessions.iter().filter_map(|s| s["date"].as_str()).collect();
    let mut sorted = dates.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted);
    let first = sessions[0]["path"].as_str().unwrap();
    assert_eq!(
        ok_text(&env, &["steps", "latest", "--json"]),
        ok_text(&env, &["steps", first, "--json"])
    );
    // Each id resolves to its session's main file (ids are unique in the samples).
    for s in sessions.iter().take(20) {
        let id = s["id"].as_str().unwrap();
        assert_eq!(
            ok_text(&env, &["fingerprint", id, "--json"]),
            ok_text(
                &env,
                &["fingerprint", s["path"].as_str().unwrap(), "--json"]
            ),
            "{id}"
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out
}

/// Text from a transcript (the first prompt, the working directory) reaches the terminal
/// escaped, and the page escaped for HTML.
#[test]
fn session_text_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-tmp-x");
    std::fs::create_dir_all(&project).unwrap();
    let text = std::fs::read_to_string(root().join("fixtures/claude/tool_call_2.1.100.jsonl"))
        .unwrap()
        .replace("List the files here.", "\\u001b]0;pwned\\u0007 <b>bold</b>")
        .replace("/tmp/promptc-claude/work", "/tmp/\\u001b[31mred");
    std::fs::write(
        project.join("cc8e0a78-3dc8-410f-99f3-c4d1b0d6b6f2.jsonl"),
        text,
    )
    .unwrap();
    let output = ok_text(
        &[],
        &[
            "sessions",
            "--claude-home",
            dir.path().to_str().unwrap(),
            "--width",
            "300",
        ],
    );
    assert!(
        !output.contains('\u{1b}') && !output.contains('\u{7}'),
        "{output:?}"
    );
    assert!(output.contains("\\x1b]0;pwned\\x07"), "{output}");
    assert!(output.contains("/tmp/\\x1b[31mred"), "{output}");
    let page = dir.path().join("report.html");
    let report = run_with(
        &[],
        &[
            "report",
            "--claude-home",
            dir.path().to_str().unwrap(),
            "--agent",
            "claude",
            "--by",
            "cwd",
            "--format",
            "html",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&report), 0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains('\u{1b}'), "no raw escape in the page");
}

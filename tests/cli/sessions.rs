//! `promptc sessions`, ROLLOUT arguments that name a session (`latest`, an id, a prefix), and
//! zstd-compressed rollouts.

use std::path::{Path, PathBuf};
use std::process::Output;

use ruzstd::encoding::{CompressionLevel, compress_to_vec};
use serde_json::Value;

use crate::support::{json, promptc, root};

const ID_NEW: &str = "019d0a20-0000-7000-8000-000000000005";
const ID_MID: &str = "019b8e10-0000-7000-8000-000000000004";
const ID_OLD: &str = "019b8e10-0000-7000-8000-000000000013";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(root().join("fixtures/rollouts").join(name)).expect("fixture exists")
}

fn compress(bytes: &[u8]) -> Vec<u8> {
    compress_to_vec(bytes, CompressionLevel::Fastest)
}

/// A symbolic link at `at` to `target`.
fn link(target: impl AsRef<Path>, at: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, at).expect("a symbolic link");
}

fn write(path: &Path, bytes: &[u8]) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
    path.to_path_buf()
}

/// A Codex home with three rollouts: two in `sessions/YYYY/MM/DD`, one compressed in
/// `archived_sessions`, plus files a listing must ignore.
struct Home {
    dir: tempfile::TempDir,
    newest: PathBuf,
    middle: PathBuf,
    oldest: PathBuf,
}

fn home() -> Home {
    let dir = tempfile::tempdir().expect("temp dir");
    let h = dir.path();
    // Written oldest-first and in an order unlike the expected one: the listing sorts.
    let oldest = write(
        &h.join(format!(
            "archived_sessions/rollout-2025-12-01T10-00-00-{ID_OLD}.jsonl.zst"
        )),
        &compress(&fixture("rollback.jsonl")),
    );
    let newest = write(
        &h.join(format!(
            "sessions/2026/09/01/rollout-2026-09-01T08-00-00-{ID_NEW}.jsonl"
        )),
        &fixture("era_d_newer.jsonl"),
    );
    let middle = write(
        &h.join(format!(
            "sessions/2026/01/02/rollout-2026-01-02T10-00-00-{ID_MID}.jsonl"
        )),
        &fixture("era_c_turns.jsonl"),
    );
    write(&h.join("sessions/2026/09/01/notes.txt"), b"not a rollout");
    write(&h.join("history.jsonl"), b"{}\n");
    Home {
        dir,
        newest,
        middle,
        oldest,
    }
}

fn run_in(home: &Path, args: &[&str]) -> Output {
    promptc()
        .env("CODEX_HOME", home)
        .args(args)
        .output()
        .expect("the promptc binary runs")
}

fn stdout(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("UTF-8 stdout")
}

fn sessions_json(home: &Path) -> Value {
    let output = run_in(
        Path::new("/nonexistent"),
        &["sessions", "--codex-home", home.to_str().unwrap(), "--json"],
    );
    let value: Value = serde_json::from_str(&stdout(&output)).expect("one JSON document");
    assert_eq!(value["schema_version"], 1);
    value
}

fn view_json(path: &Path) -> Value {
    let output = promptc()
        .args(["view", "--json", path.to_str().unwrap()])
        .output()
        .expect("runs");
    serde_json::from_str(&stdout(&output)).expect("one JSON document")
}

#[test]
fn lists_newest_first_with_ids_and_counts() {
    let home = home();
    let listing = sessions_json(home.dir.path());
    let sessions = listing["sessions"].as_array().expect("an array");
    let ids: Vec<&str> = sessions.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [ID_NEW, ID_MID, ID_OLD]);
    let paths: Vec<PathBuf> = sessions
        .iter()
        .map(|s| PathBuf::from(s["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        paths,
        [
            home.newest.clone(),
            home.middle.clone(),
            home.oldest.clone()
        ]
    );
    let dates: Vec<&str> = sessions
        .iter()
        .map(|s| s["date"].as_str().unwrap())
        .collect();
    assert_eq!(
        dates,
        [
            "2026-09-01T08:00:00",
            "2026-01-02T10:00:00",
            "2025-12-01T10:00:00"
        ]
    );
    let flags: Vec<(bool, bool)> = sessions
        .iter()
        .map(|s| {
            (
                s["archived"].as_bool().unwrap(),
                s["compressed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(flags, [(false, false), (false, false), (true, true)]);

    // Turns, steps, version and models agree with `promptc view` of the same file.
    for (session, path) in sessions.iter().zip(&paths) {
        let view = view_json(path);
        assert_eq!(session["turns"], view["session"]["turns"], "{path:?}");
        assert_eq!(session["steps"], view["session"]["steps"], "{path:?}");
        assert_eq!(session["models"], view["session"]["models"], "{path:?}");
        assert_eq!(
            session["cli_version"], view["session"]["cli_version"],
            "{path:?}"
        );
        assert_eq!(session["error"], Value::Null);
    }
    let counts: Vec<(u64, u64)> = sessions
        .iter()
        .map(|s| (s["turns"].as_u64().unwrap(), s["steps"].as_u64().unwrap()))
        .collect();
    assert_eq!(counts, [(1, 1), (2, 5), (4, 6)]);

    let middle = &sessions[1];
    assert_eq!(
        middle["first_user_message"],
        "Add a --verbose flag to the CLI."
    );
    let input = middle["input_tokens"].as_u64().unwrap();
    let cached = middle["cached_input_tokens"].as_u64().unwrap();
    assert!(input > 0 && cached > 0, "{middle}");
    let rate = middle["cache_hit_rate"].as_f64().unwrap();
    assert!((rate - cached as f64 / input as f64).abs() < 1e-12);
    assert_eq!(sessions[0]["cache_hit_rate"], Value::Null, "no usage: null");
    assert_eq!(
        sessions[0]["size"].as_u64().unwrap(),
        fixture("era_d_newer.jsonl").len() as u64
    );
}

#[test]
fn text_listing_is_ordered_aligned_and_fits_the_width() {
    let home = home();
    let output = run_in(home.dir.path(), &["sessions", "--width", "140"]);
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("DATE"), "{text}");
    assert!(lines[0].contains("FIRST MESSAGE"), "{text}");
    // Ids are abbreviated to the shortest prefix that tells them apart, here 35 characters.
    let abbreviated = |id: &str| format!("  {}  ", &id[..35]);
    assert!(lines[1].starts_with("2026-09-01 08:00"), "{text}");
    assert!(lines[1].contains(&abbreviated(ID_NEW)), "{text}");
    assert!(lines[2].contains(&abbreviated(ID_MID)), "{text}");
    assert!(lines[3].contains(&abbreviated(ID_OLD)), "{text}");
    assert!(lines[2].contains("Add a --verbose flag"), "{text}");
    assert!(lines[2].contains(" 64%"), "{text}");
    for line in &lines {
        assert!(line.chars().count() <= 140, "too wide: {line}");
    }
    let hit = lines[0].find("HIT").unwrap();
    assert_eq!(&lines[1][hit..hit + 3], "  -", "no usage prints -: {text}");

    // Narrower: the first message is cut to what is left, marked with `…`.
    let narrow = stdout(&run_in(home.dir.path(), &["sessions", "--width", "110"]));
    for line in narrow.lines() {
        assert!(line.chars().count() <= 110, "too wide: {line}");
    }
    assert!(narrow.contains("  Add a -…\n"), "{narrow}");
}

#[test]
fn session_text_is_escaped_in_the_listing() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join(format!(
            "sessions/2026/01/01/rollout-2026-01-01T00-00-00-{ID_MID}.jsonl"
        )),
        &fixture("escape_sequences.jsonl"),
    );
    let text = stdout(&run_in(dir.path(), &["sessions", "--width", "200"]));
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("\\x1b]0;pwned\\x07"), "{text}");
}

#[test]
fn unreadable_rollouts_are_listed_with_a_warning() {
    let home = home();
    let broken = write(
        &home.dir.path().join(format!(
            "sessions/2026/09/02/rollout-2026-09-02T00-00-00-{}.jsonl",
            "aaaaaaaa-0000-4000-8000-000000000000"
        )),
        b"garbage\n",
    );
    let output = run_in(home.dir.path(), &["sessions", "--json"]);
    let listing: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let first = &listing["sessions"][0];
    assert_eq!(first["path"], broken.to_str().unwrap());
    assert!(
        first["error"].as_str().unwrap().contains("not a rollout"),
        "{first}"
    );
    assert_eq!(first["turns"], Value::Null);
    assert_eq!(listing["sessions"].as_array().unwrap().len(), 4);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: ") && stderr.contains(broken.to_str().unwrap()),
        "{stderr}"
    );
}

/// A folder under a home that cannot be listed (another user's, a mount gone stale) leaves out
/// the sessions under it, with one warning naming it: `sessions`, `report` and `latest` go on
/// with the rest, as they do past a file that cannot be read. Root lists any folder, so as root
/// promptc runs as `nobody` (`setpriv`).
#[test]
fn a_folder_that_cannot_be_listed_is_left_out_with_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let home = home();
    let h = home.dir.path();
    let locked = h.join("sessions/2026/10");
    write(
        &locked.join(format!(
            "01/rollout-2026-10-01T08-00-00-{}.jsonl",
            "bbbbbbbb-0000-4000-8000-000000000000"
        )),
        &fixture("era_c_turns.jsonl"),
    );
    let root_user = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    let as_another_user = |args: &[&str]| {
        let mut command = if root_user {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_promptc"));
            c
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_promptc"))
        };
        command
            .env_remove("NO_COLOR")
            .env("CODEX_HOME", h)
            .env("CLAUDE_CONFIG_DIR", "/nonexistent-promptc-test")
            .args(args)
            .output()
    };
    if root_user && as_another_user(&["--version"]).is_err() {
        crate::support::skip("setpriv is not installed: cannot run promptc as another user");
        return;
    }
    // Readable by that user, but for the locked folder.
    let mut dir = Some(h);
    while let Some(d) =
        dir.filter(|d| d.starts_with(std::env::temp_dir()) && *d != std::env::temp_dir())
    {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir = d.parent();
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let warning = format!(
        "warning: {}: cannot list (Permission denied (os error 13)): the sessions under it are left out\n",
        locked.display()
    );
    for args in [
        &["sessions", "--json"][..],
        &["report", "--agent", "codex"],
        &["steps", "latest"],
    ] {
        let output = as_another_user(args).unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&output.stderr), warning, "{args:?}");
        if args[0] == "sessions" {
            let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(
                listing["sessions"].as_array().unwrap().len(),
                3,
                "the other three"
            );
        }
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();

    // A Claude Code home's project folder, the same.
    let claude = h.join("claude");
    let transcript = std::fs::read(root().join("fixtures/claude/tool_call_2.1.100.jsonl")).unwrap();
    write(
        &claude.join("projects/-open/cc8e0a78-3dc8-410f-99f3-c591b2dcc36f.jsonl"),
        &transcript,
    );
    let locked = claude.join("projects/-locked");
    write(
        &locked.join("dddddddd-0000-4000-8000-000000000000.jsonl"),
        &transcript,
    );
    for d in [
        &claude,
        &claude.join("projects"),
        &claude.join("projects/-open"),
    ] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let claude_home = claude.to_str().unwrap();
    let output = as_another_user(&[
        "sessions",
        "--json",
        "--agent",
        "claude",
        "--claude-home",
        claude_home,
    ])
    .unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "warning: {}: cannot list (Permission denied (os error 13)): the sessions under it are left out\n",
            locked.display()
        )
    );
    let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(listing["sessions"].as_array().unwrap().len(), 1);
}

/// A folder under a home that is a link to another (sessions kept on another disk) is walked
/// like a folder, for both agents; a link back up (a cycle) is walked once, not for ever, and
/// lists nothing twice.
#[test]
fn links_to_folders_are_followed_once() {
    let elsewhere = tempfile::tempdir().unwrap();
    let codex = tempfile::tempdir().unwrap();
    let id = "cccccccc-0000-4000-8000-000000000000";
    write(
        &elsewhere
            .path()
            .join(format!("codex/05/rollout-2026-11-05T08-00-00-{id}.jsonl")),
        &fixture("era_c_turns.jsonl"),
    );
    std::fs::create_dir_all(codex.path().join("sessions/2026")).unwrap();
    link(
        elsewhere.path().join("codex"),
        codex.path().join("sessions/2026/11"),
    );
    link(
        codex.path().join("sessions"),
        codex.path().join("sessions/2026/loop"),
    );
    let listing = sessions_json(codex.path());
    let ids: Vec<&str> = listing["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert!(
        ids[0].ends_with(&format!(
            "sessions/2026/11/05/rollout-2026-11-05T08-00-00-{id}.jsonl"
        )),
        "{ids:?}"
    );

    let claude = tempfile::tempdir().unwrap();
    let transcript = std::fs::read(root().join("fixtures/claude/tool_call_2.1.100.jsonl")).unwrap();
    write(
        &elsewhere
            .path()
            .join("project/cc8e0a78-3dc8-410f-99f3-c591b2dcc36f.jsonl"),
        &transcript,
    );
    std::fs::create_dir_all(claude.path().join("projects")).unwrap();
    let claude_home = claude.path().to_str().unwrap();
    let claude_sessions = || {
        json(&[
            "sessions",
            "--json",
            "--agent",
            "claude",
            "--claude-home",
            claude_home,
        ])
    };
    link(
        elsewhere.path().join("project"),
        claude.path().join("projects/-work"),
    );
    link(
        claude.path().join("projects"),
        claude.path().join("projects/-loop"),
    );
    let listing = claude_sessions();
    assert_eq!(
        listing["sessions"].as_array().unwrap().len(),
        1,
        "{listing}"
    );
    // A link to a folder inside the home is not followed: that folder is listed under its own
    // name, whatever order the file system gives.
    write(
        &claude
            .path()
            .join("projects/-real/eeeeeeee-0000-4000-8000-000000000000.jsonl"),
        &transcript,
    );
    for alias in ["-a", "-zz"] {
        link(
            claude.path().join("projects/-real"),
            claude.path().join("projects").join(alias),
        );
    }
    let listing = claude_sessions();
    let projects: Vec<&str> = listing["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["project"].as_str().unwrap())
        .collect();
    assert_eq!(projects.len(), 2, "{listing}");
    assert!(
        projects.contains(&"-real") && !projects.contains(&"-a") && !projects.contains(&"-zz"),
        "{projects:?}"
    );
    // `report` of a folder that is no home follows them too.
    let sessions = codex.path().join("sessions");
    let report = json(&["report", "--json", sessions.to_str().unwrap()]);
    assert_eq!(report["files"], 1, "{report}");
}

#[test]
fn missing_codex_home_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let output = run_in(
        dir.path(),
        &["sessions", "--codex-home", missing.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(missing.to_str().unwrap()), "{stderr}");

    // An existing home without sessions lists nothing.
    let output = run_in(dir.path(), &["sessions", "--json"]);
    let listing: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(listing["sessions"], Value::Array(Vec::new()));
}

#[test]
fn codex_home_comes_from_the_environment() {
    let home = home();
    let output = run_in(home.dir.path(), &["sessions", "--json"]);
    let listing: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(listing["codex_home"], home.dir.path().to_str().unwrap());
    assert_eq!(listing["sessions"].as_array().unwrap().len(), 3);
}

fn view_text(home: &Path, rollout: &str) -> Output {
    run_in(home, &["view", rollout])
}

#[test]
fn latest_resolves_to_the_newest_rollout() {
    let home = home();
    let latest = stdout(&view_text(home.dir.path(), "latest"));
    let by_path = stdout(&view_text(home.dir.path(), home.newest.to_str().unwrap()));
    assert_eq!(latest, by_path);
    assert!(latest.contains(ID_NEW), "{latest}");
}

#[test]
fn a_session_id_or_unique_prefix_resolves() {
    let home = home();
    let by_path = stdout(&view_text(home.dir.path(), home.middle.to_str().unwrap()));
    for query in [ID_MID, &ID_MID[..35], &ID_MID.to_ascii_uppercase()] {
        assert_eq!(
            stdout(&view_text(home.dir.path(), query)),
            by_path,
            "{query}"
        );
    }
    // The compressed, archived one resolves too.
    let old = stdout(&view_text(home.dir.path(), &ID_OLD[..35]));
    assert!(old.contains(ID_OLD), "{old}");
}

#[test]
fn an_ambiguous_prefix_lists_the_candidates() {
    let home = home();
    let output = view_text(home.dir.path(), "019b8e10");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ambiguous"), "{stderr}");
    assert!(
        stderr.contains(ID_MID) && stderr.contains(ID_OLD),
        "{stderr}"
    );
    assert!(!stderr.contains(ID_NEW), "{stderr}");
    // A candidate a line, not a message with escaped newlines.
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(lines[1].starts_with(&format!("  {ID_MID}  ")), "{stderr}");
    assert!(lines[2].starts_with(&format!("  {ID_OLD}  ")), "{stderr}");
}

#[test]
fn an_unknown_id_is_an_error() {
    let home = home();
    for query in ["0123abcd", "latest"] {
        let empty = tempfile::tempdir().unwrap();
        let target = if query == "latest" {
            empty.path()
        } else {
            home.dir.path()
        };
        let output = view_text(target, query);
        assert_eq!(output.status.code(), Some(2), "{query}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(&format!("error: {query}: no such file")),
            "{stderr}"
        );
    }
}

#[test]
fn an_existing_path_wins_over_an_id() {
    let home = home();
    let cwd = tempfile::tempdir().unwrap();
    // A file named like an ambiguous prefix, and one named `latest`.
    write(&cwd.path().join("019b8e10"), &fixture("era_a_bare.jsonl"));
    write(&cwd.path().join("latest"), &fixture("era_a_bare.jsonl"));
    for name in ["019b8e10", "latest"] {
        let output = promptc()
            .current_dir(cwd.path())
            .env("CODEX_HOME", home.dir.path())
            .args(["view", name])
            .output()
            .unwrap();
        let text = stdout(&output);
        assert!(
            text.starts_with(&format!("file      {name} ")),
            "{name}: {text}"
        );
    }
}

/// `view` of a compressed copy prints what `view` of the plain file prints.
#[test]
fn compressed_rollouts_read_like_plain_ones() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["era_c_turns.jsonl", "compaction_replacement.jsonl"] {
        let plain = fixture(name);
        let compressed = compress(&plain);
        assert_eq!(&compressed[..4], [0x28, 0xb5, 0x2f, 0xfd]);
        let plain_path = write(&dir.path().join(name), &plain);
        let zst_path = write(&dir.path().join(format!("{name}.zst")), &compressed);
        // Detected by the magic bytes, whatever the name says.
        let disguised = write(&dir.path().join(format!("disguised-{name}")), &compressed);
        let expected = stdout(&view_text(dir.path(), plain_path.to_str().unwrap()));
        for (path, label) in [(&zst_path, "zst"), (&disguised, "disguised")] {
            let got = stdout(&view_text(dir.path(), path.to_str().unwrap()));
            let got = got.replace(path.to_str().unwrap(), plain_path.to_str().unwrap());
            assert_eq!(got, expected, "{name} ({label})");
        }
        // On standard input, where both are named `-`, byte for byte.
        let from_stdin = |bytes: &[u8]| {
            let mut child = promptc()
                .args(["view", "--json", "-"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let bytes = bytes.to_vec();
            let writer = std::thread::spawn(move || {
                use std::io::Write;
                stdin.write_all(&bytes).unwrap();
            });
            let output = child.wait_with_output().unwrap();
            writer.join().unwrap();
            stdout(&output)
        };
        assert_eq!(
            from_stdin(&compressed),
            from_stdin(&plain),
            "{name} on stdin"
        );
    }
}

#[test]
fn corrupt_compressed_input_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = compress(&fixture("era_c_turns.jsonl"));
    data.truncate(data.len() / 2);
    let path = write(&dir.path().join("cut.jsonl.zst"), &data);
    let output = view_text(dir.path(), path.to_str().unwrap());
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(path.to_str().unwrap()) && stderr.contains("zstd"),
        "{stderr}"
    );
}

//! Helpers for the library's unit tests.

mod samples_dir;

use crate::LoadOptions;
use crate::agents::codex::model::Item;
use crate::agents::codex::session::Session;
use crate::agents::codex::session::Session as S;

/// Load a rollout from JSONL lines.
pub fn session(lines: &[&str]) -> Session {
    S::load(
        "test.jsonl",
        lines.join("\n").into_bytes(),
        LoadOptions::default(),
    )
    .expect("test rollout loads")
}

/// Load a fixture from `fixtures/`.
pub fn fixture(path: &str) -> Session {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path);
    let bytes = std::fs::read(&full).expect("fixture exists");
    S::load(path, bytes, LoadOptions::default()).expect("fixture loads")
}

/// Every `.jsonl` fixture that loads, with its path relative to `fixtures/`.
pub fn all_fixtures() -> Vec<(String, Session)> {
    fixture_bytes()
        .into_iter()
        .filter_map(|(name, bytes)| {
            S::load(&name, bytes, LoadOptions::default())
                .ok()
                .map(|s| (name, s))
        })
        .collect()
}

/// Every `.jsonl` under `fixtures/` (malformed ones included), by path from `fixtures/`.
pub fn fixture_bytes() -> Vec<(String, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut paths = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixture folder").flatten() {
            let path = entry.path();
            // `fixtures/claude/` holds Claude Code transcripts, not Codex rollouts.
            if path.is_dir() && !path.ends_with("claude") {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let name = path.strip_prefix(&root).ok()?.display().to_string();
            Some((name, std::fs::read(&path).ok()?))
        })
        .collect()
}

/// Real samples beside the repository, when present (see [`samples_dir::samples_dir`]).
pub fn real_samples() -> Vec<(String, Session)> {
    real_sample_bytes()
        .into_iter()
        .map(|(name, bytes)| {
            let session = S::load(&name, bytes, LoadOptions::default()).expect("real sample loads");
            (name, session)
        })
        .collect()
}

/// The real sample whose file name contains `needle`, when the samples are present (see
/// [`samples_dir::samples_dir`]); a present folder without it fails the test.
pub fn real_sample(needle: &str) -> Option<(String, Session)> {
    let samples = real_samples();
    if samples.is_empty() {
        return None;
    }
    let found = samples.into_iter().find(|(name, _)| name.contains(needle));
    assert!(found.is_some(), "no real sample named *{needle}*");
    found
}

/// The bytes of the real samples beside the repository, when present (see
/// [`samples_dir::samples_dir`]).
pub fn real_sample_bytes() -> Vec<(String, Vec<u8>)> {
    let Some(dir) = samples_dir::samples_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
    else {
        return Vec::new();
    };
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .chain(
            std::fs::read_dir(dir.join("real-corpus"))
                .into_iter()
                .flatten(),
        )
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("sample readable");
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, bytes)
        })
        .collect()
}

/// The `type` of each item, with role for messages, for compact assertions.
pub fn kinds(items: &[&Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match &i.role {
            Some(role) => format!("{}/{role}", i.type_name),
            None => format!("{}:{}", i.type_name, i.call_id.as_deref().unwrap_or("")),
        })
        .collect()
}

/// The Claude Code transcripts of `../shared/claude-code-samples/` beside the repository, by file
/// name: skipped with a message when the folder is absent, a failure under `CI=true` (as
/// [`samples_dir::samples_dir`] does for the Codex samples).
#[allow(clippy::print_stderr, reason = "a skipped test says why")]
pub fn claude_sample_bytes() -> Vec<(String, Vec<u8>)> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/claude-code-samples");
    if !dir.is_dir() {
        assert!(
            !samples_dir::under_ci(),
            "{} is missing: under CI=true the tests that read the real samples fail without it",
            dir.display()
        );
        eprintln!("skipped: {} is not present", dir.display());
        return Vec::new();
    }
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("samples folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(&p).expect("sample readable"))
        })
        .collect()
}

/// Every transcript the recorded Claude Code cases wrote (`tests/conformance/claude/**/home/`),
/// named by its path under `tests/conformance/claude`, in that order; empty files left out.
pub fn claude_recorded_bytes() -> Vec<(String, Vec<u8>)> {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude");
    let mut paths = Vec::new();
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl")
                && path.components().any(|c| c.as_os_str() == "home")
            {
                paths.push(path);
            }
        }
    }
    paths.sort();
    let out: Vec<(String, Vec<u8>)> = paths
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&base).unwrap().display().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .filter(|(_, bytes)| !bytes.is_empty())
        .collect();
    assert!(out.len() > 100, "{} recorded transcripts", out.len());
    out
}

//! Finding rollouts in a Codex home, without touching the file system: what a rollout's file
//! name says (date and session id), how listings are ordered, how a session id or a prefix of
//! one matches, and the one-line summary `promptc sessions` prints for each file.
//!
//! The binary walks `$CODEX_HOME/sessions/YYYY/MM/DD/` and `$CODEX_HOME/archived_sessions/`
//! and reads the files; everything it decides about them is here.

use std::cmp::Ordering;
use std::path::Path;

use crate::agents::codex::content::{is_turn_boundary, message_texts};
use crate::agents::codex::parse::{LoadError, LoadOptions};
use crate::agents::codex::session::Session;

/// What a Codex rollout file name says: `rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl[.zst]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutName {
    /// The creation time written in the name, as `YYYY-MM-DDThh:mm:ss` (Codex writes local
    /// time, without a zone). Sorts as text.
    pub timestamp: String,
    /// The session (thread) id, lower case.
    pub id: String,
    /// The name ends in `.zst`.
    pub compressed: bool,
}

const PREFIX: &str = "rollout-";
const TIMESTAMP_LEN: usize = "YYYY-MM-DDThh-mm-ss".len();
const UUID_LEN: usize = 36;

/// True for a name a listing considers at all: `rollout-*.jsonl` or `rollout-*.jsonl.zst`.
pub fn is_rollout_file_name(name: &str) -> bool {
    name.starts_with(PREFIX) && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zst"))
}

/// Parse a rollout file name (the last path component). `None` when it is not of Codex's form.
pub fn parse_file_name(name: &str) -> Option<RolloutName> {
    let (stem, compressed) = match name.strip_suffix(".jsonl.zst") {
        Some(stem) => (stem, true),
        None => (name.strip_suffix(".jsonl")?, false),
    };
    let rest = stem.strip_prefix(PREFIX)?;
    if rest.len() != TIMESTAMP_LEN + 1 + UUID_LEN || !rest.is_char_boundary(TIMESTAMP_LEN) {
        return None;
    }
    let (time, id) = rest.split_at(TIMESTAMP_LEN);
    let id = id.strip_prefix('-')?;
    if !is_timestamp(time) || !is_uuid(id) {
        return None;
    }
    let date = &time[..10];
    let clock = time[11..].replace('-', ":");
    Some(RolloutName {
        timestamp: format!("{date}T{clock}"),
        id: id.to_ascii_lowercase(),
        compressed,
    })
}

/// `YYYY-MM-DDThh-mm-ss`, digits where digits go.
fn is_timestamp(text: &str) -> bool {
    text.bytes().enumerate().all(|(i, b)| match i {
        4 | 7 | 13 | 16 => b == b'-',
        10 => b == b'T',
        _ => b.is_ascii_digit(),
    })
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(text: &str) -> bool {
    text.len() == UUID_LEN
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// The order of a listing: newest first by the time in the file name, then by path; files
/// whose name has no time come last.
pub fn newest_first(
    a: (Option<&RolloutName>, &Path),
    b: (Option<&RolloutName>, &Path),
) -> Ordering {
    let time = |n: Option<&RolloutName>| n.map(|n| n.timestamp.clone());
    match (time(a.0), time(b.0)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.1.cmp(b.1))
}

pub use crate::core::ids::{id_matches, is_id_query};

/// What `promptc sessions` shows for one rollout.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionSummary {
    /// The `id` of the first `session_meta`.
    pub meta_id: Option<String>,
    /// `cli_version` of the first `session_meta`.
    pub cli_version: Option<String>,
    /// `cwd` of the first `session_meta`.
    pub cwd: Option<String>,
    /// Models named by the turn contexts, in first-use order.
    pub models: Vec<String>,
    pub turns: usize,
    pub steps: usize,
    /// Steps with an observed usage.
    pub observed_steps: usize,
    /// Sums over the steps' observed usage.
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    /// The text of the first message the user typed (not a harness-injected context message).
    pub first_user_message: Option<String>,
    /// Lines that could not be read and were skipped.
    pub skipped_lines: usize,
}

impl SessionSummary {
    /// `cached_input_tokens / input_tokens` over the observed steps; `None` without usage.
    pub fn cache_hit_rate(&self) -> Option<f64> {
        (self.input_tokens > 0).then(|| self.cached_input_tokens as f64 / self.input_tokens as f64)
    }
}

/// Load and replay a rollout's bytes (decompressed) and summarize it. `name` is used in errors.
pub fn summarize(name: &str, bytes: impl AsRef<[u8]>) -> Result<SessionSummary, LoadError> {
    // The summary reads messages only.
    let options = LoadOptions {
        keep_item_json: false,
        ..LoadOptions::default()
    };
    Ok(summarize_session(&Session::load(name, bytes, options)?))
}

/// Summarize a loaded session.
pub fn summarize_session(session: &Session) -> SessionSummary {
    let rollout = &session.rollout;
    let meta = rollout.meta.as_ref();
    let mut summary = SessionSummary {
        meta_id: meta.and_then(|m| m.id.clone()),
        cli_version: meta.and_then(|m| m.cli_version.clone()),
        cwd: meta.and_then(|m| m.cwd.clone()),
        models: session.models(),
        turns: session.replay.turns.len(),
        steps: session.replay.steps.len(),
        skipped_lines: rollout.skipped.len(),
        ..SessionSummary::default()
    };
    for usage in session.replay.steps.iter().filter_map(|s| s.usage.as_ref()) {
        summary.observed_steps += 1;
        summary.input_tokens = summary
            .input_tokens
            .saturating_add(usage.usage.input_tokens);
        summary.cached_input_tokens = summary
            .cached_input_tokens
            .saturating_add(usage.usage.cached_input_tokens);
    }
    summary.first_user_message = rollout.items.iter().find_map(|item| {
        let json = || item.json();
        is_turn_boundary(item, json).then(|| message_texts(json()).join(" "))
    });
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "019d0a20-0000-7000-8000-000000000005";

    #[test]
    fn parses_codex_file_names() {
        let name = parse_file_name(&format!("rollout-2026-09-01T08-05-09-{ID}.jsonl")).unwrap();
        assert_eq!(name.timestamp, "2026-09-01T08:05:09");
        assert_eq!(name.id, ID);
        assert!(!name.compressed);
        let upper = ID.to_ascii_uppercase();
        let name = parse_file_name(&format!("rollout-2026-09-01T08-05-09-{upper}.jsonl.zst"));
        assert_eq!(name.as_ref().map(|n| n.id.as_str()), Some(ID));
        assert!(name.unwrap().compressed);
    }

    #[test]
    fn rejects_other_names() {
        for bad in [
            format!("rollout-2026-09-01T08-05-09-{ID}.json"),
            format!("rollout-2026-09-01T08-05-09-{ID}"),
            format!("rollout-2026-09-01 08-05-09-{ID}.jsonl"),
            format!("rollout-2026-09-01T08-05-0x-{ID}.jsonl"),
            format!("session-2026-09-01T08-05-09-{ID}.jsonl"),
            format!("rollout-2026-09-01T08-05-09-{}.jsonl", &ID[1..]),
            format!("rollout-2026-09-01T08-05-09-{}g.jsonl", &ID[..35]),
            format!("rollout-2026-09-01T08-05-09_{ID}.jsonl"),
            "rollout-é.jsonl".to_string(),
            "rollout-2026-09-01T08-05-09-ééééééééééééééééé-ééé.jsonl".to_string(),
        ] {
            assert_eq!(parse_file_name(&bad), None, "{bad}");
        }
        assert!(is_rollout_file_name("rollout-x.jsonl"));
        assert!(is_rollout_file_name("rollout-x.jsonl.zst"));
        assert!(!is_rollout_file_name("rollout-x.json"));
        assert!(!is_rollout_file_name("notes.jsonl"));
    }

    #[test]
    fn orders_newest_first_then_by_path_then_unnamed() {
        let named = |time: &str| RolloutName {
            timestamp: time.to_string(),
            id: ID.to_string(),
            compressed: false,
        };
        let old = named("2025-01-01T00:00:00");
        let new = named("2026-01-01T00:00:00");
        let mut files = [
            (None, Path::new("z")),
            (Some(&old), Path::new("a")),
            (Some(&new), Path::new("b")),
            (None, Path::new("y")),
            (Some(&new), Path::new("a")),
        ];
        files.sort_by(|a, b| newest_first(*a, *b));
        let paths: Vec<_> = files.iter().map(|f| f.1.to_str().unwrap()).collect();
        assert_eq!(paths, ["a", "b", "a", "y", "z"]);
        assert_eq!(files[0].0, Some(&new));
        assert_eq!(files[2].0, Some(&old));
    }

    #[test]
    fn id_queries_and_prefixes() {
        assert!(is_id_query("019d0a20"));
        assert!(is_id_query(ID));
        assert!(!is_id_query(""));
        assert!(!is_id_query("latest"));
        assert!(!is_id_query("./x.jsonl"));
        assert!(id_matches("019D0A20-0000", ID));
        assert!(id_matches(ID, ID));
        assert!(!id_matches("019d0a21", ID));
        assert!(!id_matches(&format!("{ID}0"), ID));
    }

    #[test]
    fn summarizes_turns_steps_usage_and_first_message() {
        let usage = |input: u64, cached: u64| {
            format!(
                r#"{{"timestamp":"t","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":1,"total_tokens":{input}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":1,"total_tokens":{input}}}}}}}}}"#
            )
        };
        let lines = [
            format!(
                r#"{{"timestamp":"t","type":"session_meta","payload":{{"id":"{ID}","cli_version":"0.50.0"}}}}"#
            ),
            r#"{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5"}}"#
                .to_string(),
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}"#.to_string(),
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the\nbug"}]}}"#.to_string(),
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#.to_string(),
            usage(1000, 0),
            r#"{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-mini"}}"#
                .to_string(),
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"again"}]}}"#.to_string(),
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}"#.to_string(),
            usage(3000, 2000),
            "{not json".to_string(),
        ];
        let summary = summarize("s.jsonl", lines.join("\n").into_bytes()).unwrap();
        assert_eq!(summary.meta_id.as_deref(), Some(ID));
        assert_eq!(summary.cli_version.as_deref(), Some("0.50.0"));
        assert_eq!(summary.models, ["gpt-5", "gpt-5-mini"]);
        assert_eq!((summary.turns, summary.steps), (2, 2));
        assert_eq!(summary.observed_steps, 2);
        assert_eq!(
            (summary.input_tokens, summary.cached_input_tokens),
            (4000, 2000)
        );
        assert_eq!(summary.cache_hit_rate(), Some(0.5));
        assert_eq!(summary.first_user_message.as_deref(), Some("fix the\nbug"));
        assert_eq!(summary.skipped_lines, 1);
    }

    #[test]
    fn no_usage_means_no_hit_rate() {
        let summary = summarize(
            "s.jsonl",
            br#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#,
        )
        .unwrap();
        assert_eq!(summary.cache_hit_rate(), None);
        assert_eq!(summary.first_user_message, None);
        assert_eq!((summary.turns, summary.steps), (0, 0));
    }

    #[test]
    fn errors_name_the_file() {
        let error = summarize("dir/s.jsonl", Vec::new()).unwrap_err();
        assert!(error.to_string().contains("dir/s.jsonl"), "{error}");
    }
}

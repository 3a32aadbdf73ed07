//! `promptc sessions`' rows for a Claude Code home: each session (its main file and subagent
//! files, read as `claude::home` reads a home), with what `sessions` shows of it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use promptc::agents::claude::home::{FileRole, SessionInfo, file_role};

/// One Claude Code session, listed.
pub struct ClaudeRow {
    pub info: SessionInfo,
    pub id: String,
    /// Its main file.
    pub path: PathBuf,
    /// Bytes on disk, of all its files.
    pub size: u64,
    /// When it started, local time (`YYYY-MM-DDThh:mm:ss`), as `latest` reads it.
    pub date: Option<String>,
    /// The newest Claude Code build that wrote its lines.
    pub version: Option<String>,
    /// Its models, the one of the most requests first.
    pub models: Vec<String>,
    /// Paths of all its files.
    pub files: Vec<String>,
}

/// Files that could not be read, and why.
pub type Failed = Vec<(PathBuf, String)>;

impl ClaudeRow {
    /// The whole prompt of its requests: uncached, written and read input.
    pub fn prompt_tokens(&self) -> u64 {
        let t = &self.info.tokens;
        t.input + t.cache_write_5m + t.cache_write_1h + t.cache_read
    }

    /// Read over the whole prompt, as `steps` gives it; `None` without usage or where the
    /// backend reported no cache counts.
    pub fn hit_rate(&self) -> Option<f64> {
        let prompt = self.prompt_tokens();
        (prompt > 0 && self.info.cache_fields)
            .then(|| self.info.tokens.cache_read as f64 / prompt as f64)
    }

    pub fn document(&self) -> ClaudeDocument<'_> {
        ClaudeDocument {
            project: &self.info.project,
            files: &self.files,
            versions: self.info.versions.iter().map(String::as_str).collect(),
            subagents: self.info.subagents.len(),
            subagent_requests: self.info.subagent_requests,
            side_requests: self.info.side_requests,
            compactions: self.info.compactions,
            cache_write_input_tokens: self.info.tokens.cache_write_5m
                + self.info.tokens.cache_write_1h,
            cache_write_1h_input_tokens: self.info.tokens.cache_write_1h,
            output_tokens: self.info.tokens.output,
            copied_from: self.info.copied_from.iter().map(String::as_str).collect(),
        }
    }
}

/// The fields only a Claude Code session has.
#[derive(Serialize)]
pub struct ClaudeDocument<'a> {
    /// Its folder under `projects/` (the cwd, `/` and `.` written `-`).
    project: &'a str,
    /// Its main file first, then its subagents' files.
    files: &'a [String],
    versions: Vec<&'a str>,
    /// Subagents that made requests, and their requests (not in `steps`).
    subagents: usize,
    subagent_requests: usize,
    /// 2.0.x's subagent warmups.
    side_requests: usize,
    compactions: usize,
    cache_write_input_tokens: u64,
    cache_write_1h_input_tokens: u64,
    output_tokens: u64,
    /// Sessions whose responses its files copied (a 1.0.x resume, a fork): counted there.
    copied_from: Vec<&'a str>,
}

/// The sessions of the Claude Code home `home` that have a main file, newest first (by when
/// they started, then id), and the files that could not be read.
pub fn rows(home: &Path) -> anyhow::Result<(Vec<ClaudeRow>, Failed)> {
    let projects = home.join(crate::homes::PROJECTS);
    let files = crate::homes::claude_files(home)?;
    let sizes: BTreeMap<&str, u64> = files.iter().map(|f| (f.rel.as_str(), f.size)).collect();
    let (read, failed) = crate::homes::read_claude(&files, false, || {});
    // Each session's models by requests.
    let mut models: BTreeMap<(&str, &str), BTreeMap<&str, usize>> = BTreeMap::new();
    for r in &read.requests {
        if let Some(model) = &r.request.model {
            *models
                .entry((&*r.project, &*r.session))
                .or_default()
                .entry(model)
                .or_default() += 1;
        }
    }
    let mut rows: Vec<ClaudeRow> = read
        .sessions
        .iter()
        .filter(|s| {
            s.files
                .first()
                .is_some_and(|f| matches!(file_role(f), Some(FileRole::Main { .. })))
        })
        .map(|s| {
            let mut by_count: Vec<(&str, usize)> = models
                .get(&(s.project.as_str(), s.id.as_str()))
                .map(|m| m.iter().map(|(k, v)| (*k, *v)).collect())
                .unwrap_or_default();
            by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            ClaudeRow {
                id: s.id.clone(),
                path: projects.join(&s.files[0]),
                size: s
                    .files
                    .iter()
                    .map(|f| sizes.get(f.as_str()).unwrap_or(&0))
                    .sum(),
                date: s.started.as_deref().and_then(crate::homes::local_time),
                version: newest_version(s.versions.iter().map(String::as_str)),
                models: by_count.into_iter().map(|(m, _)| m.to_string()).collect(),
                files: s
                    .files
                    .iter()
                    .map(|f| projects.join(f).display().to_string())
                    .collect(),
                info: s.clone(),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (b.date.is_some(), &b.date)
            .cmp(&(a.date.is_some(), &a.date))
            .then_with(|| a.id.cmp(&b.id))
    });
    Ok((rows, failed))
}

/// The newest of version numbers (`2.1.100` after `2.1.99`), compared number by number.
fn newest_version<'a>(versions: impl Iterator<Item = &'a str>) -> Option<String> {
    let key = |v: &str| -> Vec<u64> {
        v.split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect()
    };
    versions.max_by_key(|v| key(v)).map(str::to_string)
}

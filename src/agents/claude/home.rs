//! A Claude Code home (`~/.claude/projects/`, or `$CLAUDE_CONFIG_DIR/projects/`), without
//! touching the file system: which file is whose, the sessions they make up, and every billed
//! request of the home counted once ([`super::usage`]).
//!
//! The binary walks `projects/` and reads each `.jsonl` file ([`read_file`], one file in memory
//! at a time, files on as many threads as it likes), handing each read file with its path
//! (relative to `projects/`) to [`HomeBuilder::push`] in a fixed order; [`HomeBuilder::finish`]
//! decides the rest:
//! - `<project>/<session>.jsonl`: a session's main file;
//! - `<project>/agent-<id>.jsonl` (2.0.x): a subagent, of the session its lines' `sessionId` names;
//! - `<project>/<session>/subagents/agent-<id>.jsonl` (2.1.x, also under `workflows/wf_*/`):
//!   a subagent of `<session>`;
//! - a 1.0.x resume writes a new file that starts with copies of the old lines: the copied
//!   responses count in the older file, and the new session names it in `copied_from`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::load::{Line, LineKind, Transcript};
use super::session::Session;
use super::thread::{ThreadKey, conversation};
use super::usage::{BilledRequest, Judged, Purpose, billed_requests, compactions, judge};
use crate::providers::anthropic::prices::Tokens;

/// What a file's place in `projects/` says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRole {
    /// `<project>/<session>.jsonl`.
    Main { project: String, session: String },
    /// `<project>/agent-<id>.jsonl` (2.0.x): the session is in its lines.
    SiblingAgent { project: String, agent: String },
    /// `<project>/<session>/…/agent-<id>.jsonl` (2.1.x).
    NestedAgent {
        project: String,
        session: String,
        agent: String,
    },
}

impl FileRole {
    pub fn project(&self) -> &str {
        match self {
            FileRole::Main { project, .. }
            | FileRole::SiblingAgent { project, .. }
            | FileRole::NestedAgent { project, .. } => project,
        }
    }
}

/// The role of a file by its path relative to `projects/` (`/` or `\` separated); `None` for
/// anything that is no transcript of Claude Code's layout.
pub fn file_role(path: &str) -> Option<FileRole> {
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let (name, dirs) = parts.split_last()?;
    let stem = name.strip_suffix(".jsonl")?;
    let project = (*dirs.first()?).to_string();
    match (dirs.len(), stem.strip_prefix("agent-")) {
        (1, Some(agent)) => Some(FileRole::SiblingAgent {
            project,
            agent: agent.to_string(),
        }),
        (1, None) => Some(FileRole::Main {
            project,
            session: stem.to_string(),
        }),
        (n, Some(agent)) if n >= 3 => Some(FileRole::NestedAgent {
            project,
            session: dirs[1].to_string(),
            agent: agent.to_string(),
        }),
        _ => None,
    }
}

/// One session: its main file and subagent files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionInfo {
    pub id: String,
    /// The folder under `projects/` (the cwd with `/` and `.` as `-`).
    pub project: String,
    /// The first `cwd` its lines name.
    pub cwd: Option<String>,
    /// Paths relative to `projects/`, the main file first (when there is one).
    pub files: Vec<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    /// When it started: the first time of its main file ([`first_time`]), as `latest` reads it
    /// from the file's head.
    pub started: Option<String>,
    /// The text of the first prompt of its main file.
    pub first_prompt: Option<String>,
    /// Turns: its counted requests that answer a prompt of the main thread.
    pub turns: usize,
    /// Subagents that made a counted request (2.0.x+ by `agentId`; 1.0.x's inline sidechains
    /// are one thread).
    pub subagents: BTreeSet<ThreadKey>,
    /// The sums of its counted requests.
    pub tokens: Tokens,
    /// Some counted request reported cache counts (other backends may report none: then
    /// nothing can be said of its cache).
    pub cache_fields: bool,
    /// Claude Code builds that wrote its lines.
    pub versions: BTreeSet<String>,
    /// Models of its counted requests.
    pub models: BTreeSet<String>,
    /// Counted requests (copies of another session's excluded), by purpose.
    pub conversation_requests: usize,
    pub subagent_requests: usize,
    pub side_requests: usize,
    /// Compactions it made: billed, with no usage in any line.
    pub compactions: usize,
    /// Sessions whose responses this one's files copied (a 1.0.x resume, a fork).
    pub copied_from: BTreeSet<String>,
    /// Lines no reader could take.
    pub skipped_lines: usize,
}

/// A counted request with where it belongs (shared by the requests of a file).
#[derive(Debug, Clone, PartialEq)]
pub struct HomeRequest {
    pub session: Arc<str>,
    pub project: Arc<str>,
    pub cwd: Option<Arc<str>>,
    /// Path relative to `projects/`.
    pub file: Arc<str>,
    pub request: BilledRequest,
}

/// The sessions of a home and its counted requests.
#[derive(Debug, Clone, Default)]
pub struct Home {
    /// Newest first (by last timestamp, then id).
    pub sessions: Vec<SessionInfo>,
    /// Every billed request counted once, by time (then file and line).
    pub requests: Vec<HomeRequest>,
    /// Responses left out as copies of one counted in an earlier file.
    pub copies: usize,
    /// Files that are no transcript of Claude Code's layout, or whose session is unknown.
    pub ignored: Vec<String>,
    /// Files with no conversational line: empty (2.0.x leaves some at start), or only a 1.0.x
    /// `summary` (a title side request's result written to a file of its own).
    pub empty: Vec<String>,
    /// 2.1.x `progress` lines read (their usage is the subagent's, counted from its file).
    pub progress_lines: usize,
}

impl Home {
    /// The sessions whose id is `query` or starts with it (case-insensitive).
    pub fn find(&self, query: &str) -> Vec<&SessionInfo> {
        self.sessions
            .iter()
            .filter(|s| crate::core::ids::id_matches(query, &s.id))
            .collect()
    }

    /// The newest session.
    pub fn latest(&self) -> Option<&SessionInfo> {
        self.sessions.first()
    }
}

struct FileEntry {
    path: String,
    session: String,
    project: String,
    main: bool,
    cwd: Option<String>,
    first: Option<String>,
    last: Option<String>,
    versions: BTreeSet<String>,
    requests: Vec<BilledRequest>,
    compactions: usize,
    skipped: usize,
    first_prompt: Option<String>,
    progress_lines: usize,
}

/// One file of a home, read: what the home needs of it (its transcript is not kept).
pub struct HomeFile(FileKind);

enum FileKind {
    Ignored(String),
    Empty(String),
    Read(Box<FileEntry>),
}

/// Read the file at `path` (relative to `projects/`). With `verdicts`, each request of the
/// thread `steps` shows gets its verdict and the input it lost.
pub fn read_file(path: &str, t: Transcript, verdicts: bool) -> HomeFile {
    HomeFile(read(path, t, verdicts))
}

/// Load `bytes` as the file at `path` and read it (an empty file is [`Home::empty`]).
pub fn read_bytes(
    path: &str,
    bytes: &[u8],
    verdicts: bool,
) -> Result<HomeFile, super::load::LoadError> {
    match super::load::load(path, bytes) {
        Ok(t) => Ok(read_file(path, t, verdicts)),
        Err(super::load::LoadError::Empty { .. }) => {
            Ok(HomeFile(FileKind::Empty(path.to_string())))
        }
        Err(e) => Err(e),
    }
}

/// The time a file starts at: its first line with a time that is not a 1.0.x `summary` (whose
/// lines have none, or the time of the session they title) nor a copy of an earlier line.
pub fn first_time(lines: &[Line]) -> Option<&str> {
    lines
        .iter()
        .filter(|l| l.duplicate_of.is_none() && !matches!(l.kind, LineKind::Summary { .. }))
        .find_map(|l| l.timestamp.as_deref())
}

/// [`first_time`] of the file whose first bytes are `head` (a cut last line is passed over):
/// `None` when no whole line of it has one.
pub fn first_time_of_head(head: &[u8]) -> Option<String> {
    let mut loader = super::load::Loader::new("");
    loader.push(head);
    let t = loader.finish().ok()?;
    first_time(&t.lines).map(str::to_string)
}

/// The text of the first prompt of the main thread: a user line that is not a tool result, a
/// slash command or its output, a local command's caveat, a compaction's summary or injected
/// context.
fn first_prompt(t: &Transcript) -> Option<String> {
    t.lines.iter().find_map(|line| {
        let LineKind::User(u) = &line.kind else {
            return None;
        };
        if line.sidechain
            || line.duplicate_of.is_some()
            || !u.tool_results.is_empty()
            || u.meta
            || u.compact_summary
            || u.transcript_only
        {
            return None;
        }
        let texts: Vec<String> = match serde_json::from_str::<serde_json::Value>(&u.content) {
            Ok(serde_json::Value::String(s)) => vec![s],
            Ok(serde_json::Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let text = texts
            .into_iter()
            .filter(|t| {
                !["<system-reminder>", "<command-", "<local-command-"]
                    .iter()
                    .any(|tag| t.trim_start().starts_with(tag))
            })
            .collect::<Vec<_>>()
            .join(" ");
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    })
}

fn read(path: &str, t: Transcript, verdicts: bool) -> FileKind {
    let Some(role) = file_role(path) else {
        return FileKind::Ignored(path.to_string());
    };
    if t.lines.iter().all(|l| l.uuid.is_none()) {
        return FileKind::Empty(path.to_string());
    }
    let lines = t.lines.iter().filter(|l| l.duplicate_of.is_none());
    let session = match &role {
        FileRole::Main { session, .. } | FileRole::NestedAgent { session, .. } => {
            Some(session.clone())
        }
        FileRole::SiblingAgent { .. } => t
            .lines
            .iter()
            .find_map(|l| l.context.session_id.as_deref().map(str::to_string)),
    };
    let Some(session) = session else {
        return FileKind::Ignored(path.to_string());
    };
    // The first time as `latest` reads it from the file's head; the last of the same lines.
    let first = first_time(&t.lines).map(str::to_string);
    let last = lines
        .clone()
        .filter(|l| !matches!(l.kind, LineKind::Summary { .. }))
        .filter_map(|l| l.timestamp.as_deref())
        .next_back()
        .map(str::to_string)
        .or_else(|| first.clone());
    let main = matches!(role, FileRole::Main { .. });
    let cwd = lines
        .clone()
        .find_map(|l| l.context.cwd.as_deref().map(str::to_string));
    let versions = lines
        .filter_map(|l| l.context.version.as_deref().map(str::to_string))
        .collect();
    let first_prompt = if main { first_prompt(&t) } else { None };
    let progress_lines = t
        .lines
        .iter()
        .filter(|l| matches!(l.kind, LineKind::Progress))
        .count();
    let skipped = t.skipped.len();
    // The verdicts come from the stages' own steps, which plan the session's shown thread.
    let (t, c, judged) = if verdicts {
        let session = Session::new(t);
        let judged = judge(&session);
        let Session {
            transcript,
            conversation,
            ..
        } = session;
        (transcript, conversation, judged)
    } else {
        let c = conversation(&t);
        (t, c, Judged::new())
    };
    FileKind::Read(Box::new(FileEntry {
        path: path.to_string(),
        session,
        project: role.project().to_string(),
        main,
        cwd,
        first,
        last,
        versions,
        requests: billed_requests(&t, &c, judged),
        compactions: compactions(&c),
        skipped,
        first_prompt,
        progress_lines,
    }))
}

/// Collects a home file by file.
#[derive(Default)]
pub struct HomeBuilder {
    verdicts: bool,
    files: Vec<FileEntry>,
    ignored: Vec<String>,
    empty: Vec<String>,
}

impl HomeBuilder {
    /// With `verdicts`, each request gets its `steps` verdict (a compile of each: slower).
    pub fn new(verdicts: bool) -> HomeBuilder {
        HomeBuilder {
            verdicts,
            ..HomeBuilder::default()
        }
    }

    /// Add a file [`read_file`] read. The home does not depend on the order files come in.
    pub fn push(&mut self, file: HomeFile) {
        match file.0 {
            FileKind::Ignored(path) => self.ignored.push(path),
            FileKind::Empty(path) => self.empty.push(path),
            FileKind::Read(entry) => self.files.push(*entry),
        }
    }

    /// Read and add the file at `path` (relative to `projects/`).
    pub fn add(&mut self, path: &str, t: Transcript) {
        self.push(read_file(path, t, self.verdicts));
    }

    /// Load `bytes` as the file at `path` and add it (an empty file is [`Home::empty`]).
    pub fn add_bytes(&mut self, path: &str, bytes: &[u8]) -> Result<(), super::load::LoadError> {
        let file = read_bytes(path, bytes, self.verdicts)?;
        self.push(file);
        Ok(())
    }

    pub fn finish(mut self) -> Home {
        // The earliest file counts a response its copies repeat; a copy that kept the old
        // timestamps starts when its original does but ends later (it goes on from there).
        self.files.sort_by(|a, b| {
            (a.first.is_none(), &a.first, &a.last, !a.main, &a.path).cmp(&(
                b.first.is_none(),
                &b.first,
                &b.last,
                !b.main,
                &b.path,
            ))
        });
        // Each response counted, by its id and usage, and the session that counted it.
        let mut counted: foldhash::HashMap<crate::core::hash::Hash, Arc<str>> =
            foldhash::HashMap::default();
        let mut sessions: BTreeMap<(String, String), SessionInfo> = BTreeMap::new();
        let mut requests = Vec::new();
        let mut copies = 0;
        let mut progress_lines = 0;
        for f in self.files {
            progress_lines += f.progress_lines;
            let s = sessions
                .entry((f.project.clone(), f.session.clone()))
                .or_insert_with(|| SessionInfo {
                    id: f.session.clone(),
                    project: f.project.clone(),
                    ..SessionInfo::default()
                });
            if f.main {
                s.files.insert(0, f.path.clone());
                s.cwd = f.cwd.clone().or(s.cwd.take());
                s.started = f.first.clone();
                s.first_prompt = f.first_prompt.clone();
            } else {
                s.files.push(f.path.clone());
                s.cwd = s.cwd.take().or(f.cwd.clone());
            }
            s.first_timestamp = min_opt(s.first_timestamp.take(), f.first.clone());
            s.last_timestamp = max_opt(s.last_timestamp.take(), f.last.clone());
            s.versions.extend(f.versions);
            s.compactions += f.compactions;
            s.skipped_lines += f.skipped;
            // Where its requests belong, shared by them.
            let session: Arc<str> = Arc::from(f.session.as_str());
            let project: Arc<str> = Arc::from(f.project.as_str());
            let cwd: Option<Arc<str>> = f.cwd.as_deref().map(Arc::from);
            let file: Arc<str> = Arc::from(f.path.as_str());
            // A response met again, in this file or another, is a copy: a resume's (1.0.x's
            // new file; 2.0.31 rewrote the old lines into the same file under new uuids), a
            // fork's. A backend's reused id with new usage is a response of its own.
            for r in f.requests {
                if let Some(key) = r.key() {
                    if let Some(owner) = counted.get(&key) {
                        copies += 1;
                        if **owner != *session {
                            s.copied_from.insert(owner.to_string());
                        }
                        continue;
                    }
                    counted.insert(key, session.clone());
                }
                match r.purpose {
                    Purpose::Conversation => s.conversation_requests += 1,
                    Purpose::Subagent => {
                        s.subagent_requests += 1;
                        if !s.subagents.contains(&r.thread) {
                            s.subagents.insert(r.thread.clone());
                        }
                    }
                    Purpose::Side => s.side_requests += 1,
                }
                s.turns += usize::from(r.answers_prompt);
                s.tokens.add(&r.tokens);
                s.cache_fields |= r.has_cache_fields;
                if let Some(m) = &r.model
                    && !s.models.contains(m)
                {
                    s.models.insert(m.clone());
                }
                requests.push(HomeRequest {
                    session: session.clone(),
                    project: project.clone(),
                    cwd: cwd.clone(),
                    file: file.clone(),
                    request: r,
                });
            }
        }
        let mut sessions: Vec<SessionInfo> = sessions.into_values().collect();
        sessions.sort_by(|a, b| {
            (b.last_timestamp.is_some(), &b.last_timestamp)
                .cmp(&(a.last_timestamp.is_some(), &a.last_timestamp))
                .then_with(|| a.id.cmp(&b.id))
        });
        requests.sort_by(|a, b| {
            (&a.request.timestamp, &a.file, a.request.line).cmp(&(
                &b.request.timestamp,
                &b.file,
                b.request.line,
            ))
        });
        self.ignored.sort();
        self.empty.sort();
        Home {
            sessions,
            requests,
            copies,
            ignored: self.ignored,
            empty: self.empty,
            progress_lines,
        }
    }
}

fn min_opt(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn max_opt(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

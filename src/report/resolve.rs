//! Across files: a session's second file counted once, forks without what they carry from
//! their parent, and the notes that say what was not counted, or counted with a caveat.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Fork, SessionUsage};

/// Rollouts that were not counted, or counted with a caveat.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Notes {
    /// Files that could not be read, and why.
    pub skipped: Vec<Skipped>,
    /// Rollouts without a single usage counter.
    pub no_usage: Vec<String>,
    /// Files of a session already counted from another file (a copy, or an older snapshot).
    pub duplicates: Vec<Duplicate>,
    /// Forks whose share of their parent's counters was not counted again: the parent was read,
    /// or the file copies none of its lines.
    pub forks_subtracted: Vec<String>,
    /// Forks that copy the lines of a parent that was not read: counted whole, the parent's
    /// history may be in them.
    pub forks_unknown_parent: Vec<String>,
    /// Rollouts whose counters restarted: each run counted up to its last counters.
    pub counter_restarts: Vec<String>,
    /// Rollouts read with lines that could not be (a truncated last line, say): counted from
    /// the lines that could.
    pub partly_read: Vec<PartlyRead>,
    /// How Claude Code's requests were counted (present when a transcript was read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claude: Option<ClaudeNotes>,
}

/// How the requests of Claude Code transcripts were counted, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClaudeNotes {
    /// The rule, in words.
    pub counting: &'static str,
    /// Requests counted (side requests included).
    pub requests: usize,
    /// Of those, responses without a `requestId` (other backends, 1.0.x copies): named by
    /// `message.id` alone.
    pub without_request_id: usize,
    /// Of those, responses whose `message.id` an earlier response of the file had (a backend
    /// that reuses ids): a new prompt in between makes a new response.
    pub reused_message_id: usize,
    /// Lines that repeated a response's usage (one line per content block): not counted again.
    pub repeated_usage_lines: usize,
    /// Responses left out as copies of one counted in an earlier file or line (a resume's copy,
    /// a fork).
    pub copies: usize,
    /// 2.1.x `progress` lines: a subagent's messages again, counted from its own file.
    pub progress_lines: usize,
    /// Side requests the transcripts record (2.0.x's subagent warmups): counted, shown apart.
    pub side_requests: usize,
    /// Compactions: each made a request whose usage no line holds (not counted).
    pub compactions: usize,
    /// Files no session of Claude Code's layout owns, or with no conversational line.
    pub ignored_files: Vec<String>,
    pub empty_files: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartlyRead {
    pub path: String,
    pub skipped_lines: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Duplicate {
    pub path: String,
    pub counted: String,
}

/// Drop the second file of a session (keeping the one with more counters), and mark what forks
/// copied from a parent that was read.
pub fn resolve(sessions: Vec<SessionUsage>, notes: &mut Notes) -> Vec<SessionUsage> {
    let mut kept: Vec<SessionUsage> = Vec::with_capacity(sessions.len());
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    for session in sessions {
        let Some(id) = session.id.clone() else {
            kept.push(session);
            continue;
        };
        match by_id.get(&id) {
            None => {
                by_id.insert(id, kept.len());
                kept.push(session);
            }
            Some(&index) => {
                // The file with more counters holds the other's (an older copy, or a snapshot).
                let dropped = if session.requests.len() > kept[index].requests.len() {
                    std::mem::replace(&mut kept[index], session)
                } else {
                    session
                };
                notes.duplicates.push(Duplicate {
                    path: dropped.path,
                    counted: kept[index].path.clone(),
                });
            }
        }
    }
    for k in 0..kept.len() {
        let Some(parent) = kept[k].parent.clone() else {
            continue;
        };
        let path = kept[k].path.clone();
        match by_id.get(&parent) {
            Some(&p) => {
                let shared = kept[k]
                    .requests
                    .iter()
                    .zip(&kept[p].requests)
                    .take_while(|(a, b)| a.total == b.total)
                    .count();
                for request in &mut kept[k].requests[..shared] {
                    request.inherited = true;
                }
                kept[k].fork = Fork::Subtracted {
                    parent,
                    requests: shared,
                };
                notes.forks_subtracted.push(path);
            }
            None if kept[k].copied => {
                kept[k].fork = Fork::Unknown { parent };
                notes.forks_unknown_parent.push(path);
            }
            None => {
                kept[k].fork = Fork::Seeded { parent };
                notes.forks_subtracted.push(path);
            }
        }
    }
    for session in &kept {
        if session.requests.is_empty() {
            notes.no_usage.push(session.path.clone());
        }
        if session.counter_restarts > 0 {
            notes.counter_restarts.push(session.path.clone());
        }
        if session.skipped_lines > 0 {
            notes.partly_read.push(PartlyRead {
                path: session.path.clone(),
                skipped_lines: session.skipped_lines,
            });
        }
    }
    kept
}

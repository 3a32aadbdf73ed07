//! A Claude Code home in `report`'s shapes: one [`SessionUsage`] per session, each counted
//! request ([`super::home`]: once per response, copies left out) a [`Request`] in the tokens
//! every agent reports in (a prompt's input is all of it, cache reads and writes included), its
//! `steps` verdict a [`Cause`] as a Codex request's is.

use std::collections::HashMap;
use std::sync::Arc;

use super::home::Home;
use super::usage::Purpose;
use crate::providers::anthropic::prices::Tokens as AnthropicTokens;
use crate::report::{Agent, Cause, ClaudeNotes, PartlyRead, Request, SessionUsage, Tokens};

/// How a Claude Code request is counted, as the report's JSON says it (README, "report").
pub const COUNTING: &str = "one request per response: the lines of a streamed response share \
its message.id (and requestId, when written) and repeat its usage, so each count is taken at its \
largest over the response's lines, never summed; without a requestId (other backends, 1.0.x \
copies) the message.id alone names the response, and an id met again after a new prompt is a \
new response; a response whose message.id and usage an earlier file or line has is a copy (a \
resume, a fork), counted once where it first appears; progress lines are not counted (the \
subagent's own file is); side requests (2.0.x warmups) are counted and shown apart; \
compactions and 1.x's Haiku side requests are in no line and not counted";

/// The sessions of `home` with their counted requests, newest last; `path_of` turns a path
/// relative to `projects/` into the one to show. Also what the counting left out, and the
/// sessions some of whose lines could not be read.
pub fn report_sessions(
    home: &Home,
    path_of: impl Fn(&str) -> String,
) -> (Vec<SessionUsage>, ClaudeNotes, Vec<PartlyRead>) {
    let mut notes = ClaudeNotes {
        counting: COUNTING,
        copies: home.copies,
        progress_lines: home.progress_lines,
        ignored_files: home.ignored.iter().map(|p| path_of(p)).collect(),
        empty_files: home.empty.iter().map(|p| path_of(p)).collect(),
        ..ClaudeNotes::default()
    };
    let mut partly_read = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    let mut sessions: Vec<SessionUsage> = Vec::with_capacity(home.sessions.len());
    // Oldest first, as a list of rollouts is read.
    for s in home.sessions.iter().rev() {
        let path = s.files.first().map_or_else(String::new, |f| path_of(f));
        if s.skipped_lines > 0 {
            partly_read.push(PartlyRead {
                path: path.clone(),
                skipped_lines: s.skipped_lines,
            });
        }
        notes.compactions += s.compactions;
        index.insert((&s.project, &s.id), sessions.len());
        sessions.push(SessionUsage::new(
            Agent::Claude,
            path,
            // A file named otherwise (given outside a home) is named by its path.
            crate::core::ids::is_id_query(&s.id).then(|| s.id.clone()),
            s.skipped_lines,
        ));
    }
    // One string per model and directory, shared by the requests.
    let mut names: HashMap<String, Arc<str>> = HashMap::new();
    let mut intern = |name: &str| -> Arc<str> {
        match names.get(name) {
            Some(shared) => shared.clone(),
            None => names
                .entry(name.to_string())
                .or_insert_with(|| Arc::from(name))
                .clone(),
        }
    };
    for r in &home.requests {
        let Some(&k) = index.get(&(&*r.project, &*r.session)) else {
            continue;
        };
        let b = &r.request;
        notes.requests += 1;
        notes.without_request_id += usize::from(b.request_id.is_none());
        notes.reused_message_id += usize::from(b.reused_id);
        notes.repeated_usage_lines += b.lines.saturating_sub(1);
        notes.side_requests += usize::from(b.purpose == Purpose::Side);
        let tokens = tokens(&b.tokens);
        sessions[k].requests.push(Request {
            line: b.line,
            unix_seconds: b
                .timestamp
                .as_deref()
                .and_then(crate::core::lines::unix_seconds),
            model: b.model.as_deref().map(&mut intern),
            cwd: r.cwd.clone(),
            tokens,
            total: tokens,
            lost: b.lost,
            cause: b.verdict.as_ref().and_then(Cause::of),
            inherited: false,
            side: b.purpose == Purpose::Side,
        });
    }
    sessions.retain(|s| !s.requests.is_empty());
    (sessions, notes, partly_read)
}

/// A response's tokens as every agent's are summed: the prompt's input is all of it.
pub fn tokens(t: &AnthropicTokens) -> Tokens {
    let written = t.cache_write_5m.saturating_add(t.cache_write_1h);
    Tokens {
        input: t.input.saturating_add(written).saturating_add(t.cache_read),
        cached: t.cache_read,
        output: t.output,
        reasoning: 0,
        cache_write: written,
        cache_write_1h: t.cache_write_1h,
    }
}

//! A Codex session's usage for `report`: one request per distinct cumulative `token_count`
//! counter, its own tokens from the counters' growth (a fork's counters start from its
//! parent's; a resume by some builds restarts them), each with the model and directory of the
//! turn context in effect.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::agents::AgentSession;
use crate::agents::codex::model::{EventKind, RecordKind};
use crate::agents::codex::session::Session;
use crate::cache::StepCache;
use crate::report::{Cause, Fork, Request, SessionUsage, Tokens};

/// The usage of a loaded session. `cache` is [`crate::cache::analyze`] of it; `id` the session
/// id from the file name, when it has one.
pub fn session_usage(
    session: &Session,
    cache: &[StepCache],
    path: &str,
    id: Option<&str>,
) -> SessionUsage {
    let rollout = &session.rollout;
    let meta = rollout.meta.as_ref();
    let id = id
        .map(str::to_string)
        .or_else(|| meta.and_then(|m| m.id.clone()));
    let mut parent = meta.and_then(|m| m.forked_from_id.clone());
    // Losses by the line of the usage they were observed with.
    let mut losses = BTreeMap::new();
    for row in cache {
        let Some(observation) = &session.replay.steps[row.step].usage else {
            continue;
        };
        let cause = Cause::of(&row.verdict);
        let lost = match (cause, row.observed_input, row.observed_cached) {
            (Some(Cause::ColdStart), Some(input), Some(cached)) => (session
                .cache_model()
                .cacheable(usize::try_from(input).unwrap_or(usize::MAX))
                as u64)
                .saturating_sub(cached),
            _ => row.lost_tokens,
        };
        losses.insert(observation.line, (lost, cause));
    }
    let mut usage = SessionUsage {
        agent: crate::report::Agent::Codex,
        path: path.to_string(),
        id,
        parent: None,
        fork: Fork::None,
        copied: false,
        opening: Tokens::default(),
        requests: Vec::new(),
        counter_restarts: 0,
        skipped_lines: rollout.skipped.len(),
    };
    let mut model: Option<Arc<str>> = None;
    let mut cwd: Option<Arc<str>> = meta.and_then(|m| m.cwd.as_deref()).map(Arc::from);
    let mut previous: Option<Tokens> = None;
    let mut time = None;
    let mut metas = 0;
    for record in &rollout.records {
        time = record.unix_seconds.or(time);
        match &record.kind {
            RecordKind::SessionMeta(m) => {
                metas += 1;
                // Forks that copy the parent's lines copy its meta line first.
                if metas > 1 && m.id.is_some() && m.id != usage.id {
                    usage.copied = true;
                    if parent.is_none() {
                        parent = m.id.clone();
                    }
                }
            }
            RecordKind::TurnContext(context) => {
                // A new string only when the value changes.
                if let Some(m) = &context.model
                    && model.as_deref() != Some(m)
                {
                    model = Some(Arc::from(m.as_str()));
                }
                if let Some(c) = &context.cwd
                    && cwd.as_deref() != Some(c)
                {
                    cwd = Some(Arc::from(c.as_str()));
                }
            }
            RecordKind::Event(event) => {
                let EventKind::TokenCount(Some(info)) = &event.kind else {
                    continue;
                };
                let total = Tokens::of(&info.total);
                if previous == Some(total) {
                    continue;
                }
                let own = Tokens::of(&info.last);
                // What the counters held before this request, by its own account.
                let before = total.growth(own);
                let tokens = match previous {
                    // The first request: what the counters held before it is not this file's
                    // (a fork's counters start from its parent's).
                    None => {
                        usage.opening = before.unwrap_or_default();
                        own.min_each(total)
                    }
                    Some(previous) => match total.growth(previous) {
                        // The counters went on from the previous request's, or they grew more
                        // than this request's own usage (a request whose event is missing):
                        // the growth is what was used.
                        Some(growth) if before != Some(Tokens::default()) => growth,
                        // They went down, or restarted from zero (a resume by a build that did
                        // not restore them, even if the new run's counters passed the old
                        // ones): a new run, counted from zero.
                        _ => {
                            usage.counter_restarts += 1;
                            total
                        }
                    },
                };
                previous = Some(total);
                let (lost, cause) = losses.get(&record.line).copied().unwrap_or((0, None));
                usage.requests.push(Request {
                    line: record.line,
                    unix_seconds: time,
                    model: model.clone(),
                    cwd: cwd.clone(),
                    tokens,
                    total,
                    lost,
                    cause,
                    inherited: false,
                    side: false,
                });
            }
            _ => {}
        }
    }
    usage.parent = parent.filter(|p| Some(p) != usage.id.as_ref());
    usage
}

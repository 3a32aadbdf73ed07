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
use crate::report::{Cause, Request, SessionUsage, Tokens};

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
    let mut usage = SessionUsage::new(
        crate::report::Agent::Codex,
        path.to_string(),
        id,
        rollout.skipped.len(),
    );
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::{Fork, Notes, resolve};

    /// A `token_count` with these cumulative counters, and `last` as the request's own.
    pub(crate) fn count_last(total: (u64, u64, u64), last: (u64, u64, u64)) -> String {
        let usage = |(input, cached, output): (u64, u64, u64)| {
            format!(
                r#"{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":{output},"reasoning_output_tokens":0,"total_tokens":0}}"#
            )
        };
        format!(
            r#"{{"timestamp":"2026-01-05T10:00:00.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{},"last_token_usage":{}}}}}}}"#,
            usage(total),
            usage(last)
        )
    }

    /// A `token_count` whose request's own usage is all its counters hold (a first request).
    pub(crate) fn count(input: u64, cached: u64, output: u64) -> String {
        count_last((input, cached, output), (input, cached, output))
    }

    /// `token_count`s of consecutive requests: each one's own usage is its counters' growth.
    pub(crate) fn chain(totals: &[(u64, u64, u64)]) -> Vec<String> {
        let mut previous = (0, 0, 0);
        totals
            .iter()
            .map(|&total| {
                let own = (
                    total.0 - previous.0,
                    total.1 - previous.1,
                    total.2 - previous.2,
                );
                previous = total;
                count_last(total, own)
            })
            .collect()
    }

    pub(crate) fn usage(path: &str, id: &str, lines: &[String]) -> SessionUsage {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let session = crate::test_support::session(&lines);
        session_usage(&session, &[], path, Some(id))
    }

    #[test]
    fn repeated_counters_are_one_request_and_restarts_start_a_run() {
        let mut lines = chain(&[(100, 0, 10), (100, 0, 10), (250, 64, 30)]);
        // A resume by a build that did not restore the counters (Codex 0.58 to 0.77), twice:
        // the second time the new run's counters pass the old ones.
        lines.extend(chain(&[(40, 0, 5), (90, 0, 9)]));
        lines.extend(chain(&[(120, 0, 9)]));
        let s = usage("a", "a", &lines);
        let tokens: Vec<u64> = s.requests.iter().map(|r| r.tokens.input).collect();
        assert_eq!(tokens, [100, 150, 40, 50, 120]);
        assert_eq!(s.counter_restarts, 2);
    }

    #[test]
    fn a_fork_that_starts_from_its_parents_counters_counts_its_own_requests() {
        // Counters 1 000 before the first request, whose own usage is 1 (`last`).
        let s = usage(
            "f",
            "f",
            &[
                count_last((1001, 0, 11), (1, 0, 1)),
                count_last((1101, 0, 21), (100, 0, 10)),
            ],
        );
        assert_eq!(s.opening.input, 1000);
        let tokens: Vec<u64> = s.requests.iter().map(|r| r.tokens.input).collect();
        assert_eq!(tokens, [1, 100]);
        let mut fork = s;
        fork.parent = Some("missing".into());
        let mut notes = Notes::default();
        let kept = resolve(vec![fork], &mut notes);
        assert_eq!(
            kept[0].fork,
            Fork::Seeded {
                parent: "missing".into()
            }
        );
        assert_eq!(notes.forks_subtracted, ["f"]);
    }

    #[test]
    fn a_fork_before_forked_from_id_is_known_by_its_parents_meta_line() {
        let meta = |id: &str| {
            format!(
                r#"{{"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta","payload":{{"id":"{id}"}}}}"#
            )
        };
        let s = usage("f", "f", &[meta("f"), meta("p"), count(100, 0, 1)]);
        assert_eq!(s.parent.as_deref(), Some("p"));
        assert!(s.copied);
        // A second meta line of the same session (a resume by an old writer) is no fork.
        let s = usage("s", "s", &[meta("s"), count(100, 0, 1), meta("s")]);
        assert_eq!(s.parent, None);
    }
}

//! What the provider cache could reuse at each step against what it did reuse
//! (caching-and-drift.md sections 4 and 5), and whether each request could have gone out
//! incrementally (`previous_response_id`, codex-rollout.md section 8.4).

use crate::AgentSession;
use crate::agents::Reset;
use crate::core::request::Part;
use crate::fingerprint::{Plan, common_prefix};

/// Why a step's cache outcome is what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The first request of the session: nothing to reuse.
    First,
    /// The history was replaced by a compaction.
    Compaction,
    /// Turns were rolled back.
    Rollback,
    /// A component before the input changed (`instructions`, `tools`, `params`, `prompt_cache_key`).
    ComponentChanged(&'static str),
    /// The input no longer starts with the previous input: first differing view index.
    HistoryRewritten(usize),
    /// The recorded parts of the prefix were intact and the cache dropped, but a recorded
    /// setting changed (Codex: a turn-context field, `sandbox_policy`, `approval_policy`, …): it
    /// feeds a part of the request the session does not record (the tools) or that promptc
    /// cannot see. `effect` says which, in its agent's words.
    ContextChanged {
        field: &'static str,
        effect: &'static str,
    },
    /// The cache dropped on the request whose output a compaction replaced the history with:
    /// Codex sends its compaction request without the turn's tools, so its prefix differs.
    CompactionRequest,
    /// The prefix was intact but the gap since the previous request exceeds the retention.
    IdleGap(i64),
    /// The prefix was intact, yet far less was cached than the previous request's size.
    ProviderMiss,
    /// Cached as the prompt predicts.
    Hit,
    /// No usage was recorded for this step.
    NoUsage,
}

impl Verdict {
    /// Stable name used in output.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::First => "first_request",
            Verdict::Compaction => "compaction_reset",
            Verdict::Rollback => "rollback_reset",
            Verdict::ComponentChanged(_) => "prefix_broken",
            Verdict::HistoryRewritten(_) => "prefix_broken",
            Verdict::ContextChanged { .. } => "prefix_broken_context",
            Verdict::CompactionRequest => "compaction_request",
            Verdict::IdleGap(_) => "idle_gap",
            Verdict::ProviderMiss => "provider_miss",
            Verdict::Hit => "hit",
            Verdict::NoUsage => "no_usage",
        }
    }

    /// A few words, for tables.
    pub fn short(&self) -> String {
        match self {
            Verdict::First => "cold start".into(),
            Verdict::Compaction => "reset: compaction".into(),
            Verdict::Rollback => "reset: rollback".into(),
            Verdict::ComponentChanged(c) => format!("broken: {c}"),
            Verdict::HistoryRewritten(i) => format!("broken: item {i}"),
            Verdict::ContextChanged { field, .. } => format!("broken: {field}"),
            Verdict::CompactionRequest => "compaction request".into(),
            Verdict::IdleGap(s) => format!("idle {}m", s / 60),
            Verdict::ProviderMiss => "provider miss".into(),
            Verdict::Hit => "hit".into(),
            Verdict::NoUsage => "no usage".into(),
        }
    }

    /// A short explanation.
    pub fn explain(&self) -> String {
        match self {
            Verdict::First => "first request: cold cache".into(),
            Verdict::Compaction => "compaction replaced the history: expected reset".into(),
            Verdict::Rollback => "rollback dropped turns: expected reset".into(),
            Verdict::ComponentChanged(c) => format!("prefix broken: {c} changed"),
            Verdict::HistoryRewritten(i) => format!("prefix broken: input item {i} differs"),
            Verdict::ContextChanged { field, effect } => {
                format!("prefix broken: {field} changed ({effect})")
            }
            Verdict::CompactionRequest => {
                "prefix broken: the compaction request is sent without the tools".into()
            }
            Verdict::IdleGap(s) => {
                format!("idle {}m{}s: longer than cache retention", s / 60, s % 60)
            }
            Verdict::ProviderMiss => "prefix intact, cache missed on the provider's side".into(),
            Verdict::Hit => "prefix reused as predicted".into(),
            Verdict::NoUsage => "no usage recorded".into(),
        }
    }
}

/// The analysis of one step.
#[derive(Debug, Clone)]
pub struct StepCache {
    pub step: usize,
    /// Estimated tokens of the whole request.
    pub estimated_input: usize,
    /// Input items shared with the previous request.
    pub shared_items: usize,
    /// Estimated tokens of the shared prefix (instructions, tools and shared items).
    pub shared_tokens: usize,
    /// What the provider could cache, from the prompt alone.
    pub predicted_cached: usize,
    pub observed_input: Option<u64>,
    pub observed_cached: Option<u64>,
    pub observed_cache_write: Option<u64>,
    pub verdict: Verdict,
    /// Could this request have been sent as `previous_response_id` + new items?
    pub incremental: bool,
    /// If not, why.
    pub chain_break: Option<String>,
    /// Tokens the previous request's size says could have been cached but were not.
    pub lost_tokens: u64,
}

impl StepCache {
    /// `cached / input`, when defined.
    pub fn hit_rate(&self) -> Option<f64> {
        match (self.observed_cached, self.observed_input) {
            (Some(c), Some(i)) if i > 0 => Some(c as f64 / i as f64),
            _ => None,
        }
    }
}

/// Analyse every step against the one before it, in blocks of steps on the plan's threads
/// (each step needs only itself and the one before).
pub fn analyze<S: AgentSession>(session: &S, plan: &Plan) -> Vec<StepCache> {
    let mut rows = Vec::new();
    analyze_more(session, plan, &mut rows);
    rows
}

/// Analyse the steps after those `rows` holds (`watch`: the session grew; a step's row needs
/// only it and the step before it).
pub fn analyze_more<S: AgentSession>(session: &S, plan: &Plan, rows: &mut Vec<StepCache>) {
    // Blocks of steps: one step is less work than taking a task. Unit tests use short blocks,
    // so that their small sessions span several; tests/cli/fuzz_bodies.rs runs 512.
    const BLOCK: usize = if cfg!(test) { 4 } else { 512 };
    let from = rows.len();
    let steps = session.steps().len().saturating_sub(from);
    rows.extend(crate::core::parallel::map_each(
        steps,
        BLOCK,
        plan.threads,
        |k| analyze_step(session, plan, from + k),
    ));
}

/// Step `k` against the one before it.
pub(crate) fn analyze_step<S: AgentSession>(session: &S, plan: &Plan, k: usize) -> StepCache {
    let steps = session.steps();
    let step = &steps[k];
    let fingerprint = &plan.fingerprints[k];
    let estimated_input = plan.request_tokens(k);
    let usage = step.usage.as_ref().map(|o| &o.usage);
    let observed_input = usage.map(|u| u.input_tokens);
    let observed_cached = usage.map(|u| u.cached_input_tokens);
    let observed_cache_write = usage.and_then(|u| u.cache_write_input_tokens);
    let base = plan.instruction_tokens[k] + plan.tool_tokens;
    let provider = session.cache_model();
    let Some(previous) = k.checked_sub(1) else {
        return StepCache {
            step: k,
            estimated_input,
            shared_items: 0,
            shared_tokens: 0,
            predicted_cached: 0,
            observed_input,
            observed_cached,
            observed_cache_write,
            verdict: if usage.is_some() {
                Verdict::First
            } else {
                Verdict::NoUsage
            },
            incremental: false,
            chain_break: Some("first request".into()),
            lost_tokens: 0,
        };
    };
    let prev_step = &steps[previous];
    let prev_fp = &plan.fingerprints[previous];
    let component = Part::BEFORE_INPUT
        .into_iter()
        .find(|&part| prev_fp.part(part) != fingerprint.part(part))
        .map(Part::name);
    let shared_items = if component.is_none() {
        common_prefix(plan, previous, plan, k)
    } else {
        0
    };
    let prev_len = plan.views[previous].1;
    let shared_tokens = if component.is_none() {
        base + plan.input_tokens(k, shared_items)
    } else {
        0
    };
    // What the estimate cannot see (unrecorded instructions and tools, the provider's
    // template) is the gap between the previous request's observed and estimated size;
    // it sits in the shared prefix too when nothing before the input changed.
    let unseen = prev_step
        .usage
        .as_ref()
        .map(|o| (o.usage.input_tokens as usize).saturating_sub(plan.request_tokens(previous)))
        .unwrap_or(0);
    let predicted_cached = if component.is_none() && plan.estimate_tokens {
        provider.cacheable(shared_tokens + unseen)
    } else {
        provider.cacheable(shared_tokens)
    };
    let reset = session.reset_between(previous, k).map(|reset| match reset {
        Reset::Compaction => Verdict::Compaction,
        Reset::Rollback => Verdict::Rollback,
    });
    let prefix_intact = component.is_none() && shared_items == prev_len && reset.is_none();
    // Only a miss asks how long the session was idle (from seconds read with the lines: the
    // input's bytes may be released by now).
    let gap = || Some(step.unix_seconds? - prev_step.unix_seconds?);
    let prev_observed = prev_step.usage.as_ref().map(|o| o.usage.input_tokens);
    let floor = prev_observed.map(|i| provider.cacheable(i as usize) as u64);
    let verdict = if let Some(reset) = &reset {
        reset.clone()
    } else if let Some(component) = component {
        Verdict::ComponentChanged(component)
    } else if shared_items < prev_len {
        Verdict::HistoryRewritten(shared_items)
    } else if let Some(cached) = observed_cached {
        match floor {
            // A recorded cause first: only when nothing recorded changed is it the provider's.
            Some(floor) if cached < floor => {
                // A change the agent's rules say leaves its unrecorded part as it was is no cause.
                let cause = session
                    .setting_changes(previous, session, k)
                    .into_iter()
                    .find(|c| {
                        session
                            .unrecorded_effect(previous, session, k, c)
                            .is_none_or(|e| e.changes != Some(false))
                    });
                match (cause, gap()) {
                    (Some(change), _) => Verdict::ContextChanged {
                        field: change.field,
                        effect: session.setting_effect(change.field),
                    },
                    _ if step.compaction => Verdict::CompactionRequest,
                    (None, Some(g)) if g > provider.retention_seconds() => Verdict::IdleGap(g),
                    (None, _) => Verdict::ProviderMiss,
                }
            }
            _ => Verdict::Hit,
        }
    } else {
        Verdict::NoUsage
    };
    // A compaction request is sent without the tools: only what precedes them can be read,
    // whatever the input shares (the prediction follows the verdict).
    let predicted_cached = if verdict == Verdict::CompactionRequest {
        provider.cacheable(session.compaction_request_prefix(plan, k))
    } else {
        predicted_cached
    };
    let lost_tokens = match (floor, observed_cached) {
        (Some(floor), Some(cached)) => floor.saturating_sub(cached),
        _ => 0,
    };
    let chain_break = chain_break(
        session,
        plan,
        previous,
        k,
        component,
        reset.as_ref(),
        prefix_intact,
    );
    StepCache {
        step: k,
        estimated_input,
        shared_items,
        shared_tokens,
        predicted_cached,
        observed_input,
        observed_cached,
        observed_cache_write,
        verdict,
        incremental: chain_break.is_none(),
        chain_break,
        lost_tokens,
    }
}

/// Why a request could not go out incrementally (`previous_response_id` plus only the new
/// items): a reset, a changed part, a rewritten history, or what its agent says.
fn chain_break<S: AgentSession>(
    session: &S,
    plan: &Plan,
    previous: usize,
    k: usize,
    component: Option<&'static str>,
    reset: Option<&Verdict>,
    prefix_intact: bool,
) -> Option<String> {
    if let Some(reset) = reset {
        return Some(reset.name().replace("_reset", ""));
    }
    if let Some(component) = component {
        return Some(format!("{component} changed"));
    }
    if !prefix_intact {
        return Some("history rewritten".into());
    }
    session.incremental_break(plan, previous, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two steps whose second request found nothing cached though its prefix was intact:
    /// the idle time between the steps' first outputs decides whether retention explains it.
    /// 660 s is more than OpenAI's retention
    /// ([`crate::providers::openai::IDLE_GAP_SECONDS`], 600); 600 s and 300 s are not, so the
    /// provider missed.
    #[test]
    fn a_miss_after_a_long_pause_is_an_idle_gap() {
        let usage = |input: u64, total: u64| {
            format!(
                r#"{{"timestamp":"2025-11-20T15:00:00.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":{total}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":{input}}},"model_context_window":272000}}}}}}"#
            )
        };
        let message = |time: &str, role: &str, text: &str| {
            format!(
                r#"{{"timestamp":"2025-11-20T{time}.000Z","type":"response_item","payload":{{"type":"message","role":"{role}","content":[{{"type":"input_text","text":"{text}"}}]}}}}"#
            )
        };
        for (second_output, expected) in [
            ("14:11:01", Verdict::IdleGap(660)),
            ("14:10:01", Verdict::ProviderMiss),
            ("14:05:01", Verdict::ProviderMiss),
        ] {
            let lines = [
                message("14:00:00", "user", "hi"),
                message("14:00:01", "assistant", "a"),
                usage(5000, 5000),
                message("14:04:00", "user", "next"),
                message(second_output, "assistant", "b"),
                usage(5200, 10200),
            ];
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let s = crate::test_support::session(&lines);
            let plan = crate::fingerprint::plan(&s, &crate::fingerprint::PlanOptions::default());
            let cache = analyze(&s, &plan);
            assert_eq!(cache.len(), 2);
            // The prefix was intact: 5000 tokens were cacheable, in granules of 128.
            assert_eq!(cache[1].lost_tokens, 39 * 128);
            assert_eq!(
                cache[1].verdict, expected,
                "second output at {second_output}"
            );
        }
    }

    /// A cache drop with the recorded prefix intact is put on a recorded turn-context change
    /// (here the sandbox, which decides the tools of a 0.104+ turn: its `turn_id`) before it is
    /// called a provider miss; not on a 0.58-0.77 turn (no `turn_id`), whose tools do not
    /// depend on it (0.58.0/sandbox_change).
    #[test]
    fn a_drop_after_a_sandbox_change_is_attributed() {
        let context = |sandbox: &str, turn_id: bool| {
            let id = if turn_id { r#""turn_id":"t","# } else { "" };
            format!(
                r#"{{"timestamp":"2025-11-20T14:00:00.000Z","type":"turn_context","payload":{{{id}"cwd":"/w","model":"m","approval_policy":"never","sandbox_policy":{{"type":"{sandbox}"}},"summary":"auto"}}}}"#
            )
        };
        let usage = |input: u64, cached: u64| {
            format!(
                r#"{{"timestamp":"2025-11-20T14:00:02.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":{input}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":10,"reasoning_output_tokens":0,"total_tokens":{input}}},"model_context_window":272000}}}}}}"#
            )
        };
        let message = |role: &str, text: &str| {
            format!(
                r#"{{"timestamp":"2025-11-20T14:00:01.000Z","type":"response_item","payload":{{"type":"message","role":"{role}","content":[{{"type":"input_text","text":"{text}"}}]}}}}"#
            )
        };
        for (second, turn_id, expected) in [
            (
                "read-only",
                true,
                Verdict::ContextChanged {
                    field: "sandbox_policy",
                    effect: "tools depend on it, not recorded",
                },
            ),
            ("danger-full-access", true, Verdict::ProviderMiss),
            ("read-only", false, Verdict::ProviderMiss),
        ] {
            let lines = [
                context("danger-full-access", turn_id),
                message("user", "hi"),
                message("assistant", "a"),
                usage(5000, 0),
                context(second, turn_id),
                message("user", "next"),
                message("assistant", "b"),
                usage(5200, 0),
            ];
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let s = crate::test_support::session(&lines);
            let plan = crate::fingerprint::plan(&s, &crate::fingerprint::PlanOptions::default());
            let cache = analyze(&s, &plan);
            assert_eq!(
                cache[1].verdict, expected,
                "second sandbox {second}, turn id {turn_id}"
            );
        }
        let sandbox = Verdict::ContextChanged {
            field: "sandbox_policy",
            effect: crate::agents::codex::settings::field_effect("sandbox_policy"),
        };
        assert_eq!(
            sandbox.explain(),
            "prefix broken: sandbox_policy changed (tools depend on it, not recorded)"
        );
        assert_eq!(sandbox.name(), "prefix_broken_context");
    }
}

//! What the provider cache could reuse at each step against what it did reuse
//! (caching-and-drift.md sections 4 and 5), why, and whether each request could have gone out
//! incrementally (`previous_response_id`, codex-rollout.md section 8.4).
//!
//! One procedure for every agent and provider: a recorded cause is named before the provider is
//! blamed. What differs is the provider's: an automatic prefix cache (OpenAI) is predicted from
//! token estimates and the previous request's size, its retention a soft limit that only
//! explains a miss; a cache keyed on explicit breakpoints (Anthropic) is simulated request by
//! request ([`crate::providers::BreakpointCache`]), so what a request should have read, the
//! model it is keyed on and its TTL are exact.

use crate::AgentSession;
use crate::agents::Reset;
use crate::core::request::Part;
use crate::fingerprint::{Plan, common_prefix};
use breakpoint::{Simulated, Simulation, breakpoint_step};

/// Why a step's cache outcome is what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The first request of the session: nothing to reuse.
    First,
    /// The first request in this file, its history sent before by requests another file
    /// records (a resume's copy, a fork): what they cached should be read; this file does not
    /// say how much.
    EarlierFile,
    /// A request of another session this file copied (a fork): judged in that session's file.
    Copied,
    /// The session's first request, yet it read from the cache: entries another session wrote
    /// for the same prefix (its tools and system prompt) were still alive.
    WarmStart,
    /// The previous request marked no breakpoint: it cached nothing for this one to read.
    NoBreakpoint,
    /// The history was replaced by a compaction.
    Compaction,
    /// Turns were rolled back.
    Rollback,
    /// A component before the input changed (`instructions`, `tools`, `params`, `prompt_cache_key`;
    /// `system` for Claude Code).
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
    /// A cache is per model: the model changed, and nothing was read.
    ModelSwitch { from: String, to: String },
    /// The cache dropped on the request whose output a compaction replaced the history with:
    /// Codex sends its compaction request without the turn's tools, so its prefix differs.
    CompactionRequest,
    /// The prefix was intact but the gap since the previous request exceeds the retention.
    IdleGap(i64),
    /// The idle gap was longer than the TTL of every entry that would have served (a cache
    /// with an exact TTL): nothing was read.
    TtlExpired { gap_seconds: i64, ttl_seconds: i64 },
    /// The previous request's entry is more than the provider's lookback before every
    /// breakpoint of this one.
    LookbackExceeded,
    /// Less was read than the recorded prefix predicts, and parts the session does not record
    /// come before what should have been read: one of them must have changed.
    UnrecordedChange(Vec<String>),
    /// Less was read than predicted because the agent's build rewrites its prefix by a rule of
    /// its own that the log does not show (Claude Code 1.0.x under `claude -p` sends the last
    /// tool turn twice).
    KnownRewrite {
        name: &'static str,
        why: &'static str,
    },
    /// The prefix was intact, yet far less was cached than the previous request's size.
    ProviderMiss,
    /// Cached as the prompt predicts.
    Hit,
    /// No usage was recorded for this step.
    NoUsage,
    /// The backend reports no cache counts: nothing can be said of its cache.
    NoCacheFields,
}

impl Verdict {
    /// Stable name used in output.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::First => "first_request",
            Verdict::EarlierFile => "earlier_file",
            Verdict::Copied => "copied",
            Verdict::WarmStart => "warm_start",
            Verdict::NoBreakpoint => "no_breakpoint",
            Verdict::Compaction => "compaction_reset",
            Verdict::Rollback => "rollback_reset",
            Verdict::ComponentChanged(_) => "prefix_broken",
            Verdict::HistoryRewritten(_) => "prefix_broken",
            Verdict::ContextChanged { .. } => "prefix_broken_context",
            Verdict::ModelSwitch { .. } => "model_switch",
            Verdict::CompactionRequest => "compaction_request",
            Verdict::IdleGap(_) => "idle_gap",
            Verdict::TtlExpired { .. } => "ttl_expired",
            Verdict::LookbackExceeded => "lookback_exceeded",
            Verdict::UnrecordedChange(_) => "unrecorded_change",
            Verdict::KnownRewrite { name, .. } => name,
            Verdict::ProviderMiss => "provider_miss",
            Verdict::Hit => "hit",
            Verdict::NoUsage => "no_usage",
            Verdict::NoCacheFields => "no_cache_fields",
        }
    }

    /// A few words, for tables.
    pub fn short(&self) -> String {
        match self {
            Verdict::First => "cold start".into(),
            Verdict::EarlierFile => "history from an earlier file".into(),
            Verdict::Copied => "copied".into(),
            Verdict::WarmStart => "warm start".into(),
            Verdict::NoBreakpoint => "nothing cached before".into(),
            Verdict::Compaction => "reset: compaction".into(),
            Verdict::Rollback => "reset: rollback".into(),
            Verdict::ComponentChanged(c) => format!("broken: {c}"),
            Verdict::HistoryRewritten(i) => format!("broken: item {i}"),
            Verdict::ContextChanged { field, .. } => format!("broken: {field}"),
            Verdict::ModelSwitch { from, to } => format!("model switch {from} -> {to}"),
            Verdict::CompactionRequest => "compaction request".into(),
            Verdict::IdleGap(s) => format!("idle {}m", s / 60),
            Verdict::TtlExpired {
                gap_seconds,
                ttl_seconds,
            } => format!("ttl expired ({gap_seconds} s > {ttl_seconds} s)"),
            Verdict::LookbackExceeded => "lookback exceeded".into(),
            Verdict::UnrecordedChange(parts) => {
                format!("unrecorded change: {}", parts.join(", "))
            }
            Verdict::KnownRewrite { name, .. } => name.replace('_', " "),
            Verdict::ProviderMiss => "provider miss".into(),
            Verdict::Hit => "hit".into(),
            Verdict::NoUsage => "no usage".into(),
            Verdict::NoCacheFields => "no cache fields".into(),
        }
    }

    /// A short explanation.
    pub fn explain(&self) -> String {
        match self {
            Verdict::First => "first request: cold cache".into(),
            Verdict::EarlierFile => "the history was sent before by requests another file \
                                     records: their prefix should be read"
                .into(),
            Verdict::Copied => {
                "a request of the session this file copied: judged in that session's file".into()
            }
            Verdict::WarmStart => "first request, yet read from entries an earlier session \
                                   wrote for the same prefix"
                .into(),
            Verdict::NoBreakpoint => {
                "the previous request marked no breakpoint: it cached nothing to read".into()
            }
            Verdict::Compaction => "compaction replaced the history: expected reset".into(),
            Verdict::Rollback => "rollback dropped turns: expected reset".into(),
            Verdict::ComponentChanged(c) => format!("prefix broken: {c} changed"),
            Verdict::HistoryRewritten(i) => format!("prefix broken: input item {i} differs"),
            Verdict::ContextChanged { field, effect } => {
                format!("prefix broken: {field} changed ({effect})")
            }
            Verdict::ModelSwitch { from, to } => {
                format!("model changed from {from} to {to}: a cache is per model")
            }
            Verdict::CompactionRequest => {
                "prefix broken: the compaction request is sent without the tools".into()
            }
            Verdict::IdleGap(s) => {
                format!("idle {}m{}s: longer than cache retention", s / 60, s % 60)
            }
            Verdict::TtlExpired {
                gap_seconds,
                ttl_seconds,
            } => format!(
                "idle {gap_seconds} s, longer than the {ttl_seconds} s TTL: the entry expired"
            ),
            Verdict::LookbackExceeded => format!(
                "the previous entry is more than {} blocks before every breakpoint",
                crate::providers::anthropic::LOOKBACK_BLOCKS
            ),
            Verdict::UnrecordedChange(parts) => format!(
                "read less than the recorded prefix predicts; not recorded by this build and \
                 before it: {}",
                parts.join(", ")
            ),
            Verdict::KnownRewrite { why, .. } => why.to_string(),
            Verdict::ProviderMiss => "prefix intact, cache missed on the provider's side".into(),
            Verdict::Hit => "prefix reused as predicted".into(),
            Verdict::NoUsage => "no usage recorded".into(),
            Verdict::NoCacheFields => "the backend reports no cache counts".into(),
        }
    }
}

/// Where a request stops extending the one before it, whatever the cache then did: the fact
/// `check` holds a session to (a verdict may name an earlier loss first, an expired entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixBreak {
    /// A part before the input changed (its name, as the verdict's).
    Component(&'static str),
    /// The input differs from the previous request's at this entry.
    Input(usize),
}

/// Steps analysed as one task: one step is less work than taking a task. Unit tests use short
/// blocks, so that their small sessions span several; tests/cli/fuzz_bodies.rs runs 512.
const ANALYSED: usize = if cfg!(test) { 4 } else { 512 };

/// The analysis of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepCache {
    pub step: usize,
    /// Estimated tokens of the whole request.
    pub estimated_input: usize,
    /// Input items shared with the previous request.
    pub shared_items: usize,
    /// Estimated tokens of the shared prefix (instructions, tools and shared items).
    pub shared_tokens: usize,
    /// What the provider could cache, from the prompt alone (an automatic cache), or what the
    /// cache held of this prompt, from the previous request's usage (a breakpoint cache; `None`
    /// where it held a part of the prompt whose size the log does not give).
    pub predicted_cached: Option<usize>,
    /// The whole prompt's tokens (Anthropic: uncached input, cache reads and cache writes).
    pub observed_input: Option<u64>,
    pub observed_cached: Option<u64>,
    pub observed_cache_write: Option<u64>,
    /// Of the tokens written, those kept an hour.
    pub observed_cache_write_1h: Option<u64>,
    pub verdict: Verdict,
    /// Where the prefix broke, in the agent's terms, where it names it finer than the verdict
    /// (`system[1]`, `messages[3].content[0]`).
    pub location: Option<String>,
    /// The request does not extend the previous one (no reset in between), whatever the verdict.
    pub prefix_break: Option<PrefixBreak>,
    /// A breakpoint cache: the last block of the prompt it held a prefix up to (`None`:
    /// nothing), and the breakpoints the request sent.
    pub read_block: Option<usize>,
    pub breakpoints: usize,
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

    /// The verdict in a few words, the break's place named where the agent names it.
    pub fn short(&self) -> String {
        match (&self.verdict, &self.location) {
            (Verdict::ComponentChanged(_) | Verdict::HistoryRewritten(_), Some(at)) => {
                format!("broken: {at}")
            }
            (verdict, _) => verdict.short(),
        }
    }

    /// The verdict explained, the break's place named where the agent names it.
    pub fn explain(&self) -> String {
        match (&self.verdict, &self.location) {
            (Verdict::ComponentChanged(_), Some(at)) => format!("prefix broken: {at} changed"),
            (Verdict::HistoryRewritten(_), Some(at)) => {
                format!("prefix broken at {at}: it differs from the previous request's")
            }
            (verdict, _) => verdict.explain(),
        }
    }
}

/// The analysis of a session that grows (`watch`): its rows and, for a breakpoint cache, the
/// simulation, kept between two [`update`](Analysis::update)s so that each costs the steps it
/// adds. A step's simulation depends only on its prompt and those before: it is made again
/// only where an earlier step changed.
#[derive(Default)]
pub struct Analysis {
    rows: Vec<StepCache>,
    simulation: Option<Simulation>,
}

impl Analysis {
    /// The rows so far, one per step.
    pub fn rows(&self) -> &[StepCache] {
        &self.rows
    }

    /// Analyse the first `upto` steps of `session`: those from `unchanged` on again (the steps
    /// before it are as they were at the last update), and the new ones.
    pub fn update<S: AgentSession>(
        &mut self,
        session: &S,
        plan: &Plan,
        unchanged: usize,
        upto: usize,
    ) {
        let upto = upto.min(session.steps().len());
        let simulated = self.simulation.as_ref().map_or(0, |s| s.whole().len());
        if self.simulation.is_none() || unchanged < simulated {
            self.simulation = Simulation::new(session);
        }
        if let Some(simulation) = &mut self.simulation {
            simulation.run(session, upto);
        }
        self.analyze_rows(session, plan, unchanged, upto);
    }

    /// The rows of steps `unchanged..upto` made again, once the simulation (if any) is through
    /// `upto`.
    fn analyze_rows<S: AgentSession>(
        &mut self,
        session: &S,
        plan: &Plan,
        unchanged: usize,
        upto: usize,
    ) {
        self.rows.truncate(unchanged.min(upto));
        let from = self.rows.len();
        let simulated = self.simulation.as_ref().map(Simulation::whole);
        crate::core::parallel::map_each_onto(
            &mut self.rows,
            upto - from,
            ANALYSED,
            plan.threads,
            |k| analyze_step(session, plan, from + k, simulated),
        );
    }
}

/// Analyse every step against the one before it, in blocks of steps on the plan's threads
/// (each step needs only itself and the one before, and a breakpoint cache's lookups, which
/// are simulated first, in order).
pub fn analyze<S: AgentSession>(session: &S, plan: &Plan) -> Vec<StepCache> {
    let mut analysis = Analysis::default();
    analysis.update(session, plan, 0, session.steps().len());
    analysis.rows
}

/// The plan `make_plan` makes and [`analyze`] of every step against it. A breakpoint cache's
/// simulation, which needs the session's prompts but not the plan, runs on another of
/// `threads` while the plan is made ([`plan_beside_simulation`]).
pub fn plan_and_analyze<S: AgentSession, E>(
    session: &S,
    threads: crate::core::parallel::Threads,
    make_plan: impl FnOnce() -> Result<Plan, E>,
) -> Result<(Plan, Vec<StepCache>), E> {
    let len = session.steps().len();
    if threads.count > 1
        && session.cache_model().keyed_on_breakpoints()
        && let Some(simulation) = Simulation::new(session)
    {
        return plan_beside_simulation(session, threads, simulation, make_plan);
    }
    // A plan that fails is not waited for by a simulation.
    let plan = make_plan()?;
    let mut analysis = Analysis {
        rows: Vec::new(),
        simulation: Simulation::new(session),
    };
    if let Some(simulation) = &mut analysis.simulation {
        simulation.run(session, len);
    }
    analysis.analyze_rows(session, &plan, 0, len);
    Ok((plan, analysis.rows))
}

/// [`plan_and_analyze`] with the simulation on a thread of its own, handing what it found over
/// a block of steps at a time. This thread makes the plan, then analyses the steps simulated
/// while the rest are (the simulation takes longer than the plan: on a 1 GB 2.1.100
/// transcript, 130 against 79 ms), and the steps left once it is through on every thread.
/// Each row depends only on the plan and the simulation up to its step: the rows are those
/// of the plan made first, the cache simulated and the steps analysed after.
fn plan_beside_simulation<S: AgentSession, E>(
    session: &S,
    threads: crate::core::parallel::Threads,
    mut simulation: Simulation,
    make_plan: impl FnOnce() -> Result<Plan, E>,
) -> Result<(Plan, Vec<StepCache>), E> {
    // Steps simulated before they are handed over: about 2 ms of simulation at 1 GB; short in
    // unit tests, so that their small sessions span several hand-overs.
    const HANDED: usize = if cfg!(test) { 3 } else { 4096 };
    let len = session.steps().len();
    std::thread::scope(|scope| {
        let (hand, handed) = std::sync::mpsc::channel();
        let simulating = scope.spawn(move || {
            let mut upto = 0;
            while upto < len {
                upto = (upto + HANDED).min(len);
                simulation.run(session, upto);
                // The plan failed: no one is left to analyse the steps.
                if hand.send(simulation.hand_over()).is_err() {
                    return;
                }
            }
        });
        let planned = make_plan().map(|plan| {
            let mut simulated = Vec::with_capacity(len);
            let mut rows = Vec::with_capacity(len);
            loop {
                use std::sync::mpsc::TryRecvError;
                match handed.try_recv() {
                    Ok(mut block) => simulated.append(&mut block),
                    // The simulation is through every step.
                    Err(TryRecvError::Disconnected) => break,
                    Err(TryRecvError::Empty) if rows.len() < simulated.len() => {
                        let upto = (rows.len() + ANALYSED).min(simulated.len());
                        let from = rows.len();
                        rows.extend(
                            (from..upto).map(|k| analyze_step(session, &plan, k, Some(&simulated))),
                        );
                    }
                    Err(TryRecvError::Empty) => match handed.recv() {
                        Ok(mut block) => simulated.append(&mut block),
                        Err(_) => break,
                    },
                }
            }
            (plan, simulated, rows)
        });
        // The plan failed: the simulation stops at its next hand-over.
        drop(handed);
        if let Err(panic) = simulating.join() {
            std::panic::resume_unwind(panic);
        }
        let (plan, simulated, mut rows) = planned?;
        let from = rows.len();
        crate::core::parallel::map_each_onto(&mut rows, len - from, ANALYSED, threads, |k| {
            analyze_step(session, &plan, from + k, Some(&simulated))
        });
        Ok((plan, rows))
    })
}

/// Step `k` against the one before it.
pub(crate) fn analyze_step<S: AgentSession>(
    session: &S,
    plan: &Plan,
    k: usize,
    simulated: Option<&[Option<Simulated>]>,
) -> StepCache {
    let steps = session.steps();
    let step = &steps[k];
    let fingerprint = &plan.fingerprints[k];
    let estimated_input = plan.request_tokens(k);
    let usage = step.usage.as_ref().map(|o| &o.usage);
    let mut row = StepCache {
        step: k,
        estimated_input,
        shared_items: 0,
        shared_tokens: 0,
        predicted_cached: Some(0),
        observed_input: usage.map(|u| u.input_tokens),
        observed_cached: usage.map(|u| u.cached_input_tokens),
        observed_cache_write: usage.and_then(|u| u.cache_write_input_tokens),
        observed_cache_write_1h: usage.and_then(|u| u.cache_write_1h_input_tokens),
        verdict: Verdict::NoUsage,
        location: None,
        prefix_break: None,
        read_block: None,
        breakpoints: 0,
        incremental: false,
        // None for a breakpoint cache; "first request", or why the step does not extend the
        // one before it, below.
        chain_break: None,
        lost_tokens: 0,
    };
    if let Some(simulated) = simulated {
        breakpoint_step(session, plan, k, simulated, &mut row);
        return row;
    }
    let base = plan.instruction_tokens[k] + plan.tool_tokens;
    let provider = session.cache_model();
    let observed_cached = row.observed_cached;
    let Some(previous) = k.checked_sub(1) else {
        row.chain_break = Some("first request".into());
        row.verdict = if usage.is_some() {
            Verdict::First
        } else {
            Verdict::NoUsage
        };
        return row;
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
    let floor = prev_step
        .usage
        .as_ref()
        .map(|o| provider.left_cached(&o.usage));
    let verdict = if let Some(reset) = &reset {
        reset.clone()
    } else if let Some(component) = component {
        Verdict::ComponentChanged(component)
    } else if shared_items < prev_len {
        Verdict::HistoryRewritten(shared_items)
    } else if let Some(cached) = observed_cached {
        match floor {
            // A recorded cause first: only when nothing recorded changed is it the provider's.
            Some(floor) if cached < floor => match recorded_setting_change(session, previous, k) {
                Some(changed) => changed,
                None if step.compaction => Verdict::CompactionRequest,
                None => match gap() {
                    Some(g) if g > provider.retention_seconds() => Verdict::IdleGap(g),
                    _ => Verdict::ProviderMiss,
                },
            },
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
    let prefix_break = match &verdict {
        Verdict::ComponentChanged(c) => Some(PrefixBreak::Component(c)),
        Verdict::HistoryRewritten(i) => Some(PrefixBreak::Input(*i)),
        _ => None,
    };
    StepCache {
        shared_items,
        shared_tokens,
        prefix_break,
        predicted_cached: Some(predicted_cached),
        verdict,
        incremental: chain_break.is_none(),
        chain_break,
        lost_tokens,
        ..row
    }
}

/// A recorded setting that changed between two requests and feeds a part the session does not
/// record, as the cause of a drop; a change the agent's rules say leaves that part as it was is
/// no cause.
fn recorded_setting_change<S: AgentSession>(
    session: &S,
    previous: usize,
    k: usize,
) -> Option<Verdict> {
    let change = session
        .setting_changes(previous, session, k)
        .into_iter()
        .find(|c| {
            session
                .unrecorded_effect(previous, session, k, c)
                .is_none_or(|e| e.changes != Some(false))
        })?;
    Some(Verdict::ContextChanged {
        field: change.field,
        effect: session.setting_effect(change.field),
    })
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

mod breakpoint;
#[cfg(test)]
mod breakpoint_tests;

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
            let plan =
                crate::agents::codex::plan::plan(&s, &crate::fingerprint::PlanOptions::default());
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
            let plan =
                crate::agents::codex::plan::plan(&s, &crate::fingerprint::PlanOptions::default());
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

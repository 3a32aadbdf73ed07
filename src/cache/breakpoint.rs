//! A step of a session whose provider keys its cache on breakpoints (Anthropic's): the cache
//! simulated request by request ([`crate::providers::BreakpointCache`]), then each step judged
//! from the simulation's lookups against the nearest earlier request with a prompt.

use super::{PrefixBreak, StepCache, Verdict, recorded_setting_change};
use crate::AgentSession;
use crate::agents::Reset;
use crate::fingerprint::{Plan, common_prefix};
use crate::providers::Lookup;

/// A read within this many tokens of the prediction is the prediction: a breakpoint cache's
/// prediction is the provider's own count of the previous request, in its own tokenizer.
const SLACK: u64 = 8;

/// What a breakpoint cache's simulation found for one request, and what the analysis of the
/// next one needs of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Simulated {
    lookup: Lookup,
    /// The request's first and last breakpoints and its longest TTL.
    first_breakpoint: Option<usize>,
    last_breakpoint: Option<usize>,
    /// Blocks of its whole prompt.
    blocks: usize,
    longest_ttl: Option<i64>,
    breakpoints: usize,
    /// Unix seconds the request was taken at (a line without a time: the previous one's).
    now: i64,
}

/// A breakpoint cache and what it found for each step simulated so far.
pub(super) struct Simulation {
    cache: Box<dyn crate::providers::BreakpointCache>,
    /// What it found for the steps after those handed over.
    pub(super) simulated: Vec<Option<Simulated>>,
    /// The first steps, whose results were handed over ([`Simulation::hand_over`]).
    handed: usize,
    last_time: i64,
}

impl Simulation {
    /// A new cache, for a session whose provider keys it on breakpoints; `None` for an
    /// automatic prefix cache.
    pub(super) fn new<S: AgentSession>(session: &S) -> Option<Simulation> {
        Some(Simulation {
            cache: session.cache_model().breakpoint_cache()?,
            simulated: Vec::new(),
            handed: 0,
            last_time: 0,
        })
    }

    /// Every step with a prompt up to step `upto`, in order, after those simulated.
    pub(super) fn run<S: AgentSession>(&mut self, session: &S, upto: usize) {
        let from = self.handed + self.simulated.len();
        let more = upto.saturating_sub(from);
        self.simulated.reserve(more);
        self.cache.reserve(more);
        for (k, step) in session.steps().iter().enumerate().take(upto).skip(from) {
            let now = step.unix_seconds.unwrap_or(self.last_time);
            self.last_time = now;
            let Some(prompt) = session.prompt(k) else {
                self.simulated.push(None);
                continue;
            };
            let model = session.step_model(k).unwrap_or("");
            let tokens = step.usage.as_ref().map(|o| o.usage.input_tokens);
            let lookup = self.cache.request(model, prompt.as_ref(), now, tokens);
            let breakpoints = prompt.breakpoints();
            self.simulated.push(Some(Simulated {
                lookup,
                first_breakpoint: breakpoints.first().map(|&(p, _)| p),
                last_breakpoint: breakpoints.last().map(|&(p, _)| p),
                blocks: prompt.head().len() + prompt.message_blocks(),
                longest_ttl: breakpoints.iter().map(|&(_, t)| t).max(),
                breakpoints: breakpoints.len(),
                now,
            }));
        }
    }

    /// What it found for every step simulated, indexed by step: a simulation that handed
    /// nothing over ([`Analysis`](super::Analysis)'s).
    pub(super) fn whole(&self) -> &[Option<Simulated>] {
        debug_assert_eq!(self.handed, 0, "the first steps' lookups were handed over");
        &self.simulated
    }

    /// What it found for the steps simulated since the last hand-over, taken away.
    pub(super) fn hand_over(&mut self) -> Vec<Option<Simulated>> {
        self.handed += self.simulated.len();
        std::mem::take(&mut self.simulated)
    }
}

/// Step `k` of a session whose provider keys its cache on breakpoints: judged against the
/// nearest earlier request with a prompt, from the simulation's lookups. Structural causes in
/// the order the cache loses tokens: a model the cache has nothing for and an expired entry
/// lose the whole prompt; a compaction the messages; a changed part or message what follows
/// it; then a read short of the prediction is put on a setting, the build's own rewrite or an
/// unrecorded part before the provider is blamed.
pub(super) fn breakpoint_step<S: AgentSession>(
    session: &S,
    plan: &Plan,
    k: usize,
    simulated: &[Option<Simulated>],
    row: &mut StepCache,
) {
    let steps = session.steps();
    row.incremental = false;
    row.predicted_cached = None;
    if session.copied(k) {
        row.verdict = Verdict::Copied;
        return;
    }
    let Some(this) = simulated[k] else {
        // No prompt: a compaction's own request, which the log does not record.
        row.verdict = Verdict::NoUsage;
        return;
    };
    row.read_block = this.lookup.read_block;
    row.breakpoints = this.breakpoints;
    let previous = (0..k)
        .rev()
        .find(|&p| simulated[p].is_some() && !session.copied(p));
    if previous.is_none() && session.history_from_elsewhere(k) {
        row.verdict = Verdict::EarlierFile;
        return;
    }
    let Some(usage) = steps[k].usage.as_ref().map(|o| &o.usage) else {
        row.verdict = Verdict::NoUsage;
        return;
    };
    if usage.no_cache_counts {
        row.verdict = Verdict::NoCacheFields;
        return;
    }
    let read = usage.cached_input_tokens;
    let Some(p) = previous else {
        row.predicted_cached = Some(0);
        row.verdict = if read > 0 {
            Verdict::WarmStart
        } else {
            Verdict::First
        };
        return;
    };
    let before = simulated[p].expect("a previous request has a prompt");
    let prompt = session.prompt(k).expect("a simulated step has a prompt");
    let prev_prompt = session.prompt(p).expect("a simulated step has a prompt");
    let prev_usage = steps[p].usage.as_ref().map(|o| &o.usage);
    let lookup = this.lookup;
    // The blocks the two prompts share: the head block by block, the messages by their chains.
    let (head, prev_head) = (prompt.head(), prev_prompt.head());
    let head_shared = head
        .iter()
        .zip(prev_head)
        .take_while(|(a, b)| a.hash == b.hash)
        .count();
    let messages_shared = if head_shared == head.len() && head.len() == prev_head.len() {
        common_prefix(plan, p, plan, k)
    } else {
        0
    };
    let shared = head_shared + messages_shared;
    row.shared_items = messages_shared;
    row.shared_tokens = if head_shared == head.len() {
        plan.instruction_tokens[k] + plan.tool_tokens + plan.input_tokens(k, messages_shared)
    } else {
        0
    };
    let whole_prefix = before
        .last_breakpoint
        .is_some_and(|b| lookup.read_block.is_some_and(|r| r >= b));
    let left = prev_usage.map(|u| session.cache_model().left_cached(u));
    // The read proves the prefix held where it is all the previous request left cached: the
    // simulation, and the history the log gives, are models; the provider's count is the fact.
    let held = left.is_some_and(|l| l > 0 && read.saturating_add(SLACK) >= l);
    let reset = session.reset_between(p, k);
    // The request does not extend the previous one (no reset between): where they part.
    let broken = reset.is_none() && shared < before.blocks && !held;
    if broken {
        row.prefix_break = Some(if shared < head.len() {
            PrefixBreak::Component(session.part_name(head[shared].part.kind()))
        } else {
            PrefixBreak::Input(shared - head.len())
        });
    }
    let predicted = match lookup.read_block {
        None => Some(0),
        Some(_) if whole_prefix => left,
        Some(_) => None,
    };
    row.predicted_cached = predicted.map(|p| p as usize);
    // What the previous request left cached and this one did not read (none on a hit).
    row.lost_tokens = left.map_or(0, |left| left.saturating_sub(read));
    let (model, prev_model) = (session.step_model(k), session.step_model(p));
    row.verdict = if held {
        row.lost_tokens = 0;
        if predicted.is_none() || !whole_prefix {
            // The simulation thought less was left: the read says the whole of it was.
            row.predicted_cached = left.map(|l| l as usize);
        }
        Verdict::Hit
    } else if before.last_breakpoint.is_none() {
        Verdict::NoBreakpoint
    } else if model != prev_model && lookup.read_block.is_none() {
        Verdict::ModelSwitch {
            from: prev_model.unwrap_or("").to_string(),
            to: model.unwrap_or("").to_string(),
        }
    } else if lookup.expired {
        Verdict::TtlExpired {
            gap_seconds: this.now - before.now,
            ttl_seconds: before.longest_ttl.unwrap_or(300),
        }
    } else if let Some(reset) = reset {
        match reset {
            Reset::Compaction => Verdict::Compaction,
            Reset::Rollback => Verdict::Rollback,
        }
    } else if broken {
        let lookback = before.last_breakpoint.is_some_and(|b| {
            shared > b
                && prompt
                    .breakpoints()
                    .iter()
                    .find(|&&(at, _)| at > b)
                    .is_some_and(|&(at, _)| at - b > crate::providers::anthropic::LOOKBACK_BLOCKS)
        });
        if lookback {
            Verdict::LookbackExceeded
        } else if shared < head.len() {
            row.location = Some(head[shared].part.name());
            Verdict::ComponentChanged(session.part_name(head[shared].part.kind()))
        } else {
            let at = shared - head.len();
            row.location = Some(session.entry_location(plan, k, at).unwrap_or_else(|| {
                format!("input item {at}: the previous request went on, this one ends")
            }));
            Verdict::HistoryRewritten(at)
        }
    } else if !whole_prefix
        && before.last_breakpoint.is_some_and(|b| {
            prompt
                .breakpoints()
                .iter()
                .find(|&&(at, _)| at >= b)
                .is_some_and(|&(at, _)| at - b > crate::providers::anthropic::LOOKBACK_BLOCKS)
        })
    {
        Verdict::LookbackExceeded
    } else if let Some(changed) = recorded_setting_change(session, p, k) {
        changed
    } else if let Some((name, why)) = session.known_rewrite(p, k).filter(|_| read > 0) {
        Verdict::KnownRewrite { name, why }
    } else {
        // Parts the build does not record, before what should have been read; a read of
        // anything covered the prefix up to a breakpoint, so the parts wholly before the first
        // one held (the part the breakpoint is in may have changed after it: the system
        // prompt's second block, say).
        let upto = lookup.read_block.unwrap_or(0);
        let mut parts = session.unrecorded_parts(plan, k, upto);
        if read > 0
            && let Some(before_first) = this.first_breakpoint.and_then(|b| b.checked_sub(1))
        {
            let covered = session.unrecorded_parts(plan, k, before_first);
            parts.retain(|part| !covered.contains(part));
        }
        if parts.is_empty() {
            Verdict::ProviderMiss
        } else {
            Verdict::UnrecordedChange(parts)
        }
    };
}

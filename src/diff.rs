//! Diff of two sessions' compiled requests, step by step: where they stop sharing a prefix and
//! which drift class explains it (caching-and-drift.md section 2.2).
//!
//! Split by what is compared: [`align()`] pairs the steps, `components` the parts before the input
//! (cache key, instructions, tools, params, checkpoint), `input` the input items, `continuation`
//! a resume's or fork's first request against the request it should extend. Each function gets
//! the two sides of its comparison as two [`Side`]s.

use crate::AgentSession;
use crate::agents::Entry;
use crate::core::request::Part;
use crate::fingerprint::{Fingerprint, Plan, common_prefix};

mod align;
mod components;
mod continuation;
mod input;

pub use align::align;
pub use components::{Components, component_drifts};

/// The drift classes promptc names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DriftClass {
    CacheKeyChanged,
    Fork,
    InstructionsChanged,
    ToolsReordered,
    ToolsChanged,
    ParamsChanged,
    Compaction,
    Rollback,
    VolatilePrefix,
    ContextReinjected,
    ContextAppended,
    SyntheticOutputChanged,
    HistoryRewritten,
    /// Context the agent injects changed where the previous request had it (Claude Code's
    /// CLAUDE.md or git status in its first message).
    ContextChanged,
    /// Nothing recorded changed, yet less was read than the previous request left cached.
    UnrecordedChange,
    /// The idle gap outlived the TTL of every entry the previous request wrote.
    CacheExpired,
}

impl DriftClass {
    /// Stable name used in output.
    pub fn name(self) -> &'static str {
        match self {
            DriftClass::CacheKeyChanged => "cache_key_changed",
            DriftClass::Fork => "fork",
            DriftClass::InstructionsChanged => "instructions_changed",
            DriftClass::ToolsReordered => "tools_reordered",
            DriftClass::ToolsChanged => "tools_changed",
            DriftClass::ParamsChanged => "params_changed",
            DriftClass::Compaction => "compaction",
            DriftClass::Rollback => "rollback",
            DriftClass::VolatilePrefix => "volatile_prefix",
            DriftClass::ContextReinjected => "context_reinjected",
            DriftClass::ContextAppended => "context_appended",
            DriftClass::SyntheticOutputChanged => "synthetic_output_changed",
            DriftClass::HistoryRewritten => "history_rewritten",
            DriftClass::ContextChanged => "context_changed",
            DriftClass::UnrecordedChange => "unrecorded_change",
            DriftClass::CacheExpired => "cache_expired",
        }
    }

    /// The class of a change of one part of the request.
    fn changed(part: Part) -> DriftClass {
        match part {
            Part::CacheKey => DriftClass::CacheKeyChanged,
            Part::Instructions => DriftClass::InstructionsChanged,
            Part::Tools => DriftClass::ToolsChanged,
            Part::Params => DriftClass::ParamsChanged,
            Part::Checkpoint => DriftClass::Compaction,
            Part::Input => DriftClass::HistoryRewritten,
        }
    }

    /// Whether this drift is an expected, harmless reset or append.
    pub fn expected(self) -> bool {
        matches!(
            self,
            DriftClass::Fork
                | DriftClass::CacheExpired
                | DriftClass::Compaction
                | DriftClass::Rollback
                | DriftClass::ContextAppended
        )
    }
}

/// One drift found between two aligned requests.
#[derive(Debug, Clone)]
pub struct Drift {
    pub class: DriftClass,
    /// `instructions`, `tools`, `params`, `prompt_cache_key`, `checkpoint` or `input`.
    pub component: &'static str,
    /// Step indices in A and B where it first appears.
    pub a_step: usize,
    pub b_step: usize,
    /// First differing input index, for input drifts.
    pub input_index: Option<usize>,
    pub detail: String,
    /// How many aligned step pairs show this same drift.
    pub steps_affected: usize,
    /// What to show side by side: A's and B's version of the differing part.
    pub evidence: Option<(String, String)>,
    /// Only possible: a setting changed that may change an unrecorded part, by rules that
    /// cannot tell whether it did. Not asserted, so not unexpected.
    pub possible: bool,
}

impl Drift {
    /// See [`DriftClass::expected`]; a possible drift is not asserted, so not unexpected.
    pub fn expected(&self) -> bool {
        self.possible || self.class.expected()
    }
}

/// The longest common prefix at the first differing step pair.
#[derive(Debug, Clone, Copy)]
pub struct CommonPrefix {
    pub a_step: usize,
    pub b_step: usize,
    /// Input items both requests share (0 when a component before the input differs).
    pub items: usize,
    /// Estimated tokens of the shared prefix (instructions, tools, items), when estimated.
    pub tokens: Option<usize>,
}

/// The result of a diff.
#[derive(Debug, Clone)]
pub struct PromptDiff {
    /// Aligned step pairs `(a, b)`, in A's order.
    pub pairs: Vec<(usize, usize)>,
    pub drifts: Vec<Drift>,
    pub common_prefix: Option<CommonPrefix>,
    /// Steps of A that have no counterpart in B.
    pub a_only: Vec<usize>,
    /// Steps of B that have no counterpart in A (B continues A).
    pub b_only: Vec<usize>,
}

impl PromptDiff {
    /// No drift at all on the shared steps, and every step of A is in B.
    pub fn identical(&self) -> bool {
        self.drifts.is_empty() && self.a_only.is_empty()
    }

    /// Any drift that is not expected (or steps of A missing from B).
    pub fn has_unexpected(&self) -> bool {
        self.drifts.iter().any(|d| !d.expected()) || !self.a_only.is_empty()
    }
}

/// One side of a comparison: a session, its plan, and the step of it being compared.
#[derive(Debug)]
pub struct Side<'a, S> {
    pub session: &'a S,
    pub plan: &'a Plan,
    pub step: usize,
}

impl<S> Clone for Side<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Side<'_, S> {}

impl<'a, S: AgentSession> Side<'a, S> {
    /// The same session and plan at another step.
    pub fn at(self, step: usize) -> Side<'a, S> {
        Side { step, ..self }
    }

    fn fingerprint(&self) -> &'a Fingerprint {
        &self.plan.fingerprints[self.step]
    }

    /// Entry `k` of the step's input.
    fn entry(&self, k: usize) -> Entry<'a> {
        self.session.entry(self.plan, self.step, k)
    }

    /// How many input items the step's request has.
    fn input_len(&self) -> usize {
        self.plan.views[self.step].1
    }
}

/// Input items two sides' requests share.
fn shared_items<S: AgentSession>(a: &Side<'_, S>, b: &Side<'_, S>) -> usize {
    common_prefix(a.plan, a.step, b.plan, b.step)
}

/// Compare two sessions. With `only`, compare that one pair of steps.
pub fn diff<S: AgentSession>(
    a: &S,
    pa: &Plan,
    b: &S,
    pb: &Plan,
    only: Option<(usize, usize)>,
) -> PromptDiff {
    let a = Side {
        session: a,
        plan: pa,
        step: 0,
    };
    let b = Side {
        session: b,
        plan: pb,
        step: 0,
    };
    let pairs = match only {
        Some(pair) => vec![pair],
        None => align(a.session, b.session),
    };
    let (a_only, b_only) = if only.is_some() {
        (Vec::new(), Vec::new())
    } else {
        let a_paired: std::collections::HashSet<usize> = pairs.iter().map(|p| p.0).collect();
        let b_paired: std::collections::HashSet<usize> = pairs.iter().map(|p| p.1).collect();
        (
            (0..a.session.steps().len())
                .filter(|s| !a_paired.contains(s))
                .collect(),
            (0..b.session.steps().len())
                .filter(|s| !b_paired.contains(s))
                .collect(),
        )
    };
    // B is a fork of A written by 0.152+ (its own file, new turns): nothing aligns, and B's
    // first request should extend A's last request before the fork point.
    if only.is_none()
        && pairs.is_empty()
        && let Some(a_step) = align::fork_point_step(a.session, b.session)
    {
        let drifts =
            continuation::continuation(a.at(a_step), b.at(0), "B's first request (a fork of A)");
        return PromptDiff {
            pairs,
            drifts,
            common_prefix: None,
            a_only: Vec::new(),
            b_only,
        };
    }
    let mut drifts: Vec<Drift> = Vec::new();
    let mut common: Option<CommonPrefix> = None;
    for &(sa, sb) in &pairs {
        let (a, b) = (a.at(sa), b.at(sb));
        let (fa, fb) = (a.fingerprint(), b.fingerprint());
        // A copy of another session's request (a fork's) is that session's: not compared.
        if fa.request == fb.request || a.session.copied(sa) || b.session.copied(sb) {
            continue;
        }
        let found = components::compare(a, b);
        if common.is_none() {
            let components_equal = Part::BEFORE_INPUT
                .into_iter()
                .all(|part| fa.part(part) == fb.part(part));
            let items = if components_equal {
                shared_items(&a, &b)
            } else {
                0
            };
            let tokens = pa.estimate_tokens.then(|| {
                if components_equal {
                    pa.instruction_tokens[sa] + pa.tool_tokens + pa.input_tokens(sa, items)
                } else {
                    0
                }
            });
            common = Some(CommonPrefix {
                a_step: sa,
                b_step: sb,
                items,
                tokens,
            });
        }
        for drift in found {
            match drifts.iter_mut().find(|d| {
                d.class == drift.class && d.component == drift.component && d.detail == drift.detail
            }) {
                Some(existing) => existing.steps_affected += 1,
                None => drifts.push(drift),
            }
        }
    }
    // Two sessions of an agent whose requests have keys and none in common: B's first request
    // is held to A's last, as a resume's would be.
    if only.is_none()
        && pairs.is_empty()
        && let (Some(last_a), Some(first_b)) = (
            (0..a.session.steps().len())
                .rev()
                .find(|&k| a.session.judged(k)),
            (0..b.session.steps().len()).find(|&k| b.session.judged(k)),
        )
        && a.session.step_key(last_a).is_some()
    {
        drifts.extend(continuation::resumed(a.at(last_a), b.at(first_b)));
    }
    // The pairs and B's steps past them that were requests of the session's own (Claude Code's
    // compactions and a fork's copies are neither compared nor continued from).
    let last_pair = pairs
        .iter()
        .rev()
        .find(|&&(x, y)| a.session.judged(x) && b.session.judged(y));
    let first_b_only = b_only.iter().find(|&&k| b.session.judged(k));
    // Only a step of B's past the last pair continues A (one before it is B's own history, as
    // where B holds steps A never had and the two meet again after them).
    if let (Some(&first_b_only), Some(&(last_a, last_b))) = (first_b_only, last_pair)
        && first_b_only > last_b
    {
        let (last_a, last_b, first_b_only) = (a.at(last_a), b.at(last_b), b.at(first_b_only));
        // B continues A: its first step past the shared ones may start from a reset.
        if let Some(d) = continuation::reset(last_a, last_b, first_b_only) {
            drifts.push(d);
        } else if a_only.is_empty() {
            // B resumes A: its first request after A's end should extend A's last request.
            drifts.extend(continuation::resumed(last_a, first_b_only));
        }
    }
    PromptDiff {
        pairs,
        drifts,
        common_prefix: common,
        a_only,
        b_only,
    }
}

fn drift<S: AgentSession>(
    class: DriftClass,
    component: &'static str,
    a: &Side<'_, S>,
    b: &Side<'_, S>,
    detail: String,
) -> Drift {
    Drift {
        class,
        component,
        a_step: a.step,
        b_step: b.step,
        input_index: None,
        detail,
        steps_affected: 1,
        evidence: None,
        possible: false,
    }
}

#[cfg(test)]
mod tests;

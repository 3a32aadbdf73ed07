//! Diff of two rollouts' compiled requests, step by step: where they stop sharing a prefix and
//! which drift class explains it (caching-and-drift.md section 2.2).

use serde_json::Value;

use crate::agents::codex::compile::{params, tool_name};
use crate::agents::codex::content::is_context_message;
use crate::agents::codex::normalize::Origin;
use crate::agents::codex::session::Session;
use crate::core::shared::Slice;
use crate::core::volatile;
use crate::fingerprint::{Fingerprint, Hash, Plan, common_prefix};

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
        }
    }

    /// Whether this drift is an expected, harmless reset or append.
    pub fn expected(self) -> bool {
        matches!(
            self,
            DriftClass::Fork
                | DriftClass::Compaction
                | DriftClass::Rollback
                | DriftClass::ContextAppended
        )
    }
}

/// The fingerprint components of one request, as a plan has them (hashes) or a baseline file
/// does (hex): what [`component_drifts`] compares.
#[derive(Debug, Clone, Copy)]
pub struct Components<'a, T> {
    pub prompt_cache_key: Option<&'a T>,
    pub instructions: Option<&'a T>,
    pub tools: Option<&'a T>,
    pub tools_canonical: Option<&'a T>,
    pub params: &'a T,
    pub checkpoint: Option<&'a T>,
    pub input: &'a T,
}

impl<'a> From<&'a Fingerprint> for Components<'a, Hash> {
    fn from(f: &'a Fingerprint) -> Self {
        Components {
            prompt_cache_key: f.prompt_cache_key.as_ref(),
            instructions: f.instructions.as_ref(),
            tools: f.tools.as_ref(),
            tools_canonical: f.tools_canonical.as_ref(),
            params: &f.params,
            checkpoint: f.checkpoint.as_ref(),
            input: &f.input,
        }
    }
}

/// The components two requests differ in, each with the drift class their fingerprints alone
/// show, in report order: the one classifier of `diff` (which then reads the requests to refine
/// a class: a fork, per-run values, which input drift) and of `check --baseline` (which has
/// only the fingerprints). Another checkpoint accounts for any change of the input after it.
pub fn component_drifts<T: PartialEq>(
    a: Components<'_, T>,
    b: Components<'_, T>,
) -> Vec<(DriftClass, &'static str)> {
    let mut out = Vec::new();
    if a.prompt_cache_key != b.prompt_cache_key {
        out.push((DriftClass::CacheKeyChanged, "prompt_cache_key"));
    }
    if a.instructions != b.instructions {
        out.push((DriftClass::InstructionsChanged, "instructions"));
    }
    if a.tools != b.tools {
        let reordered =
            a.tools.is_some() && b.tools.is_some() && a.tools_canonical == b.tools_canonical;
        let class = if reordered {
            DriftClass::ToolsReordered
        } else {
            DriftClass::ToolsChanged
        };
        out.push((class, "tools"));
    }
    if a.params != b.params {
        out.push((DriftClass::ParamsChanged, "params"));
    }
    if a.checkpoint != b.checkpoint {
        out.push((DriftClass::Compaction, "checkpoint"));
    } else if a.input != b.input {
        out.push((DriftClass::HistoryRewritten, "input"));
    }
    out
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
}

impl Drift {
    /// See [`DriftClass::expected`].
    pub fn expected(&self) -> bool {
        self.class.expected()
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

/// Align steps: by turn id where both rollouts have them, else by turn and step number.
pub fn align(a: &Session, b: &Session) -> Vec<(usize, usize)> {
    let a_turns = &a.replay.turns;
    let b_turns = &b.replay.turns;
    let by_id = !a_turns.is_empty()
        && a_turns.iter().all(|t| t.turn_id.is_some())
        && b_turns.iter().all(|t| t.turn_id.is_some());
    // The k-th turn with an id pairs with the k-th turn with that id in B, so a file that
    // repeats a turn id still aligns one to one.
    let mut b_by_id: std::collections::HashMap<&str, std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (index, turn) in b_turns.iter().enumerate() {
        if let Some(id) = turn.turn_id.as_deref() {
            b_by_id.entry(id).or_default().push_back(index);
        }
    }
    let mut pairs = Vec::new();
    for (index, turn) in a_turns.iter().enumerate() {
        let other = if by_id {
            turn.turn_id
                .as_deref()
                .and_then(|id| b_by_id.get_mut(id))
                .and_then(|queue| queue.pop_front())
                .map(|b| &b_turns[b])
        } else {
            b_turns.get(index)
        };
        if let Some(other) = other {
            pairs.extend(turn.steps.iter().copied().zip(other.steps.iter().copied()));
        }
    }
    pairs
}

/// Compare two sessions. With `only`, compare that one pair of steps.
pub fn diff(
    a: &Session,
    pa: &Plan,
    b: &Session,
    pb: &Plan,
    only: Option<(usize, usize)>,
) -> PromptDiff {
    let pairs = match only {
        Some(pair) => vec![pair],
        None => align(a, b),
    };
    let (a_only, b_only) = if only.is_some() {
        (Vec::new(), Vec::new())
    } else {
        let a_paired: std::collections::HashSet<usize> = pairs.iter().map(|p| p.0).collect();
        let b_paired: std::collections::HashSet<usize> = pairs.iter().map(|p| p.1).collect();
        (
            (0..a.replay.steps.len())
                .filter(|s| !a_paired.contains(s))
                .collect(),
            (0..b.replay.steps.len())
                .filter(|s| !b_paired.contains(s))
                .collect(),
        )
    };
    // B is a fork of A written by 0.152+ (its own file, new turns): nothing aligns, and B's
    // first request should extend A's last request before the fork point.
    if only.is_none()
        && pairs.is_empty()
        && let Some(a_step) = fork_point_step(a, b)
    {
        let drifts = continuation(a, pa, a_step, b, pb, 0, "B's first request (a fork of A)");
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
        let fa = &pa.fingerprints[sa];
        let fb = &pb.fingerprints[sb];
        if fa.request == fb.request {
            continue;
        }
        let found = compare(a, pa, sa, b, pb, sb);
        if common.is_none() {
            let components_equal = fa.instructions == fb.instructions
                && fa.tools == fb.tools
                && fa.params == fb.params
                && fa.prompt_cache_key == fb.prompt_cache_key;
            let items = if components_equal {
                common_prefix(pa, sa, pb, sb)
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
    // B continues A: its first step past the shared ones may start from a reset.
    if let (Some(&first_b_only), Some(&(last_a, last_b))) = (b_only.first(), pairs.last())
        && let Some(class) = continuation_reset(b, last_b, first_b_only)
    {
        {
            let mut d = drift(
                class,
                "input",
                last_a,
                first_b_only,
                format!(
                    "B continues A after a {}: its next request does not extend A's last one",
                    if class == DriftClass::Rollback {
                        "rollback"
                    } else {
                        "compaction"
                    }
                ),
            );
            d.input_index = Some(common_prefix(pb, last_b, pb, first_b_only));
            drifts.push(d);
        }
    } else if let (Some(&first_b_only), Some(&(last_a, last_b))) = (b_only.first(), pairs.last())
        && a_only.is_empty()
        && first_b_only > last_b
    {
        // B resumes A: its first request after A's end should extend A's last request.
        drifts.extend(continuation(
            a,
            pa,
            last_a,
            b,
            pb,
            first_b_only,
            "B's first request after A's end",
        ));
    }
    PromptDiff {
        pairs,
        drifts,
        common_prefix: common,
        a_only,
        b_only,
    }
}

fn drift(
    class: DriftClass,
    component: &'static str,
    sa: usize,
    sb: usize,
    detail: String,
) -> Drift {
    Drift {
        class,
        component,
        a_step: sa,
        b_step: sb,
        input_index: None,
        detail,
        steps_affected: 1,
        evidence: None,
    }
}

/// Model-view entries as pretty JSON, one after the other.
fn pretty_items(
    session: &Session,
    entries: Slice<'_, crate::agents::codex::normalize::ViewEntry>,
) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|e| pretty(session.view_json(e)))
        .collect();
    items.join("\n")
}

fn pretty(json: &str) -> String {
    serde_json::from_str::<Value>(json)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| json.to_string())
}

fn compare(a: &Session, pa: &Plan, sa: usize, b: &Session, pb: &Plan, sb: usize) -> Vec<Drift> {
    let fa = &pa.fingerprints[sa];
    let fb = &pb.fingerprints[sb];
    let mut out = Vec::new();
    for (class, _) in component_drifts(fa.into(), fb.into()) {
        match class {
            DriftClass::CacheKeyChanged => out.push(cache_key_drift(a, b, sa, sb)),
            DriftClass::InstructionsChanged => out.push(instructions_drift(a, pa, sa, b, pb, sb)),
            DriftClass::ToolsReordered | DriftClass::ToolsChanged => {
                out.push(tools_drift(pa, pb, sa, sb, class));
            }
            DriftClass::ParamsChanged => out.push(params_drift(a, sa, b, sb)),
            DriftClass::Compaction => out.push(drift(
                DriftClass::Compaction,
                "checkpoint",
                sa,
                sb,
                format!(
                    "the histories start from different compaction checkpoints ({} vs {})",
                    checkpoint_line(a, sa),
                    checkpoint_line(b, sb)
                ),
            )),
            DriftClass::HistoryRewritten => out.extend(input_drift(a, pa, sa, b, pb, sb)),
            other => unreachable!("component_drifts gives no {}", other.name()),
        }
    }
    out
}

/// What breaks the prefix between A's last request `sa` and B's first request after A's end
/// `sb` (B resumes A), or what B's resume appends as expected.
fn continuation(
    a: &Session,
    pa: &Plan,
    sa: usize,
    b: &Session,
    pb: &Plan,
    sb: usize,
    label: &str,
) -> Vec<Drift> {
    // The components before the input, as for aligned steps; the input is held to "extends".
    let mut out: Vec<Drift> = compare(a, pa, sa, b, pb, sb)
        .into_iter()
        .filter(|d| d.component != "input")
        .collect();
    let tag = |mut d: Drift| {
        d.detail = format!("{label}: {}", d.detail);
        d
    };
    out = out.into_iter().map(tag).collect();
    // Turn-context fields that feed parts of the request the rollout does not record.
    for change in
        crate::agents::codex::session::context_changes(a.step_context(sa), b.step_context(sb))
    {
        if matches!(change.field, "sandbox_policy" | "approval_policy") {
            let mut d = drift(
                DriftClass::ToolsChanged,
                "tools",
                sa,
                sb,
                format!(
                    "{label}: {}: {} → {} ({})",
                    change.field,
                    change.before,
                    change.after,
                    crate::agents::codex::session::field_effect(change.field)
                ),
            );
            d.evidence = Some((change.before, change.after));
            out.push(d);
        }
    }
    let prev_len = pa.views[sa].1;
    let lcp = common_prefix(pa, sa, pb, sb);
    if lcp < prev_len {
        if let Some(d) = input_drift(a, pa, sa, b, pb, sb) {
            out.push(tag(d));
        }
        return out;
    }
    if !out.is_empty() {
        // What broke the prefix is the finding; context appended with it is its consequence.
        return out;
    }
    // The prefix is intact: what follows A's input is A's response output, then B's new input.
    // Context messages there (an AGENTS.md or environment update) are an expected append.
    let view = pb.view(sb);
    let mut k = prev_len;
    while k < view.len() && b.view_item(&view[k]).is_model_output() {
        k += 1;
    }
    let start = k;
    while k < view.len() && is_context_message(b.view_item(&view[k]), || b.view_json(&view[k])) {
        k += 1;
    }
    if k > start {
        let mut d = drift(
            DriftClass::ContextAppended,
            "input",
            sa,
            sb,
            format!(
                "{label} appends {} context item(s) at input item {start}",
                k - start
            ),
        );
        d.input_index = Some(start);
        d.evidence = Some((String::new(), pretty_items(b, view.slice(start..k))));
        out.push(d);
    }
    out
}

/// When B is a fork of A (its `session_meta` names A's id): A's last step before the fork point
/// (the parent lines the fork took, or A's last step when its parent was not loaded).
fn fork_point_step(a: &Session, b: &Session) -> Option<usize> {
    let a_id = a.rollout.meta.as_ref()?.id.as_deref()?;
    let parent = b.rollout.meta.as_ref()?.forked_from_id.as_deref()?;
    // B's first request is held to A's: without one (a fork that never asked), nothing is.
    if a_id != parent || a.replay.steps.is_empty() || b.replay.steps.is_empty() {
        return None;
    }
    let last = a.replay.steps.len() - 1;
    Some(match &b.fork {
        Some(link) if link.parent.is_some() => a
            .replay
            .steps
            .iter()
            .rposition(|s| s.line <= link.parent_lines)
            .unwrap_or(last),
        _ => last,
    })
}

/// A changed `prompt_cache_key`: a fork when one session records the other as its origin.
fn cache_key_drift(a: &Session, b: &Session, sa: usize, sb: usize) -> Drift {
    let a_id = a.rollout.meta.as_ref().and_then(|m| m.id.clone());
    let b_meta = b.rollout.meta.as_ref();
    let a_meta = a.rollout.meta.as_ref();
    let b_id = b_meta.and_then(|m| m.id.clone());
    let forked = (a_id.is_some() && b_meta.and_then(|m| m.forked_from_id.clone()) == a_id)
        || (b_id.is_some() && a_meta.and_then(|m| m.forked_from_id.clone()) == b_id);
    let show = |id: &Option<String>| id.clone().unwrap_or_else(|| "none".into());
    drift(
        if forked {
            DriftClass::Fork
        } else {
            DriftClass::CacheKeyChanged
        },
        "prompt_cache_key",
        sa,
        sb,
        if forked {
            format!("B is a fork of A: key {} → {}", show(&a_id), show(&b_id))
        } else {
            format!(
                "key {} → {} and no fork is recorded",
                show(&a_id),
                show(&b_id)
            )
        },
    )
}

/// Changed instructions: per-run values when only those differ.
fn instructions_drift(
    a: &Session,
    pa: &Plan,
    sa: usize,
    b: &Session,
    pb: &Plan,
    sb: usize,
) -> Drift {
    let ta = pa.instructions[sa].0.as_deref();
    let tb = pb.instructions[sb].0.as_deref();
    let mut d = match (ta, tb) {
        (Some(x), Some(y)) if volatile::mask(x) == volatile::mask(y) => {
            let values: Vec<String> = volatile::find(x).into_iter().map(|v| v.text).collect();
            drift(
                DriftClass::VolatilePrefix,
                "instructions",
                sa,
                sb,
                format!(
                    "instructions differ only in per-run values ({})",
                    values.join(", ")
                ),
            )
        }
        _ => {
            let model_a = a.step_context(sa).and_then(|c| c.model.clone());
            let model_b = b.step_context(sb).and_then(|c| c.model.clone());
            let why = if model_a != model_b {
                format!(
                    " with a model switch {} → {}",
                    model_a.unwrap_or_else(|| "?".into()),
                    model_b.unwrap_or_else(|| "?".into())
                )
            } else {
                String::new()
            };
            drift(
                DriftClass::InstructionsChanged,
                "instructions",
                sa,
                sb,
                format!(
                    "instructions differ ({} → {}){why}",
                    pa.instructions[sa].1.name(),
                    pb.instructions[sb].1.name()
                ),
            )
        }
    };
    d.evidence = Some((
        ta.unwrap_or("(unknown)").to_string(),
        tb.unwrap_or("(unknown)").to_string(),
    ));
    d
}

/// Changed request parameters, each changed field named.
fn params_drift(a: &Session, sa: usize, b: &Session, sb: usize) -> Drift {
    let ja = params(a.step_context(sa));
    let jb = params(b.step_context(sb));
    let va: Value = serde_json::from_str(&ja).unwrap_or(Value::Null);
    let vb: Value = serde_json::from_str(&jb).unwrap_or(Value::Null);
    let mut changes = Vec::new();
    if let (Some(oa), Some(ob)) = (va.as_object(), vb.as_object()) {
        let mut keys: Vec<&String> = oa.keys().chain(ob.keys()).collect();
        keys.dedup();
        let mut seen = std::collections::HashSet::new();
        for key in keys {
            if !seen.insert(key) {
                continue;
            }
            let (x, y) = (oa.get(key), ob.get(key));
            if x != y {
                let show = |v: Option<&Value>| v.map_or("absent".to_string(), Value::to_string);
                let label = if key == "model" {
                    "model switch"
                } else {
                    key.as_str()
                };
                changes.push(format!("{label}: {} → {}", show(x), show(y)));
            }
        }
    }
    let mut d = drift(
        DriftClass::ParamsChanged,
        "params",
        sa,
        sb,
        changes.join("; "),
    );
    d.evidence = Some((pretty(&ja), pretty(&jb)));
    d
}

/// A reset between two steps of the same session: a rollback or a compaction.
fn continuation_reset(session: &Session, before: usize, after: usize) -> Option<DriftClass> {
    let (e1, e2) = (
        session.replay.steps[before].epoch,
        session.replay.steps[after].epoch,
    );
    if e1 == e2 {
        return None;
    }
    if session
        .replay
        .checkpoints
        .iter()
        .any(|c| c.epoch > e1 && c.epoch <= e2)
    {
        Some(DriftClass::Compaction)
    } else {
        Some(DriftClass::Rollback)
    }
}

fn checkpoint_line(session: &Session, step: usize) -> String {
    let epoch = session.replay.steps[step].epoch;
    session
        .replay
        .checkpoints
        .iter()
        .rfind(|c| c.epoch <= epoch)
        .map_or("none".to_string(), |c| format!("line {}", c.line))
}

fn rollbacks_before(session: &Session, step: usize) -> usize {
    let epoch = session.replay.steps[step].epoch;
    session
        .replay
        .rollbacks
        .iter()
        .filter(|r| r.dropped_turns > 0 && r.epoch <= epoch)
        .count()
}

fn input_drift(
    a: &Session,
    pa: &Plan,
    sa: usize,
    b: &Session,
    pb: &Plan,
    sb: usize,
) -> Option<Drift> {
    let lcp = common_prefix(pa, sa, pb, sb);
    let view_a = pa.view(sa);
    let view_b = pb.view(sb);
    let d = |class: DriftClass, detail: String| {
        let mut d = drift(class, "input", sa, sb, detail);
        d.input_index = Some(lcp);
        d
    };
    if rollbacks_before(a, sa) != rollbacks_before(b, sb) {
        return Some(d(
            DriftClass::Rollback,
            "turns were rolled back on one side: the history was cut, an expected reset".into(),
        ));
    }
    let entry_a = view_a.get(lcp);
    let entry_b = view_b.get(lcp);
    match (entry_a, entry_b) {
        (None, None) => None,
        (None, Some(_)) | (Some(_), None) => {
            let (longer, view, session, side) = if entry_b.is_some() {
                (view_b.len(), view_b, b, "B")
            } else {
                (view_a.len(), view_a, a, "A")
            };
            let extra = view.slice(lcp..);
            let all_context = extra.iter().all(|e| {
                let item = session.view_item(e);
                is_context_message(item, || session.view_json(e))
            });
            let evidence_text: String = extra
                .iter()
                .map(|e| pretty(session.view_json(e)))
                .collect::<Vec<_>>()
                .join("\n");
            let mut drift = if all_context && side == "B" {
                d(
                    DriftClass::ContextAppended,
                    format!(
                        "B appends {} context item(s) at the end of the input",
                        longer - lcp
                    ),
                )
            } else {
                d(
                    DriftClass::HistoryRewritten,
                    format!(
                        "{side}'s input has {} more item(s) from index {lcp}",
                        longer - lcp
                    ),
                )
            };
            drift.evidence = Some(if side == "B" {
                (String::new(), evidence_text)
            } else {
                (evidence_text, String::new())
            });
            Some(drift)
        }
        (Some(ea), Some(eb)) => {
            let ja = a.view_json(ea);
            let jb = b.view_json(eb);
            let ia = a.view_item(ea);
            let ib = b.view_item(eb);
            let synthetic = |e: &crate::agents::codex::normalize::ViewEntry| {
                matches!(e.origin, Origin::Synthetic { .. })
            };
            // A contextual item sent again: the same item already stands in the shared prefix.
            let reinjected = |session: &Session, plan: &Plan, step: usize, k: usize| {
                let entry = &plan.view(step)[k];
                is_context_message(session.view_item(entry), || session.view_json(entry))
                    && plan.first_occurrence(step, k) < lcp
            };
            let next_synthetic = |view: Slice<crate::agents::codex::normalize::ViewEntry>| {
                view.get(lcp + 1).is_some_and(synthetic)
            };
            // B inserted context (an environment or permission update) and then goes on as A.
            let appended_context = {
                let mut k = lcp;
                while k < view_b.len()
                    && is_context_message(b.view_item(&view_b[k]), || b.view_json(&view_b[k]))
                    && !reinjected(b, pb, sb, k)
                {
                    k += 1;
                }
                let goes_on_as_a = match view_b.get(k) {
                    None => true,
                    Some(next) => b.view_json(next) == ja,
                };
                (k > lcp && goes_on_as_a).then_some(k)
            };
            let mut drift = if synthetic(ea) || synthetic(eb) {
                d(
                    DriftClass::SyntheticOutputChanged,
                    format!(
                        "the model view's repair differs at input item {lcp}: {} vs {}",
                        describe(ia, synthetic(ea)),
                        describe(ib, synthetic(eb))
                    ),
                )
            } else if (next_synthetic(view_a) || next_synthetic(view_b)) && same_but_id(ja, jb) {
                let id_of = |view: Slice<crate::agents::codex::normalize::ViewEntry>,
                             session: &Session| {
                    view.get(lcp + 1)
                        .filter(|e| synthetic(e))
                        .and_then(|e| session.view_item(e).id.clone())
                        .unwrap_or_else(|| "none".into())
                };
                d(
                    DriftClass::SyntheticOutputChanged,
                    format!(
                        "the call at input item {lcp} changed only its item id, so its synthetic output's id changed: {} vs {}",
                        id_of(view_a, a),
                        id_of(view_b, b)
                    ),
                )
            } else if let Some(end) = appended_context {
                let mut drift = d(
                    DriftClass::ContextAppended,
                    format!(
                        "B appends context at input item {lcp} (an environment or permission update) and then goes on as A"
                    ),
                );
                drift.evidence = Some((String::new(), pretty_items(b, view_b.slice(lcp..end))));
                return Some(drift);
            } else if reinjected(b, pb, sb, lcp) || reinjected(a, pa, sa, lcp) {
                d(
                    DriftClass::ContextReinjected,
                    format!(
                        "context sent again at input item {lcp} (a copy of an earlier context message)"
                    ),
                )
            } else if volatile::mask(ja) == volatile::mask(jb) {
                let values: Vec<String> = volatile::find(ja).into_iter().map(|v| v.text).collect();
                d(
                    DriftClass::VolatilePrefix,
                    format!(
                        "input item {lcp} differs only in per-run values ({})",
                        values.join(", ")
                    ),
                )
            } else if crate::fingerprint::canonical_item_hash(ja)
                == crate::fingerprint::canonical_item_hash(jb)
            {
                d(
                    DriftClass::HistoryRewritten,
                    format!(
                        "input item {lcp} ({}) has the same content with its keys reordered",
                        ia.type_name
                    ),
                )
            } else {
                d(
                    DriftClass::HistoryRewritten,
                    format!(
                        "input item {lcp} differs: {} vs {}",
                        describe(ia, false),
                        describe(ib, false)
                    ),
                )
            };
            drift.evidence = Some((pretty(ja), pretty(jb)));
            Some(drift)
        }
    }
}

/// Two items that differ only in their `id` field.
fn same_but_id(a: &str, b: &str) -> bool {
    let strip = |text: &str| -> Option<Value> {
        let mut value: Value = serde_json::from_str(text).ok()?;
        value.as_object_mut()?.remove("id");
        Some(value)
    };
    match (strip(a), strip(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn describe(item: &crate::agents::codex::model::Item, synthetic: bool) -> String {
    let mut text = item.type_name.to_string();
    if let Some(role) = &item.role {
        text.push('/');
        text.push_str(role);
    }
    if let Some(call_id) = &item.call_id {
        text.push_str(&format!(" {call_id}"));
    }
    if synthetic {
        text.push_str(&format!(
            " (synthetic{})",
            item.id
                .as_deref()
                .map(|id| format!(", id {id}"))
                .unwrap_or_default()
        ));
    }
    text
}

/// Changed tools (`class` from [`component_drifts`]): which were added, removed or changed,
/// or the names in their two orders.
fn tools_drift(pa: &Plan, pb: &Plan, sa: usize, sb: usize, class: DriftClass) -> Drift {
    let (Some(ta), Some(tb)) = (&pa.tools.tools, &pb.tools.tools) else {
        return drift(
            DriftClass::ToolsChanged,
            "tools",
            sa,
            sb,
            "the tool list is known on one side only".into(),
        );
    };
    let names_a: Vec<String> = ta.iter().map(|t| tool_name(t)).collect();
    let names_b: Vec<String> = tb.iter().map(|t| tool_name(t)).collect();
    if class == DriftClass::ToolsReordered {
        let mut d = drift(
            DriftClass::ToolsReordered,
            "tools",
            sa,
            sb,
            format!(
                "same tools in another order: [{}] → [{}]",
                names_a.join(", "),
                names_b.join(", ")
            ),
        );
        d.evidence = Some((names_a.join("\n"), names_b.join("\n")));
        return d;
    }
    let mut changes = Vec::new();
    let mut evidence = (String::new(), String::new());
    for name in &names_a {
        if !names_b.contains(name) {
            changes.push(format!("removed {name}"));
        }
    }
    for name in &names_b {
        if !names_a.contains(name) {
            changes.push(format!("added {name}"));
        }
    }
    for (i, name) in names_a.iter().enumerate() {
        let Some(j) = names_b.iter().position(|n| n == name) else {
            continue;
        };
        let va: Value = serde_json::from_str(&ta[i]).unwrap_or(Value::Null);
        let vb: Value = serde_json::from_str(&tb[j]).unwrap_or(Value::Null);
        if va == vb {
            continue;
        }
        let mut fields: Vec<String> = Vec::new();
        if let (Some(oa), Some(ob)) = (va.as_object(), vb.as_object()) {
            for key in oa.keys().chain(ob.keys()) {
                if oa.get(key) != ob.get(key) && !fields.contains(key) {
                    fields.push(key.clone());
                }
            }
        }
        changes.push(format!("{name}: {} changed", fields.join(", ")));
        evidence = (pretty(&ta[i]), pretty(&tb[j]));
    }
    if changes.is_empty() {
        changes.push("same tools and order, other serialization".into());
    }
    let mut d = drift(
        DriftClass::ToolsChanged,
        "tools",
        sa,
        sb,
        changes.join("; "),
    );
    d.evidence = Some(evidence);
    d
}

#[cfg(test)]
mod tests {
    use crate::fingerprint::{PlanOptions, plan};
    use crate::test_support::{fixture, session};

    /// A fork of A that made no request yet (its `session_meta` only) diffs against A without a
    /// first request to hold to A's (the fuzzer found an index out of bounds here).
    #[test]
    fn a_fork_without_requests_diffs_without_a_continuation() {
        let a = fixture("rollouts/era_c_turns.jsonl");
        let id = a
            .rollout
            .meta
            .as_ref()
            .and_then(|m| m.id.clone())
            .expect("an id");
        let line = format!(
            r#"{{"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta","payload":{{"id":"019b8e20-0000-7000-8000-0000000000ff","forked_from_id":"{id}"}}}}"#
        );
        let b = session(&[&line]);
        assert!(b.replay.steps.is_empty() && !a.replay.steps.is_empty());
        let options = PlanOptions::default();
        let (pa, pb) = (plan(&a, &options), plan(&b, &options));
        let diff = super::diff(&a, &pa, &b, &pb, None);
        assert!(
            diff.drifts
                .iter()
                .all(|d| !d.detail.contains("a fork of A")),
            "{diff:?}"
        );
    }
}

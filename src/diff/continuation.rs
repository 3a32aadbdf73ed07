//! A resume's or fork's first request against the request of A it should extend: the
//! components before the input as for aligned steps, settings whose change the request does not
//! show, then whether the input extends A's.

use super::input::{input_drift, pretty_items};
use super::{Drift, DriftClass, Side, components, drift, shared_items};
use crate::AgentSession;
use crate::agents::Reset;

/// What breaks the prefix between A's request `a` and B's request `b` that should extend it (B
/// resumes or forks A), or what B appends as expected.
pub(super) fn continuation<S: AgentSession>(
    a: Side<'_, S>,
    b: Side<'_, S>,
    label: &str,
) -> Vec<Drift> {
    // The components before the input, as for aligned steps; the input is held to "extends".
    let mut out: Vec<Drift> = components::compare(a, b)
        .into_iter()
        .filter(|d| d.component != "input")
        .collect();
    let tag = |mut d: Drift| {
        d.detail = format!("{label}: {}", d.detail);
        d
    };
    out = out.into_iter().map(tag).collect();
    // Settings that feed parts of the request the session does not record: the agent says which.
    // A part the agent's rules say stays the same is no drift; one they cannot tell about is a
    // possible drift.
    for change in a.session.setting_changes(a.step, b.session, b.step) {
        let Some(effect) = a
            .session
            .unrecorded_effect(a.step, b.session, b.step, &change)
            .filter(|e| e.changes != Some(false))
        else {
            continue;
        };
        let mut d = drift(
            DriftClass::changed(effect.part),
            effect.part.name(),
            &a,
            &b,
            format!(
                "{label}: {}: {} → {} ({})",
                change.field, change.before, change.after, effect.why
            ),
        );
        d.possible = effect.changes.is_none();
        d.evidence = Some((change.before, change.after));
        out.push(d);
    }
    let prev_len = a.input_len();
    let lcp = shared_items(&a, &b);
    if lcp < prev_len {
        if let Some(d) = input_drift(&a, &b) {
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
    let len = b.input_len();
    let mut k = prev_len;
    while k < len && b.entry(k).model_output {
        k += 1;
    }
    let start = k;
    while k < len && b.entry(k).context {
        k += 1;
    }
    if k > start {
        let mut d = drift(
            DriftClass::ContextAppended,
            "input",
            &a,
            &b,
            format!(
                "{label} appends {} context item(s) at input item {start}",
                k - start
            ),
        );
        d.input_index = Some(start);
        d.evidence = Some((String::new(), pretty_items(&b, start..k)));
        out.push(d);
    }
    out
}

/// What breaks the prefix between A's last request `a` and B's first request `b` after A's end
/// (B resumes A). When that request is a compaction request (Codex compacts before the resumed
/// turn, as 0.152+ do when the resumed model is another one: `0.171.0/model_switch`), it is
/// named as the expected reset it is, and the turn's request after it is held to A's last for
/// what else the resume changed (the model, the settings).
pub(super) fn resumed<S: AgentSession>(a: Side<'_, S>, b: Side<'_, S>) -> Vec<Drift> {
    let mut out = continuation(a, b, "B's first request after A's end");
    if out.is_empty()
        && let Some(d) = unrecorded_change(a, b)
    {
        out.push(d);
    }
    let steps = b.session.steps();
    if !steps[b.step].compaction {
        return out;
    }
    out.push(drift(
        DriftClass::Compaction,
        "input",
        &a,
        &b,
        "B's first request after A's end is a compaction request (sent without the tools, the \
         history then replaced by its summary): an expected reset"
            .into(),
    ));
    let Some(next) = (b.step + 1 < steps.len()).then(|| b.at(b.step + 1)) else {
        return out;
    };
    // The history after the compaction is the summary: only the parts before the input (and
    // the settings feeding them) say what the resume changed. The compaction itself is named.
    let after: Vec<Drift> = continuation(a, next, "B's first request after the compaction")
        .into_iter()
        .filter(|d| d.component != "input" && d.class != DriftClass::Compaction)
        .collect();
    for d in after {
        if !out
            .iter()
            .any(|o| o.class == d.class && o.component == d.component)
        {
            out.push(d);
        }
    }
    out
}

/// B continues A from its step `before` (paired with A's `a`) to `after` across a reset (a
/// rollback or a compaction): its next request does not extend A's last one, as expected.
pub(super) fn reset<S: AgentSession>(
    a: Side<'_, S>,
    before: Side<'_, S>,
    after: Side<'_, S>,
) -> Option<Drift> {
    let class = reset_class(&before, &after)?;
    let mut d = drift(
        class,
        "input",
        &a,
        &after,
        format!(
            "B continues A after a {}: its next request does not extend A's last one",
            if class == DriftClass::Rollback {
                "rollback"
            } else {
                "compaction"
            }
        ),
    );
    d.input_index = Some(shared_items(&before, &after));
    Some(d)
}

/// A reset between two steps of the same session: a rollback or a compaction.
fn reset_class<S: AgentSession>(before: &Side<'_, S>, after: &Side<'_, S>) -> Option<DriftClass> {
    Some(
        match after.session.reset_between(before.step, after.step)? {
            Reset::Compaction => DriftClass::Compaction,
            Reset::Rollback => DriftClass::Rollback,
        },
    )
}

/// Nothing recorded broke the prefix, yet B's first request read less than A's last left in a
/// cache whose reads are exact (one keyed on breakpoints): a part the log does not record must
/// have changed, or the provider missed. The parts are named.
fn unrecorded_change<S: AgentSession>(a: Side<'_, S>, b: Side<'_, S>) -> Option<Drift> {
    let provider = a.session.cache_model();
    if !provider.keyed_on_breakpoints() {
        return None;
    }
    let left = provider.left_cached(&a.session.steps()[a.step].usage.as_ref()?.usage);
    let read = b.session.steps()[b.step]
        .usage
        .as_ref()?
        .usage
        .cached_input_tokens;
    if read >= left {
        return None;
    }
    let prompt = a.session.prompt(a.step)?;
    // Idle past the TTL of every entry A's last request wrote: nothing was left to read, as
    // expected.
    let ttl = prompt.breakpoints().iter().map(|&(_, t)| t).max()?;
    let gap = (|| {
        Some(b.session.steps()[b.step].unix_seconds? - a.session.steps()[a.step].unix_seconds?)
    })();
    if let Some(gap) = gap.filter(|&g| g > ttl) {
        return Some(drift(
            DriftClass::CacheExpired,
            "prefix",
            &a,
            &b,
            format!(
                "B's first request came {gap} s after A's last, past the {ttl} s TTL of the \
                 entries A wrote: it read {read} of the {left} tokens they held"
            ),
        ));
    }
    let last = (prompt.head().len() + prompt.message_blocks()).checked_sub(1)?;
    let mut parts = a.session.unrecorded_parts(a.plan, a.step, last);
    // A read of anything covered the prefix up to the first breakpoint: those parts held.
    if read > 0
        && let Some(before_first) = prompt
            .breakpoints()
            .first()
            .and_then(|&(first, _)| first.checked_sub(1))
    {
        let covered = a.session.unrecorded_parts(a.plan, a.step, before_first);
        parts.retain(|part| !covered.contains(part));
    }
    if read > 0
        && let Some((name, _)) = a.session.known_rewrite(a.step, b.step)
    {
        parts.push(format!("or the build's {}", name.replace('_', " ")));
    }
    let d = drift(
        DriftClass::UnrecordedChange,
        "prefix",
        &a,
        &b,
        if parts.is_empty() {
            format!(
                "B's first request read {read} of the {left} tokens A's last request left \
                 cached, though every recorded part is the same"
            )
        } else {
            format!(
                "B's first request read {read} of the {left} tokens A's last request left \
                 cached; the recorded parts are the same, so one the build does not record \
                 changed: {}",
                parts.join(", ")
            )
        },
    );
    Some(d)
}

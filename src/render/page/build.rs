//! A session's [`Page`], whatever agent wrote it: `steps`' rows, each request's input against
//! the previous request's (what it appended, and on a break what it replaced and which parts
//! changed), `compile`'s text for a bounded number of steps, and the agent's history table.

use super::{BODIES, Page, PageStep, Piece, Tone};
use crate::AgentSession;
use crate::cache::{StepCache, Verdict};
use crate::fingerprint::{Plan, common_prefix};

/// Items of one step's difference embedded; a rewrite from the start of a long history would
/// otherwise embed the history again.
const PIECES: usize = 64;

fn pieces<S: AgentSession>(
    session: &S,
    plan: &Plan,
    step: usize,
    from: usize,
    to: usize,
) -> Vec<Piece> {
    let mut out: Vec<Piece> = (from..to.min(from + PIECES))
        .map(|k| {
            Piece::new(
                session.entry_title(plan, step, k),
                &session.entry(plan, step, k).json,
            )
        })
        .collect();
    if to > from + PIECES {
        out.push(Piece::note(format!(
            "… {} more items (compile prints them)",
            to - from - PIECES
        )));
    }
    out
}

fn tone(verdict: &Verdict) -> Tone {
    match verdict {
        Verdict::Hit | Verdict::First => Tone::Good,
        Verdict::Compaction | Verdict::Rollback | Verdict::NoUsage => Tone::Neutral,
        _ => Tone::Bad,
    }
}

/// The page of a session: `rows` are `cache::analyze`'s for `plan`.
pub fn page<S: AgentSession>(session: &S, plan: &Plan, rows: &[StepCache]) -> Page {
    let name = session.name();
    let (all_steps, turns) = (session.steps(), session.turns());
    let mut steps = Vec::with_capacity(rows.len());
    let mut bodies = 0;
    for (k, r) in rows.iter().enumerate() {
        let s = &all_steps[r.step];
        let turn = turns[s.turn].number;
        let items = plan.views[r.step].1;
        let previous = k.checked_sub(1).map(|p| rows[p].step);
        let (shared, previous_items) = match previous {
            Some(p) => (common_prefix(plan, p, plan, r.step), plan.views[p].1),
            None => (0, 0),
        };
        let mut changed_parts = Vec::new();
        let mut changed_texts = Vec::new();
        if let Some(p) = previous {
            let (a, b) = (&plan.fingerprints[p], &plan.fingerprints[r.step]);
            for (part, x, y) in [
                ("instructions", &a.instructions, &b.instructions),
                ("tools", &a.tools, &b.tools),
                ("prompt_cache_key", &a.prompt_cache_key, &b.prompt_cache_key),
                ("checkpoint", &a.checkpoint, &b.checkpoint),
            ] {
                if x != y {
                    changed_parts.push(part.to_string());
                }
            }
            if a.params != b.params {
                changed_parts.push("params".to_string());
            }
            if a.instructions != b.instructions {
                let text =
                    |step: usize| session.instructions(plan, step).0.unwrap_or("").to_string();
                changed_texts.push(("instructions".to_string(), text(p), text(r.step)));
            }
        }
        let removed = match previous {
            Some(p) if shared < previous_items => pieces(session, plan, p, shared, previous_items),
            _ => Vec::new(),
        };
        let compaction = s.compaction || r.verdict == Verdict::Compaction;
        let gap_seconds = previous.and_then(|p| Some(s.unix_seconds? - all_steps[p].unix_seconds?));
        let mut short = r.short();
        if s.compaction {
            short.insert_str(0, "compaction request; ");
        }
        let mut step = PageStep {
            turn,
            step: s.number,
            model: session.step_model(r.step).map(str::to_string),
            verdict: r.verdict.name().to_string(),
            short,
            explanation: r.explain(),
            tone: tone(&r.verdict),
            input: r.observed_input,
            read: r.observed_cached,
            written: r.observed_cache_write,
            output: s.usage.as_ref().map(|o| o.usage.output_tokens),
            estimated: plan.estimate_tokens.then_some(r.estimated_input as u64),
            gap_seconds,
            compaction,
            items,
            shared,
            previous_items,
            changed_parts,
            appended: pieces(session, plan, r.step, shared.min(items), items),
            missing: (items - shared.min(items)).saturating_sub(PIECES),
            removed,
            changed_texts,
            body: None,
            command: format!(
                "promptc compile {} --turn {turn} --step {}",
                shell_word(name),
                s.number
            ),
        };
        let last = k + 1 == rows.len();
        if last || (step.is_break() && previous.is_some() && bodies + 1 < BODIES) {
            if !last {
                bodies += 1;
            }
            step.body = Some(session.compiled_text(plan, r.step));
        }
        steps.push(step);
    }
    let observed: Vec<&StepCache> = rows.iter().filter(|r| r.observed_input.is_some()).collect();
    let input: u64 = observed.iter().filter_map(|r| r.observed_input).sum();
    let cached: u64 = observed.iter().filter_map(|r| r.observed_cached).sum();
    let mut facts = vec![
        ("file".to_string(), name.to_string()),
        ("agent".to_string(), session.agent_title().to_string()),
        ("turns".to_string(), turns.len().to_string()),
        ("requests".to_string(), rows.len().to_string()),
        ("models".to_string(), session.models().join(", ")),
    ];
    if input > 0 {
        facts.push((
            "cached".to_string(),
            format!(
                "{cached} of {input} input tokens ({:.1}%)",
                cached as f64 * 100.0 / input as f64
            ),
        ));
    }
    let (history_title, history) = session.history_rows();
    Page {
        title: format!("promptc: {name}"),
        agent: session.agent_name(),
        facts,
        writes: session.cache_model().reports_writes(),
        steps,
        history,
        history_title,
    }
}

/// A file name as a shell word (quoted when it holds anything but plain characters).
pub fn shell_word(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./+:@".contains(c))
    {
        name.to_string()
    } else {
        format!("'{}'", name.replace('\'', r"'\''"))
    }
}

//! A Codex rollout's [`Page`]: `steps`' rows, the plan's model views (what each request
//! appended or changed), `compile`'s text for a bounded number of steps, `view`'s rows.

use crate::agents::codex::content::preview;
use crate::agents::codex::normalize::{Origin, ViewEntry};
use crate::agents::codex::replay::EntryOrigin;
use crate::cache::{StepCache, Verdict};
use crate::fingerprint::{Plan, common_prefix};
use crate::render::RenderOptions;
use crate::render::page::{BODIES, HistoryRow, Page, PageStep, Piece, Tone};
use crate::{AgentSession, Session};

/// Items of one step's difference embedded; a rewrite from the start of a long history would
/// otherwise embed the history again.
const PIECES: usize = 64;

fn title(session: &Session, entry: &ViewEntry) -> String {
    let item = session.view_item(entry);
    let json = session.view_json(entry);
    let kind = match (item.type_name.as_ref(), item.role.as_deref()) {
        ("message", Some(role)) => format!("message/{role}"),
        (other, _) => other.to_string(),
    };
    let mut text: String = preview(item, json).chars().take(80).collect();
    if let Origin::Synthetic { .. } = entry.origin {
        text.insert_str(0, "(synthetic) ");
    }
    format!("{kind}  {}", text.replace('\n', " "))
}

fn pieces(session: &Session, plan: &Plan, step: usize, from: usize, to: usize) -> Vec<Piece> {
    let view = crate::agents::codex::plan::view(plan, step);
    let mut out: Vec<Piece> = (from..to.min(from + PIECES))
        .map(|k| {
            let entry = &view[k];
            Piece::new(title(session, entry), session.view_json(entry))
        })
        .collect();
    if to > from + PIECES {
        out.push(Piece::new(
            format!("… {} more items (compile prints them)", to - from - PIECES),
            "",
        ));
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
pub fn page(session: &Session, plan: &Plan, rows: &[StepCache]) -> Page {
    let replay = &session.replay;
    let name = session.name();
    let mut steps = Vec::with_capacity(rows.len());
    let mut bodies = 0;
    for (k, r) in rows.iter().enumerate() {
        let s = &replay.steps[r.step];
        let turn = replay.turns[s.turn].number;
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
                let text = |step: usize| {
                    crate::agents::codex::plan::codex(plan).instructions[step]
                        .0
                        .as_deref()
                        .unwrap_or("")
                        .to_string()
                };
                changed_texts.push(("instructions".to_string(), text(p), text(r.step)));
            }
        }
        let removed = match previous {
            Some(p) if shared < previous_items => pieces(session, plan, p, shared, previous_items),
            _ => Vec::new(),
        };
        let compaction = s.compaction || r.verdict == Verdict::Compaction;
        let gap_seconds =
            previous.and_then(|p| Some(s.unix_seconds? - replay.steps[p].unix_seconds?));
        let mut short = r.verdict.short();
        if s.compaction {
            short.insert_str(0, "compaction request; ");
        }
        let mut step = PageStep {
            turn,
            step: s.number,
            model: session.step_model(r.step).map(str::to_string),
            verdict: r.verdict.name().to_string(),
            short,
            explanation: r.verdict.explain(),
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
            step.body = Some(body(session, plan, r.step));
        }
        steps.push(step);
    }
    let observed: Vec<&StepCache> = rows.iter().filter(|r| r.observed_input.is_some()).collect();
    let input: u64 = observed.iter().filter_map(|r| r.observed_input).sum();
    let cached: u64 = observed.iter().filter_map(|r| r.observed_cached).sum();
    let mut facts = vec![
        ("file".to_string(), name.to_string()),
        ("agent".to_string(), "Codex".to_string()),
        ("turns".to_string(), replay.turns.len().to_string()),
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
    Page {
        title: format!("promptc: {name}"),
        agent: "codex",
        facts,
        writes: false,
        steps,
        history: history(session),
        history_title: "Raw history and model view (the final history)".to_string(),
    }
}

/// `compile`'s text of a step, without colour, long strings folded.
fn body(session: &Session, plan: &Plan, step: usize) -> String {
    let mut out = Vec::new();
    let options = RenderOptions {
        color: false,
        width: 100,
        full: false,
    };
    let _ = super::compile::write_compile_text(&mut out, session, plan, step, &options);
    String::from_utf8_lossy(&out).into_owned()
}

/// `view`'s rows of the final history: each raw entry beside its model-view entry, the
/// synthetic outputs and dropped entries marked.
fn history(session: &Session) -> Vec<HistoryRow> {
    let Ok(scope) = super::view::scope(session, None, None) else {
        return Vec::new();
    };
    let n = scope.history.len();
    let mut by_raw: Vec<Option<usize>> = vec![None; n];
    let mut synthetic_after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (index, entry) in scope.view.entries.iter().enumerate() {
        match entry.origin {
            Origin::Raw(i) if i < n => by_raw[i] = Some(index),
            Origin::Synthetic { call } if call < n => synthetic_after[call].push(index),
            _ => {}
        }
    }
    let mut dropped: Vec<Option<&'static str>> = vec![None; n];
    for d in &scope.view.dropped {
        if d.raw_index < n {
            dropped[d.raw_index] = Some(d.reason.name());
        }
    }
    let mut rows = Vec::with_capacity(n);
    for raw in 0..n {
        let entry = scope.history[raw];
        let item = session.item(entry.item);
        let json = session.item_json(entry.item);
        let kind = match (item.type_name.as_ref(), item.role.as_deref()) {
            ("message", Some(role)) => format!("message/{role}"),
            (other, _) => other.to_string(),
        };
        let text: String = preview(item, json).chars().take(90).collect();
        let cell = format!(
            "{raw:>4} L{:<5} {kind}  {}",
            entry.line,
            text.replace('\n', " ")
        );
        let mark = match (dropped[raw], entry.origin) {
            (Some(reason), _) => Some(format!("dropped: {reason}")),
            (None, EntryOrigin::File) => None,
            (None, origin) => Some(format!("{origin:?}").to_lowercase()),
        };
        rows.push(HistoryRow {
            view: by_raw[raw].map(|v| format!("{v:>4} {kind}")),
            raw: Some(cell),
            mark,
        });
        for &v in &synthetic_after[raw] {
            rows.push(HistoryRow {
                raw: None,
                view: Some(format!("{v:>4} {}", title(session, &scope.view.entries[v]))),
                mark: Some("added: synthetic output".to_string()),
            });
        }
    }
    rows
}

/// A file name as a shell word (quoted when it holds anything but plain characters).
pub(crate) fn shell_word(name: &str) -> String {
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

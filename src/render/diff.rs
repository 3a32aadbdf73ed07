//! `diff` output: a verdict line, then each drift with where it is and a diff of the differing
//! part (line level, word level inside changed lines).

use std::io::{self, Write};

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use super::{RenderOptions, Tone, paint, write_json, write_painted};
use crate::AgentSession;
use crate::core::sanitize::escape_line;
use crate::diff::{Drift, PromptDiff};

/// Where a step is, for output.
#[derive(Serialize, Clone, Copy)]
pub struct StepRef {
    pub turn: usize,
    pub step: usize,
}

/// A step's position in its session.
pub fn step_ref<S: AgentSession>(session: &S, step: usize) -> StepRef {
    let s = &session.steps()[step];
    StepRef {
        turn: session.turns()[s.turn].number,
        step: s.number,
    }
}

#[derive(Serialize)]
struct DiffDocument<'a> {
    schema_version: u32,
    a: &'a str,
    b: &'a str,
    identical: bool,
    verdict: &'static str,
    aligned_steps: usize,
    a_only_steps: Vec<StepRef>,
    b_only_steps: Vec<StepRef>,
    drifts: Vec<DriftDocument<'a>>,
    common_prefix: Option<PrefixDocument>,
}

#[derive(Serialize)]
struct DriftDocument<'a> {
    class: &'static str,
    component: &'static str,
    turn: usize,
    step: usize,
    b_turn: usize,
    b_step: usize,
    input_index: Option<usize>,
    expected: bool,
    /// Only possible (not asserted): present when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    possible: bool,
    detail: &'a str,
    steps_affected: usize,
}

#[derive(Serialize)]
struct PrefixDocument {
    turn: usize,
    step: usize,
    items: usize,
    estimated_tokens: Option<usize>,
}

/// The verdict: `identical`, `expected_drift_only` or `unexpected_drift`.
pub fn verdict(diff: &PromptDiff) -> &'static str {
    if diff.identical() {
        "identical"
    } else if diff.has_unexpected() {
        "unexpected_drift"
    } else {
        "expected_drift_only"
    }
}

/// `diff --format json`.
pub fn write_diff_json<S: AgentSession>(
    out: &mut dyn Write,
    a: &S,
    b: &S,
    diff: &PromptDiff,
) -> io::Result<()> {
    let document = DiffDocument {
        schema_version: crate::SCHEMA_VERSION,
        a: a.name(),
        b: b.name(),
        identical: diff.identical(),
        verdict: verdict(diff),
        aligned_steps: diff.pairs.len(),
        a_only_steps: diff.a_only.iter().map(|&s| step_ref(a, s)).collect(),
        b_only_steps: diff.b_only.iter().map(|&s| step_ref(b, s)).collect(),
        drifts: diff
            .drifts
            .iter()
            .map(|d| {
                let at = step_ref(a, d.a_step);
                let bt = step_ref(b, d.b_step);
                DriftDocument {
                    class: d.class.name(),
                    component: d.component,
                    turn: at.turn,
                    step: at.step,
                    b_turn: bt.turn,
                    b_step: bt.step,
                    input_index: d.input_index,
                    expected: d.expected(),
                    possible: d.possible,
                    detail: &d.detail,
                    steps_affected: d.steps_affected,
                }
            })
            .collect(),
        common_prefix: diff.common_prefix.map(|p| {
            let at = step_ref(a, p.a_step);
            PrefixDocument {
                turn: at.turn,
                step: at.step,
                items: p.items,
                estimated_tokens: p.tokens,
            }
        }),
    };
    write_json(out, &document)
}

/// `diff` as text.
pub fn write_diff_text<S: AgentSession>(
    out: &mut dyn Write,
    a: &S,
    b: &S,
    diff: &PromptDiff,
    options: &RenderOptions,
) -> io::Result<()> {
    let line = match verdict(diff) {
        "identical" => paint(
            options,
            Tone::Good,
            "identical: every shared request is the same",
        ),
        "expected_drift_only" => paint(options, Tone::Good, "only expected drift"),
        // Unexpected for no drift but A's steps B lacks: said so, not "drift". Where each has
        // steps the other lacks, none is shared and nothing held B's first request to A's last
        // (an agent without step keys), neither continues the other.
        _ if diff.drifts.is_empty()
            && diff.pairs.is_empty()
            && !diff.b_only.is_empty()
            && (0..a.steps().len()).all(|k| a.step_key(k).is_none()) =>
        {
            paint(
                options,
                Tone::Removed,
                "unexpected: A and B share no request (two sessions, neither a resume nor a fork of the other)",
            )
        }
        _ if diff.drifts.iter().all(|d| d.expected()) => paint(
            options,
            Tone::Removed,
            &format!(
                "unexpected: B lacks {} step(s) of A (give the earlier session as A)",
                diff.a_only.len()
            ),
        ),
        _ => paint(options, Tone::Removed, "unexpected drift"),
    };
    writeln!(out, "{line}")?;
    writeln!(
        out,
        "A {} ({} steps)\nB {} ({} steps)\n{} aligned steps",
        escape_line(a.name()),
        a.steps().len(),
        escape_line(b.name()),
        b.steps().len(),
        diff.pairs.len()
    )?;
    // B continues A only when it holds all of A; otherwise its extra steps are just its own.
    if !diff.b_only.is_empty() && diff.a_only.is_empty() {
        match b.copy_of(a) {
            Some(copy) => writeln!(out, "B is {copy} with {} more step(s)", diff.b_only.len())?,
            None => writeln!(out, "B continues A with {} more step(s)", diff.b_only.len())?,
        }
    } else if !diff.b_only.is_empty() {
        writeln!(out, "{} step(s) of B are not in A", diff.b_only.len())?;
    }
    if !diff.a_only.is_empty() && diff.drifts.iter().any(|d| !d.expected()) {
        write_painted(
            out,
            options,
            Tone::Removed,
            &format!("{} step(s) of A are missing from B", diff.a_only.len()),
        )?;
    }
    if let Some(prefix) = diff.common_prefix {
        let at = step_ref(a, prefix.a_step);
        writeln!(
            out,
            "first difference at turn {} step {}: common prefix {} input items{}",
            at.turn,
            at.step,
            prefix.items,
            prefix
                .tokens
                .map(|t| format!(", about {t} tokens"))
                .unwrap_or_default()
        )?;
    }
    for drift in &diff.drifts {
        writeln!(out)?;
        write_drift(out, a, b, drift, options)?;
    }
    Ok(())
}

fn write_drift<S: AgentSession>(
    out: &mut dyn Write,
    a: &S,
    b: &S,
    drift: &Drift,
    options: &RenderOptions,
) -> io::Result<()> {
    let at = step_ref(a, drift.a_step);
    let bt = step_ref(b, drift.b_step);
    let expected = if drift.possible {
        "possible"
    } else if drift.expected() {
        "expected"
    } else {
        "UNEXPECTED"
    };
    let tone = if drift.expected() {
        Tone::Good
    } else {
        Tone::Removed
    };
    let index = drift
        .input_index
        .map(|i| format!(", input item {i}"))
        .unwrap_or_default();
    let where_b = if (at.turn, at.step) == (bt.turn, bt.step) {
        String::new()
    } else {
        format!(" (B turn {} step {})", bt.turn, bt.step)
    };
    writeln!(
        out,
        "{} {} [{}] {}: turn {} step {}{}{}",
        paint(options, tone, &format!("{expected:<10}")),
        paint(options, Tone::Heading, drift.class.name()),
        drift.component,
        if drift.steps_affected > 1 {
            format!("{} steps", drift.steps_affected)
        } else {
            "1 step".to_string()
        },
        at.turn,
        at.step,
        where_b,
        index
    )?;
    writeln!(out, "  {}", escape_line(&drift.detail))?;
    if let Some((left, right)) = &drift.evidence {
        write_text_diff(out, left, right, options)?;
    }
    Ok(())
}

const MAX_DIFF_LINES: usize = 40;

/// A line diff with `-`/`+` markers; with colour, the changed words inside a line are emphasised.
pub fn write_text_diff(
    out: &mut dyn Write,
    left: &str,
    right: &str,
    options: &RenderOptions,
) -> io::Result<()> {
    let diff = TextDiff::from_lines(left, right);
    let mut printed = 0;
    for group in diff.grouped_ops(2) {
        writeln!(out, "  {}", paint(options, Tone::Dim, "@@"))?;
        for op in group {
            for change in diff.iter_inline_changes(&op) {
                if printed >= MAX_DIFF_LINES {
                    writeln!(out, "  … (diff cut at {MAX_DIFF_LINES} lines)")?;
                    return Ok(());
                }
                printed += 1;
                let (sign, tone) = match change.tag() {
                    ChangeTag::Delete => ("-", Some(Tone::Removed)),
                    ChangeTag::Insert => ("+", Some(Tone::Added)),
                    ChangeTag::Equal => (" ", None),
                };
                let mut text = String::new();
                for (emphasized, value) in change.iter_strings_lossy() {
                    let value = escape_line(value.trim_end_matches('\n')).into_owned();
                    let value = crate::core::sanitize::truncate(
                        &value,
                        options.width.max(40).saturating_mul(2),
                    )
                    .into_owned();
                    match (tone, emphasized && options.color) {
                        (Some(t), true) => {
                            use owo_colors::OwoColorize;
                            let painted = match t {
                                Tone::Removed => value.on_red().to_string(),
                                _ => value.on_green().to_string(),
                            };
                            text.push_str(&painted);
                        }
                        (Some(t), false) => text.push_str(&paint(options, t, &value)),
                        (None, _) => text.push_str(&value),
                    }
                }
                let sign = tone.map_or(sign.to_string(), |t| paint(options, t, sign));
                writeln!(out, "  {sign} {text}")?;
            }
        }
    }
    Ok(())
}

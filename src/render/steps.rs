//! `steps` output: one row per step (its request, its usage, the cache verdict), as a text table
//! or JSON, and a summary; `watch` writes the same rows as they become final.

use std::io::{self, Write};

use serde::Serialize;

use super::cells::{TABLE_BLOCK, push_left, push_number, push_percent};
use super::header::write_header;
use super::{RenderOptions, Tone, paint, write_json, write_painted};
use crate::AgentSession;
use crate::cache::StepCache;
use crate::core::sanitize::{escape_line, truncate};
use crate::fingerprint::Plan;

/// The `steps` table's lines of `rows`. The model and effort cells are escaped once for each
/// run of steps that share them, and rows are pushed piece by piece without the formatter:
/// the rows of a 7 000-step file were 11 ms of `steps` at 100 MB, most of it in allocations
/// and formatting of pieces.
pub(crate) fn step_rows<S: AgentSession>(
    session: &S,
    plan: &Plan,
    rows: &[StepCache],
    options: &RenderOptions,
) -> String {
    let mut lines = String::new();
    let mut context_cells: Option<(&str, &str, String, String)> = None;
    let writes = session.cache_model().reports_writes();
    let incremental_possible = session.incremental_possible();
    for r in rows {
        let row_start = lines.len();
        let s = &session.steps()[r.step];
        let turn = &session.turns()[s.turn];
        let model = session.step_model(r.step).unwrap_or("-");
        let effort = session.step_effort(r.step).unwrap_or("-");
        let (_, _, model_cell, effort_cell) = match context_cells.take() {
            Some(cells) if cells.0 == model && cells.1 == effort => context_cells.insert(cells),
            _ => context_cells.insert((
                model,
                effort,
                truncate(&escape_line(model), if writes { 24 } else { 16 }).into_owned(),
                truncate(&escape_line(effort), 7).into_owned(),
            )),
        };
        let tone = match r.verdict {
            crate::cache::Verdict::Hit | crate::cache::Verdict::First => Tone::Good,
            crate::cache::Verdict::Compaction | crate::cache::Verdict::Rollback => Tone::Dim,
            _ => Tone::Warning,
        };
        let mut verdict = r.short();
        if s.compaction {
            verdict.insert_str(0, "compaction request; ");
        }
        if incremental_possible
            && !r.incremental
            && r.verdict != crate::cache::Verdict::First
            && let Some(reason) = &r.chain_break
        {
            verdict.push_str(&format!(" (no incremental: {reason})"));
        }
        push_number(&mut lines, Some(turn.number), 4);
        push_number(&mut lines, Some(s.number), 4);
        if writes {
            push_left(&mut lines, model_cell, 24);
        } else {
            push_left(&mut lines, model_cell, 16);
            push_left(&mut lines, effort_cell, 7);
        }
        // A compaction request sends the checkpoint prompt after the history.
        push_number(
            &mut lines,
            Some(plan.views[r.step].1 + session.compaction_prompt_items(r.step)),
            5,
        );
        if writes {
            // A provider that counts reads and writes apart from the uncached input
            // (Anthropic) is shown in its own terms.
            let written = r.observed_cache_write;
            let uncached = r.observed_input.map(|i| {
                i.saturating_sub(r.observed_cached.unwrap_or(0))
                    .saturating_sub(written.unwrap_or(0))
            });
            let hour = r.observed_cache_write_1h;
            push_number(&mut lines, uncached, 8);
            push_number(
                &mut lines,
                written.map(|w| w.saturating_sub(hour.unwrap_or(0))),
                8,
            );
            push_number(&mut lines, written.map(|_| hour.unwrap_or(0)), 8);
        } else {
            let estimated = plan.estimate_tokens.then_some(r.estimated_input);
            push_number(&mut lines, estimated, 7);
            push_number(&mut lines, r.observed_input, 8);
        }
        push_number(&mut lines, r.observed_cached, 8);
        match r.hit_rate() {
            Some(h) => push_percent(&mut lines, h),
            None => lines.push_str("    - "),
        }
        // An automatic cache's prediction is made of estimates; a breakpoint cache's is the
        // previous request's own count.
        let predicted = if session.cache_model().keyed_on_breakpoints() {
            r.predicted_cached
        } else {
            plan.estimate_tokens.then_some(r.predicted_cached).flatten()
        };
        push_number(&mut lines, predicted, 8);
        if incremental_possible {
            push_left(&mut lines, if r.incremental { "yes" } else { "no" }, 3);
        }
        lines.push(' ');
        let room = options
            .width
            .saturating_sub(lines[row_start..].chars().count())
            .max(16);
        lines.push_str(&paint(options, tone, &truncate(&verdict, room)));
        lines.push('\n');
    }
    lines
}

#[derive(Serialize)]
struct StepsDocument<'a> {
    schema_version: u32,
    file: &'a str,
    tokens_estimated: bool,
    steps: Vec<StepRowDocument<'a>>,
    summary: SummaryDocument,
}

#[derive(Serialize)]
pub(crate) struct StepRowDocument<'a> {
    turn: usize,
    step: usize,
    turn_id: Option<&'a str>,
    model: Option<&'a str>,
    effort: Option<&'a str>,
    /// A compaction request (only written when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    compaction: bool,
    input_items: usize,
    estimated_input_tokens: usize,
    observed_input_tokens: Option<u64>,
    observed_cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
    hit_rate: Option<f64>,
    shared_prefix_items: usize,
    shared_prefix_tokens: usize,
    predicted_cached_tokens: Option<usize>,
    verdict: &'static str,
    explanation: String,
    /// `null` where the agent's API has no incremental request (Claude Code's).
    incremental: Option<bool>,
    chain_break: Option<&'a str>,
    lost_tokens: u64,
    /// Where the prefix broke, in the agent's terms (`system[1]`, `messages[3].content[0]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    break_at: Option<&'a str>,
    /// The provider's own counts, where they are not OpenAI's (Anthropic's, whose reads and
    /// writes are apart from `input_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<ProviderUsage>,
    /// A cache keyed on breakpoints: the breakpoints the request sent, and the last block
    /// (position in the prompt, tools first) the cache held a prefix up to.
    #[serde(skip_serializing_if = "Option::is_none")]
    breakpoints: Option<Breakpoints>,
}

/// Anthropic's usage of one request, as its response reports it.
#[derive(Serialize)]
pub(crate) struct ProviderUsage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_creation_5m_input_tokens: Option<u64>,
    cache_creation_1h_input_tokens: Option<u64>,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

#[derive(Serialize)]
pub(crate) struct Breakpoints {
    count: usize,
    read_block: Option<usize>,
}

#[derive(Serialize)]
struct SummaryDocument {
    steps: usize,
    observed_steps: usize,
    input_tokens: u64,
    cached_tokens: u64,
    hit_rate: Option<f64>,
    lost_tokens_by_cause: Vec<(String, u64)>,
    /// Tokens written to the cache, where the provider reports them apart (Anthropic).
    #[serde(skip_serializing_if = "Option::is_none")]
    written_tokens: Option<u64>,
}

fn summary(rows: &[StepCache], writes: bool) -> SummaryDocument {
    // One pass: a row is 272 bytes, and a pass over the rows of a 1 GB transcript took 3 ms.
    let (mut observed, mut input, mut cached, mut written) = (0, 0u64, 0u64, 0u64);
    let mut lost: Vec<(&'static str, u64)> = Vec::new();
    for row in rows {
        if let Some(i) = row.observed_input {
            observed += 1;
            input += i;
            cached += row.observed_cached.unwrap_or(0);
            written += row.observed_cache_write.unwrap_or(0);
        }
        if row.lost_tokens > 0 {
            let cause = row.verdict.name();
            match lost.iter_mut().find(|(c, _)| *c == cause) {
                Some((_, total)) => *total += row.lost_tokens,
                None => lost.push((cause, row.lost_tokens)),
            }
        }
    }
    lost.sort();
    SummaryDocument {
        steps: rows.len(),
        observed_steps: observed,
        input_tokens: input,
        cached_tokens: cached,
        hit_rate: (input > 0).then(|| cached as f64 / input as f64),
        lost_tokens_by_cause: lost
            .into_iter()
            .map(|(cause, tokens)| (cause.to_string(), tokens))
            .collect(),
        written_tokens: writes.then_some(written),
    }
}

/// One row of `steps --format json` (and of `watch`'s step events).
pub(crate) fn step_row_document<'a, S: AgentSession>(
    session: &'a S,
    plan: &'a Plan,
    r: &'a StepCache,
) -> StepRowDocument<'a> {
    let s = &session.steps()[r.step];
    let turn = &session.turns()[s.turn];
    StepRowDocument {
        turn: turn.number,
        step: s.number,
        turn_id: turn.turn_id.as_deref(),
        model: session.step_model(r.step),
        effort: session.step_effort(r.step),
        compaction: s.compaction,
        input_items: plan.views[r.step].1 + session.compaction_prompt_items(r.step),
        estimated_input_tokens: r.estimated_input,
        observed_input_tokens: r.observed_input,
        observed_cached_tokens: r.observed_cached,
        cache_write_tokens: r.observed_cache_write,
        hit_rate: round3(r.hit_rate()),
        shared_prefix_items: r.shared_items,
        shared_prefix_tokens: r.shared_tokens,
        predicted_cached_tokens: r.predicted_cached,
        verdict: r.verdict.name(),
        explanation: r.explain(),
        incremental: session.incremental_possible().then_some(r.incremental),
        chain_break: r.chain_break.as_deref(),
        lost_tokens: r.lost_tokens,
        break_at: r.location.as_deref(),
        usage: s
            .usage
            .as_ref()
            .filter(|_| session.cache_model().reports_writes())
            .map(|o| {
                let u = &o.usage;
                let written = u.cache_write_input_tokens.unwrap_or(0);
                ProviderUsage {
                    input_tokens: u
                        .input_tokens
                        .saturating_sub(u.cached_input_tokens)
                        .saturating_sub(written),
                    cache_creation_input_tokens: written,
                    cache_creation_5m_input_tokens: u
                        .cache_write_1h_input_tokens
                        .map(|h| written.saturating_sub(h)),
                    cache_creation_1h_input_tokens: u.cache_write_1h_input_tokens,
                    cache_read_input_tokens: u.cached_input_tokens,
                    output_tokens: u.output_tokens,
                }
            }),
        breakpoints: session
            .cache_model()
            .keyed_on_breakpoints()
            .then_some(Breakpoints {
                count: r.breakpoints,
                read_block: r.read_block,
            }),
    }
}

fn round3(value: Option<f64>) -> Option<f64> {
    value.map(|v| (v * 1000.0).round() / 1000.0)
}

/// `steps` output.
pub fn write_steps<S: AgentSession>(
    out: &mut dyn Write,
    session: &S,
    plan: &Plan,
    rows: &[StepCache],
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    let summary = summary(rows, session.cache_model().reports_writes());
    if json {
        let document = StepsDocument {
            schema_version: crate::SCHEMA_VERSION,
            file: session.name(),
            tokens_estimated: plan.estimate_tokens,
            steps: rows
                .iter()
                .map(|r| step_row_document(session, plan, r))
                .collect(),
            summary: SummaryDocument {
                hit_rate: round3(summary.hit_rate),
                ..summary
            },
        };
        return write_json(out, &document);
    }
    write_header(out, session, options)?;
    writeln!(out)?;
    write_painted(
        out,
        options,
        Tone::Heading,
        &steps_heading(session.cache_model().reports_writes()),
    )?;
    for block in crate::core::parallel::map_blocks(rows.len(), TABLE_BLOCK, plan.threads, |range| {
        step_rows(session, plan, &rows[range], options)
    }) {
        out.write_all(block.as_bytes())?;
    }
    write_steps_summary(out, &summary, options)
}

/// The heading of `steps`' table (and `watch`'s): the estimated input, or the tokens written
/// to the cache where the provider reports them.
pub(crate) fn steps_heading(writes: bool) -> String {
    if writes {
        return format!(
            "{:>4} {:>4} {:<24} {:>5} {:>8} {:>8} {:>8} {:>8} {:>5} {:>8}  {}",
            "turn",
            "step",
            "model",
            "items",
            "input",
            "write5m",
            "write1h",
            "read",
            "hit",
            "predict",
            "verdict"
        );
    }
    format!(
        "{:>4} {:>4} {:<16} {:<7} {:>5} {:>7} {:>8} {:>8} {:>5} {:>8} {:<3}  {}",
        "turn",
        "step",
        "model",
        "effort",
        "items",
        "est.in",
        "obs.in",
        "cached",
        "hit",
        "predict",
        "inc",
        "verdict"
    )
}

fn write_steps_summary(
    out: &mut dyn Write,
    summary: &SummaryDocument,
    options: &RenderOptions,
) -> io::Result<()> {
    writeln!(out)?;
    let rate = summary
        .hit_rate
        .map_or("-".to_string(), |h| format!("{:.1}%", h * 100.0));
    let (input, cached, written) = match summary.written_tokens {
        // Anthropic's terms: the whole prompt, and what was read from and written to the cache.
        Some(written) => ("prompt", "read", format!(", written {written}")),
        None => ("input", "cached", String::new()),
    };
    writeln!(
        out,
        "{} {} steps ({} with usage), {input} {} tokens, {cached} {}{written}, hit rate {rate}",
        paint(options, Tone::Heading, "summary"),
        summary.steps,
        summary.observed_steps,
        summary.input_tokens,
        summary.cached_tokens,
    )?;
    for (cause, tokens) in &summary.lost_tokens_by_cause {
        writeln!(out, "  lost to {cause}: {tokens} tokens")?;
    }
    Ok(())
}

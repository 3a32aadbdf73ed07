//! `compile`, `fingerprint` and `steps` output.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::view::write_header;
use super::{RenderOptions, Tone, paint, raw_json, write_json};
use crate::agents::codex::compile::{CompiledRequest, RequestParts, Rule, compile};
use crate::agents::codex::rules::request_shape;
use crate::agents::codex::session::Session;
use crate::cache::StepCache;
use crate::core::hash::push_hex;
use crate::core::sanitize::{escape_block, escape_line, truncate};
use crate::fingerprint::{Fingerprint, Plan, hex};

/// What `compile` is given beyond the plan.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// `--output-schema FILE`, compact JSON: the schema `codex exec --output-schema` sends as
    /// `text.format`, which most builds do not record.
    pub output_schema: Option<String>,
}

/// Compile the request of one step from a plan.
pub fn compile_step(
    session: &Session,
    plan: &Plan,
    step: usize,
    options: &CompileOptions,
) -> CompiledRequest {
    let view = plan.view(step);
    let texts: Vec<&str> = view.iter().map(|e| session.view_json(e)).collect();
    let (instructions, instructions_source) = &plan.instructions[step];
    let shape = request_shape(session, step);
    let mut compiled = compile(&RequestParts {
        instructions: instructions.as_deref(),
        instructions_source: *instructions_source,
        input: &texts,
        tools: &plan.tools,
        context: session.step_context(step),
        prompt_cache_key: session.rollout.meta.as_ref().and_then(|m| m.id.as_deref()),
        shape: &shape,
        output_schema: options.output_schema.as_deref(),
        compaction: session.replay.steps[step].compaction,
    });
    let rebuilt = session.replay.step_history(step).iter().any(|e| {
        matches!(
            e.origin,
            crate::agents::codex::replay::EntryOrigin::Approximate
                | crate::agents::codex::replay::EntryOrigin::Rebuilt
                | crate::agents::codex::replay::EntryOrigin::Summary
        )
    });
    if rebuilt {
        compiled.approximations.push((
            "input",
            "rebuilt from a compaction without replacement_history: Codex re-creates the \
             initial context from its config at resume time",
        ));
    }
    if session.replay.steps[step].compaction && remote_compaction(session, step) {
        compiled.approximations.push((
            "input",
            "a remote compaction (its history holds a `compaction` item): Codex sent it to \
             /responses/compact, whose body was not recorded; shown as a local compaction request",
        ));
    }
    if let Some(fork) = &session.fork
        && fork.parent.is_none()
    {
        compiled.approximations.push((
            "input",
            "a fork whose parent rollout was not found: Codex sends the parent's history first, \
             and it is missing here",
        ));
    }
    compiled
}

/// Whether the compaction a step requested left a `compaction` item (an encrypted summary from
/// the provider's compact endpoint) in the history that replaced it.
fn remote_compaction(session: &Session, step: usize) -> bool {
    let epoch = session.replay.steps[step].epoch + 1;
    epoch < session.replay.epochs.len()
        && session.replay.epoch(epoch).iter().any(|entry| {
            session.replay.item(&session.rollout, entry.item).kind
                == crate::agents::codex::model::ItemKind::Compaction
        })
}

/// A fingerprint in JSON: hex strings, `null` for unknown components.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FingerprintDocument {
    pub request: String,
    pub instructions: Option<String>,
    pub tools: Option<String>,
    pub tools_canonical: Option<String>,
    pub params: String,
    pub prompt_cache_key: Option<String>,
    pub checkpoint: Option<String>,
    pub input: String,
    pub input_items: usize,
    /// Components that are not known: the request fingerprint is partial when this is not empty.
    #[serde(default)]
    pub unknown: Vec<String>,
}

impl FingerprintDocument {
    /// From a fingerprint.
    pub fn new(fingerprint: &Fingerprint) -> FingerprintDocument {
        FingerprintDocument {
            request: hex(&fingerprint.request),
            instructions: fingerprint.instructions.as_ref().map(hex),
            tools: fingerprint.tools.as_ref().map(hex),
            tools_canonical: fingerprint.tools_canonical.as_ref().map(hex),
            params: hex(&fingerprint.params),
            prompt_cache_key: fingerprint.prompt_cache_key.as_ref().map(hex),
            checkpoint: fingerprint.checkpoint.as_ref().map(hex),
            input: hex(&fingerprint.input),
            input_items: fingerprint.input_items,
            unknown: fingerprint
                .unknown()
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct Approximation {
    part: &'static str,
    reason: &'static str,
}

/// The build generation whose rules shaped a compiled request.
#[derive(Serialize)]
struct BuildDocument {
    generation: &'static str,
    evidence: &'static str,
    case: &'static str,
}

#[derive(Serialize)]
struct RuleDocument {
    part: &'static str,
    rule: &'static str,
    case: &'static str,
}

#[derive(Serialize)]
struct CompileDocument<'a> {
    schema_version: u32,
    file: &'a str,
    turn: usize,
    step: usize,
    turn_id: Option<&'a str>,
    pending: bool,
    instructions_source: &'static str,
    tool_generation: Option<String>,
    request: &'a RawValue,
    fingerprint: FingerprintDocument,
    input_items: Vec<InputItemDocument>,
    approximations: Vec<Approximation>,
    /// `null` when no recorded build's turn_context matches: the generic shape.
    codex_build: Option<BuildDocument>,
    rules: Vec<RuleDocument>,
}

#[derive(Serialize)]
struct InputItemDocument {
    index: usize,
    origin: &'static str,
    hash: String,
    chain: String,
    canonical: String,
}

/// `compile --format json`.
pub fn write_compile_json(
    out: &mut dyn Write,
    session: &Session,
    plan: &Plan,
    step: usize,
) -> io::Result<()> {
    write_compile_json_with(out, session, plan, step, &CompileOptions::default())
}

/// `compile --format json` with [`CompileOptions`].
pub fn write_compile_json_with(
    out: &mut dyn Write,
    session: &Session,
    plan: &Plan,
    step: usize,
    compile_options: &CompileOptions,
) -> io::Result<()> {
    let compiled = compile_step(session, plan, step, compile_options);
    let s = &session.replay.steps[step];
    let turn = &session.replay.turns[s.turn];
    let fingerprint = &plan.fingerprints[step];
    let input_items = plan
        .view(step)
        .iter()
        .enumerate()
        .map(|(index, entry)| InputItemDocument {
            index,
            origin: match entry.origin {
                crate::agents::codex::normalize::Origin::Raw(_) => "raw",
                crate::agents::codex::normalize::Origin::Synthetic { .. } => "synthetic",
            },
            hash: hex(plan.item_hash(step, index)),
            chain: hex(plan.chain(step, index + 1)),
            canonical: hex(&crate::fingerprint::canonical_item_hash(
                session.view_json(entry),
            )),
        })
        .collect();
    let document = CompileDocument {
        schema_version: crate::SCHEMA_VERSION,
        file: &session.rollout.name,
        turn: turn.number,
        step: s.number,
        turn_id: turn.turn_id.as_deref(),
        pending: s.pending,
        instructions_source: plan.instructions[step].1.name(),
        tool_generation: fingerprint.tools.as_ref().map(hex),
        request: raw_json(&compiled.body),
        fingerprint: FingerprintDocument::new(fingerprint),
        input_items,
        approximations: compiled
            .approximations
            .iter()
            .map(|(part, reason)| Approximation { part, reason })
            .collect(),
        codex_build: compiled.build.map(|b| BuildDocument {
            generation: b.name(),
            evidence: b.evidence(),
            case: b.case(),
        }),
        rules: compiled
            .rules
            .iter()
            .map(|&Rule { part, rule, case }| RuleDocument { part, rule, case })
            .collect(),
    };
    write_json(out, &document)
}

const FOLD_CHARS: usize = 400;

/// Pretty-print a JSON value with long strings folded (unless `full`), escaped for a terminal.
fn pretty(value: &Value, full: bool) -> String {
    fn fold(value: &Value, full: bool) -> Value {
        match value {
            Value::String(s) if !full && s.chars().count() > FOLD_CHARS => {
                let head: String = s.chars().take(FOLD_CHARS).collect();
                Value::String(format!("{head}… [{} more bytes]", s.len() - head.len()))
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| fold(v, full)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), fold(v, full)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let folded = fold(value, full);
    let text = serde_json::to_string_pretty(&folded).unwrap_or_default();
    escape_block(&text).into_owned()
}

/// `compile` as text.
pub fn write_compile_text(
    out: &mut dyn Write,
    session: &Session,
    plan: &Plan,
    step: usize,
    options: &RenderOptions,
) -> io::Result<()> {
    write_compile_text_with(
        out,
        session,
        plan,
        step,
        options,
        &CompileOptions::default(),
    )
}

/// `compile` as text with [`CompileOptions`].
pub fn write_compile_text_with(
    out: &mut dyn Write,
    session: &Session,
    plan: &Plan,
    step: usize,
    options: &RenderOptions,
    compile_options: &CompileOptions,
) -> io::Result<()> {
    write_header(out, session, options)?;
    let compiled = compile_step(session, plan, step, compile_options);
    writeln!(
        out,
        "{} {}",
        paint(options, Tone::Dim, "request  "),
        super::view::step_label(session, step)
    )?;
    writeln!(
        out,
        "{} {}",
        paint(options, Tone::Dim, "instr.   "),
        plan.instructions[step].1.name()
    )?;
    match compiled.build {
        Some(build) => writeln!(
            out,
            "{} Codex {} ({}; {})",
            paint(options, Tone::Dim, "shape    "),
            build.name(),
            build.evidence(),
            build.case()
        )?,
        None => writeln!(
            out,
            "{} generic (no recorded Codex build wrote this turn_context)",
            paint(options, Tone::Dim, "shape    ")
        )?,
    }
    for Rule { part, rule, case } in &compiled.rules {
        writeln!(
            out,
            "{} {part}: {rule} ({case})",
            paint(options, Tone::Dim, "rule     ")
        )?;
    }
    for (part, reason) in &compiled.approximations {
        writeln!(
            out,
            "{} {part}: {reason}",
            paint(options, Tone::Warning, "unknown  ")
        )?;
    }
    writeln!(out)?;
    write_fingerprint_block(out, &plan.fingerprints[step], options)?;
    writeln!(out)?;
    let value: Value = serde_json::from_str(&compiled.body).unwrap_or(Value::Null);
    writeln!(out, "{}", pretty(&value, options.full))?;
    Ok(())
}

fn write_fingerprint_block(
    out: &mut dyn Write,
    fp: &Fingerprint,
    options: &RenderOptions,
) -> io::Result<()> {
    let unknown = fp.unknown();
    let partial = if unknown.is_empty() {
        String::new()
    } else {
        format!(" (partial: {} unknown)", unknown.join(", "))
    };
    let or_unknown =
        |h: &Option<crate::fingerprint::Hash>| h.as_ref().map_or("unknown".to_string(), hex);
    writeln!(out, "{}", paint(options, Tone::Heading, "FINGERPRINT"))?;
    writeln!(out, "  request           {}{partial}", hex(&fp.request))?;
    writeln!(out, "  instructions      {}", or_unknown(&fp.instructions))?;
    writeln!(out, "  tools             {}", or_unknown(&fp.tools))?;
    writeln!(out, "  params            {}", hex(&fp.params))?;
    writeln!(
        out,
        "  prompt_cache_key  {}",
        or_unknown(&fp.prompt_cache_key)
    )?;
    writeln!(
        out,
        "  checkpoint        {}",
        fp.checkpoint.as_ref().map_or("none".to_string(), hex)
    )?;
    writeln!(
        out,
        "  input             {} ({} items)",
        hex(&fp.input),
        fp.input_items
    )?;
    Ok(())
}

#[derive(Serialize)]
struct FingerprintStepDocument<'a> {
    turn: usize,
    step: usize,
    turn_id: Option<&'a str>,
    pending: bool,
    fingerprint: FingerprintDocument,
}

#[derive(Serialize)]
struct FingerprintListDocument<'a> {
    schema_version: u32,
    file: &'a str,
    steps: Vec<FingerprintStepDocument<'a>>,
}

/// `fingerprint` for the given steps.
pub fn write_fingerprints(
    out: &mut dyn Write,
    session: &Session,
    plan: &Plan,
    steps: &[usize],
    json: bool,
) -> io::Result<()> {
    if json {
        let document = FingerprintListDocument {
            schema_version: crate::SCHEMA_VERSION,
            file: &session.rollout.name,
            steps: steps
                .iter()
                .map(|&k| {
                    let s = &session.replay.steps[k];
                    let turn = &session.replay.turns[s.turn];
                    FingerprintStepDocument {
                        turn: turn.number,
                        step: s.number,
                        turn_id: turn.turn_id.as_deref(),
                        pending: s.pending,
                        fingerprint: FingerprintDocument::new(&plan.fingerprints[k]),
                    }
                })
                .collect(),
        };
        return write_json(out, &document);
    }
    writeln!(
        out,
        "turn step request                          input                            items  unknown"
    )?;
    for block in
        crate::core::parallel::map_blocks(steps.len(), TABLE_BLOCK, plan.threads, |range| {
            fingerprint_lines(session, plan, &steps[range])
        })
    {
        out.write_all(block.as_bytes())?;
    }
    Ok(())
}

/// Rows of a text table written as one task, on the plan's threads, the tasks in order: the
/// rows of a 2 000-step `steps` table took 2.2 ms on one thread, 1.7 ms on two. Unit tests use
/// short blocks, so that their small sessions span several; tests/cli/fuzz_bodies.rs runs 512.
const TABLE_BLOCK: usize = if cfg!(test) { 4 } else { 512 };

/// The `fingerprint` table's lines of `steps`, pushed piece by piece into one buffer: a line
/// of a 7 000-step file cost three allocations and a formatted write of each piece, 3-4 ms of
/// `fingerprint` at 100 MB.
fn fingerprint_lines(session: &Session, plan: &Plan, steps: &[usize]) -> String {
    let mut lines = String::new();
    for &k in steps {
        let s = &session.replay.steps[k];
        let turn = &session.replay.turns[s.turn];
        let fp = &plan.fingerprints[k];
        push_number(&mut lines, Some(turn.number), 4);
        push_number(&mut lines, Some(s.number), 4);
        push_hex(&mut lines, &fp.request);
        lines.push(' ');
        push_hex(&mut lines, &fp.input);
        lines.push(' ');
        push_number(&mut lines, Some(fp.input_items), 6);
        lines.push(' ');
        let unknown = fp.unknown();
        if unknown.is_empty() {
            lines.push('-');
        } else {
            lines.push_str(&unknown.join(","));
        }
        lines.push('\n');
    }
    lines
}

/// The `steps` table's lines of `rows`. The model and effort cells are escaped once for each
/// run of steps that share them, and rows are pushed piece by piece without the formatter:
/// the rows of a 7 000-step file were 11 ms of `steps` at 100 MB, most of it in allocations
/// and formatting of pieces.
pub(crate) fn step_rows(
    session: &Session,
    plan: &Plan,
    rows: &[StepCache],
    options: &RenderOptions,
) -> String {
    let mut lines = String::new();
    let mut context_cells: Option<(&str, &str, String, String)> = None;
    for r in rows {
        let row_start = lines.len();
        let s = &session.replay.steps[r.step];
        let turn = &session.replay.turns[s.turn];
        let context = session.step_context(r.step);
        let model = context.and_then(|c| c.model.as_deref()).unwrap_or("-");
        let effort = context.and_then(|c| c.effort.as_deref()).unwrap_or("-");
        let (_, _, model_cell, effort_cell) = match context_cells.take() {
            Some(cells) if cells.0 == model && cells.1 == effort => context_cells.insert(cells),
            _ => context_cells.insert((
                model,
                effort,
                truncate(&escape_line(model), 16).into_owned(),
                truncate(&escape_line(effort), 7).into_owned(),
            )),
        };
        let tone = match r.verdict {
            crate::cache::Verdict::Hit | crate::cache::Verdict::First => Tone::Good,
            crate::cache::Verdict::Compaction | crate::cache::Verdict::Rollback => Tone::Dim,
            _ => Tone::Warning,
        };
        let mut verdict = r.verdict.short();
        if s.compaction {
            verdict.insert_str(0, "compaction request; ");
        }
        if !r.incremental
            && r.verdict != crate::cache::Verdict::First
            && let Some(reason) = &r.chain_break
        {
            verdict.push_str(&format!(" (no incremental: {reason})"));
        }
        push_number(&mut lines, Some(turn.number), 4);
        push_number(&mut lines, Some(s.number), 4);
        push_left(&mut lines, model_cell, 16);
        push_left(&mut lines, effort_cell, 7);
        // A compaction request sends the checkpoint prompt after the history.
        push_number(
            &mut lines,
            Some(plan.views[r.step].1 + usize::from(s.compaction)),
            5,
        );
        let estimated = plan.estimate_tokens.then_some(r.estimated_input);
        push_number(&mut lines, estimated, 7);
        push_number(&mut lines, r.observed_input, 8);
        push_number(&mut lines, r.observed_cached, 8);
        match r.hit_rate() {
            Some(h) => push_percent(&mut lines, h),
            None => lines.push_str("    - "),
        }
        let predicted = plan.estimate_tokens.then_some(r.predicted_cached);
        push_number(&mut lines, predicted, 8);
        push_left(&mut lines, if r.incremental { "yes" } else { "no" }, 3);
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

/// A number of a text table (`-` where there is none), padded as `{:>width$}` pads and followed
/// by one space, without the formatter: it writes padding a character at a time, and the rows
/// of a 7 000-step `steps` spent most of their time there.
fn push_number(row: &mut String, number: Option<impl itoa::Integer>, width: usize) {
    let mut digits = itoa::Buffer::new();
    let text = number.map_or("-", |n| digits.format(n));
    push_spaces(row, width.saturating_sub(text.len()));
    row.push_str(text);
    row.push(' ');
}

/// As `{:<width$}` then one space.
fn push_left(row: &mut String, text: &str, width: usize) {
    row.push_str(text);
    push_spaces(row, width.saturating_sub(text.chars().count()));
    row.push(' ');
}

/// `rate` as `{:>4.0}%` writes it, then a space. Rounding to an integer, ties to even, is
/// what `{:.0}` prints of a finite value that is not negative (a hit rate is a ratio of
/// counts); the float formatter cost a quarter of a row.
fn push_percent(row: &mut String, rate: f64) {
    let percent = (rate * 100.0).round_ties_even();
    // Within u64 and exact as an integer; beyond, and for -0, the formatter writes what it
    // writes.
    if percent.is_sign_positive() && percent < 1e15 {
        let mut digits = itoa::Buffer::new();
        let text = digits.format(percent as u64);
        push_spaces(row, 4usize.saturating_sub(text.len()));
        row.push_str(text);
        row.push_str("% ");
    } else {
        let _ = write!(row, "{:>4.0}% ", rate * 100.0);
    }
}

fn push_spaces(row: &mut String, count: usize) {
    const SPACES: &str = "                ";
    let mut left = count;
    while left > 0 {
        let now = left.min(SPACES.len());
        row.push_str(&SPACES[..now]);
        left -= now;
    }
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
    predicted_cached_tokens: usize,
    verdict: &'static str,
    explanation: String,
    incremental: bool,
    chain_break: Option<&'a str>,
    lost_tokens: u64,
}

#[derive(Serialize)]
struct SummaryDocument {
    steps: usize,
    observed_steps: usize,
    input_tokens: u64,
    cached_tokens: u64,
    hit_rate: Option<f64>,
    lost_tokens_by_cause: Vec<(String, u64)>,
}

fn summary(rows: &[StepCache]) -> SummaryDocument {
    let observed: Vec<&StepCache> = rows.iter().filter(|r| r.observed_input.is_some()).collect();
    let input: u64 = observed.iter().filter_map(|r| r.observed_input).sum();
    let cached: u64 = observed.iter().filter_map(|r| r.observed_cached).sum();
    let mut lost: Vec<(String, u64)> = Vec::new();
    for row in rows.iter().filter(|r| r.lost_tokens > 0) {
        let cause = row.verdict.name().to_string();
        match lost.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, total)) => *total += row.lost_tokens,
            None => lost.push((cause, row.lost_tokens)),
        }
    }
    lost.sort();
    SummaryDocument {
        steps: rows.len(),
        observed_steps: observed.len(),
        input_tokens: input,
        cached_tokens: cached,
        hit_rate: (input > 0).then(|| cached as f64 / input as f64),
        lost_tokens_by_cause: lost,
    }
}

/// One row of `steps --format json` (and of `watch`'s step events).
pub(crate) fn step_row_document<'a>(
    session: &'a Session,
    plan: &'a Plan,
    r: &'a StepCache,
) -> StepRowDocument<'a> {
    let s = &session.replay.steps[r.step];
    let turn = &session.replay.turns[s.turn];
    let context = session.step_context(r.step);
    StepRowDocument {
        turn: turn.number,
        step: s.number,
        turn_id: turn.turn_id.as_deref(),
        model: context.and_then(|c| c.model.as_deref()),
        effort: context.and_then(|c| c.effort.as_deref()),
        compaction: s.compaction,
        input_items: plan.views[r.step].1 + usize::from(s.compaction),
        estimated_input_tokens: r.estimated_input,
        observed_input_tokens: r.observed_input,
        observed_cached_tokens: r.observed_cached,
        cache_write_tokens: r.observed_cache_write,
        hit_rate: round3(r.hit_rate()),
        shared_prefix_items: r.shared_items,
        shared_prefix_tokens: r.shared_tokens,
        predicted_cached_tokens: r.predicted_cached,
        verdict: r.verdict.name(),
        explanation: r.verdict.explain(),
        incremental: r.incremental,
        chain_break: r.chain_break.as_deref(),
        lost_tokens: r.lost_tokens,
    }
}

fn round3(value: Option<f64>) -> Option<f64> {
    value.map(|v| (v * 1000.0).round() / 1000.0)
}

/// `steps` output.
pub fn write_steps(
    out: &mut dyn Write,
    session: &Session,
    plan: &Plan,
    rows: &[StepCache],
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    let summary = summary(rows);
    if json {
        let document = StepsDocument {
            schema_version: crate::SCHEMA_VERSION,
            file: &session.rollout.name,
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
    writeln!(out, "{}", paint(options, Tone::Heading, &steps_heading()))?;
    for block in crate::core::parallel::map_blocks(rows.len(), TABLE_BLOCK, plan.threads, |range| {
        step_rows(session, plan, &rows[range], options)
    }) {
        out.write_all(block.as_bytes())?;
    }
    write_steps_summary(out, &summary, options)
}

/// The heading of `steps`' table (and `watch`'s).
pub(crate) fn steps_heading() -> String {
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
    writeln!(
        out,
        "{} {} steps ({} with usage), input {} tokens, cached {}, hit rate {}",
        paint(options, Tone::Heading, "summary"),
        summary.steps,
        summary.observed_steps,
        summary.input_tokens,
        summary.cached_tokens,
        rate
    )?;
    for (cause, tokens) in &summary.lost_tokens_by_cause {
        writeln!(out, "  lost to {cause}: {tokens} tokens")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{fingerprint_lines, push_percent, step_rows, write_fingerprints, write_steps};
    use crate::core::parallel::Threads;
    use crate::fingerprint::{PlanOptions, plan};
    use crate::render::RenderOptions;

    /// The tables are written in blocks of steps (four long in tests, so that samples span
    /// many) on the plan's threads: on any thread count they are the one-block tables, and the
    /// analysis is each step's own.
    #[test]
    fn tables_do_not_depend_on_blocks_or_threads() {
        let mut sessions = crate::test_support::all_fixtures();
        sessions.extend(crate::test_support::real_samples());
        // Wide enough that verdicts with their reasons fit whole.
        let options = RenderOptions {
            width: 200,
            ..RenderOptions::default()
        };
        for (name, session) in &sessions {
            let steps: Vec<usize> = (0..session.replay.steps.len()).collect();
            let mut outputs = Vec::new();
            for threads in [1, 2, 3] {
                let plan = plan(
                    session,
                    &PlanOptions {
                        threads: Threads::new(threads),
                        ..PlanOptions::default()
                    },
                );
                let rows = crate::cache::analyze(session, &plan);
                let each_step: Vec<_> = steps
                    .iter()
                    .map(|&k| crate::cache::analyze_step(session, &plan, k))
                    .collect();
                assert_eq!(format!("{rows:?}"), format!("{each_step:?}"), "{name}");
                let mut text = Vec::new();
                write_steps(&mut text, session, &plan, &rows, false, &options).unwrap();
                let text = String::from_utf8(text).unwrap();
                let whole = step_rows(session, &plan, &rows, &options);
                assert!(
                    text.contains(&whole),
                    "{name}, {threads} threads: steps rows"
                );
                let mut fingerprints = Vec::new();
                write_fingerprints(&mut fingerprints, session, &plan, &steps, false).unwrap();
                let fingerprints = String::from_utf8(fingerprints).unwrap();
                let whole = fingerprint_lines(session, &plan, &steps);
                assert!(fingerprints.ends_with(&whole), "{name}: fingerprint lines");
                outputs.push((text, fingerprints));
            }
            assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{name}");
        }
    }

    /// Hit rates are written as the formatter writes them: ties to even, past 100 %, huge.
    #[test]
    fn percentages_are_what_the_formatter_writes() {
        let mut rates: Vec<f64> = vec![
            -0.0,
            -0.004,
            f64::NAN,
            f64::INFINITY,
            99.995,
            0.0,
            0.005,
            0.015,
            0.025,
            0.125,
            0.5,
            0.995,
            1.0,
            7.5,
            1e13,
            1e30,
        ];
        for input in 1u64..400 {
            for cached in 0..=input + 3 {
                rates.push(cached as f64 / input as f64);
            }
        }
        for rate in rates {
            let mut ours = String::new();
            push_percent(&mut ours, rate);
            assert_eq!(ours, format!("{:>4.0}% ", rate * 100.0), "{rate}");
        }
    }
}

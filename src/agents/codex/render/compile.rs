//! Codex's `compile` output: the request body of a step in the shape of the build that wrote
//! it, with the rules and approximations that shaped it, as text or JSON.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::AgentSession;
use crate::agents::codex::compile::{CompileOptions, Rule, compile_step};
use crate::agents::codex::session::Session;
use crate::core::sanitize::escape_block;
use crate::fingerprint::{Plan, hex};
use crate::render::fingerprint::{
    FingerprintDocument, InputItemDocument, input_items, write_fingerprint_block,
};
use crate::render::header::write_header;
use crate::render::{RenderOptions, Tone, paint, raw_json, write_json};

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
    let input_items = input_items(session, plan, step);
    let document = CompileDocument {
        schema_version: crate::SCHEMA_VERSION,
        file: session.name(),
        turn: turn.number,
        step: s.number,
        turn_id: turn.turn_id.as_deref(),
        pending: s.pending,
        instructions_source: crate::agents::codex::plan::codex(plan).instructions[step]
            .1
            .name(),
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
        session.step_label(step)
    )?;
    writeln!(
        out,
        "{} {}",
        paint(options, Tone::Dim, "instr.   "),
        crate::agents::codex::plan::codex(plan).instructions[step]
            .1
            .name()
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

//! Claude Code's own documents: `compile` (the body a build sends) as text or JSON, its `view`
//! (the transcript's lines beside the messages sent) and its history table on the session page.

pub mod page;
pub mod view;

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use crate::AgentSession;
use crate::agents::claude::session::Session;
use crate::agents::claude::wire::Compiled;
use crate::core::sanitize::escape_line;
use crate::fingerprint::Plan;
use crate::render::fingerprint::{
    FingerprintDocument, InputItemDocument, input_items, write_fingerprint_block,
};
use crate::render::{RenderOptions, Tone, paint, write_json};

#[derive(Serialize)]
struct CompileDocument<'a> {
    schema_version: u32,
    file: &'a str,
    agent: &'static str,
    turn: usize,
    step: usize,
    version: Option<&'a str>,
    /// 2.1.3xx: the rebuild's digest is the `requestDigest` the build recorded.
    verified: Option<bool>,
    request: &'a Value,
    /// The request's fingerprint, as `fingerprint` gives it (`input` the message blocks).
    fingerprint: FingerprintDocument,
    /// The message blocks, in order, as a rollout's `compile` lists its input items.
    input_items: Vec<InputItemDocument>,
    approximations: Vec<Value>,
    rules: Vec<Value>,
}

/// `compile`: the body of one request, with what it could not know, the rules it applied and
/// its fingerprint.
pub fn write_compile(
    out: &mut dyn Write,
    (session, plan, step): (&Session, &Plan, usize),
    compiled: &Compiled,
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    let t = &session.transcript;
    let fingerprint = &plan.fingerprints[step];
    let (turn, number) = {
        let s = &session.steps()[step];
        (session.turns()[s.turn].number, s.number)
    };
    let approximations: Vec<Value> = compiled
        .unknown
        .iter()
        .map(|u| serde_json::json!({"part": u.part, "reason": u.reason}))
        .collect();
    let rules: Vec<Value> = compiled
        .rules
        .iter()
        .map(|r| serde_json::json!({"part": r.part, "rule": r.rule, "case": r.case}))
        .collect();
    if json {
        let input_items = input_items(session, plan, step);
        return write_json(
            out,
            &CompileDocument {
                schema_version: crate::SCHEMA_VERSION,
                file: &t.name,
                agent: "claude",
                turn,
                step: number,
                version: compiled.version.as_deref(),
                verified: compiled.verified,
                request: &compiled.body,
                fingerprint: FingerprintDocument::new(fingerprint),
                input_items,
                approximations,
                rules,
            },
        );
    }
    let label = |name: &str| paint(options, Tone::Dim, &format!("{name:<9}"));
    writeln!(
        out,
        "{} {} (Claude Code transcript)",
        label("file"),
        escape_line(&t.name)
    )?;
    writeln!(
        out,
        "{} turn {turn} step {number}, claude-code {}",
        label("request"),
        escape_line(compiled.version.as_deref().unwrap_or("-"))
    )?;
    match compiled.verified {
        Some(true) => writeln!(
            out,
            "{} verified: the digest equals the recorded requestDigest",
            label("digest")
        )?,
        Some(false) => writeln!(
            out,
            "{} {}",
            label("digest"),
            paint(
                options,
                Tone::Warning,
                "differs from the recorded requestDigest: the rebuild is not what was sent"
            )
        )?,
        None => {}
    }
    for a in &compiled.unknown {
        writeln!(
            out,
            "{} {}: {}",
            label("unknown"),
            escape_line(&a.part),
            escape_line(&a.reason)
        )?;
    }
    for r in &compiled.rules {
        writeln!(
            out,
            "{} {}: {} ({})",
            label("rule"),
            escape_line(&r.part),
            escape_line(&r.rule),
            r.case
        )?;
    }
    writeln!(out)?;
    let body = serde_json::to_string_pretty(&compiled.body).map_err(io::Error::from)?;
    let body = crate::core::sanitize::escape_block(&body);
    writeln!(out, "{body}")?;
    writeln!(out)?;
    write_fingerprint_block(out, fingerprint, options)
}

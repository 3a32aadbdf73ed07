//! `diff` of two Claude Code transcripts, text and JSON.

use std::io::{self, Write};

use serde::Serialize;

use super::{RenderOptions, Tone, paint, write_json};
use crate::agents::claude::load::Transcript;
use crate::core::sanitize::escape_line;

#[derive(Serialize)]
struct DiffDocument<'a> {
    schema_version: u32,
    agent: &'static str,
    a: Side<'a>,
    b: Side<'a>,
    /// B's requests that are A's too (the same response ids: a copy, a fork, the same file).
    shared_requests: usize,
    /// B's first request of its own.
    b_first: Option<Position>,
    /// What B's first request read, against what A's last request left cached.
    cache: Option<CacheRead>,
    unexpected: usize,
    drifts: Vec<DriftDocument<'a>>,
}

#[derive(Serialize)]
struct Side<'a> {
    file: &'a str,
    requests: usize,
}

#[derive(Serialize)]
struct Position {
    turn: usize,
    step: usize,
}

#[derive(Serialize)]
struct CacheRead {
    read: u64,
    cached_by_a: u64,
}

#[derive(Serialize)]
struct DriftDocument<'a> {
    class: &'static str,
    part: &'a str,
    expected: bool,
    detail: &'a str,
    lines: &'a [String],
}

/// `diff` of two Claude Code transcripts.
pub fn write_diff(
    out: &mut dyn Write,
    a: &Transcript,
    b: &Transcript,
    d: &crate::agents::claude::compare::Comparison,
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    if json {
        return write_json(
            out,
            &DiffDocument {
                schema_version: crate::SCHEMA_VERSION,
                agent: "claude",
                a: Side {
                    file: &a.name,
                    requests: d.a_requests,
                },
                b: Side {
                    file: &b.name,
                    requests: d.b_requests,
                },
                shared_requests: d.shared,
                b_first: d.b_first.map(|(turn, step)| Position { turn, step }),
                cache: d
                    .read
                    .map(|(read, cached_by_a)| CacheRead { read, cached_by_a }),
                unexpected: d.unexpected(),
                drifts: d
                    .drifts
                    .iter()
                    .map(|x| DriftDocument {
                        class: x.class,
                        part: &x.part,
                        expected: x.expected,
                        detail: &x.detail,
                        lines: &x.lines,
                    })
                    .collect(),
            },
        );
    }
    let verdict = if d.b_first.is_none() {
        "B makes no request of its own"
    } else if d.drifts.is_empty() {
        "B continues A's prefix"
    } else if d.unexpected() == 0 {
        "only expected drift"
    } else {
        "unexpected drift"
    };
    writeln!(out, "{}", paint(options, Tone::Heading, verdict))?;
    writeln!(
        out,
        "A {} ({} requests)",
        escape_line(&a.name),
        d.a_requests
    )?;
    writeln!(
        out,
        "B {} ({} requests)",
        escape_line(&b.name),
        d.b_requests
    )?;
    if d.shared > 0 {
        writeln!(
            out,
            "{} of B's requests are A's (copied or the same file)",
            d.shared
        )?;
    }
    if let Some((turn, step)) = d.b_first {
        let read = d.read.map_or(String::new(), |(read, cached)| {
            format!(": read {read} of the {cached} tokens A's last request left cached")
        });
        writeln!(
            out,
            "B's first request of its own: turn {turn} step {step}{read}"
        )?;
    }
    for x in &d.drifts {
        writeln!(out)?;
        let label = if x.expected {
            "expected  "
        } else {
            "UNEXPECTED"
        };
        let tone = if x.expected { Tone::Dim } else { Tone::Warning };
        writeln!(
            out,
            "{} {} [{}]",
            paint(options, tone, label),
            x.class,
            escape_line(&x.part)
        )?;
        writeln!(out, "  {}", escape_line(&x.detail))?;
        for line in &x.lines {
            let tone = if line.starts_with('-') {
                Tone::Removed
            } else {
                Tone::Added
            };
            writeln!(out, "  {}", paint(options, tone, &escape_line(line)))?;
        }
    }
    Ok(())
}

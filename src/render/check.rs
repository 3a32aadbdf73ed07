//! `check` output.

use std::io::{self, Write};

use serde::Serialize;

use super::{RenderOptions, Tone, paint, write_json};
use crate::check::Finding;
use crate::core::sanitize::escape_line;

/// The outcome of checking one session's file.
#[derive(Debug, Clone)]
pub struct RolloutReport {
    pub name: String,
    /// What the file is, in the summary's words: `rollout` (Codex), `transcript` (Claude Code).
    pub kind: &'static str,
    pub steps: usize,
    /// Findings with the step rendered as `(turn, step)`.
    pub findings: Vec<(Finding, Option<(usize, usize)>)>,
}

#[derive(Serialize)]
struct CheckDocument<'a> {
    schema_version: u32,
    passed: bool,
    invariants: &'static [&'static str],
    rollouts: Vec<RolloutDocument<'a>>,
}

#[derive(Serialize)]
struct RolloutDocument<'a> {
    file: &'a str,
    steps: usize,
    passed: bool,
    failures: Vec<FailureDocument<'a>>,
}

#[derive(Serialize)]
struct FailureDocument<'a> {
    check: &'a str,
    turn: Option<usize>,
    step: Option<usize>,
    detail: &'a str,
}

/// Write the report.
pub fn write_check(
    out: &mut dyn Write,
    reports: &[RolloutReport],
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    if json {
        let document = CheckDocument {
            schema_version: crate::SCHEMA_VERSION,
            passed: reports.iter().all(|r| r.findings.is_empty()),
            invariants: crate::check::INVARIANTS,
            rollouts: reports
                .iter()
                .map(|r| RolloutDocument {
                    file: &r.name,
                    steps: r.steps,
                    passed: r.findings.is_empty(),
                    failures: r
                        .findings
                        .iter()
                        .map(|(f, at)| FailureDocument {
                            check: &f.name,
                            turn: at.map(|a| a.0),
                            step: at.map(|a| a.1),
                            detail: &f.detail,
                        })
                        .collect(),
                })
                .collect(),
        };
        return write_json(out, &document);
    }
    for report in reports {
        let status = if report.findings.is_empty() {
            paint(options, Tone::Good, "PASS")
        } else {
            paint(options, Tone::Removed, "FAIL")
        };
        writeln!(
            out,
            "{status} {} ({} steps)",
            escape_line(&report.name),
            report.steps
        )?;
        for (finding, at) in &report.findings {
            let at = at
                .map(|(t, s)| format!(" turn {t} step {s}:"))
                .unwrap_or_default();
            writeln!(
                out,
                "  {}:{at} {}",
                finding.name,
                escape_line(&finding.detail)
            )?;
        }
    }
    let failed = reports.iter().filter(|r| !r.findings.is_empty()).count();
    // Rollouts, transcripts, or files when both were checked.
    let noun = match reports.first().map(|r| r.kind) {
        Some(kind) if reports.iter().all(|r| r.kind == kind) => format!("{kind}s"),
        Some(_) => "files".to_string(),
        None => "rollouts".to_string(),
    };
    writeln!(
        out,
        "check: {} of {} {noun} passed{}",
        reports.len() - failed,
        reports.len(),
        if failed > 0 {
            format!(", {failed} failed")
        } else {
            String::new()
        }
    )
}

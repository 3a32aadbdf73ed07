//! `promptc check`.

use std::io::Write;

use anyhow::Context as _;

use crate::cli::{CheckArgs, Format, InputArgs};
use crate::commands::{Context, Items, load, plan, with_stdout};
use crate::exit::ExitStatus;
use promptc::AgentSession;
use promptc::check::{Baseline, baseline_steps, check, compare_baseline};
use promptc::render::check::{RolloutReport, write_check};

pub fn run(args: CheckArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let baseline: Option<Baseline> = match (&args.baseline, args.update_baseline) {
        (Some(path), false) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the baseline", path.display()))?;
            let baseline: Baseline = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a promptc baseline", path.display()))?;
            if let Some(reason) = baseline.incompatibility() {
                anyhow::bail!(
                    "{}: cannot compare with this baseline: {reason}",
                    path.display()
                );
            }
            Some(baseline)
        }
        _ => None,
    };
    let mut reports = Vec::new();
    let mut new_baseline = Baseline::new();
    for rollout in &args.rollouts {
        let session = load(
            &InputArgs {
                rollout: rollout.clone(),
                strict: args.strict,
            },
            context,
            Items::Json,
        )?;
        let plan = plan(&session, &args.plan, false, context)?;
        let mut findings = check(&session, &plan);
        let steps = baseline_steps(&session, &plan);
        // Transcripts and rollouts are kept apart in the baseline, each under its file's name.
        let (kind, expected) = match &session {
            promptc::Session::Claude(_) => (
                "transcript",
                baseline.as_ref().map(|b| b.transcripts.get(rollout)),
            ),
            promptc::Session::Codex(_) => (
                "rollout",
                baseline.as_ref().map(|b| b.rollouts.get(rollout)),
            ),
        };
        match expected {
            Some(Some(expected)) => findings.extend(compare_baseline(expected, &steps)),
            Some(None) => findings.push(promptc::check::Finding {
                name: "baseline:missing".into(),
                step: None,
                detail: format!("this {kind} is not in the baseline (run with --update-baseline)"),
            }),
            None => {}
        }
        let located = findings
            .into_iter()
            .map(|f| {
                // A baseline of more steps than the rollout names steps it does not have.
                let at = f.step.and_then(|k| {
                    let s = session.steps().get(k)?;
                    Some((session.turns()[s.turn].number, s.number))
                });
                (f, at)
            })
            .collect();
        reports.push(RolloutReport {
            kind,
            name: rollout.clone(),
            steps: session.steps().len(),
            findings: located,
        });
        match &session {
            promptc::Session::Claude(_) => new_baseline.transcripts.insert(rollout.clone(), steps),
            promptc::Session::Codex(_) => new_baseline.rollouts.insert(rollout.clone(), steps),
        };
    }
    if args.update_baseline
        && let Some(path) = &args.baseline
    {
        let mut text = serde_json::to_string_pretty(&new_baseline)?;
        text.push('\n');
        std::fs::write(path, text)
            .with_context(|| format!("{}: cannot write the baseline", path.display()))?;
        let counts: Vec<String> = [
            (new_baseline.rollouts.len(), "rollout"),
            (new_baseline.transcripts.len(), "transcript"),
        ]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, noun)| format!("{n} {noun}{}", if n == 1 { "" } else { "s" }))
        .collect();
        let _ = writeln!(
            std::io::stderr(),
            "wrote baseline {} ({})",
            promptc::core::sanitize::escape_line(&path.display().to_string()),
            if counts.is_empty() {
                "empty".to_string()
            } else {
                counts.join(", ")
            }
        );
    }
    let json = args.format.format() == Format::Json;
    with_stdout(|out| write_check(out, &reports, json, &context.stdout))?;
    Ok(if reports.iter().any(|r| !r.findings.is_empty()) {
        ExitStatus::Differences
    } else {
        ExitStatus::Success
    })
}

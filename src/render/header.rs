//! The header every text command prints (file, session, turns and steps, warnings) and the
//! label a step goes by in text.

use std::io::{self, Write};

use super::{RenderOptions, Tone, paint};
use crate::Session;
use crate::core::sanitize::escape_line;

/// The header every text command prints: file, session, turns and steps, warnings.
pub fn write_header(
    out: &mut dyn Write,
    session: &Session,
    options: &RenderOptions,
) -> io::Result<()> {
    let rollout = &session.rollout;
    let meta = rollout.meta.as_ref();
    let label = |name: &str| paint(options, Tone::Dim, &format!("{name:<9}"));
    writeln!(
        out,
        "{} {} ({}, era {})",
        label("file"),
        escape_line(&rollout.name),
        rollout.generation.name(),
        rollout.era()
    )?;
    let mut session_line = meta
        .and_then(|m| m.id.as_deref())
        .map_or("(no session_meta)".to_string(), |id| {
            escape_line(id).into_owned()
        });
    if let Some(version) = meta.and_then(|m| m.cli_version.as_deref()) {
        session_line.push_str(&format!("  cli {}", escape_line(version)));
    }
    if let Some(forked) = meta.and_then(|m| m.forked_from_id.as_deref()) {
        session_line.push_str(&format!("  forked from {}", escape_line(forked)));
    }
    writeln!(out, "{} {}", label("session"), session_line)?;
    if let Some(fork) = &session.fork
        && let Some(parent) = &fork.parent
    {
        writeln!(
            out,
            "{} {}: the history opens with its {} items before the fork",
            label("parent"),
            escape_line(parent),
            fork.items
        )?;
    }
    let models = session.models();
    if !models.is_empty() {
        let models: Vec<_> = models.iter().map(|m| escape_line(m).into_owned()).collect();
        writeln!(out, "{} {}", label("models"), models.join(", "))?;
    }
    writeln!(
        out,
        "{} {} turns, {} steps, {} lines read, {} skipped",
        label("history"),
        session.replay.turns.len(),
        session.replay.steps.len(),
        rollout.records.len(),
        rollout.skipped.len()
    )?;
    for skipped in &rollout.skipped {
        let column = skipped.column.map(|c| format!(":{c}")).unwrap_or_default();
        writeln!(
            out,
            "{} line {}{}: {}",
            paint(options, Tone::Warning, "skipped  "),
            skipped.line,
            column,
            escape_line(&skipped.reason)
        )?;
    }
    for (line, note) in &rollout.notes {
        writeln!(
            out,
            "{} line {line}: {}",
            paint(options, Tone::Warning, "note     "),
            escape_line(note)
        )?;
    }
    for (line, note) in &session.replay.approximations {
        writeln!(
            out,
            "{} line {line}: {}",
            paint(options, Tone::Warning, "approx   "),
            escape_line(note)
        )?;
    }
    Ok(())
}

/// `turn N step M`, and whether the step is the pending request a resume would send or a
/// compaction request.
pub fn step_label(session: &Session, step: usize) -> String {
    let s = &session.replay.steps[step];
    let turn = &session.replay.turns[s.turn];
    let pending = if s.pending {
        " (pending: what a resume sends next)"
    } else if s.compaction {
        " (compaction request: the history, then the checkpoint prompt)"
    } else {
        ""
    };
    format!("turn {} step {}{pending}", turn.number, s.number)
}

//! The header every text command prints (file, session, turns and steps, warnings) and the
//! label a step goes by in text.

use std::io::{self, Write};

use super::{RenderOptions, Tone, paint};
use crate::AgentSession;
use crate::core::sanitize::escape_line;

/// The header every text command prints: what the session's agent says of its file (file,
/// session, models, history), then every skipped line, note and approximation.
pub fn write_header<S: AgentSession>(
    out: &mut dyn Write,
    session: &S,
    options: &RenderOptions,
) -> io::Result<()> {
    let header = session.header();
    let label = |name: &str| paint(options, Tone::Dim, &format!("{name:<9}"));
    for (name, text) in &header.lines {
        writeln!(out, "{} {}", label(name), escape_line(text))?;
    }
    for skipped in header.skipped {
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
    for (line, note) in &header.notes {
        let line = line.map(|l| format!("line {l}: ")).unwrap_or_default();
        writeln!(
            out,
            "{} {line}{}",
            paint(options, Tone::Warning, "note     "),
            escape_line(note)
        )?;
    }
    for (line, note) in &header.approximations {
        writeln!(
            out,
            "{} line {line}: {}",
            paint(options, Tone::Warning, "approx   "),
            escape_line(note)
        )?;
    }
    Ok(())
}

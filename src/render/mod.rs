//! Output: human text (escaped, optionally coloured) and versioned JSON documents. Writers are
//! passed in; nothing here touches stdout or the environment.

mod cells;
pub mod check;
pub mod diff;
pub mod fingerprint;
pub mod header;
pub mod page;
pub mod report;
pub mod report_html;
pub mod steps;
pub mod watch;

use std::io::{self, Write};

use owo_colors::OwoColorize;
use serde::Serialize;
use serde_json::value::RawValue;

/// Decisions the binary makes once and passes down.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// Emit ANSI colour.
    pub color: bool,
    /// Columns available.
    pub width: usize,
    /// Print long texts whole.
    pub full: bool,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            color: false,
            width: 100,
            full: false,
        }
    }
}

/// Colour roles. Colour only emphasises: every meaning is also in the text.
#[derive(Debug, Clone, Copy)]
pub enum Tone {
    Heading,
    Dim,
    Added,
    Removed,
    Warning,
    Good,
}

/// Paint `text` in `tone` when colour is on.
pub fn paint(options: &RenderOptions, tone: Tone, text: &str) -> String {
    if !options.color {
        return text.to_string();
    }
    match tone {
        Tone::Heading => text.bold().to_string(),
        Tone::Dim => text.dimmed().to_string(),
        Tone::Added => text.green().to_string(),
        Tone::Removed => text.red().to_string(),
        Tone::Warning => text.yellow().to_string(),
        Tone::Good => text.cyan().to_string(),
    }
}

/// Write `text` painted in `tone` as a whole line.
pub fn write_painted(
    out: &mut dyn Write,
    options: &RenderOptions,
    tone: Tone,
    text: &str,
) -> io::Result<()> {
    writeln!(out, "{}", paint(options, tone, text))
}

/// Borrow an item's JSON text as a raw JSON value, so output embeds it byte for byte.
pub fn raw_json(text: &str) -> &RawValue {
    serde_json::from_str(text).unwrap_or_else(|_| {
        // Item texts were parsed as JSON when loaded; this is unreachable in practice.
        serde_json::from_str("null").expect("invariant: null is JSON")
    })
}

/// Write a JSON document followed by a newline, with the characters a terminal would obey or
/// hide escaped ([`crate::core::sanitize::JsonEscaper`]).
pub fn write_json<T: Serialize>(out: &mut dyn Write, document: &T) -> io::Result<()> {
    // serde_json's conversion keeps an I/O error's kind, so a closed pipe stays a closed pipe.
    let mut escaped = crate::core::sanitize::JsonEscaper::new(&mut *out);
    serde_json::to_writer_pretty(&mut escaped, document).map_err(io::Error::from)?;
    escaped.finish()?;
    out.write_all(b"\n")
}

/// Human size: bytes below 10 kB, then kB and MB.
pub fn human_size(bytes: usize) -> String {
    if bytes < 10_000 {
        format!("{bytes} B")
    } else if bytes < 10_000_000 {
        format!("{} kB", bytes / 1000)
    } else {
        format!("{} MB", bytes / 1_000_000)
    }
}

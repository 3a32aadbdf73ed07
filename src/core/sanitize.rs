//! Escaping of untrusted session text before it reaches a terminal: C0 and C1 control
//! characters, bidi controls and zero-width characters become visible escapes, so a rollout can
//! neither drive the terminal (ESC, OSC, BEL, CR) nor make one line look like another.

use std::borrow::Cow;
use std::fmt::Write;

fn needs_escape(c: char, keep_newlines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_newlines,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        // Bidi embeddings, overrides, isolates and marks.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            true
        }
        // Zero-width characters, line and paragraph separators, BOM.
        '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{2028}' | '\u{2029}' => true,
        _ => false,
    }
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, keep_newlines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !needs_escape(c, keep_newlines) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// Escape for a single output line: newlines and tabs are escaped too.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// Escape for a block of text: newlines and tabs are kept.
pub fn escape_block(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// A writer of JSON text that writes the characters a terminal would obey or hide (C1 controls,
/// DEL, bidi controls, zero-width characters, line separators) as `\uXXXX` escapes: the same
/// JSON once parsed, safe to print. serde_json already escapes C0 controls. It gathers serde's
/// many small writes and looks at them 64 KB at a time, a pass that finds most at once to be
/// ASCII; a character cut between two writes waits for its end. [`JsonEscaper::finish`] writes
/// what it holds.
pub struct JsonEscaper<W: std::io::Write> {
    out: W,
    held: Vec<u8>,
}

impl<W: std::io::Write> JsonEscaper<W> {
    const HELD: usize = 64 << 10;

    pub fn new(out: W) -> JsonEscaper<W> {
        JsonEscaper {
            out,
            held: Vec::with_capacity(Self::HELD),
        }
    }

    /// Write what is held (a character left cut, as it is).
    pub fn finish(mut self) -> std::io::Result<()> {
        self.write_held()?;
        let rest = std::mem::take(&mut self.held);
        self.out.write_all(&rest)
    }

    fn write_held(&mut self) -> std::io::Result<()> {
        let mut bytes = std::mem::take(&mut self.held);
        // A character cut at the end (a caller that cuts anywhere) waits for its other bytes.
        let whole = match std::str::from_utf8(&bytes) {
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            _ => bytes.len(),
        };
        let result = self.write_escaped(&bytes[..whole]);
        bytes.drain(..whole);
        self.held = bytes;
        result
    }

    fn write_escaped(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        // ASCII without DEL (most of it), or not text (serde writes text: unreachable).
        let text = match std::str::from_utf8(bytes) {
            Ok(text) if !bytes.is_ascii() || bytes.contains(&0x7f) => text,
            _ => return self.out.write_all(bytes),
        };
        let mut from = 0;
        for (at, c) in text.char_indices() {
            // Outside strings JSON has only ASCII (C0 there is whitespace, to keep; inside,
            // serde escaped it): every character from DEL up is in a string.
            if c >= '\u{7f}' && needs_escape(c, true) {
                self.out.write_all(&bytes[from..at])?;
                write!(self.out, "\\u{:04x}", c as u32)?;
                from = at + c.len_utf8();
            }
        }
        self.out.write_all(&bytes[from..])
    }
}

impl<W: std::io::Write> std::io::Write for JsonEscaper<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(buf);
        if self.held.len() >= Self::HELD {
            self.write_held()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.write_held()?;
        self.out.flush()
    }
}

/// Cut a string to at most `width` characters, marking the cut with `…`.
pub fn truncate(text: &str, width: usize) -> Cow<'_, str> {
    if text.chars().count() <= width {
        return Cow::Borrowed(text);
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JSON through the escaper: no character a terminal obeys or hides is left raw, and the
    /// document parses to the same value (JSON's own whitespace, a CR too, stays).
    #[test]
    fn json_escaper_writes_invisible_characters_as_escapes() {
        let value = serde_json::json!({
            "model": "gpt\u{202e}oss\u{2066}x\u{200b}y\u{9b}31m\u{7f}\u{feff}\u{2028}",
            "plain": "caf\u{e9} \u{1f600} \u{1b}[31m",
        });
        let mut out = Vec::new();
        let mut escaper = JsonEscaper::new(&mut out);
        serde_json::to_writer_pretty(&mut escaper, &value).unwrap();
        escaper.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(r#""gpt\u202eoss\u2066x\u200by\u009b31m\u007f\ufeff\u2028""#),
            "{text}"
        );
        // Printable non-ASCII stays as it is; C0 is serde's own escape.
        assert!(text.contains("caf\u{e9} \u{1f600} \\u001b[31m"), "{text}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );

        // Written a byte at a time, and across the 64 KB it holds: every character still escaped.
        let long = format!("\"{}\u{202e}\"", "x".repeat((64 << 10) - 2));
        let mut out = Vec::new();
        let mut escaper = JsonEscaper::new(&mut out);
        for byte in long.as_bytes() {
            std::io::Write::write_all(&mut escaper, std::slice::from_ref(byte)).unwrap();
        }
        escaper.finish().unwrap();
        assert_eq!(out.len(), long.len() - 3 + 6);
        assert!(out.ends_with(b"x\\u202e\""));

        let raw = "{\r\n\"a\": \"\u{202e}\"}";
        let mut out = Vec::new();
        let mut escaper = JsonEscaper::new(&mut out);
        std::io::Write::write_all(&mut escaper, raw.as_bytes()).unwrap();
        escaper.finish().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\r\n\"a\": \"\\u202e\"}");
    }

    #[test]
    fn escapes_terminal_controls() {
        assert_eq!(escape_line("a\u{1b}]0;x\u{7}b"), "a\\x1b]0;x\\x07b");
        assert_eq!(escape_line("x\ry\nz\t"), "x\\ry\\nz\\t");
        assert_eq!(escape_line("c1\u{9b}31m"), "c1\\x9b31m");
        assert_eq!(
            escape_line("bidi\u{202e}txt\u{200b}"),
            "bidi\\u{202e}txt\\u{200b}"
        );
        assert_eq!(escape_block("l1\nl2\t\u{1b}"), "l1\nl2\t\\x1b");
        assert_eq!(escape_line("plain é ✓"), "plain é ✓");
    }

    #[test]
    fn truncates_by_chars() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("ééééé", 3), "éé…");
    }
}

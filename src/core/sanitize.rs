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

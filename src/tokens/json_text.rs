//! The texts of an item's JSON strings as written, unescaped only as far as [`super::count`]
//! reads them: a tool output of 100 KB is counted from its first and last 4 KB, and building
//! a `serde_json::Value` of the item unescaped all of it (a third of `steps`' instructions).

use crate::parse::{escaped_at, hex4, unescaped_len};

use super::{EXACT_LIMIT, count, count_samples};

/// What is between the quotes of `raw`, a JSON string (empty if it is not one).
pub(super) fn content(raw: &str) -> &str {
    raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default()
}

/// [`count`] of the text of `raw`, a JSON string of a checked item (quotes included).
pub(super) fn count_string(raw: &str) -> usize {
    let content = content(raw);
    if memchr::memchr(b'\\', content.as_bytes()).is_none() {
        return count(content);
    }
    // Raw text is at least as long as its text: only a long one is measured first.
    let len = if content.len() > EXACT_LIMIT {
        unescaped_len(content)
    } else {
        0
    };
    if len <= EXACT_LIMIT {
        let mut text = String::with_capacity(content.len());
        unescape_into(content, &mut text, usize::MAX);
        return count(&text);
    }
    let half = EXACT_LIMIT / 2;
    // One byte past the head sample, so that whether it ends inside a character is known.
    let mut head = String::with_capacity(half + 8);
    unescape_into(content, &mut head, half + 1);
    count_samples(len, &head, &tail(content, half))
}

/// The text of `content` (inside a JSON string) from an escape boundary near its end, at least
/// `least` bytes of it unless the text is shorter.
fn tail(content: &str, least: usize) -> String {
    // Escapes make raw text longer than its text: start with a quarter more, and go back
    // further while that is not enough.
    let mut back = least + least / 4;
    loop {
        let start = boundary_at_or_before(content.as_bytes(), content.len().saturating_sub(back));
        let mut text = String::with_capacity(back + 8);
        unescape_into(&content[start..], &mut text, usize::MAX);
        if text.len() >= least || start == 0 {
            return text;
        }
        back *= 2;
    }
}

/// The last place at or before `at` where `content`, the inside of a valid JSON string, can
/// be read from: not inside a UTF-8 character or an escape, and not between the two escapes
/// of a surrogate pair. Each check that fails steps back one byte.
pub(super) fn boundary_at_or_before(content: &[u8], mut at: usize) -> usize {
    while at > 0 {
        let inside_character = content.get(at).is_some_and(|&b| b & 0xC0 == 0x80);
        // `content[at]` is escaped, or one of a `\u` escape's four digits.
        let inside_escape = escaped_at(content, at)
            || (1..=at.min(4))
                .any(|back| content[at - back] == b'u' && escaped_at(content, at - back));
        let low_surrogate = content[at..].starts_with(b"\\u")
            && hex4(content.get(at + 2..at + 6).unwrap_or_default())
                .is_some_and(|value| (0xDC00..0xE000).contains(&value));
        if !(inside_character || inside_escape || low_surrogate) {
            break;
        }
        at -= 1;
    }
    at
}

/// Append the text of `content` (the inside of a valid JSON string) to `out` until `out` holds
/// at least `stop_at` bytes, or all of it. The text is serde_json's: on other input an escape
/// it would refuse becomes U+FFFD.
pub(super) fn unescape_into(content: &str, out: &mut String, stop_at: usize) {
    let bytes = content.as_bytes();
    let mut at = 0;
    while at < bytes.len() && out.len() < stop_at {
        let run_end = memchr::memchr(b'\\', &bytes[at..]).map_or(bytes.len(), |offset| at + offset);
        let run = &content[at..run_end];
        let room = stop_at - out.len();
        if run.len() >= room {
            let mut cut = room;
            while !run.is_char_boundary(cut) {
                cut += 1;
            }
            out.push_str(&run[..cut]);
            return;
        }
        out.push_str(run);
        at = run_end;
        if at < bytes.len() {
            at = push_escape(bytes, at, out);
            // After an escape JSON refuses (`\é`), what follows may start inside a character.
            while !content.is_char_boundary(at.min(bytes.len())) {
                at += 1;
            }
        }
    }
}

/// Push the character of the escape at `bytes[at]` (a backslash) and return the index after it.
fn push_escape(bytes: &[u8], at: usize, out: &mut String) -> usize {
    let simple = match bytes.get(at + 1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => {
            let unit = |at: usize| bytes.get(at..at + 4).and_then(hex4);
            let high = unit(at + 2).unwrap_or(0xFFFD);
            if (0xD800..0xDC00).contains(&high)
                && bytes.get(at + 6..at + 8) == Some(b"\\u")
                && let Some(low @ 0xDC00..0xE000) = unit(at + 8)
            {
                let pair = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                out.push(char::from_u32(pair).unwrap_or('\u{fffd}'));
                return at + 12;
            }
            out.push(char::from_u32(high).unwrap_or('\u{fffd}'));
            return at + 6;
        }
        _ => '\u{fffd}',
    };
    out.push(simple);
    at + 2
}

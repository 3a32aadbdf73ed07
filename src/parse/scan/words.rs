//! The string scan eight bytes at a time (SWAR), as serde_json does: for targets without
//! SSE2, and in tests as a second reading of every string.

use super::{escape_end, unicode_escape_len};

/// Broadcast a byte to the 8 bytes of a word.
const fn splat(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

const HIGH_BITS: u64 = splat(0x80);

/// The high bit of each byte of `word` that is below `limit` (at most 0x80). Bits above the
/// lowest one set may be wrong (a borrow runs on), so only the lowest is used.
#[inline(always)]
fn below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(splat(limit)) & !word & HIGH_BITS
}

/// The first byte from `i` that ends a plain run of string text: a quote, a backslash or a
/// control character (which JSON forbids raw in a string). Eight bytes at a time, as
/// serde_json does.
#[inline(always)]
fn next_special(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let found =
            below(word ^ splat(b'"'), 1) | below(word ^ splat(b'\\'), 1) | below(word, 0x20);
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    let rest = bytes.get(i..)?;
    let at = rest.iter().position(|&b| is_special(b))?;
    Some(i + at)
}

/// A byte that ends a plain run of string text.
fn is_special(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// `i` is just after an opening quote; returns the index after the closing quote, or `None`
/// when the string is not valid JSON (unterminated, a raw control character, a bad escape).
pub(super) fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i = next_special(bytes, i)?;
        match bytes[i] {
            b'"' => return Some(i + 1),
            b'\\' => i = escape_end(bytes, i)?,
            _ => return None,
        }
    }
}

/// [`super::unescaped_len`] escape by escape.
pub(super) fn unescaped_len(content: &[u8]) -> usize {
    let mut removed = 0;
    let mut at = 0;
    while let Some(offset) = memchr::memchr(b'\\', content.get(at..).unwrap_or_default()) {
        let code = at + offset + 1;
        removed += 1;
        at = code + 1;
        if content.get(code) == Some(&b'u') {
            removed += 5 - unicode_escape_len(content.get(code + 1..code + 5));
            at = code + 5;
        }
    }
    content.len().saturating_sub(removed)
}

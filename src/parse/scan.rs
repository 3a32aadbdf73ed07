//! One pass over a rollout line that checks it is JSON and, on the way, finds the envelope's
//! fields and the head fields of an object `payload`: what serde_json's envelope parse and
//! `head::read` did in two passes.
//!
//! It is a fast path, not the judge: when it returns `None` the caller parses the line with
//! serde_json, which accepts it or says why not. So it must never accept a line serde_json
//! rejects; it may give up on a valid one (a key written with escapes, a duplicate envelope
//! field, very deep nesting). Strings, most of a rollout's bytes, are skipped to their end: on
//! x86_64 (`sse2.rs`) a look at the first sixteen bytes, then blocks of sixty-four whose
//! escapes are found from bit masks; elsewhere (`words.rs`) eight bytes at a time to the next
//! quote, backslash or control character, as serde_json does.

use super::head::Head;

/// The raw JSON text of each envelope field present (`None`: absent).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EnvelopeText<'a> {
    pub type_: Option<&'a str>,
    pub payload: Option<&'a str>,
    pub record_type: Option<&'a str>,
    pub timestamp: Option<&'a str>,
    pub id: Option<&'a str>,
    pub ordinal: Option<&'a str>,
    pub metadata: Option<&'a str>,
}

impl<'a> EnvelopeText<'a> {
    fn slots(&mut self) -> [&mut Option<&'a str>; 7] {
        [
            &mut self.type_,
            &mut self.payload,
            &mut self.record_type,
            &mut self.timestamp,
            &mut self.id,
            &mut self.ordinal,
            &mut self.metadata,
        ]
    }

    fn slot(&mut self, key: &[u8]) -> Option<&mut Option<&'a str>> {
        Some(match key {
            b"type" => &mut self.type_,
            b"payload" => &mut self.payload,
            b"record_type" => &mut self.record_type,
            b"timestamp" => &mut self.timestamp,
            b"id" => &mut self.id,
            b"ordinal" => &mut self.ordinal,
            b"metadata" => &mut self.metadata,
            _ => return None,
        })
    }
}

/// A line read by [`scan`].
#[derive(Debug, Default)]
pub struct Scanned<'a> {
    pub envelope: EnvelopeText<'a>,
    /// The head of `payload` when it is an object whose wanted fields read as [`Head`] reads
    /// them; `None` otherwise (the caller then reads it with `head::read`).
    pub payload_head: Option<Head<'a>>,
}

/// Deeper nesting is left to serde_json.
const MAX_DEPTH: usize = 128;

/// Check that `text` is one JSON object (with surrounding whitespace) and read its envelope.
/// `None`: not accepted here; parse it with serde_json.
pub fn scan(text: &str) -> Option<Scanned<'_>> {
    let bytes = text.as_bytes();
    let mut out = Scanned::default();
    let mut payload_head = Head::default();
    let mut payload_head_ok = true;
    // `is_array[d]`: the container at depth d + 1 is an array. Bytes, not the bits of a
    // `u128`: a shift by a variable amount of a `u128` takes a branch and several instructions.
    let mut is_array = [false; MAX_DEPTH];
    let mut depth = 0usize;
    // The members being read at depth 1 and 2.
    let mut open = [Member::default(); 2];
    let mut in_payload = false;

    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    'value: loop {
        // A value starts at `i`.
        match *bytes.get(i)? {
            open_char @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                is_array[depth] = open_char == b'[';
                depth += 1;
                if depth == 2 {
                    in_payload = open_char == b'{' && open[0].key == b"payload";
                }
                i = skip_ws(bytes, i + 1);
                let close = if open_char == b'{' { b'}' } else { b']' };
                if bytes.get(i) == Some(&close) {
                    i += 1;
                    depth -= 1;
                } else {
                    if open_char == b'{' {
                        i = member_key(text, i, depth, &mut open)?;
                    }
                    continue 'value;
                }
            }
            b'"' => i = string_end(bytes, i + 1)?,
            b't' => i = literal(bytes, i, b"true")?,
            b'f' => i = literal(bytes, i, b"false")?,
            b'n' => i = literal(bytes, i, b"null")?,
            b'-' | b'0'..=b'9' => i = number(bytes, i)?,
            _ => return None,
        }
        // A value ended at `i`: it is a member or element of the container at `depth`.
        loop {
            match depth {
                1 => {
                    if let Some(slot) = out.envelope.slot(open[0].key) {
                        if slot.is_some() {
                            // serde_json rejects a duplicate field; let it say so.
                            return None;
                        }
                        *slot = Some(&text[open[0].start..i]);
                    }
                }
                2 if in_payload && payload_head_ok => {
                    let value = &text[open[1].start..i];
                    payload_head_ok = payload_head.set(open[1].key, value).is_ok();
                }
                _ => {}
            }
            if depth == 0 {
                break 'value;
            }
            i = skip_ws(bytes, i);
            let in_array = is_array[depth - 1];
            match *bytes.get(i)? {
                b',' => {
                    i = skip_ws(bytes, i + 1);
                    if !in_array {
                        i = member_key(text, i, depth, &mut open)?;
                    }
                    continue 'value;
                }
                b'}' if !in_array => {}
                b']' if in_array => {}
                _ => return None,
            }
            i += 1;
            depth -= 1;
        }
    }
    if skip_ws(bytes, i) != bytes.len() {
        return None;
    }
    if out.envelope.payload.is_some_and(|p| p.starts_with('{')) && payload_head_ok {
        out.payload_head = Some(payload_head);
    }
    // serde_json reads a `null` field as absent (after counting it for duplicates, as above).
    for slot in out.envelope.slots() {
        if *slot == Some("null") {
            *slot = None;
        }
    }
    Some(out)
}

/// A member of an object: its key (as written) and where its value starts.
#[derive(Debug, Default, Clone, Copy)]
struct Member<'a> {
    key: &'a [u8],
    start: usize,
}

/// Read `"key"` then `:` at `i` (inside an object at `depth`), remember the key of a depth 1 or
/// 2 member in `open`, and return where its value starts. Inlined: a line has a key every
/// hundred bytes or so, and the call cost a third of reading one.
#[inline(always)]
fn member_key<'a>(
    text: &'a str,
    i: usize,
    depth: usize,
    open: &mut [Member<'a>; 2],
) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let end = string_end(bytes, i + 1)?;
    // Bytes, not text: slicing `text` checked both ends for character bounds, a call per key.
    let key = &bytes[i + 1..end - 1];
    let colon = skip_ws(bytes, end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let value = skip_ws(bytes, colon + 1);
    // serde_json matches envelope fields after unescaping; leave escaped ones to it.
    if depth == 1 && key.contains(&b'\\') {
        return None;
    }
    if let Some(member) = open.get_mut(depth.wrapping_sub(1)) {
        *member = Member { key, start: value };
    }
    Some(value)
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

fn literal(bytes: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    (bytes.get(i..i + word.len())? == word).then_some(i + word.len())
}

/// A JSON number at `i`; returns the index after it. Inlined, as [`member_key`]: most numbers
/// are a few digits.
#[inline(always)]
fn number(bytes: &[u8], mut i: usize) -> Option<usize> {
    let digit = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    match bytes.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => {
            while digit(i) {
                i += 1;
            }
        }
        _ => return None,
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if !digit(i) {
            return None;
        }
        while digit(i) {
            i += 1;
        }
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = bytes.get(i) {
            i += 1;
        }
        if !digit(i) {
            return None;
        }
        while digit(i) {
            i += 1;
        }
    }
    Some(i)
}

// The string scan: SSE2 on x86_64 (every such processor has it), eight bytes at a time
// elsewhere. Tests run both.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use sse2::string_end;
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
mod words;
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use words::string_end;

/// The length in bytes of the text of `content`, the inside of a valid JSON string, once its
/// escapes are undone: what serde_json's unescaping gives, without making it. On other
/// input the count is off, never a panic.
pub fn unescaped_len(content: &str) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return sse2::unescaped_len(content.as_bytes());
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    return words::unescaped_len(content.as_bytes());
}

/// The value of four hex digits, `None` unless `hex` is four of them.
pub fn hex4(hex: &[u8]) -> Option<u32> {
    let hex: &[u8; 4] = hex.try_into().ok()?;
    hex.iter().try_fold(0, |value, &digit| {
        Some(value << 4 | char::from(digit).to_digit(16)?)
    })
}

/// The bytes of UTF-8 that a `\u` escape with these hex digits stands for. A surrogate pair
/// is two escapes: the high one stands for all four bytes, the low one for none.
fn unicode_escape_len(hex: Option<&[u8]>) -> usize {
    match hex.and_then(hex4) {
        Some(0..0x80) | None => 1,
        Some(0x80..0x800) => 2,
        Some(0xD800..0xDC00) => 4,
        Some(0xDC00..0xE000) => 0,
        Some(_) => 3,
    }
}

/// `at` is a backslash inside a string: the index after its escape, or `None` when the escape
/// is not one JSON allows, or is a UTF-16 surrogate (`\uD800`–`\uDFFF`). A surrogate must pair
/// with the next escape, which serde_json checks; the line is left to it (they are rare: Codex
/// writes non-ASCII text as UTF-8), and no line the scan reads holds one.
#[inline(always)]
fn escape_end(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 2),
        b'u' => {
            let hex = bytes.get(at + 2..at + 6)?;
            let surrogate = matches!(hex[0], b'd' | b'D')
                && matches!(hex[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F');
            (hex.iter().all(u8::is_ascii_hexdigit) && !surrogate).then_some(at + 6)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;

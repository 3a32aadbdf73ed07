//! The one-scan reading of a content array already in serde's form: each block's hash over its
//! bytes as written, and the sha256 a replay record names a message by (`sha256.rs`), without
//! building a value.

use xxhash_rust::xxh3::Xxh3Default;

use super::super::load::Sha256Name;
use super::sha256::{Member, MessageSha256, sorted_members};
use super::{Content, Heads, billing, injected};
use crate::core::hash::Hash;

/// The one-scan reading, where the text is in serde's form and every block a plain object.
pub(super) fn fast(role: &str, b: &[u8]) -> Option<(Content, Heads)> {
    match b.first()? {
        b'"' | b'[' => {
            let (content, heads, end, _) = fast_at(role, b, false)?;
            (end == b.len()).then_some((content, heads))
        }
        // Neither a string nor an array: no blocks (and no heads).
        _ => Some((
            Content {
                all_objects: true,
                ..Content::default()
            },
            Heads::default(),
        )),
    }
}

/// [`fast`] of the string or array at the start of `b`, with where it ends, and when `sha256`
/// asks for it, [`super::message_sha256`] of it, taken in the same scan (`Some(None)` where
/// that is `None`).
pub(super) fn fast_at(
    role: &str,
    b: &[u8],
    sha256: bool,
) -> Option<(Content, Heads, usize, Option<Option<Sha256Name>>)> {
    let role_prefix = |h: &mut Xxh3Default| {
        h.update(b"claude-block\0[\"");
        h.update(role.as_bytes());
        h.update(b"\",");
    };
    let finish = |mut h: Xxh3Default| {
        h.update(b"]");
        h.digest128().to_be_bytes()
    };
    match b.first()? {
        b'"' => {
            let mut scan = Scan::default();
            let b = &b[..scan.value(b, 0)?];
            if scan.odd {
                return None;
            }
            let text_block = |h: &mut Xxh3Default, newline: bool| {
                role_prefix(h);
                h.update(b"{\"type\":\"text\",\"text\":");
                if newline {
                    h.update(&b[..b.len() - 1]);
                    h.update(b"\\n\"");
                } else {
                    h.update(b);
                }
                h.update(b"}");
            };
            let mut h = Xxh3Default::new();
            text_block(&mut h, false);
            let text = decoded(b)?;
            let message_sha256 = sha256.then(|| {
                let mut out = MessageSha256::new();
                out.text_block(b);
                Some(out.finish(role))
            });
            let content = Content {
                hashes: Box::new([finish(h)]),
                first_is_text: true,
                last_is_text: true,
                last_is_object: true,
                all_objects: true,
                cache_control: false,
                lone_text_not_plain: false,
                first_prompt: (!injected(&text)).then(|| billing(&text)),
                newline_last: (role == "user").then(|| {
                    let mut h = Xxh3Default::new();
                    text_block(&mut h, true);
                    finish(h)
                }),
            };
            Some((content, Heads::default(), b.len(), message_sha256))
        }
        b'[' => {
            let mut hashes: Vec<Hash> = Vec::new();
            let mut heads = Heads::default();
            let (mut first_is_text, mut last_is_text, mut lone_plain) = (false, false, false);
            let mut first_prompt = None;
            let mut newline_last = None;
            // The sha256's text so far; `None` once a block is not in the form it takes.
            let mut sha = sha256.then(MessageSha256::new);
            let mut members = Vec::new();
            let mut i = 1;
            if b.get(i) == Some(&b']') {
                i += 1;
            } else {
                loop {
                    let mut scan = Scan::default();
                    members.clear();
                    let block = scan.block(b, i, sha.is_some().then_some(&mut members))?;
                    if scan.odd || scan.cache_control {
                        return None;
                    }
                    if let Some(out) = &mut sha {
                        if !hashes.is_empty() {
                            out.update(b",");
                        }
                        if sorted_members(b, &mut members, out).is_none() {
                            sha = None;
                        }
                    }
                    let raw = &b[i..block.end];
                    let mut h = Xxh3Default::new();
                    role_prefix(&mut h);
                    h.update(raw);
                    hashes.push(finish(h));
                    let is_text = block.type_ == Some(b"text".as_slice());
                    match block.type_ {
                        Some(b"tool_use") => push_kept(&mut heads.tool_uses, block.id.map(shared)),
                        Some(b"tool_result") => {
                            push_kept(&mut heads.tool_results, block.tool_use_id.map(boxed))
                        }
                        Some(b"thinking" | b"redacted_thinking") => heads.thinking = true,
                        _ => {}
                    }
                    if hashes.len() == 1 {
                        first_is_text = is_text;
                    }
                    last_is_text = is_text && block.text_is_string;
                    lone_plain = block.plain_text;
                    if first_prompt.is_none()
                        && let Some(text) = block.text.filter(|t| t.first() == Some(&b'"'))
                    {
                        let text = decoded(text)?;
                        first_prompt = (!injected(&text)).then(|| billing(&text));
                    }
                    newline_last = None;
                    if role == "user"
                        && last_is_text
                        && let Some(q) = block.text_end
                    {
                        // The text's closing quote: a newline goes before it.
                        let q = q - 1 - i;
                        let mut h = Xxh3Default::new();
                        role_prefix(&mut h);
                        h.update(&raw[..q]);
                        h.update(b"\\n");
                        h.update(&raw[q..]);
                        newline_last = Some(finish(h));
                    }
                    i = block.end;
                    match b.get(i)? {
                        b',' => i += 1,
                        b']' => {
                            i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            let lone_text_not_plain = hashes.len() == 1 && first_is_text && !lone_plain;
            let content = Content {
                last_is_object: !hashes.is_empty(),
                hashes: hashes.into(),
                first_is_text,
                last_is_text,
                all_objects: true,
                cache_control: false,
                lone_text_not_plain,
                first_prompt,
                newline_last,
            };
            let message_sha256 = sha256.then(|| sha.map(|out| out.finish(role)));
            Some((content, heads, i, message_sha256))
        }
        _ => None,
    }
}

/// The end of the JSON value at `b[i..]` as the one scan reads it; `None` where it cannot
/// tell (whitespace, a value cut short). For finding a key's value: serde checks the text.
pub fn value_end(b: &[u8], i: usize) -> Option<usize> {
    Scan::default().value(b, i)
}

/// A JSON string's text (its bytes as written, quotes included).
fn decoded(raw: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let inner = raw.get(1..raw.len().checked_sub(1)?)?;
    if inner.contains(&b'\\') {
        serde_json::from_slice::<String>(raw).ok().map(Into::into)
    } else {
        std::str::from_utf8(inner).ok().map(Into::into)
    }
}

/// Add `item` to a list the line keeps: room for one at first (most messages have one call or
/// one result; a list grown by `push` or `extend` starts with room for four).
fn push_kept<T>(list: &mut Vec<T>, item: Option<T>) {
    if let Some(item) = item {
        if list.capacity() == 0 {
            list.reserve_exact(1);
        }
        list.push(item);
    }
}

fn boxed(bytes: &[u8]) -> Box<str> {
    // A string without escapes: its bytes are its UTF-8 text (the line was checked as UTF-8).
    String::from_utf8_lossy(bytes).into()
}

/// [`boxed`], to be shared.
fn shared(bytes: &[u8]) -> std::sync::Arc<str> {
    std::sync::Arc::from(&*String::from_utf8_lossy(bytes))
}

/// A top-level block of a content array, as far as the fast reading needs it.
struct Block<'a> {
    end: usize,
    type_: Option<&'a [u8]>,
    id: Option<&'a [u8]>,
    tool_use_id: Option<&'a [u8]>,
    text_is_string: bool,
    /// The value of its `text` key as written, and where it ends in the line.
    text: Option<&'a [u8]>,
    text_end: Option<usize>,
    /// `{"type":"text","text":"…"}` exactly.
    plain_text: bool,
}

/// The keys of an object met so far, to find one written twice (more than a few: left to serde).
struct Keys<'a> {
    keys: [&'a [u8]; 16],
    len: usize,
}

impl<'a> Keys<'a> {
    fn new() -> Keys<'a> {
        Keys {
            keys: [&[]; 16],
            len: 0,
        }
    }

    /// Note `key`: whether it is new (and there was room to compare it).
    fn insert(&mut self, key: &'a [u8]) -> bool {
        if self.len == self.keys.len() || self.keys[..self.len].contains(&key) {
            return false;
        }
        self.keys[self.len] = key;
        self.len += 1;
        true
    }
}

/// A scan of JSON text: where each value ends, and whether the text is what serde_json would
/// write back (`odd` when not). Text it reads without `odd` is JSON but for control bytes, which
/// it does not look for: serde has checked the text, or [`super::read_unchecked`] checks them.
#[derive(Default)]
pub(super) struct Scan {
    pub(super) odd: bool,
    /// A key `cache_control`, at any depth.
    pub(super) cache_control: bool,
    /// Arrays and objects open around the value being scanned.
    depth: usize,
}

/// The most arrays and objects a scan opens one inside another: more is left to serde (whose
/// limit is 128 for the whole line), and the scan's stack stays small.
const DEEPEST: usize = 100;

impl Scan {
    /// A block object at `i`; `None` where it is not an object or one of its head fields is not
    /// a plain string (serde reads those: see [`super::heads`]). Each member's key and value
    /// go to `members`, when given (for the message's sha256).
    fn block<'a>(
        &mut self,
        b: &'a [u8],
        i: usize,
        mut members: Option<&mut Vec<Member<'a>>>,
    ) -> Option<Block<'a>> {
        if b.get(i) != Some(&b'{') {
            return None;
        }
        let mut block = Block {
            end: 0,
            type_: None,
            id: None,
            tool_use_id: None,
            text_is_string: false,
            text: None,
            text_end: None,
            plain_text: false,
        };
        let mut keys = Keys::new();
        let mut j = i + 1;
        if b.get(j) == Some(&b'}') {
            block.end = j + 1;
            return Some(block);
        }
        loop {
            let key_end = self.string(b, j)?;
            let key = &b[j + 1..key_end - 1];
            if b.get(key_end) != Some(&b':') {
                return None;
            }
            let v = key_end + 1;
            let end = self.value(b, v)?;
            let value = &b[v..end];
            let head = match key {
                b"type" => Some(&mut block.type_),
                b"id" => Some(&mut block.id),
                b"tool_use_id" => Some(&mut block.tool_use_id),
                _ => None,
            };
            if let Some(field) = head {
                if value.first() != Some(&b'"') || value.contains(&b'\\') {
                    return None;
                }
                *field = Some(&value[1..value.len() - 1]);
            }
            if key == b"text" {
                block.text_is_string = value.first() == Some(&b'"');
                block.text = Some(value);
                block.text_end = Some(end);
            }
            self.cache_control |= key == b"cache_control";
            self.odd |= !keys.insert(key);
            if let Some(members) = &mut members {
                members.push((key, v, end));
            }
            j = end;
            match b.get(j)? {
                b',' => j += 1,
                b'}' => break,
                _ => return None,
            }
        }
        block.end = j + 1;
        block.plain_text = keys.keys[..keys.len] == [b"type".as_slice(), b"text".as_slice()]
            && block.type_ == Some(b"text".as_slice())
            && block.text_is_string;
        Some(block)
    }

    /// The end of the value at `i`.
    pub(super) fn value(&mut self, b: &[u8], i: usize) -> Option<usize> {
        if !matches!(b.get(i), Some(b'{' | b'[')) {
            return self.scalar(b, i);
        }
        if self.depth == DEEPEST {
            self.odd = true;
            return None;
        }
        self.depth += 1;
        let end = self.nested(b, i);
        self.depth -= 1;
        end
    }

    /// The end of the object or array at `i`.
    fn nested(&mut self, b: &[u8], i: usize) -> Option<usize> {
        match *b.get(i)? {
            b'{' => {
                let mut keys = Keys::new();
                let mut j = i + 1;
                if b.get(j) == Some(&b'}') {
                    return Some(j + 1);
                }
                loop {
                    let key_end = self.string(b, j)?;
                    let key = &b[j + 1..key_end - 1];
                    self.cache_control |= key == b"cache_control";
                    self.odd |= !keys.insert(key);
                    if b.get(key_end) != Some(&b':') {
                        return None;
                    }
                    j = self.value(b, key_end + 1)?;
                    match b.get(j)? {
                        b',' => j += 1,
                        b'}' => return Some(j + 1),
                        _ => return None,
                    }
                }
            }
            b'[' => {
                let mut j = i + 1;
                if b.get(j) == Some(&b']') {
                    return Some(j + 1);
                }
                loop {
                    j = self.value(b, j)?;
                    match b.get(j)? {
                        b',' => j += 1,
                        b']' => return Some(j + 1),
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    /// The end of the string, number or literal at `i`.
    fn scalar(&mut self, b: &[u8], i: usize) -> Option<usize> {
        match *b.get(i)? {
            b'"' => self.string(b, i),
            b't' if b[i..].starts_with(b"true") => Some(i + 4),
            b'f' if b[i..].starts_with(b"false") => Some(i + 5),
            b'n' if b[i..].starts_with(b"null") => Some(i + 4),
            b'-' | b'0'..=b'9' => {
                let digits = b[i..]
                    .iter()
                    .position(|c| !matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .unwrap_or(b.len() - i);
                let number = &b[i..i + digits];
                let magnitude = number.strip_prefix(b"-").unwrap_or(number);
                // An integer serde keeps as one (not a float, not -0, within i64) is written
                // back as it is.
                if magnitude.is_empty()
                    || magnitude.len() > 18
                    || !magnitude.iter().all(u8::is_ascii_digit)
                    || (magnitude[0] == b'0' && (magnitude.len() > 1 || number[0] == b'-'))
                {
                    self.odd = true;
                }
                Some(i + digits)
            }
            // Whitespace, or what serde_json would not have let through.
            _ => {
                self.odd = true;
                None
            }
        }
    }

    /// The end of the string at `i` (after its closing quote).
    pub(super) fn string(&mut self, b: &[u8], i: usize) -> Option<usize> {
        if b.get(i) != Some(&b'"') {
            self.odd = true;
            return None;
        }
        let mut j = i + 1;
        loop {
            j += memchr::memchr2(b'"', b'\\', &b[j..])?;
            if b[j] == b'"' {
                return Some(j + 1);
            }
            match *b.get(j + 1)? {
                b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                b'u' => {
                    let hex = b.get(j + 2..j + 6)?;
                    // serde writes \u00XX, lower case, for control characters without a short
                    // escape; any other \u escape is written back as the character.
                    let lower = hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
                    let code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                    if !lower || code >= 0x20 || matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                        self.odd = true;
                    }
                    j += 6;
                }
                _ => {
                    self.odd = true;
                    j += 2;
                }
            }
        }
    }
}

//! The sha256 a 2.1.3xx replay record names a history message by, taken from the contents as
//! written (keys sorted at every level, as `replay::message_hash` writes the message) without
//! building a value.

use sha2::{Digest, Sha256};

use super::super::load::Sha256Name;
use super::scan::Scan;

/// The sha256 a 2.1.3xx replay record names a history message by (`replay::message_hash` of
/// its lines' blocks under `role`), from the contents as written: `None` where one is not in
/// serde's form (the caller takes the value's way).
pub fn message_sha256<'a>(
    role: &str,
    contents: impl Iterator<Item = &'a str>,
) -> Option<Sha256Name> {
    let mut out = MessageSha256::new();
    let mut members = Vec::new();
    let mut first = true;
    for content in contents {
        let b = content.as_bytes();
        match b.first() {
            Some(b'"') => {
                let mut scan = Scan::default();
                if scan.value(b, 0)? != b.len() || scan.odd {
                    return None;
                }
                if !first {
                    out.update(b",");
                }
                first = false;
                out.text_block(b);
            }
            Some(b'[') => {
                let mut i = 1;
                if b.get(1) == Some(&b']') {
                    continue;
                }
                loop {
                    if !first {
                        out.update(b",");
                    }
                    first = false;
                    i = sorted(b, i, &mut out, &mut members)?;
                    match b.get(i)? {
                        b',' => i += 1,
                        b']' => break,
                        _ => return None,
                    }
                }
            }
            _ => {}
        }
    }
    Some(out.finish(role))
}

/// The sha256 of a message's canonical text (`{"content":[`, its blocks, `],"role":"…"}`),
/// hashed as it is written: a message can be megabytes, and only its digest is kept.
pub(super) struct MessageSha256(Sha256);

impl MessageSha256 {
    pub(super) fn new() -> MessageSha256 {
        let mut sha = Sha256::new();
        sha.update(b"{\"content\":[");
        MessageSha256(sha)
    }

    pub(super) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The block a string content is sent as: `quoted` (a JSON string in serde's form) as a
    /// text block, its keys sorted.
    pub(super) fn text_block(&mut self, quoted: &[u8]) {
        self.update(b"{\"text\":");
        self.update(quoted);
        self.update(b",\"type\":\"text\"}");
    }

    pub(super) fn finish(mut self, role: &str) -> Sha256Name {
        self.0.update(b"],\"role\":\"");
        self.0.update(role.as_bytes());
        self.0.update(b"\"}");
        Sha256Name::of_digest(self.0.finalize().into())
    }
}

/// A member of an object being written sorted: its key, and where its value starts and ends.
pub(super) type Member<'a> = (&'a [u8], usize, usize);

/// Write a block object whose `members` a scan read and found in serde's form (no key twice),
/// its keys sorted at every level as [`sorted`] writes them; `None` where [`sorted`] is.
pub(super) fn sorted_members<'a>(
    b: &'a [u8],
    members: &mut Vec<Member<'a>>,
    out: &mut MessageSha256,
) -> Option<()> {
    if members.iter().any(|m| m.0.contains(&b'\\')) {
        return None;
    }
    members.sort_unstable_by(|x, y| x.0.cmp(y.0));
    write_object(b, members, 0, out)
}

/// Write the object whose members are `members[start..]`, sorted by key (checked: no key
/// twice, scalars in serde's form), each nested value [`sorted`]; those members are taken off
/// the list.
fn write_object<'a>(
    b: &'a [u8],
    members: &mut Vec<Member<'a>>,
    start: usize,
    out: &mut MessageSha256,
) -> Option<()> {
    let end = members.len();
    out.update(b"{");
    for n in start..end {
        let (key, at, value_end) = members[n];
        if n > start {
            out.update(b",");
        }
        out.update(b"\"");
        out.update(key);
        out.update(b"\":");
        // A scalar was checked by the scan: written as it is.
        if matches!(b[at], b'{' | b'[') {
            sorted(b, at, out, members)?;
        } else {
            out.update(&b[at..value_end]);
        }
    }
    members.truncate(start);
    out.update(b"}");
    Some(())
}

/// Write the value at `i` with its keys sorted at every level (keys without escapes, no
/// `cache_control`, text in serde's form); its end. `members` is room for the keys of the
/// objects being written (a stack, one list for the whole value).
fn sorted<'a>(
    b: &'a [u8],
    i: usize,
    out: &mut MessageSha256,
    members: &mut Vec<Member<'a>>,
) -> Option<usize> {
    match *b.get(i)? {
        b'{' => {
            let start = members.len();
            let mut j = i + 1;
            let mut scan = Scan::default();
            if b.get(j) != Some(&b'}') {
                loop {
                    let key_end = scan.string(b, j)?;
                    let key = &b[j + 1..key_end - 1];
                    if key.contains(&b'\\') || key == b"cache_control" || b.get(key_end)? != &b':' {
                        return None;
                    }
                    j = scan.value(b, key_end + 1)?;
                    members.push((key, key_end + 1, j));
                    match b.get(j)? {
                        b',' => j += 1,
                        b'}' => break,
                        _ => return None,
                    }
                }
            }
            if scan.odd || scan.cache_control {
                return None;
            }
            members[start..].sort_unstable_by(|x, y| x.0.cmp(y.0));
            if members[start..].windows(2).any(|w| w[0].0 == w[1].0) {
                return None;
            }
            write_object(b, members, start, out)?;
            Some(j + 1)
        }
        b'[' => {
            out.update(b"[");
            let mut j = i + 1;
            if b.get(j) != Some(&b']') {
                loop {
                    j = sorted(b, j, out, members)?;
                    match b.get(j)? {
                        b',' => {
                            out.update(b",");
                            j += 1
                        }
                        b']' => break,
                        _ => return None,
                    }
                }
            }
            out.update(b"]");
            Some(j + 1)
        }
        _ => {
            let mut scan = Scan::default();
            let end = scan.value(b, i)?;
            if scan.odd {
                return None;
            }
            out.update(&b[i..end]);
            Some(end)
        }
    }
}

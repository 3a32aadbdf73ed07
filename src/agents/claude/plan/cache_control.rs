//! A replay record's `cacheControl`: the breakpoints it puts on message blocks, and its entries
//! on system blocks and tools, which make the head. A `cacheControl` whose every entry is as
//! the builds write it (an object of a `path` of plain strings and whole numbers and a `value`
//! of a plain `type` and `ttl`, nothing else) is read as written: a JSON value built for each
//! entry of every record was a quarter of replaying a 2.1.3xx record. Any other is read whole
//! as a value, as before, so that what serde would refuse (a lone surrogate, nesting past its
//! limit), an entry or value written as an array, or a repeated key gives what it gave.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::records::NoReplay;
use super::replayed::{ttl, ttl_named};

/// What a record's `cacheControl` says.
pub(super) struct CacheControl<'a> {
    /// Each breakpoint on a message block: its position among the record's message blocks,
    /// and its TTL in seconds.
    pub marks: Vec<(usize, i64)>,
    /// The entries on system blocks and tools, as JSON text (as written, or as serde writes
    /// an entry read as a value).
    pub head: Vec<Cow<'a, str>>,
}

/// `cacheControl` as written (an array of entries; anything else that is JSON has none).
/// `block_at(i, content, j)` is the position of the block a path
/// `["messages", i, content, j]` names, or why it cannot be replayed.
pub(super) fn read<'a>(
    text: &'a str,
    block_at: impl Fn(u64, &str, u64) -> Result<usize, NoReplay>,
) -> Result<CacheControl<'a>, NoReplay> {
    let mut read = CacheControl {
        marks: Vec::new(),
        head: Vec::new(),
    };
    if let Some(entries) = written_entries(text).or_else(|| plain_entries(text)) {
        for entry in entries {
            let ttl = ttl_named(entry.ttl);
            read.entry(&entry.path, || Cow::Borrowed(entry.text), ttl, &block_at)?;
        }
        return Ok(read);
    }
    let entries = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(entries)) => entries,
        Ok(_) => return Ok(read),
        Err(_) => return Err(NoReplay::ByRule),
    };
    for entry in &entries {
        let (Some(path), Some(value)) = (entry.get("path"), entry.get("value")) else {
            return Err(NoReplay::ByRule);
        };
        let path = path.as_array().map(Vec::as_slice).unwrap_or_default();
        let path: Vec<Member<'_>> = path.iter().map(Member::of_value).collect();
        read.entry(
            &path,
            || Cow::Owned(entry.to_string()),
            ttl(value),
            &block_at,
        )?;
    }
    Ok(read)
}

/// An entry as the builds write it.
struct Plain<'a> {
    /// Its JSON as written.
    text: &'a str,
    path: Vec<Member<'a>>,
    ttl: Option<&'a str>,
}

/// A member of an entry's path, as the rules tell them apart.
#[derive(Clone, Copy, Debug)]
enum Member<'a> {
    Text(&'a str),
    /// A number: its value when it is a whole number that fits 64 bits.
    Number(Option<u64>),
    Other,
}

impl<'a> Member<'a> {
    fn of_value(value: &'a Value) -> Member<'a> {
        match value {
            Value::String(text) => Member::Text(text),
            Value::Number(n) => Member::Number(n.as_u64()),
            _ => Member::Other,
        }
    }
}

/// [`plain_entries`] of a `cacheControl` exactly as the recorded builds write it, read without
/// serde (three serde passes a request were a fifth of replaying a 2.1.3xx record): no
/// whitespace, each entry `{"path":[…],"value":{"type":"…"}}` (or with `,"ttl":"…"` after the
/// type, the order of Anthropic's documented form; no recording has a `ttl`), each path member
/// a string without escapes or a whole number without a sign. `None` for anything else, which
/// [`plain_entries`] reads.
fn written_entries(text: &str) -> Option<Vec<Plain<'_>>> {
    let b = text.as_bytes();
    // A string without escapes or control bytes at `i`: its text and where it ends.
    let string = |i: usize| -> Option<(&str, usize)> {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let len = b[i + 1..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        (b[i + 1 + len] == b'"').then(|| (&text[i + 1..i + 1 + len], i + len + 2))
    };
    let literal = |i: usize, what: &[u8]| b[i..].starts_with(what).then_some(i + what.len());
    let mut entries = Vec::new();
    let mut i = literal(0, b"[")?;
    if b.get(i) == Some(&b']') {
        return (i + 1 == b.len()).then_some(entries);
    }
    loop {
        let start = i;
        i = literal(i, br#"{"path":["#)?;
        let mut path = Vec::new();
        loop {
            if b.get(i) == Some(&b'"') {
                let (member, end) = string(i)?;
                path.push(Member::Text(member));
                i = end;
            } else {
                let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                if digits == 0 || (digits > 1 && b[i] == b'0') {
                    return None;
                }
                path.push(Member::Number(text[i..i + digits].parse().ok()));
                i += digits;
            }
            match b.get(i)? {
                b',' => i += 1,
                b']' => break,
                _ => return None,
            }
        }
        let (_, end) = string(literal(i, br#"],"value":{"type":"#)?)?;
        i = end;
        let mut ttl = None;
        if let Some(at) = literal(i, br#","ttl":"#) {
            let (named, end) = string(at)?;
            ttl = Some(named);
            i = end;
        }
        i = literal(i, b"}}")?;
        entries.push(Plain {
            text: &text[start..i],
            path,
            ttl,
        });
        match b.get(i)? {
            b',' => i += 1,
            b']' if i + 1 == b.len() => return Some(entries),
            _ => return None,
        }
    }
}

/// Every entry of `text`, when each is plain; `None` when one is not (or `text` is not an
/// array of them). Nothing in a plain entry is skipped unread, so what serde would refuse in
/// a value cannot hide in one.
fn plain_entries(text: &str) -> Option<Vec<Plain<'_>>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry<'a> {
        #[serde(borrow)]
        path: Vec<&'a RawValue>,
        #[serde(borrow)]
        value: &'a RawValue,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct TtlValue<'a> {
        #[serde(borrow, rename = "type")]
        _type: Option<&'a str>,
        #[serde(borrow)]
        ttl: Option<&'a str>,
    }
    // serde fills a struct from an array too: only objects are plain.
    let object = |raw: &RawValue| raw.get().starts_with('{');
    let entries: Vec<&RawValue> = serde_json::from_str(text).ok()?;
    entries
        .into_iter()
        .map(|raw| {
            let entry: Entry<'_> = serde_json::from_str(raw.get())
                .ok()
                .filter(|_| object(raw))?;
            let value: TtlValue<'_> =
                object(entry.value).then(|| serde_json::from_str(entry.value.get()).ok())??;
            let path = entry
                .path
                .iter()
                .map(|m| member(m))
                .collect::<Option<_>>()?;
            Some(Plain {
                text: raw.get(),
                path,
                ttl: value.ttl,
            })
        })
        .collect()
}

/// A path member of a plain entry: a string without escapes, or a whole number (`-` and
/// digits, its value as serde reads it: none when negative or past 64 bits).
fn member(raw: &RawValue) -> Option<Member<'_>> {
    let text = raw.get();
    if let Some(inner) = text.strip_prefix('"') {
        let inner = inner.strip_suffix('"')?;
        return (!inner.contains('\\')).then_some(Member::Text(inner));
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    (!digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()))
        .then(|| Member::Number(text.parse().ok()))
}

impl<'a> CacheControl<'a> {
    /// One entry, by its path: a head entry (`text`: its JSON) or a breakpoint of `ttl`.
    fn entry(
        &mut self,
        path: &[Member<'_>],
        text: impl FnOnce() -> Cow<'a, str>,
        ttl: i64,
        block_at: &impl Fn(u64, &str, u64) -> Result<usize, NoReplay>,
    ) -> Result<(), NoReplay> {
        match path.first() {
            Some(Member::Text("system" | "tools")) => self.head.push(text()),
            Some(Member::Text("messages")) => {
                let &[
                    _,
                    Member::Number(i),
                    Member::Text(content),
                    Member::Number(j),
                ] = path
                else {
                    return Err(NoReplay::Compile);
                };
                let (Some(i), Some(j)) = (i, j) else {
                    return Err(NoReplay::ByRule);
                };
                self.marks.push((block_at(i, content, j)?, ttl));
            }
            _ => return Err(NoReplay::ByRule),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Read = Result<(Vec<(usize, i64)>, Vec<Value>), NoReplay>;

    /// The rules as `Records::prompt` applied them before this module (`dfbe85b`), written out
    /// again: the whole text read as a value, then each entry; the head entries as values.
    fn as_value(text: &str, block_at: &impl Fn(u64, &str, u64) -> Result<usize, NoReplay>) -> Read {
        let cache_control: Value = serde_json::from_str(text).map_err(|_| NoReplay::ByRule)?;
        let mut marks = Vec::new();
        let mut head = Vec::new();
        for entry in cache_control.as_array().into_iter().flatten() {
            let (Some(path), Some(value)) = (entry.get("path"), entry.get("value")) else {
                return Err(NoReplay::ByRule);
            };
            let path = path.as_array().map(Vec::as_slice).unwrap_or_default();
            match path.first().and_then(Value::as_str) {
                Some("system" | "tools") => head.push(entry.clone()),
                Some("messages") => {
                    let [
                        _,
                        Value::Number(i),
                        Value::String(content),
                        Value::Number(j),
                    ] = path
                    else {
                        return Err(NoReplay::Compile);
                    };
                    let (Some(i), Some(j)) = (i.as_u64(), j.as_u64()) else {
                        return Err(NoReplay::ByRule);
                    };
                    let ttl = match value.get("ttl").and_then(Value::as_str) {
                        Some("1h") => 3600,
                        _ => 300,
                    };
                    marks.push((block_at(i, content, j)?, ttl));
                }
                _ => return Err(NoReplay::ByRule),
            }
        }
        Ok((marks, head))
    }

    /// The entries as read without serde, where that reading takes them, are serde's; every
    /// `cacheControl` a recorded build wrote is read without serde.
    #[test]
    fn entries_as_written_read_as_serde_reads_them() {
        let seen = |entries: Option<Vec<Plain<'_>>>| {
            entries.map(|e| {
                e.into_iter()
                    .map(|p| {
                        (
                            p.text.to_string(),
                            format!("{:?}", p.path),
                            p.ttl.map(str::to_string),
                        )
                    })
                    .collect::<Vec<_>>()
            })
        };
        let mut recorded = Vec::new();
        for (_, bytes) in crate::test_support::claude_recorded_bytes() {
            for line in String::from_utf8_lossy(&bytes).lines() {
                #[derive(Deserialize)]
                struct Record<'a> {
                    #[serde(borrow, rename = "type")]
                    type_: Option<&'a str>,
                    #[serde(borrow, rename = "cacheControl")]
                    cache_control: Option<&'a RawValue>,
                }
                if let Ok(Record {
                    type_: Some("api-request"),
                    cache_control: Some(c),
                }) = serde_json::from_str::<Record<'_>>(line)
                {
                    recorded.push(c.get().to_string());
                }
            }
        }
        assert!(recorded.len() > 20, "{} recorded", recorded.len());
        for text in &recorded {
            assert!(written_entries(text).is_some(), "{text}");
        }
        let cases = [
            r#"[]"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral"}}]"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral"}},{"path":["tools",12],"value":{"type":"ephemeral","ttl":"1h"}},{"path":["messages",3,"content",0],"value":{"type":"ephemeral"}}]"#,
            r#"[{"path":["messages",3,"content",0],"value":{"type":"ephemeral","ttl":"5m"}}]"#,
            r#"[{"path":["messages",18446744073709551616,"content",0],"value":{"type":"x"}}]"#,
            r#"[{"path":["messages",03,"content",0],"value":{"type":"ephemeral"}}]"#,
            r#"[{"path":["messages",-3,"content",0],"value":{"type":"ephemeral"}}]"#,
            r#"[{"path":["messages",3.0,"content",0],"value":{"type":"ephemeral"}}]"#,
            r#"[{"path":["mess\u0061ges",3,"content",0],"value":{"type":"ephemeral"}}]"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral"}} ]"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral"}}]x"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral"}},]"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral","ttl":null}}]"#,
            r#"[{"path":["system",0],"value":{"ttl":"1h","type":"ephemeral"}}]"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral"},"x":1}]"#,
            r#"[{"path":[],"value":{"type":"ephemeral"}}]"#,
            r#"[{"path":["system",0],"value":{}}]"#,
            r#"[{"path":["system",0],"value":{"type":"ephemeral"}}"#,
            r#"[{"path":["system",0],"value":{"type":"eph"#,
            r#"[{"path":["#,
            r#"["#,
        ];
        let mut written = 0;
        for case in cases
            .iter()
            .copied()
            .chain(recorded.iter().map(String::as_str))
        {
            if let Some(entries) = seen(written_entries(case)) {
                written += 1;
                assert_eq!(Some(entries), seen(plain_entries(case)), "{case}");
            }
        }
        assert!(
            written >= recorded.len() + 4,
            "{written} read without serde"
        );
    }

    #[test]
    fn entries_read_one_by_one_read_as_the_whole_value() {
        // Message i has i + 1 blocks, the first at 10 * i; message 3 is past the list.
        let block_at = |i: u64, content: &str, j: u64| match (content, i) {
            ("content", 0..3) if j <= i => Ok(10 * i as usize + j as usize),
            ("content", 0..3) => Err(NoReplay::Compile),
            _ => Err(NoReplay::ByRule),
        };
        let mark = r#"{"path":["messages",1,"content",1],"value":{"type":"ephemeral"}}"#;
        let cases = [
            format!("[{mark}]"),
            r#"[{"path":["messages",2,"content",0],"value":{"type":"ephemeral","ttl":"1h"}}]"#
                .into(),
            r#"[{"path":["system",0],"value":{"type":"ephemeral"}},{"path":["tools",3],"value":{"ttl":"1h"}}]"#.into(),
            format!(r#"[{{"path":["system", 1],"value":{{}}}}, {mark}]"#),
            // The first message path written twice: the last counts.
            r#"[{"path":["system",0],"path":["messages",0,"content",0],"value":{}}]"#.into(),
            r#"[{"value":{"ttl":"1h"},"path":["messages",2,"content",2],"x":[1]}]"#.into(),
            r#"[{"path":["messages",1,"content",0],"value":{"ttl":3600}}]"#.into(),
            r#"[{"path":["messages",1,"content",0],"value":{"ttl":"1h","ttl":"5m"}}]"#.into(),
            r#"[{"path":["messages",1,"content",0],"value":"1h"}]"#.into(),
            r#"[{"path":["messages",1,"content",0]}]"#.into(),
            r#"[{"path":["messages",1.0,"content",0],"value":{}}]"#.into(),
            r#"[{"path":["messages",-1,"content",0],"value":{}}]"#.into(),
            r#"[{"path":["messages",1,"contents",0],"value":{}}]"#.into(),
            r#"[{"path":["messages",1,"content",5],"value":{}}]"#.into(),
            r#"[{"path":["messages",3,"content",0],"value":{}}]"#.into(),
            r#"[{"path":["messages",1],"value":{}}]"#.into(),
            r#"[{"path":["mess\u0061ges",1,"cont\u0065nt",1],"value":{"ttl":"1\u0068"}}]"#.into(),
            r#"[{"path":["messages",1,"cont\u0065nt",1],"value":{}}]"#.into(),
            r#"[{"path":["sys\u0074em",0],"value":{}},{"path":["tools"],"value":null}]"#.into(),
            r#"[{"path":["messages","1","content",0],"value":{}}]"#.into(),
            r#"[{"path":["messages",1e0,"content",0],"value":{}}]"#.into(),
            r#"[{"path":["messages",18446744073709551616,"content",0],"value":{}}]"#.into(),
            r#"[{"path":[],"value":{}}]"#.into(),
            // serde fills a struct from an array as well: neither is an entry to the old rules.
            r#"[[["messages",1,"content",0],{}]]"#.into(),
            r#"[[["system",0],{"type":"ephemeral"}]]"#.into(),
            r#"[{"path":["messages",1,"content",0],"value":["1h"]}]"#.into(),
            // serde skips a lone surrogate or deep nesting unread, but no value holds them.
            r#"[{"path":["messages",1,"content",0],"value":{"note":"\ud800"}}]"#.into(),
            r#"[{"path":["messages",1,"content",0],"value":{},"x":"\udc00"}]"#.into(),
            r#"[{"path":["messages",1,"content",0],"value":{"type":"\ud800"}}]"#.into(),
            r#"[{"path":["messages",1,"content",5],"value":{}},{"path":["metadata"],"value":"\udc00"}]"#.into(),
            format!(
                r#"[{{"path":["messages",1,"content",0],"value":{{}},"x":{}{}}}]"#,
                "[".repeat(130),
                "]".repeat(130)
            ),
            format!(
                r#"[{{"path":["system",{}0{}],"value":{{}}}}]"#,
                "[".repeat(130),
                "]".repeat(130)
            ),
            // An error, then an entry the old rules refuse: the first error counts.
            r#"[{"path":["messages",1,"content",5],"value":{}},{"path":["system",0]}]"#.into(),
            r#"[{"path":["messages",-0,"content",0],"value":{}}]"#.into(),
            r#"[{"path":["tools",0],"value":{"type":"ephemeral","ttl":null}}]"#.into(),
            r#"[{ "path" : [ "messages" , 1 , "content" , 1 ] , "value" : { "ttl" : "1h" } }]"#.into(),
            r#"[{"path":["messages",1,"content",0,"text"],"value":{}}]"#.into(),
            r#"[{"path":["metadata"],"value":{}}]"#.into(),
            r#"[{"path":"messages","value":{}}]"#.into(),
            r#"[[1,2]]"#.into(),
            r#"[]"#.into(),
            r#"{"path":["messages",1,"content",0]}"#.into(),
            r#"null"#.into(),
            r#"[{"path":["messages",1,"content",0],"value":{}}"#.into(),
        ];
        for case in &cases {
            // A head entry's text that does not read back is a value the old rules never had.
            let read = read(case, block_at).map(|r| {
                let head = r.head.iter().map(|h| serde_json::from_str(h));
                (
                    r.marks,
                    head.collect::<Result<Vec<Value>, _>>()
                        .map_err(|e| e.to_string()),
                )
            });
            let read = read.map(|(marks, head)| (marks, head.expect("head entries read back")));
            assert_eq!(read, as_value(case, &block_at), "{case}");
        }
    }
}

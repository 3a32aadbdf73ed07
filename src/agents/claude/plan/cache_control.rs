//! A replay record's `cacheControl`: the breakpoints it puts on message blocks, and its entries
//! on system blocks and tools, which make the head. An entry as every build writes it (a path
//! of plain strings and whole numbers, a value) is read as written: a JSON value built for
//! each entry of every record was a quarter of replaying a 2.1.3xx record. Any other entry is
//! read as a value, by the same rules.

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
    let Ok(entries) = serde_json::from_str::<Vec<&RawValue>>(text) else {
        return match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(entries)) => {
                for entry in &entries {
                    read.entry(entry, Cow::Owned(entry.to_string()), &block_at)?;
                }
                Ok(read)
            }
            Ok(_) => Ok(read),
            Err(_) => Err(NoReplay::ByRule),
        };
    };
    for entry in entries {
        if let Some(read_plain) = read.plain(entry, &block_at) {
            read_plain?;
            continue;
        }
        let value: Value = serde_json::from_str(entry.get()).map_err(|_| NoReplay::ByRule)?;
        read.entry(&value, Cow::Borrowed(entry.get()), &block_at)?;
    }
    Ok(read)
}

/// An entry as every build writes it: its path's members as written.
#[derive(Deserialize)]
struct Plain<'a> {
    #[serde(borrow)]
    path: Vec<&'a RawValue>,
    #[serde(borrow)]
    value: &'a RawValue,
}

/// The TTL of a `value` as written.
fn value_ttl(value: &RawValue) -> i64 {
    #[derive(Deserialize)]
    struct Ttl<'a> {
        #[serde(borrow)]
        ttl: Option<Cow<'a, str>>,
    }
    match serde_json::from_str::<Ttl<'_>>(value.get()) {
        Ok(value) => ttl_named(value.ttl.as_deref()),
        Err(_) => ttl(&serde_json::from_str(value.get()).unwrap_or(Value::Null)),
    }
}

/// A JSON string without escapes, as written: its text.
fn plain_string(raw: &RawValue) -> Option<&str> {
    let text = raw.get().strip_prefix('"')?.strip_suffix('"')?;
    (!text.contains('\\')).then_some(text)
}

impl<'a> CacheControl<'a> {
    /// An entry of the usual form (its path's first member a plain string, a message block's
    /// path of whole numbers and a plain string), read as written; `None` for any other,
    /// which is read as a value.
    fn plain(
        &mut self,
        entry: &'a RawValue,
        block_at: &impl Fn(u64, &str, u64) -> Result<usize, NoReplay>,
    ) -> Option<Result<(), NoReplay>> {
        let plain: Plain<'_> = serde_json::from_str(entry.get()).ok()?;
        match plain_string(plain.path.first()?)? {
            "system" | "tools" => self.head.push(Cow::Borrowed(entry.get())),
            "messages" => {
                let [_, i, content, j] = plain.path[..] else {
                    return None;
                };
                let (i, j) = (i.get().parse().ok()?, j.get().parse().ok()?);
                let position = match block_at(i, plain_string(content)?, j) {
                    Ok(position) => position,
                    Err(why) => return Some(Err(why)),
                };
                self.marks.push((position, value_ttl(plain.value)));
            }
            _ => return None,
        }
        Some(Ok(()))
    }

    /// One entry read as a value (`text`: its JSON).
    fn entry(
        &mut self,
        entry: &Value,
        text: Cow<'a, str>,
        block_at: &impl Fn(u64, &str, u64) -> Result<usize, NoReplay>,
    ) -> Result<(), NoReplay> {
        let (Some(path), Some(value)) = (entry.get("path"), entry.get("value")) else {
            return Err(NoReplay::ByRule);
        };
        let path = path.as_array().map(Vec::as_slice).unwrap_or_default();
        match path.first().and_then(Value::as_str) {
            Some("system" | "tools") => self.head.push(text),
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
                self.marks.push((block_at(i, content, j)?, ttl(value)));
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

    /// The rules as they read a whole `cacheControl` value (before entries were read one by
    /// one): breakpoints, and the head entries as values.
    fn as_value(text: &str, block_at: &impl Fn(u64, &str, u64) -> Result<usize, NoReplay>) -> Read {
        let value: Value = serde_json::from_str(text).map_err(|_| NoReplay::ByRule)?;
        let mut read = CacheControl {
            marks: Vec::new(),
            head: Vec::new(),
        };
        for entry in value.as_array().into_iter().flatten() {
            read.entry(entry, Cow::Owned(entry.to_string()), block_at)?;
        }
        let head = read.head.iter().map(|h| serde_json::from_str(h).unwrap());
        Ok((read.marks, head.collect()))
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
            let read = read(case, block_at).map(|r| {
                let head = r.head.iter().map(|h| serde_json::from_str(h).unwrap());
                (r.marks, head.collect::<Vec<Value>>())
            });
            assert_eq!(read, as_value(case, &block_at), "{case}");
        }
    }
}

//! A replay record's `cacheControl`: the breakpoints it puts on message blocks, and its entries
//! on system blocks and tools, which make the head. The entry every record writes,
//! `{"path": ["messages", i, "content", j], "value": {...}}`, is read without building a JSON
//! value (one per entry of every record was a fifth of planning a 2.1.3xx transcript); any
//! other entry is read as a value, by the same rules.

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
        if let Ok(mark) = serde_json::from_str::<MessageMark<'_>>(entry.get())
            && mark.path.0 == "messages"
        {
            let (_, i, content, j) = &mark.path;
            let position = block_at(*i, content, *j)?;
            read.marks.push((position, mark.ttl()));
            continue;
        }
        let value: Value = serde_json::from_str(entry.get()).map_err(|_| NoReplay::ByRule)?;
        read.entry(&value, Cow::Borrowed(entry.get()), &block_at)?;
    }
    Ok(read)
}

/// An entry whose path is four members: two strings and two whole numbers.
#[derive(Deserialize)]
struct MessageMark<'a> {
    #[serde(borrow)]
    path: (Cow<'a, str>, u64, Cow<'a, str>, u64),
    #[serde(borrow)]
    value: &'a RawValue,
}

impl MessageMark<'_> {
    fn ttl(&self) -> i64 {
        #[derive(Deserialize)]
        struct Ttl<'a> {
            #[serde(borrow)]
            ttl: Option<Cow<'a, str>>,
        }
        match serde_json::from_str::<Ttl<'_>>(self.value.get()) {
            Ok(value) => ttl_named(value.ttl.as_deref()),
            Err(_) => ttl(&serde_json::from_str(self.value.get()).unwrap_or(Value::Null)),
        }
    }
}

impl<'a> CacheControl<'a> {
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
    fn as_value(
        text: &str,
        block_at: &impl Fn(u64, &str, u64) -> Result<usize, NoReplay>,
    ) -> Read {
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

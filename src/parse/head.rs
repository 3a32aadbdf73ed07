//! A fast reader of the top-level fields of a payload already validated (by the line scan or
//! serde_json): an item's string fields, an event's fields as raw JSON, and any object's
//! members (`for_each_member`). It skips every other value with memchr instead of parsing it
//! again.

use std::borrow::Cow;

/// The top-level string fields replay and normalization need.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Head<'a> {
    pub type_: Option<Cow<'a, str>>,
    pub role: Option<Cow<'a, str>>,
    pub call_id: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub execution: Option<Cow<'a, str>>,
    /// The raw JSON of `content`, when present.
    pub content: Option<&'a str>,
    /// The raw JSON of the event fields `turn_id`, `num_turns` and `info`, when present.
    pub turn_id_raw: Option<&'a str>,
    pub num_turns_raw: Option<&'a str>,
    pub info_raw: Option<&'a str>,
    /// An event field (`type`, `turn_id`, `num_turns`, `info`) was written twice, or some key
    /// with escapes: serde_json's typed read of an event rejects the first and unescapes the
    /// second, so it may not read what the head holds.
    pub event_fields_unsure: bool,
    /// The event fields seen so far, one bit each.
    event_fields_seen: u8,
}

impl<'a> Head<'a> {
    /// Take the member `key: value` (`value` raw JSON) if `key` is a wanted field; a later
    /// member of the same key replaces an earlier one, as in serde_json.
    pub fn set(&mut self, key: &[u8], value: &'a str) -> Result<(), String> {
        let event_field: u8 = match key {
            b"type" => 1,
            b"turn_id" => 2,
            b"num_turns" => 4,
            b"info" => 8,
            _ => 0,
        };
        if self.event_fields_seen & event_field != 0 {
            self.event_fields_unsure = true;
        }
        self.event_fields_seen |= event_field;
        let raw_slot = match key {
            b"content" => &mut self.content,
            b"turn_id" => &mut self.turn_id_raw,
            b"num_turns" => &mut self.num_turns_raw,
            b"info" => &mut self.info_raw,
            _ => return self.set_string(key, value),
        };
        *raw_slot = Some(value);
        Ok(())
    }

    /// Take `key: value` if `key` is one of the string fields.
    fn set_string(&mut self, key: &[u8], value: &'a str) -> Result<(), String> {
        let slot = match key {
            b"type" => &mut self.type_,
            b"role" => &mut self.role,
            b"call_id" => &mut self.call_id,
            b"id" => &mut self.id,
            b"name" => &mut self.name,
            b"execution" => &mut self.execution,
            _ => {
                // A key that matches a field as written has no escape; one that matches none
                // may still be one once unescaped, which serde_json's read would see.
                if key.contains(&b'\\') {
                    self.event_fields_unsure = true;
                }
                return Ok(());
            }
        };
        if value == "null" {
            *slot = None;
        } else if value.starts_with('"') {
            *slot = Some(string_text(value)?);
        } else {
            return Err(format!(
                "`{}` is not a string",
                String::from_utf8_lossy(key)
            ));
        }
        Ok(())
    }
}

/// The text of `raw`, a checked JSON string: borrowed from between its quotes unless it has
/// escapes to undo.
pub fn string_text(raw: &str) -> Result<Cow<'_, str>, String> {
    Ok(if raw.contains('\\') {
        Cow::Owned(serde_json::from_str::<String>(raw).map_err(|e| e.to_string())?)
    } else {
        Cow::Borrowed(&raw[1..raw.len() - 1])
    })
}

/// Read `json`, a valid JSON object. Errors name a wanted field whose value is not a string
/// (or `null`).
pub fn read(json: &str) -> Result<Head<'_>, String> {
    let mut head = Head::default();
    for_each_member(json, |key, value| head.set(key.as_bytes(), value))
        .ok_or_else(|| "not a JSON object".to_string())??;
    Ok(head)
}

/// Call `member(key, value)` with each member of `json`, a valid JSON object, in order: the
/// key as written (escapes kept) and the value's raw JSON. Stops at the first error. `None`
/// when `json` is not an object.
pub fn for_each_member<'a, E>(
    json: &'a str,
    mut member: impl FnMut(&'a str, &'a str) -> Result<(), E>,
) -> Option<Result<(), E>> {
    let bytes = json.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b'}') | None => break,
            Some(b',') => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let key_start = i;
        i = skip_string(bytes, i);
        let key = &json[key_start + 1..i.saturating_sub(1).max(key_start + 1)];
        i = skip_ws(bytes, i);
        i += 1; // ':'
        i = skip_ws(bytes, i);
        let value_start = i;
        i = skip_value(bytes, i);
        if let Err(e) = member(key, &json[value_start..i]) {
            return Some(Err(e));
        }
    }
    Some(Ok(()))
}

/// Call `element` with the raw JSON of each element of `json`, a valid JSON array, in order.
/// `None` when `json` is not an array.
pub fn for_each_element<'a>(json: &'a str, mut element: impl FnMut(&'a str)) -> Option<()> {
    let bytes = json.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'[') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b']') | None => return Some(()),
            Some(b',') => i += 1,
            _ => {
                let start = i;
                i = skip_value(bytes, i);
                if i == start {
                    // Not JSON after all: stop rather than loop.
                    return None;
                }
                element(&json[start..i]);
            }
        }
    }
}

pub fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// `i` is at an opening quote; returns the index after the closing quote. The text is valid
/// JSON, so the closing quote is the first one not escaped, that is, not preceded by an odd
/// run of backslashes. Searching for quotes alone skips the many `\n` escapes of tool output.
fn skip_string(bytes: &[u8], i: usize) -> usize {
    let mut at = i + 1;
    while let Some(offset) = memchr::memchr(b'"', &bytes[at.min(bytes.len())..]) {
        let quote = at + offset;
        if !escaped_at(bytes, quote) {
            return quote + 1;
        }
        at = quote + 1;
    }
    bytes.len()
}

/// Whether `bytes[at]`, inside a JSON string, is escaped: whether an odd run of backslashes
/// comes right before it.
pub fn escaped_at(bytes: &[u8], at: usize) -> bool {
    let backslashes = bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    backslashes % 2 == 1
}

/// How deeply `raw`, a valid JSON value, nests arrays and objects (0 for a scalar).
pub fn nesting_depth(raw: &str) -> usize {
    let bytes = raw.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0, 0);
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at = skip_string(bytes, at);
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    deepest
}

/// `i` is at the start of a value; returns the index after it.
pub fn skip_value(bytes: &[u8], i: usize) -> usize {
    match bytes.get(i) {
        Some(b'"') => skip_string(bytes, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut at = i;
            while at < bytes.len() {
                match bytes[at] {
                    b'"' => {
                        at = skip_string(bytes, at);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return at + 1;
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
            bytes.len()
        }
        _ => {
            let mut at = i;
            while at < bytes.len()
                && !matches!(bytes[at], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                at += 1;
            }
            at
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wanted_fields_and_skips_the_rest() {
        let json = r#"{"type":"function_call","arguments":"{\"a\":[1,{\"b\":\"}\"}]}","nested":{"call_id":"inner","x":[1,2,"]"]},"call_id":"c\"1","id":null,"n":-1.5e3,"name":"shell"}"#;
        let head = read(json).expect("valid");
        assert_eq!(head.type_.as_deref(), Some("function_call"));
        assert_eq!(head.call_id.as_deref(), Some("c\"1"));
        assert_eq!(head.id, None);
        assert_eq!(head.name.as_deref(), Some("shell"));
        assert_eq!(head.role, None);
    }

    #[test]
    fn agrees_with_serde_json_on_every_fixture_item() {
        for (name, session) in crate::test_support::all_fixtures() {
            for item in &session.rollout.items {
                let json = item.json(&session.rollout.bytes);
                let value: serde_json::Value = serde_json::from_str(json).expect("items are JSON");
                let head = read(json).expect("valid");
                let field = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_string);
                assert_eq!(head.type_.map(|c| c.into_owned()), field("type"), "{name}");
                assert_eq!(
                    head.call_id.map(|c| c.into_owned()),
                    field("call_id"),
                    "{name}"
                );
                assert_eq!(head.role.map(|c| c.into_owned()), field("role"), "{name}");
            }
        }
    }

    #[test]
    fn a_quote_after_an_even_run_of_backslashes_ends_the_string() {
        // Values end in `\\` (one escaped backslash) and `\\\"` (a backslash, then a quote).
        let json =
            r#"{"output":"dir C:\\","arguments":"say \\\"hi\\\"","call_id":"c1","x":"\"}\\"}"#;
        let head = read(json).expect("valid");
        assert_eq!(head.call_id.as_deref(), Some("c1"));
        let value: serde_json::Value = serde_json::from_str(json).expect("valid JSON");
        assert_eq!(value["call_id"], "c1");
    }

    #[test]
    fn rejects_non_string_wanted_fields() {
        assert_eq!(
            read(r#"{"type":"x","call_id":5}"#),
            Err("`call_id` is not a string".to_string())
        );
    }
}

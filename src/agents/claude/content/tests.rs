use serde_json::Value;

use super::super::load::Sha256Name;
use super::{Content, fast, fast_at, heads, message_sha256, read};
use crate::agents::claude::replay::message_hash;
use crate::test_support::{claude_recorded_bytes, claude_sample_bytes};

/// The value's way: what the loader read before the one-scan reading.
fn slow(role: &str, content: &str) -> (Content, super::Heads) {
    let value: Value = serde_json::from_str(content).unwrap_or(Value::Null);
    (Content::of(role, &value), heads(content))
}

/// `replay::message_hash` of a message of these contents, built as `replay` builds it.
fn slow_sha256(role: &str, contents: &[&str]) -> Sha256Name {
    let mut blocks = Vec::new();
    for c in contents {
        match serde_json::from_str::<Value>(c) {
            Ok(Value::Array(items)) => blocks.extend(items),
            Ok(Value::String(s)) => blocks.push(serde_json::json!({"type": "text", "text": s})),
            _ => {}
        }
    }
    message_hash(&serde_json::json!({"role": role, "content": blocks}))
}

const ODD: &[&str] = &[
    r#""plain text""#,
    r#""line\nbreak \"quoted\" back\\slash \t tab \u001b escape""#,
    r#""\u00e9 is written back as é""#,
    r#""\u001B upper-case hex""#,
    r#""\u000a a short escape written long""#,
    r#""a \/ slash""#,
    r#"[]"#,
    r#"[{"type":"text","text":"hi"}]"#,
    r#"[{"text":"hi","type":"text"}]"#,
    r#"[{"type":"text","text":"hi","citations":null}]"#,
    r#"[{"type":"text","text":7}]"#,
    r#"[{"type":"text"}]"#,
    r#"[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#,
    r#"[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls","n":1,"f":1.5}}]"#,
    r#"[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"n":-0}}]"#,
    r#"[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"n":12345678901234567890}}]"#,
    r#"[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"n":1e5,"m":-3}}]"#,
    r#"[{"type":"tool_use","id":"to\u006flu_1","name":"Bash","input":{}}]"#,
    r#"[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false}]"#,
    r#"[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"x"}]}]"#,
    r#"[{"type":"tool_result","tool_use_id":7}]"#,
    r#"[{"type":"tool_result","tool_use_id":null,"content":"x"}]"#,
    r#"[{"type":"thinking","thinking":"hmm","signature":"abc"}]"#,
    r#"[{"type":"redacted_thinking","data":"x"}]"#,
    r#"[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]"#,
    r#"[{"type":"tool_use","id":"t","input":{"cache_control":1}}]"#,
    r#"[{"type":"text","type":"text","text":"a"}]"#,
    r#"[{"type":"tool_use","id":"t","input":{"a":1,"a":2}}]"#,
    r#"["a string block",{"type":"text","text":"b"}]"#,
    r#"[{"type":"text","text":"b"},7,null,true]"#,
    r#"[ {"type":"text","text":"spaced"} ]"#,
    r#"[{"type": "text", "text": "spaced"}]"#,
    r#"{"type":"text","text":"an object"}"#,
    r#"42"#,
    r#"null"#,
    r#"[{"type":"text","text":"deep","x":[[[{"y":[true,false,null,0,-1]}]]]}]"#,
    r#"[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]"#,
    r#"[{}]"#,
    r#""  <system-reminder>not first, spaces before it</system-reminder> ""#,
    r#""<system-reminder>injected</system-reminder>""#,
    r#"[{"type":"text","text":"<system-reminder>a</system-reminder>"},{"type":"text","text":"  the \"prompt\"\n with escapes \t "}]"#,
    r#"[{"type":"tool_result","tool_use_id":"t","content":"x","text":"a text key on a result"}]"#,
    r#"[{"type":"text","text":"<system-reminder>only context</system-reminder>"}]"#,
    r#"[{"type":"text","text":"ends with a quote \""}]"#,
    r#"[{"type":"image","text":"not a text block"},{"type":"text","text":"last"}]"#,
];

#[test]
fn one_scan_reads_what_the_value_reads() {
    for role in ["user", "assistant", "sys\"tem"] {
        for content in ODD {
            assert_eq!(read(role, content), slow(role, content), "{role} {content}");
        }
    }
    // Most of these take the one-scan way; the odd ones the value's.
    let fast_ones = ODD
        .iter()
        .filter(|c| fast("user", c.as_bytes()).is_some())
        .count();
    assert!(
        (15..ODD.len() - 10).contains(&fast_ones),
        "{fast_ones} fast"
    );
}

#[test]
fn message_hashes_are_replays() {
    for role in ["user", "assistant", "system"] {
        for a in ODD {
            for b in [
                "[]",
                r#""more""#,
                r#"[{"type":"text","text":"x","z":{"b":1,"a":[2]}}]"#,
            ] {
                let contents = [*a, b];
                if let Some(fast) = message_sha256(role, contents.iter().copied()) {
                    assert_eq!(fast, slow_sha256(role, &contents), "{role} {a} {b}");
                }
            }
        }
    }
}

/// The sha256 the content's scan takes as it reads a line's content is the one
/// [`message_sha256`] takes of that content alone, `None` where that is; a content the scan
/// does not read has none.
#[test]
fn the_scans_sha256_is_the_messages() {
    let more = [
        r#"[{"type":"text","a\"b":"a key with an escape"}]"#,
        r#"[{"type":"text","a\"b":"x"},{"type":"tool_use","id":"t","input":{"b":1,"a":2}}]"#,
        r#"[{"type":"tool_use","id":"t","input":{"a\"b":1}}]"#,
        r#"[{"z":1,"type":"tool_use","id":"t","input":{"q":[{"b":2,"a":1}],"a":{"d":4,"c":3}}}]"#,
        r#"[{"type":"text","text":"a"},{"type":"tool_use","id":"t","input":{"y":1,"x":2}}]"#,
    ];
    let mut taken = 0;
    for role in ["user", "assistant"] {
        for content in ODD.iter().chain(&more) {
            let expected = message_sha256(role, [*content].into_iter());
            match fast_at(role, content.as_bytes(), true) {
                Some((_, _, end, sha)) if end == content.len() => {
                    assert_eq!(sha, Some(expected.clone()), "{role} {content}");
                    taken += usize::from(expected.is_some());
                }
                _ => {}
            }
            if let Some((_, _, _, sha)) = fast_at(role, content.as_bytes(), false) {
                assert_eq!(sha, None, "{role} {content}");
            }
        }
    }
    assert!(taken >= 20, "{taken} taken");
    // A key with an escape: the scan reads the block, the message has no sha256.
    let (_, _, _, sha) = fast_at("user", more[0].as_bytes(), true).unwrap();
    assert_eq!(sha, Some(None));
}

/// Every content of every real sample and recorded transcript: the one-scan reading equals the
/// value's, and so does the replay hash of each line as a message.
#[test]
fn every_recorded_content_reads_as_its_value() {
    let mut inputs = claude_sample_bytes();
    inputs.extend(claude_recorded_bytes());
    let (mut lines, mut fast_lines) = (0, 0);
    for (name, bytes) in &inputs {
        for line in String::from_utf8_lossy(bytes).lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let role = match value["type"].as_str() {
                Some("user") => "user",
                Some("assistant") => "assistant",
                _ => continue,
            };
            let Some(content) = value["message"].get("content") else {
                continue;
            };
            // The content as written in the line.
            let raw = serde_json::from_str::<Raw>(line).unwrap();
            let text = raw.message.content.get();
            assert_eq!(serde_json::from_str::<Value>(text).unwrap(), *content);
            assert_eq!(read(role, text), slow(role, text), "{name}: {line:.200}");
            let sha = message_sha256(role, [text].into_iter());
            if let Some(h) = &sha {
                assert_eq!(*h, slow_sha256(role, &[text]), "{name}: {line:.200}");
            }
            if let Some((_, _, _, scanned)) = fast_at(role, text.as_bytes(), true) {
                assert_eq!(scanned, Some(sha), "{name}: {line:.200}");
            }
            lines += 1;
            fast_lines += usize::from(fast(role, text.as_bytes()).is_some());
        }
    }
    // The recordings alone hold 641 (the real samples, when present, thousands more).
    assert!(lines > 500, "{lines} lines");
    // Claude Code writes what serde writes back: almost every line takes the one-scan way.
    assert!(fast_lines * 100 > lines * 95, "{fast_lines} of {lines}");
}

#[derive(serde::Deserialize)]
struct Raw<'a> {
    #[serde(borrow)]
    message: RawMessage<'a>,
}

#[derive(serde::Deserialize)]
struct RawMessage<'a> {
    #[serde(borrow)]
    content: &'a serde_json::value::RawValue,
}

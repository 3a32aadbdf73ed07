use proptest::prelude::*;
use serde::de::IgnoredAny;

use super::*;
use crate::parse::Envelope;
use crate::parse::head;

/// The end of the string that starts before `start`, as the scan reads it; the word-at-a-time
/// scan (other targets) must read it the same.
fn string_end_checked(bytes: &[u8], start: usize) -> Option<usize> {
    let end = string_end(bytes, start);
    let by_words = words::string_end(bytes, start);
    assert_eq!(end, by_words, "{:?}", String::from_utf8_lossy(bytes));
    end
}

/// The `serde_json` verdict on `text` as the envelope parse sees it: every value checked, none
/// kept.
fn serde_accepts(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

fn serde_envelope(text: &str) -> Option<EnvelopeText<'_>> {
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    Some(EnvelopeText {
        type_: envelope.type_.map(|r| r.get()),
        payload: envelope.payload.map(|r| r.get()),
        record_type: envelope.record_type.map(|r| r.get()),
        timestamp: envelope.timestamp.map(|r| r.get()),
        id: envelope.id.map(|r| r.get()),
        ordinal: envelope.ordinal.map(|r| r.get()),
        metadata: envelope.metadata.map(|r| r.get()),
    })
}

/// What the fast path must hold to on one line: whatever it accepts, serde_json accepts with
/// the same envelope, and the payload head is `head::read`'s.
fn check_line(text: &str) -> Result<bool, String> {
    let Some(scanned) = scan(text) else {
        return Ok(false);
    };
    let expected = serde_envelope(text)
        .ok_or_else(|| format!("accepted what serde_json rejects: {text:?}"))?;
    if scanned.envelope != expected {
        return Err(format!(
            "envelope {:?} != {expected:?} in {text:?}",
            scanned.envelope
        ));
    }
    if let Some(payload_head) = &scanned.payload_head {
        let payload = expected.payload.ok_or("a head without a payload")?;
        let read = head::read(payload).map_err(|e| format!("head::read failed: {e}"))?;
        if *payload_head != read {
            return Err(format!("head {payload_head:?} != {read:?} in {text:?}"));
        }
    }
    Ok(true)
}

#[test]
fn every_fixture_and_sample_line_reads_as_serde_json_reads_it() {
    let mut accepted = 0;
    let mut valid = 0;
    for line in crate::test_support::fixture_and_sample_lines() {
        let ok = check_line(&line).unwrap_or_else(|e| panic!("{e}"));
        // The fast path declines only unusual lines: escaped top-level keys and nesting past
        // 128, which no fixture or sample has, and `\u` surrogate escapes, which only the lone
        // surrogate fixture has.
        let surrogate = line.as_bytes().windows(4).any(|w| {
            w[..2] == *b"\\u"
                && matches!(w[2], b'd' | b'D')
                && w[3].is_ascii_hexdigit()
                && w[3] >= b'8'
        });
        assert!(!(ok && surrogate), "read a surrogate escape: {line}");
        if line.trim_start().starts_with('{') && serde_envelope(&line).is_some() && !surrogate {
            valid += 1;
            accepted += usize::from(ok);
        }
    }
    assert!(valid > 100, "{valid} lines");
    assert_eq!(accepted, valid);
}

#[test]
fn strings_across_words_end_where_serde_json_says() {
    for len in [0, 1, 6, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200] {
        for (fill, tail) in [
            ("a", ""),
            ("\\n", ""),
            ("\\\\", ""),
            ("é", ""),
            ("a", "\\\""),
            ("a", "\\u00e9"),
        ] {
            let body = fill.repeat(len) + tail;
            let text = format!("\"{body}\",");
            let end = string_end_checked(text.as_bytes(), 1);
            assert_eq!(end, Some(text.len() - 1), "{text:?}");
            // Cut anywhere inside, the string never ends.
            for cut in [text.len() - 2, text.len() / 2] {
                if text.is_char_boundary(cut) && cut > 0 {
                    let cut_text = &text[..cut];
                    let end = string_end_checked(cut_text.as_bytes(), 1);
                    assert!(
                        end.is_none_or(|e| serde_accepts(&cut_text[..e])),
                        "{cut_text:?}: {end:?}"
                    );
                }
            }
        }
    }
}

/// Backslash runs of every length around the edges of the SSE2 scan's 16-byte first look and
/// its 64-byte blocks: whether the byte after a run is escaped carries from block to block.
/// Blocks start after the first look when it holds no special byte (edges at 16, 80, 144 from
/// the string's start) and at the start when it does (a leading `\n`: edges at 64, 128).
#[test]
fn backslash_runs_across_blocks_end_where_serde_json_says() {
    let plain = (10..20)
        .chain(74..84)
        .chain(138..148)
        .map(|offset| ("", offset));
    let escaped_first = (56..66).chain(120..130).map(|offset| ("\\n", offset));
    for (lead, offset) in plain.chain(escaped_first) {
        for run in 1..=5 {
            for after in ["\"", "n", "u00e9", "x", "\u{1}", ""] {
                let text = format!(
                    "\"{lead}{}{}{after}tail\"",
                    "a".repeat(offset),
                    "\\".repeat(run)
                );
                let end = string_end_checked(text.as_bytes(), 1);
                match end {
                    Some(end) => assert!(serde_accepts(&text[..end]), "{text:?} up to {end}"),
                    None => assert!(!serde_accepts(&text), "{text:?}"),
                }
                if serde_accepts(&text) {
                    assert_eq!(end, Some(text.len()), "{text:?}");
                }
            }
        }
    }
}

#[test]
fn bad_strings_are_left_to_serde_json() {
    for bad in [
        "\"a\u{1}b\"",
        "\"tab\there\"",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\u12g4\"",
        "\"unterminated",
        "\"ends in a backslash\\\"",
        "\"\\",
    ] {
        assert_eq!(string_end_checked(bad.as_bytes(), 1), None, "{bad:?}");
        assert!(!serde_accepts(bad), "{bad:?}");
    }
}

#[test]
fn lines_serde_json_rejects_are_never_accepted() {
    for bad in [
        r#"{"type":"x","payload":{}} x"#,
        r#"{"type":"x",}"#,
        r#"{"type":"x","payload":[1,]}"#,
        r#"{"type":"x","n":01}"#,
        r#"{"type":"x","n":1.}"#,
        r#"{"type":"x","n":-}"#,
        r#"{"type":"x","n":1e}"#,
        r#"{"type":"x","n":tru}"#,
        r#"{"type":"x","payload":{"a":1}"#,
        r#"{"type":"x","payload":{"a" 1}}"#,
        r#"{"type":"x","payload":{"a":1]}"#,
        r#"{"type":"x","type":"y"}"#,
        r#"{"type":"x"}}"#,
        r#"{"type":"x",1:2}"#,
    ] {
        assert!(scan(bad).is_none(), "{bad}");
    }
    // Valid but left to serde_json: an escaped envelope key, and nesting past the limit.
    assert!(scan(r#"{"typ\u0065":"x"}"#).is_none());
    let deep = format!(r#"{{"payload":{}{}}}"#, "[".repeat(200), "]".repeat(200));
    assert!(serde_accepts(&deep));
    assert!(scan(&deep).is_none());
}

#[test]
fn the_envelope_and_payload_head_are_read() {
    let line = r#" {"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"function_call","name":"sh\"ell","arguments":"{\"a\":[1,{\"call_id\":2}]}","call_id":"c1","content":[{"x":null}]},"ordinal":-1.5e3} "#;
    let scanned = scan(line).expect("valid");
    assert_eq!(scanned.envelope.type_, Some(r#""response_item""#));
    assert_eq!(
        scanned.envelope.timestamp,
        Some(r#""2025-01-01T00:00:00Z""#)
    );
    assert_eq!(scanned.envelope.ordinal, Some("-1.5e3"));
    assert_eq!(scanned.envelope.record_type, None);
    let head = scanned.payload_head.expect("an object payload");
    assert_eq!(head.type_.as_deref(), Some("function_call"));
    assert_eq!(head.name.as_deref(), Some("sh\"ell"));
    assert_eq!(head.call_id.as_deref(), Some("c1"));
    assert_eq!(head.content, Some(r#"[{"x":null}]"#));
    assert_eq!(check_line(line), Ok(true));
}

/// serde_json reads an `Option` field given as `null` as absent; so must the scan, or a line
/// would change branch (a bare item instead of a typeless object, say).
#[test]
fn null_envelope_fields_are_absent_as_for_serde_json() {
    for line in [
        r#"{"type":null,"foo":1}"#,
        r#"{"type":null,"payload":{"type":"message"}}"#,
        r#"{"type":"message","role":"user","content":[],"record_type":null}"#,
        r#"{"id":null,"timestamp":"2025-01-01T00:00:00Z"}"#,
        r#"{"type":"response_item","payload":null}"#,
        r#"{"timestamp":"t","type":"event_msg","payload":{"type":"x"},"ordinal":null,"metadata":null}"#,
    ] {
        assert_eq!(check_line(line), Ok(true), "{line}");
    }
    assert_eq!(
        scan(r#"{"type":null}"#).expect("valid").envelope.type_,
        None
    );
    // A duplicate is a duplicate even when the first one is null.
    assert!(scan(r#"{"type":null,"type":"x"}"#).is_none());
    assert!(serde_envelope(r#"{"type":null,"type":"x"}"#).is_none());
}

/// Bytes that matter to JSON syntax, to splice into valid lines.
const SPLICES: &[&str] = &[
    "\"",
    "\\",
    "\\u",
    "\\ud800",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "0",
    "-",
    ".",
    "e",
    "1",
    " ",
    "\u{1}",
    "\t",
    "null",
    "tru",
    "é",
    "\\n",
    "\"type\":",
    "\"payload\":",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random edits of real lines: whatever the fast path accepts, serde_json accepts the same.
    #[test]
    fn edited_lines_are_accepted_only_as_serde_json_accepts_them(
        line in 0usize..10_000,
        edits in proptest::collection::vec((0usize..100_000, 0usize..SPLICES.len(), 0usize..5), 1..4),
    ) {
        let lines = fixture_lines();
        let mut text = lines[line % lines.len()].clone();
        for (at, splice, action) in edits {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match action {
                0 => text.insert_str(at, SPLICES[splice]),
                1 => text.truncate(at),
                2 => {
                    // A string value from `at` on becomes `null`.
                    if let Some(start) = text[at..].find(":\"").map(|k| at + k + 1)
                        && let Some(end) = string_end_checked(text.as_bytes(), start + 1)
                    {
                        text.replace_range(start..end, "null");
                    }
                }
                _ => {
                    let mut end = (at + 1 + splice).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end, "");
                }
            }
        }
        check_line(&text).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn generated_strings_end_where_serde_json_says(
        parts in proptest::collection::vec(
            prop_oneof![Just("\\"), Just("\""), Just("a"), Just("n"), Just("u"), Just("0"), Just("\u{1f}"), Just("é"), Just("\\\\"), Just("\\\""), Just("\\u00e9"), Just("\\u0"), Just("\u{7f}"), Just("0123456789abcdef")],
            0..200,
        ),
    ) {
        let body: String = parts.concat();
        let text = format!("\"{body}");
        if let Some(end) = string_end_checked(text.as_bytes(), 1) {
            prop_assert!(serde_accepts(&text[..end]), "{:?} accepted up to {}", text, end);
            prop_assert!(text[..end].ends_with('"'));
        }
        // And a string serde_json reads whole is read to its end.
        let whole = format!("\"{body}\"");
        if serde_accepts(&whole) {
            prop_assert_eq!(string_end_checked(whole.as_bytes(), 1), Some(whole.len()), "{:?}", whole);
        }
    }
}

fn fixture_lines() -> &'static Vec<String> {
    static LINES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        crate::test_support::fixture_bytes()
            .into_iter()
            .flat_map(|(_, bytes)| {
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .filter(|l| l.trim_start().starts_with('{'))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    })
}

/// A `\u` surrogate escape ends the scan, paired or not: serde_json checks the pairing, and
/// a lone surrogate makes the line unreadable. Other `\u` escapes, `\uD7FF` and `\uE000` at the
/// surrogates' edges among them, are read.
#[test]
fn surrogate_escapes_are_left_to_serde_json() {
    for (text, valid) in [
        ("\"\\ud83d\\ude00\"", true),
        ("\"\\uD83D\\uDE00\"", true),
        ("\"\\uDbFf\\udFfF\"", true),
        ("\"\\ud800\"", false),
        ("\"\\udc00 low first\"", false),
        ("\"x\\ud83dx\"", false),
    ] {
        assert_eq!(string_end_checked(text.as_bytes(), 1), None, "{text}");
        assert_eq!(
            serde_json::from_str::<String>(text).is_ok(),
            valid,
            "{text}"
        );
        let line = format!(r#"{{"type":"x","payload":{{"text":{text}}}}}"#);
        assert!(scan(&line).is_none(), "{line}");
    }
    for text in [
        "\"\\ud7ff\"",
        "\"\\uE000\"",
        "\"\\u00e9\\u0041\"",
        "\"\\uFFFF\"",
    ] {
        assert_eq!(
            string_end_checked(text.as_bytes(), 1),
            Some(text.len()),
            "{text}"
        );
    }
}

/// Pieces of JSON string text: plain, escaped, and escapes that stand for 1 to 4 bytes.
const STRING_PIECES: [&str; 14] = [
    "a",
    " ",
    "é",
    "日",
    "🎉",
    "\\n",
    "\\\\",
    "\\\"",
    "\\/",
    "\\u001b",
    "\\u00e9",
    "\\u20ac",
    "\\ud83c\\udf89",
    "\\\\u0041",
];

proptest! {
    #[test]
    fn unescaped_lengths_are_serde_jsons(
        pieces in proptest::collection::vec(proptest::sample::select(&STRING_PIECES[..]), 0..160),
    ) {
        let content = pieces.concat();
        let text: String = serde_json::from_str(&format!("\"{content}\"")).expect("valid string");
        prop_assert_eq!(unescaped_len(&content), text.len(), "{}", content);
        prop_assert_eq!(words::unescaped_len(content.as_bytes()), text.len(), "{}", content);
    }
}

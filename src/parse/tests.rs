//! Loading: generations, exact bytes and line numbers, and bad lines.

use crate::model::{Generation, RecordKind};
use crate::parallel::Threads;
use crate::parse::{LoadError, LoadOptions, load, turn_context, turn_context_fields};
use serde_json::{Map, Value};

fn load_text(text: &str) -> Result<crate::model::Rollout, LoadError> {
    load("t.jsonl", text.as_bytes().to_vec(), LoadOptions::default())
}

#[test]
fn detects_each_generation_from_its_first_line() {
    let cases = [
        (
            r#"{"id":"x","timestamp":"2025-09-10T18:58:38Z","instructions":null}"#,
            Generation::BareLegacy,
        ),
        (
            r#"{"timestamp":"t","record_type":"session_meta","id":"x"}"#,
            Generation::Tagged,
        ),
        (
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#,
            Generation::RolloutLines,
        ),
        (
            r#"{"type":"message","role":"user","content":[]}"#,
            Generation::PlainItems,
        ),
    ];
    for (line, generation) in cases {
        assert_eq!(
            load_text(line).expect("loads").generation,
            generation,
            "{line}"
        );
    }
}

#[test]
fn bare_legacy_state_lines_do_not_decide_the_generation() {
    let rollout = load_text(
        "{\"record_type\":\"state\"}\n{\"id\":\"x\",\"timestamp\":\"t\"}\n{\"type\":\"message\",\"role\":\"user\",\"content\":[]}",
    )
    .expect("loads");
    assert_eq!(rollout.generation, Generation::BareLegacy);
}

/// A timestamp reads as serde_json reads the string: in place when it has no escapes (with the
/// serde path too, for a line the scan declines), unescaped when it has.
#[test]
fn timestamps_read_as_their_string_text() {
    let plain =
        r#"{"timestamp":"2025-11-20T14:00:05.000Z","type":"session_meta","payload":{"id":"x"}}"#;
    let escaped = r#"{"timestamp":"2025-11-20T14:00:05.000\u005a","type":"event_msg","payload":{"type":"x"}}"#;
    // A key written with an escape: the scan declines the line and serde_json reads it.
    let declined = r#"{"timestamp":"2025-11-20T14:00:06.000Z","\u0074ype":"event_msg","payload":{"type":"x"}}"#;
    let text = format!("{plain}\n{escaped}\n{declined}\n");
    let rollout = load_text(&text).expect("loads");
    let read: Vec<_> = rollout
        .records
        .iter()
        .map(|r| r.timestamp.as_ref().map(|t| t.get(&rollout.bytes)))
        .collect();
    assert_eq!(
        read,
        [
            Some("2025-11-20T14:00:05.000Z"),
            Some("2025-11-20T14:00:05.000Z"),
            Some("2025-11-20T14:00:06.000Z"),
        ]
    );
    assert!(matches!(
        rollout.records[0].timestamp,
        Some(crate::model::Text::Span(_))
    ));
    assert!(matches!(
        rollout.records[1].timestamp,
        Some(crate::model::Text::Owned(_))
    ));
    assert!(matches!(
        rollout.records[2].timestamp,
        Some(crate::model::Text::Span(_))
    ));
}

#[test]
fn records_keep_line_numbers_and_exact_bytes() {
    let first = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#;
    let item = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#;
    let second = format!(r#"{{"timestamp":"t","type":"response_item","payload":{item}}}"#);
    let rollout = load_text(&format!("{first}\r\n\n{second}\n")).expect("loads");
    assert_eq!(rollout.records.len(), 2);
    assert_eq!(rollout.records[0].line, 1);
    assert_eq!(rollout.line_bytes(&rollout.records[0]), first.as_bytes());
    assert_eq!(rollout.records[1].line, 3);
    assert_eq!(rollout.item_json(0), item);
}

#[test]
fn tagged_lines_are_flattened_into_items() {
    let rollout = load_text(
        "{\"timestamp\":\"t\",\"record_type\":\"session_meta\",\"id\":\"x\"}\n{\"timestamp\":\"t\",\"record_type\":\"response\",\"type\":\"message\",\"role\":\"user\",\"content\":[]}",
    )
    .expect("loads");
    assert_eq!(
        rollout.item_json(0),
        r#"{"type":"message","role":"user","content":[]}"#
    );
    assert_eq!(
        rollout.meta.as_ref().and_then(|m| m.id.as_deref()),
        Some("x")
    );
}

#[test]
fn unknown_line_and_item_types_are_kept() {
    let rollout = load_text(
        "{\"timestamp\":\"t\",\"type\":\"telemetry_blob\",\"payload\":{}}\n{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{\"type\":\"hologram_call\"}}",
    )
    .expect("loads");
    assert!(
        matches!(&rollout.records[0].kind, RecordKind::Unknown { type_name } if type_name == "telemetry_blob")
    );
    assert_eq!(rollout.items[0].type_name, "hologram_call");
    assert!(rollout.skipped.is_empty());
}

#[test]
fn bad_lines_are_skipped_with_line_column_and_reason() {
    let good = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#;
    let rollout = load_text(&format!(
        "{good}\nnot json\n[1,2]\n{{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":42}}\n{good}\n{{\"truncated\":"
    ))
    .expect("loads");
    let skipped: Vec<(usize, Option<usize>, &str)> = rollout
        .skipped
        .iter()
        .map(|s| (s.line, s.column, s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (2, Some(2), "not JSON: expected ident"),
            (3, None, "JSON array, not an object"),
            (
                4,
                Some(51),
                "`response_item` payload is a JSON number, not an object"
            ),
            (6, Some(13), "not JSON: EOF while parsing a value"),
        ]
    );
    assert_eq!(rollout.notes.len(), 1, "the second session_meta is noted");
}

#[test]
fn strict_mode_fails_on_the_first_skipped_line() {
    let result = load(
        "t.jsonl",
        b"{\"type\":\"message\",\"role\":\"user\",\"content\":[]}\n{oops".to_vec(),
        LoadOptions {
            strict: true,
            threads: Threads::new(1),
        },
    );
    match result {
        Err(LoadError::Strict { line, column, .. }) => assert_eq!((line, column), (2, Some(2))),
        other => panic!("expected a strict error, got {other:?}"),
    }
}

#[test]
fn files_that_are_not_rollouts_are_errors_naming_the_file() {
    let cases: [(&[u8], &str); 5] = [
        (b"", "t.jsonl: empty file, not a rollout"),
        (b"\n  \n\n", "t.jsonl: empty file, not a rollout"),
        (
            b"[{\"type\":\"message\"}]",
            "t.jsonl: not a rollout: no line is a JSON object (line 1: JSON array, not an object)",
        ),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00",
            "t.jsonl: not a rollout: no line is a JSON object (line 1: invalid UTF-8)",
        ),
        (
            &[0x28, 0xb5, 0x2f, 0xfd, 0, 1],
            "t.jsonl: not a rollout: no line is a JSON object (line 1: zstd-compressed data; decompress it first)",
        ),
    ];
    for (bytes, message) in cases {
        let error =
            load("t.jsonl", bytes.to_vec(), LoadOptions::default()).expect_err("not a rollout");
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn deep_nesting_and_huge_lines_do_not_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let rollout = load_text(&format!(
        "{{\"type\":\"message\",\"role\":\"user\",\"content\":[]}}\n{deep}\n{{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"x\",\"info\":{deep}}}}}"
    ))
    .expect("loads");
    assert_eq!(rollout.records.len() + rollout.skipped.len(), 3);
    let huge = format!(
        "{{\"type\":\"message\",\"role\":\"user\",\"content\":\"{}",
        "a".repeat(20_000_000)
    );
    let rollout = load_text(&format!(
        "{{\"type\":\"message\",\"role\":\"user\",\"content\":[]}}\n{huge}"
    ))
    .expect("loads");
    assert_eq!(rollout.skipped.len(), 1);
    assert!(
        rollout.skipped[0].excerpt.chars().count() <= 62,
        "excerpts stay short"
    );
}

/// Parsing in parts on several threads gives exactly what one thread gives: line numbers, item
/// ids, skipped lines, notes (a later `session_meta` in another part), strict errors. Parts are
/// a few lines long in test builds, so every fixture is cut many times.
#[test]
fn parallel_parts_load_exactly_like_one_thread() {
    let mut inputs = crate::test_support::fixture_bytes();
    inputs.extend(crate::test_support::real_sample_bytes());
    // Lines a part could start or end on: blank, CRLF, no final newline, a meta line late.
    inputs.push((
        "edges.jsonl".into(),
        b"\n{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[]}}\r\n\n{oops\n{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"a\"}}\n{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"b\",\"forked_from_id\":\"a\"}}\n{\"type\":\"mystery\",\"payload\":{}}".to_vec(),
    ));
    assert!(inputs.len() > 40, "fixtures found: {}", inputs.len());
    for (name, bytes) in inputs {
        for strict in [false, true] {
            let one = |threads| {
                format!(
                    "{:?}",
                    load(
                        &name,
                        bytes.clone(),
                        LoadOptions {
                            strict,
                            threads: Threads::new(threads),
                        },
                    )
                )
            };
            let expected = one(1);
            if let Ok(rollout) = load(
                &name,
                bytes.clone(),
                LoadOptions {
                    strict,
                    threads: Threads::new(1),
                },
            ) {
                assert!(
                    rollout.notes.is_sorted_by_key(|(line, _)| *line),
                    "{name}: notes in line order"
                );
            }
            for threads in [2, 5] {
                assert_eq!(
                    one(threads),
                    expected,
                    "{name}, {threads} threads, strict {strict}"
                );
            }
        }
    }
}

/// What the loader reads it releases to the input's owner once, while it reads (every
/// `RELEASE_BYTES` of a part, not only at its end), and releasing changes nothing loaded.
#[test]
fn the_loader_releases_every_byte_once_as_it_reads() {
    let mut inputs = crate::test_support::fixture_bytes();
    inputs.extend(crate::test_support::real_sample_bytes());
    let mut released_midway = false;
    for (name, bytes) in inputs {
        for threads in [1, 3] {
            let options = || LoadOptions {
                strict: false,
                threads: Threads::new(threads),
            };
            let (releasing, log) = crate::test_support::logging_release(bytes.clone());
            let released = load(&name, releasing, options());
            let kept = load(&name, bytes.clone(), options());
            assert_eq!(format!("{released:?}"), format!("{kept:?}"), "{name}");
            let mut ranges = log.lock().unwrap().clone();
            ranges.sort_by_key(|range| range.start);
            ranges.retain(|range| !range.is_empty());
            let mut end = 0;
            for range in &ranges {
                assert_eq!(range.start, end, "{name}, {threads} threads: {ranges:?}");
                end = range.end;
            }
            assert_eq!(end, bytes.len(), "{name}, {threads} threads");
            released_midway |= threads == 1 && ranges.len() > 2;
        }
    }
    assert!(released_midway, "one thread released only at the end");
}

/// Parts cover the range exactly, each ending just after a newline, and the last one per
/// thread is about a quarter of the others.
#[test]
fn parts_end_at_newlines_and_the_last_ones_are_smaller() {
    // Lines of 10 bytes: a part of the test's 64-byte minimum holds about six.
    let bytes: Vec<u8> = (0..400)
        .flat_map(|k| format!("line {k:04}\n").into_bytes())
        .collect();
    for (threads, count) in [(1, 1), (2, 32), (3, 12), (2, 2), (4, 2)] {
        let parts = super::split_at_newlines(&bytes, 0..bytes.len(), count, threads);
        assert_eq!(parts[0].start, 0);
        assert_eq!(parts.last().unwrap().end, bytes.len());
        for pair in parts.windows(2) {
            assert_eq!(pair[0].end, pair[1].start, "{threads} threads: parts join");
            assert_eq!(
                bytes[pair[0].end - 1],
                b'\n',
                "{threads} threads: part ends a line"
            );
        }
        let tail = if count > 1 { threads.min(count) } else { 0 };
        assert_eq!(
            parts.len(),
            count - tail + tail * super::TAIL_CUTS,
            "{threads} threads, {count} parts"
        );
        let whole = bytes.len() / count;
        let (first, last) = (&parts[0], &parts[parts.len() - 1]);
        if tail > 0 {
            // Within a line of a quarter part.
            assert!(
                last.len() <= whole / super::TAIL_CUTS + 10,
                "{last:?} of {whole}"
            );
            if count > tail {
                assert!(first.len() >= whole, "{first:?} of {whole}");
            }
        }
    }
}

/// Each item's digest, made while loading, is the hash fingerprinting would make of the bytes
/// it sends, on every fixture (era A items among them, sent without their server ids) and
/// sample, read on one thread and on several.
#[test]
fn item_digests_hash_what_is_sent() {
    let mut items = 0;
    let mut rewritten = 0;
    for (name, bytes) in crate::test_support::fixture_bytes()
        .into_iter()
        .chain(crate::test_support::real_sample_bytes())
    {
        for threads in [1, 3] {
            let Ok(rollout) = load(
                &name,
                bytes.clone(),
                LoadOptions {
                    strict: false,
                    threads: Threads::new(threads),
                },
            ) else {
                continue;
            };
            for item in &rollout.items {
                let sent = item.wire_bytes(&rollout.bytes);
                assert_eq!(
                    item.digest,
                    Some(crate::hash::hash("item", sent)),
                    "{name}:{}",
                    item.line
                );
                items += 1;
                rewritten += usize::from(item.wire.is_some());
            }
        }
    }
    assert!(
        items > 1_000 && rewritten > 0,
        "{items} items, {rewritten} rewritten"
    );
}

/// Records are a third token_count events; their usage snapshots are boxed so that a record
/// stays small (joining the parsed parts moves every record once).
#[cfg(target_pointer_width = "64")]
#[test]
fn records_stay_small() {
    assert!(std::mem::size_of::<crate::model::Record>() <= 128);
}

/// The field-by-field read of a `turn_context` payload must give what the map read gives, on
/// every recorded payload and on the shapes a map read takes in its stride.
#[test]
fn turn_context_fields_read_as_the_map_reads_them() {
    let mut payloads: Vec<String> = [
        r#"{"cwd":"/w","model":"gpt-5","effort":"high","summary":"auto","approval_policy":"never"}"#,
        // Non-string values read as absent.
        r#"{"cwd":7,"model":null,"effort":["high"],"summary":{"a":1},"turn_id":true}"#,
        // Policies and instructions as strings or objects.
        r#"{"sandbox_policy":"read-only","base_instructions":"be brief"}"#,
        r#"{"sandbox_policy":{"type":"workspace-write","network_access":false},"base_instructions":{"text":"hi"}}"#,
        r#"{"sandbox_policy":{"mode":"danger-full-access"},"base_instructions":{"other":1}}"#,
        r#"{"sandbox_policy":{"type":3,"mode":"m"},"base_instructions":[1]}"#,
        // Effort from collaboration mode, unless `effort` is there.
        r#"{"collaboration_mode":{"mode":"plan","settings":{"reasoning_effort":"low"}}}"#,
        r#"{"effort":"high","collaboration_mode":{"settings":{"reasoning_effort":"low"}}}"#,
        r#"{"collaboration_mode":{"settings":["reasoning_effort"]}}"#,
        r#"{"collaboration_mode":"plan"}"#,
        // The output schema as compact JSON, in its own key order; null is none.
        r#"{"final_output_json_schema":{"type":"object","properties":{"b":{},"a":{}}}}"#,
        r#"{"final_output_json_schema":null}"#,
        r#"{"final_output_json_schema": [ 1 , "x" ] }"#,
        // Escapes in strings, and fields promptc does not read.
        r#"{"cwd":"C:\\work\\\"q\"","user_instructions":"line\nnext \u00e9","extra":{"x":[1,2]}}"#,
        r#"{"sandbox_policy":{"type":"a","type":"b"},"base_instructions":{"text":"x","text":3}}"#,
        // Escapes and numbers inside the objects promptc reads a member of.
        r#"{"sandbox_policy":{"type":"work\u0073pace\n","roots":["\"a\"",1e300,-0.5]}}"#,
        r#"{"collaboration_mode":{"settings":{"developer_instructions":"a\nb\\c","reasoning_effort":"m\u00e9"}}}"#,
        r#"{"collaboration_mode":{"settings":{"reasoning_effort":"low"},"settings":{}}}"#,
        r#"{"collaboration_mode":[{"settings":{"reasoning_effort":"low"}}]}"#,
        // A schema written as a string is kept as JSON text.
        r#"{"final_output_json_schema":"x"}"#,
        r#"{"final_output_json_schema":"a\nb"}"#,
        "{}",
    ]
    .map(str::to_string)
    .to_vec();
    for line in crate::test_support::fixture_and_sample_lines() {
        if let Ok(value) = serde_json::from_str::<Value>(&line)
            && value.get("type").and_then(Value::as_str) == Some("turn_context")
            && let Some(payload) = value.get("payload").filter(|p| p.is_object())
        {
            payloads.push(payload.to_string());
        }
    }
    assert!(payloads.len() > 100, "{} payloads", payloads.len());
    for payload in &payloads {
        let map: Map<String, Value> = serde_json::from_str(payload).expect("an object");
        let context = turn_context_fields(payload).expect("read field by field");
        assert_eq!(
            context,
            turn_context(|key| map.get(key).map(super::Field::Value)).expect("a map"),
            "{payload}"
        );
    }
    // A key written with escapes is left to the map, which unescapes it, also inside an object
    // promptc reads a member of.
    // So is a read key written twice (the map checks both values and keeps the last), and an
    // object with serde_json's raw-value key, which a map reads as the JSON in its string.
    for payload in [
        r#"{"cw\u0064":"/x"}"#,
        r#"{"sandbox_policy":{"t\u0079pe":"x"}}"#,
        r#"{"collaboration_mode":{"settings":{"reasoning_\u0065ffort":"low"}}}"#,
        r#"{"model":"a","model":"b"}"#,
        r#"{"sandbox_policy":"x","sandbox_policy":{"type":"y"}}"#,
        r#"{"sandbox_policy":{"$serde_json::private::RawValue":"{\"type\":\"x\"}"}}"#,
        r#"{"collaboration_mode":{"settings":{"$serde_json::private::RawValue":"{\"reasoning_effort\":\"high\"}"}}}"#,
        r#"{"base_instructions":{"$serde_json::private::RawValue":"\"hi\""}}"#,
    ] {
        assert_eq!(turn_context_fields(payload), None, "{payload}");
        let map: Map<String, Value> = serde_json::from_str(payload).expect("an object");
        let context = turn_context(|key| map.get(key).map(super::Field::Value)).expect("a map");
        assert_ne!(context, crate::model::TurnContext::default(), "{payload}");
    }

    // A read field the map would reject sends the payload to the map, which says why.
    let nested_in = |field: &str, depth: usize| {
        format!(
            r#"{{"{field}":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let nested = |depth: usize| nested_in("final_output_json_schema", depth);
    for payload in [
        r#"{"model":"m","final_output_json_schema":{"x":-1e999}}"#.to_string(),
        r#"{"cwd":1e400}"#.to_string(),
        r#"{"cwd":"\ud800"}"#.to_string(),
        r#"{"sandbox_policy":{"type":"\udc00x"}}"#.to_string(),
        nested(127),
        nested_in("sandbox_policy", 127),
        nested_in("collaboration_mode", 127),
        r#"{"sandbox_policy":{"type":"x","n":1e400}}"#.to_string(),
        r#"{"collaboration_mode":{"settings":{"reasoning_effort":"low"},"n":[-1e999]}}"#
            .to_string(),
        // The first value of a repeated key is checked too.
        r#"{"cwd":1e400,"cwd":"x"}"#.to_string(),
        // The raw-value key, however it is spelled, in an object the map reads as raw JSON.
        r#"{"sandbox_policy":{"type":"x","roots":{"$serde_json::private::RawValue":5}}}"#
            .to_string(),
        r#"{"sandbox_policy":{"type":"x","roots":{"\u0024serde_json::private::RawValue":5}}}"#
            .to_string(),
        r#"{"sandbox_policy":{"$serde_json::private::RawValue":"1","type":"y"}}"#.to_string(),
    ] {
        assert!(
            serde_json::from_str::<Map<String, Value>>(&payload).is_err(),
            "{payload}"
        );
        assert_eq!(turn_context_fields(&payload), None, "{payload}");
    }
    // One level less is read: the schema both ways alike, other read values up to 99 levels
    // field by field and deeper ones by the map.
    for (payload, by_fields) in [
        (nested(126), true),
        (nested_in("sandbox_policy", 99), true),
        (nested_in("sandbox_policy", 100), false),
        (nested_in("sandbox_policy", 126), false),
    ] {
        let map: Map<String, Value> = serde_json::from_str(&payload).expect("within the limit");
        let by_map = turn_context(|key| map.get(key).map(super::Field::Value)).ok();
        let expected = if by_fields { by_map } else { None };
        assert_eq!(turn_context_fields(&payload), expected, "{payload}");
    }
    // A field promptc does not read is checked as the line is: as JSON.
    let context = turn_context_fields(r#"{"model":"m","n":1e400,"deep":[[[[]]]]}"#);
    assert_eq!(context.and_then(|c| c.model), Some("m".to_string()));
    // And a whole line reads the same either way.
    let line = r#"{"timestamp":"t","type":"turn_context","payload":{"model":"a","model":"b","cw\u0064":"/w"}}"#;
    let rollout = load("t.jsonl", line.as_bytes().to_vec(), LoadOptions::default()).expect("loads");
    match &rollout.records[0].kind {
        RecordKind::TurnContext(context) => {
            assert_eq!(context.model.as_deref(), Some("b"));
            assert_eq!(context.cwd.as_deref(), Some("/w"));
        }
        other => panic!("{other:?}"),
    }
}

/// Repeats are taken from the line before: a `turn_context` with the last one's payload, a
/// `token_count` with the last one's `rate_limits`. On every fixture and sample, each such
/// record is what its line gives when it is read alone, in a file of its own: same timestamp,
/// same envelope, same kind. (The test says how many it saw.)
#[test]
fn repeated_turn_contexts_and_token_counts_read_as_their_lines_alone() {
    let (mut contexts, mut shared, mut counts) = (0, 0, 0);
    for (name, bytes) in crate::test_support::fixture_bytes()
        .into_iter()
        .chain(crate::test_support::real_sample_bytes())
    {
        let Ok(rollout) = load(&name, bytes.clone(), LoadOptions::default()) else {
            continue;
        };
        let mut previous: Option<&std::sync::Arc<crate::model::TurnContext>> = None;
        for record in &rollout.records {
            match &record.kind {
                RecordKind::TurnContext(context) => {
                    contexts += 1;
                    if previous.is_some_and(|p| std::sync::Arc::ptr_eq(p, context)) {
                        shared += 1;
                    }
                    previous = Some(context);
                }
                RecordKind::Event(event) if event.type_name == "token_count" => counts += 1,
                _ => continue,
            }
            let line = bytes[record.span.clone()].to_vec();
            let alone = load(&name, line, LoadOptions::default()).expect("loads alone");
            let first = &alone.records[0];
            // The timestamp as the same kind of text, at the same place in its line.
            let text = |t: &Option<crate::model::Text>, line_start: usize| match t {
                Some(crate::model::Text::Span(range)) => {
                    format!(
                        "span {:?}",
                        range.start - line_start..range.end - line_start
                    )
                }
                other => format!("{other:?}"),
            };
            let at = format!("{name}:{}", record.line);
            assert_eq!(
                text(&record.timestamp, record.span.start),
                text(&first.timestamp, 0),
                "{at}"
            );
            assert_eq!(record.newer_envelope, first.newer_envelope, "{at}");
            assert_eq!(
                format!("{:?}", record.kind),
                format!("{:?}", first.kind),
                "{at}"
            );
        }
    }
    eprintln!(
        "{contexts} turn contexts ({shared} shared with the one before), {counts} token counts"
    );
    assert!(shared > 0 && counts > 0, "no fixture repeats a line");
}

/// A `token_count` line is a repeat only when it starts exactly as Codex writes them and ends as
/// the last one read in full; that one's envelope and `turn_id` come with it, and a line that
/// is not JSON is still skipped.
#[test]
fn token_counts_repeat_only_in_codex_form_after_the_same_rest() {
    let usage = |n: &str| {
        format!(
            r#"{{"input_tokens":{n},"cached_input_tokens":0,"output_tokens":2,"reasoning_output_tokens":0,"total_tokens":3}}"#
        )
    };
    let info = |n: &str| {
        format!(
            r#"{{"total_token_usage":{},"last_token_usage":{},"model_context_window":null}}"#,
            usage(n),
            usage("1")
        )
    };
    let line = |timestamp: &str, info: &str, rest: &str| {
        format!(
            r#"{{"timestamp":"{timestamp}","type":"event_msg","payload":{{"type":"token_count","info":{info}{rest}"#
        )
    };
    let rest = r#","rate_limits":{"primary":{"used_percent":1.5}},"turn_id":"t1"},"ordinal":7}"#;
    let head = |text: &str| {
        super::codex_timestamp(text).and_then(|timestamp| super::codex_token_count(text, timestamp))
    };
    let read = head(&line("a", &info("10"), rest)).expect("Codex's form");
    assert_eq!(read.timestamp, 14..15);
    assert_eq!(read.info.map(|i| i.total.input_tokens), Some(10));
    assert_eq!(head(&line("a", "null", rest)).map(|h| h.info), Some(None));
    for other in [
        line("a", &info("010"), rest),
        line("a", &info("1e2"), rest),
        line("a", &info("-1"), rest),
        line("a", &info("1").replace(':', ": "), rest),
        line("a", &info("1").replace("null", "0.5"), rest),
        line("a\\u0030", &info("1"), rest),
        line("a", "nul", rest),
        line("a", &info("1"), rest).replace(r#""type":"event_msg","#, r#""type": "event_msg","#),
    ] {
        assert_eq!(head(&other), None, "{other}");
    }

    let file = [
        line("a", &info("10"), rest),
        line("b", &info("11"), rest),
        line("c", "null", rest),
        line("d", &info("010"), rest),
        line("e", &info("12"), r#","rate_limits":null}}"#),
        line("f", &info("13"), rest),
        line("g", &info("14"), r#","rate_limits":null}}"#),
    ]
    .join("\n");
    let rollout = load_text(&file).expect("loads");
    assert_eq!(rollout.skipped.len(), 1);
    assert_eq!(rollout.skipped[0].line, 4, "01 is not a JSON number");
    let read: Vec<_> = rollout
        .records
        .iter()
        .map(|record| match &record.kind {
            RecordKind::Event(event) => match &event.kind {
                crate::model::EventKind::TokenCount(info) => (
                    record.timestamp.as_ref().unwrap().get(&rollout.bytes),
                    info.as_ref().map(|i| i.total.input_tokens),
                    event.turn_id.as_deref(),
                    record.newer_envelope,
                ),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        read,
        [
            ("a", Some(10), Some("t1"), true),
            ("b", Some(11), Some("t1"), true),
            ("c", None, Some("t1"), true),
            ("e", Some(12), None, false),
            ("f", Some(13), Some("t1"), true),
            ("g", Some(14), None, false),
        ]
    );
}

/// A `token_count` with the counts of the one before shares them, whichever way either was
/// read (in full in Codex's form, as a repeat of the line before, or in full in another form);
/// other counts do not.
#[test]
fn repeated_token_counts_share_their_counts() {
    let info = |input: u64| {
        format!(
            r#"{{"total_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0,"total_tokens":{}}},"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0,"total_tokens":{}}},"model_context_window":100}}"#,
            input + 1,
            input + 1
        )
    };
    let line = |timestamp: &str, info: &str| {
        format!(
            r#"{{"timestamp":"{timestamp}","type":"event_msg","payload":{{"type":"token_count","info":{info},"rate_limits":null}}}}"#
        )
    };
    let file = [
        // The first line is read alone, until the generation is known; the rest is one part
        // on one thread.
        r#"{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}"#.to_string(),
        line("a", &info(10)),
        line("b", &info(10)),
        // Not in Codex's form: read in full, not as a repeat.
        line("c", &info(10)).replace(r#""type":"event_msg""#, r#""type": "event_msg""#),
        line("d", &info(20)),
        line("e", "null"),
        line("f", &info(20)),
        line("g", &info(10)),
    ]
    .join("\n");
    let rollout = load_text(&file).expect("loads");
    let infos: Vec<_> = rollout
        .records
        .iter()
        .skip(1)
        .map(|record| match &record.kind {
            RecordKind::Event(event) => match &event.kind {
                crate::model::EventKind::TokenCount(info) => info.clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect();
    let inputs: Vec<_> = infos
        .iter()
        .map(|info| info.as_ref().map(|i| i.total.input_tokens))
        .collect();
    assert_eq!(
        inputs,
        [
            Some(10),
            Some(10),
            Some(10),
            Some(20),
            None,
            Some(20),
            Some(10)
        ]
    );
    let counts = |k: usize| infos[k].as_ref().expect("counts");
    let shared = |a: usize, b: usize| std::sync::Arc::ptr_eq(counts(a), counts(b));
    assert!(
        shared(0, 1) && shared(1, 2),
        "the same counts, read three ways"
    );
    assert!(!shared(2, 3), "other counts");
    assert!(shared(3, 5), "a token_count without counts between");
    assert!(!shared(0, 6), "only the last counts are shared");
}

/// Only a line exactly in Codex's form, with the same payload and a plain timestamp, is taken
/// as a repeat; anything else is read in full, and a bad line is still skipped.
#[test]
fn only_codex_form_lines_with_the_same_payload_are_repeats() {
    let payload = r#"{"cwd":"/w","model":"gpt-5","sandbox_policy":{"type":"read-only"}}"#;
    let line = |timestamp: &str, rest: &str| {
        format!(r#"{{"timestamp":"{timestamp}","type":"turn_context","payload":{rest}"#)
    };
    // As loading asks: a plain timestamp first, then the rest of Codex's form.
    let repeat_timestamp = |line: &str| {
        super::codex_timestamp(line)
            .filter(|timestamp| super::is_codex_turn_context(line, timestamp, payload))
    };
    let repeat = line("2025-01-01T00:00:00Z", &format!("{payload}}}"));
    assert_eq!(repeat_timestamp(&repeat), Some(14..34));
    for other in [
        line("2025\\u002d01", &format!("{payload}}}")),
        line("2025\t01", &format!("{payload}}}")),
        line("t", &format!("{payload} }}")),
        line("t", &format!("{payload}}} ")),
        line("t", &format!("{payload}}}x")),
        line(
            "t",
            r#"{"cwd":"/w","model":"gpt-5","sandbox_policy":{"type":"read-only"},"x":1}}"#,
        ),
        format!(r#"{{"type":"turn_context","timestamp":"t","payload":{payload}}}"#),
        format!(r#"{{"timestamp":"t","type":"turn_context","payload":{payload},"ordinal":1}}"#),
        format!(r#"{{"timestamp":"t","type":"event_msg","payload":{payload}}}"#),
    ] {
        assert_eq!(repeat_timestamp(&other), None, "{other}");
    }

    // In a file: the repeats share the first line's context, the rest are read in full, and a
    // line with the same payload that is not JSON is skipped.
    let file = [
        line("a", &format!("{payload}}}")),
        line("b", &format!("{payload}}}")),
        line("c", &format!("{payload} }}")),
        line("d", &format!("{payload}}}}}")),
        line("e", r#"{"cwd":"/x"}}"#),
        line("f", &format!("{payload}}}")),
    ]
    .join("\n");
    let rollout = load_text(&file).expect("loads");
    assert_eq!(rollout.records.len(), 5);
    assert_eq!(rollout.skipped.len(), 1);
    assert_eq!(rollout.skipped[0].line, 4);
    let contexts: Vec<_> = rollout
        .records
        .iter()
        .map(|record| match &record.kind {
            RecordKind::TurnContext(context) => context.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let timestamps: Vec<_> = rollout
        .records
        .iter()
        .map(|r| r.timestamp.as_ref().unwrap().get(&rollout.bytes))
        .collect();
    assert_eq!(timestamps, ["a", "b", "c", "e", "f"]);
    // Lines 2 and 3 repeat line 1 (line 3 by its payload alone); line 6 follows another one.
    assert!(std::sync::Arc::ptr_eq(&contexts[0], &contexts[1]));
    assert!(std::sync::Arc::ptr_eq(&contexts[0], &contexts[2]));
    assert_eq!(contexts[3].cwd.as_deref(), Some("/x"));
    assert!(!std::sync::Arc::ptr_eq(&contexts[0], &contexts[4]));
    assert_eq!(contexts[4], contexts[0]);
}

/// The payload, as written, of every `event_msg` line of the fixtures and samples whose
/// payload is an object (one that is not is an error whichever way it is read).
fn recorded_event_payloads() -> Vec<String> {
    use serde_json::value::RawValue;
    let mut payloads = Vec::new();
    for line in crate::test_support::fixture_and_sample_lines() {
        let Ok(fields) =
            serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(&line)
        else {
            continue;
        };
        if fields.get("type").map(|t| t.get()) != Some("\"event_msg\"") {
            continue;
        }
        if let Some(payload) = fields.get("payload").filter(|p| p.get().starts_with('{')) {
            payloads.push(payload.get().to_string());
        }
    }
    payloads
}

/// The event fields read from the line scan's head are what serde_json's typed read gives,
/// on every event of the fixtures and samples; payloads the head cannot vouch for (a field
/// written twice, an escaped key, a value of another type) are left to serde_json.
#[test]
fn event_fields_from_the_head_are_what_serde_json_reads() {
    use super::{EventHead, event_fields_from_head, head};
    use serde_json::value::RawValue;
    // `Some(accepted)`: whether the head was trusted; `None` when the head reader refused.
    let check = |payload: &str| -> Option<bool> {
        let head = head::read(payload).ok()?;
        let Some(fast) = event_fields_from_head(head) else {
            return Some(false);
        };
        let slow: EventHead<'_> = serde_json::from_str(payload)
            .unwrap_or_else(|e| panic!("trusted what serde_json rejects ({e}): {payload}"));
        assert_eq!(fast.type_, slow.type_, "{payload}");
        assert_eq!(fast.turn_id, slow.turn_id, "{payload}");
        assert_eq!(fast.num_turns, slow.num_turns, "{payload}");
        let slow_info = slow.info.map(RawValue::get).filter(|raw| *raw != "null");
        assert_eq!(fast.info, slow_info, "{payload}");
        Some(true)
    };
    let mut events = 0;
    let mut trusted = 0;
    for payload in recorded_event_payloads() {
        events += 1;
        trusted += usize::from(check(&payload) == Some(true));
    }
    // The fixtures alone hold over 300; the real samples, when present, several thousand.
    assert!(events > 200, "{events} events");
    assert_eq!(
        trusted, events,
        "every recorded event is read from the head"
    );

    for payload in [
        r#"{"type":"thread_rolled_back","num_turns":3,"turn_id":"t\"1"}"#,
        r#"{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":1.5}}}"#,
        r#"{"type":"token_count","info":{"total_token_usage":{"input_tokens":5},"last_token_usage":{}}}"#,
        r#"{"type":"task_started","turn_id":null,"num_turns":null}"#,
        r#"{"type":"agent_reasoning","text":"a \"quoted\" \\ text","turn_id":"t1"}"#,
    ] {
        assert_eq!(check(payload), Some(true), "{payload}");
    }
    for payload in [
        r#"{"type":"token_count","type":"task_started"}"#,
        r#"{"type":"token_count","info":null,"info":{}}"#,
        r#"{"typ\u0065":"task_started","type":"x"}"#,
        r#"{"type":"thread_rolled_back","num_turns":1.0}"#,
        r#"{"type":"thread_rolled_back","num_turns":-1}"#,
        r#"{"type":"thread_rolled_back","num_turns":18446744073709551616}"#,
        r#"{"type":"task_started","turn_id":5}"#,
        r#"{"type":null}"#,
        r#"{"turn_id":"t1"}"#,
    ] {
        assert_ne!(check(payload), Some(true), "{payload}");
    }
}

/// Only escapes of UTF-16 surrogates (`\uD800`–`\uDFFF`) send a line to a full parse, by the
/// line scan and by serde_json's path alike. A line with another `\u` escape (`\u00e9`, or
/// `\ud55c`, a Hangul syllable) is read as any line is: an out-of-range number in a field
/// promptc does not read does not cost it the line, whichever path reads it (an escaped
/// top-level key sends the line to serde_json's path). A line with a surrogate escape is
/// checked fully, number range included, and a lone surrogate is skipped with serde_json's
/// reason.
#[test]
fn only_surrogate_escapes_send_a_line_to_a_full_parse() {
    let line = |text: &str, extra: &str| {
        format!(
            r#"{{"timestamp":"t",{extra}"type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}],"x":1e400}}}}"#
        )
    };
    let meta = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#;
    for extra in ["", r#""k\u0041":1,"#] {
        let text = [
            meta.to_string(),
            line("\\u00e9", extra),
            line("\\ud55c", extra),
            line("\\uD7FF", extra),
            line("\\ud83d\\ude00", extra),
            line("\\ud800", extra),
        ]
        .join("\n");
        let rollout = load_text(&text).expect("loads");
        let skipped: Vec<(usize, &str)> = rollout
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.as_str()))
            .collect();
        assert_eq!(skipped.len(), 2, "{extra}: {skipped:?}");
        assert_eq!(skipped[0].0, 5, "{extra}");
        assert!(
            skipped[0].1.starts_with("not JSON: number out of range"),
            "{skipped:?}"
        );
        assert_eq!(skipped[1].0, 6, "{extra}");
        // serde_json's words for `\ud800"`.
        assert_eq!(
            skipped[1].1, "not JSON: unexpected end of hex escape",
            "{extra}"
        );
    }
}

/// The static names are the names promptc knows: every item type in the list is a kind
/// `ItemKind::from_type` reads, and every item of a known kind in the fixtures and samples
/// got its static name (a kind added to `from_type` but not to the list would allocate again).
#[test]
fn known_item_types_get_static_names() {
    use crate::model::ItemKind;
    use std::borrow::Cow;
    for name in super::ITEM_TYPES {
        assert_ne!(ItemKind::from_type(name), ItemKind::Unknown, "{name}");
    }
    let mut known = 0;
    for (name, bytes) in crate::test_support::fixture_bytes()
        .into_iter()
        .chain(crate::test_support::real_sample_bytes())
    {
        let Ok(rollout) = load(&name, bytes, LoadOptions::default()) else {
            continue;
        };
        for item in rollout.items.iter().filter(|i| i.kind != ItemKind::Unknown) {
            assert!(
                matches!(item.type_name, Cow::Borrowed(_)),
                "{name}:{} {}",
                item.line,
                item.type_name
            );
            known += 1;
        }
    }
    assert!(known > 100, "{known} items");
}

/// `token_count.info` as serde_json's typed read gives it, the reference of the plain reads.
fn typed_token_info(raw: &str) -> Option<crate::model::TokenInfo> {
    Some(
        serde_json::from_str::<super::TokenInfoPayload>(raw)
            .ok()?
            .into(),
    )
}

/// `token_count.info` read plainly, by whole keys or member by member, is what serde_json's
/// typed read gives, on every token count of the fixtures and samples (each read on its own:
/// the recorded ones all take the first); what the plain reads cannot vouch for (a repeated or
/// escaped key, a count written another way, another shape) is left to serde_json.
#[test]
fn token_info_read_plainly_is_what_serde_json_reads() {
    use super::{token_info_as_codex_writes_it, token_info_by_members, token_info_plain};
    let mut counts = 0;
    for payload in recorded_event_payloads() {
        // The info as written in the file, read with the payload's head.
        let Ok(payload) = super::head::read(&payload) else {
            continue;
        };
        if payload.type_.as_deref() != Some("token_count") {
            continue;
        }
        let Some(raw) = payload.info_raw.filter(|raw| *raw != "null") else {
            continue;
        };
        counts += 1;
        let expected = typed_token_info(raw);
        for (read, how) in [
            (token_info_as_codex_writes_it(raw), "by whole keys"),
            (token_info_by_members(raw), "member by member"),
            (token_info_plain(raw), "plainly"),
        ] {
            assert!(read.is_some(), "a recorded count is read {how}: {raw}");
            assert_eq!(read, expected, "read {how}: {raw}");
        }
    }
    assert!(counts > 100, "{counts} token counts");

    let usage = r#"{"input_tokens":5,"cached_input_tokens":3,"output_tokens":2,"reasoning_output_tokens":1,"total_tokens":7}"#;
    for raw in [
        format!(
            r#"{{"total_token_usage":{usage},"last_token_usage":{usage},"model_context_window":258400}}"#
        ),
        format!(
            r#"{{"total_token_usage":{usage},"last_token_usage":{{}},"model_context_window":null}}"#
        ),
        format!(
            r#"{{ "last_token_usage" : {usage} , "total_token_usage":{{"cache_write_input_tokens":9,"x":[1,{{"input_tokens":"no"}}]}},"rate":-1.5}}"#
        ),
        format!(
            r#"{{"total_token_usage":{{"total_tokens":18446744073709551615,"cache_write_input_tokens":null}},"last_token_usage":{usage}}}"#
        ),
    ] {
        let plain = token_info_plain(&raw);
        assert!(plain.is_some(), "read plainly: {raw}");
        assert_eq!(plain, typed_token_info(&raw), "{raw}");
    }
    for raw in [
        format!(
            r#"{{"total_token_usage":{usage},"last_token_usage":{usage},"total_token_usage":{usage}}}"#
        ),
        format!(
            r#"{{"total_token_usage":{usage},"last_token_usage":{{"input_tokens":1,"input_tokens":2}}}}"#
        ),
        format!(r#"{{"total_token_usage":{usage},"last\u005ftoken_usage":{usage}}}"#),
        format!(
            r#"{{"total_token_usage":{usage},"last_token_usage":{usage},"last\u005ftoken_usage":{usage}}}"#
        ),
        format!(r#"{{"total_token_usage":{usage},"last_token_usage":{{"input\u005ftokens":1}}}}"#),
        format!(r#"{{"total_token_usage":{usage},"last_token_usage":{{"input_tokens":1.0}}}}"#),
        format!(r#"{{"total_token_usage":{usage},"last_token_usage":{{"input_tokens":-0}}}}"#),
        format!(r#"{{"total_token_usage":{usage},"last_token_usage":{{"input_tokens":1e2}}}}"#),
        format!(r#"{{"total_token_usage":{usage},"last_token_usage":{{"input_tokens":null}}}}"#),
        format!(
            r#"{{"total_token_usage":{usage},"last_token_usage":{{"input_tokens":18446744073709551616}}}}"#
        ),
        format!(r#"{{"total_token_usage":{usage},"last_token_usage":[1,2,3,4,5,6]}}"#),
        format!(r#"{{"total_token_usage":{usage},"last_token_usage":null}}"#),
        format!(r#"{{"total_token_usage":{usage}}}"#),
        format!(
            r#"{{"total_token_usage":{usage},"last_token_usage":{usage},"model_context_window":"big"}}"#
        ),
        format!(r#"[{usage},{usage},1]"#),
    ] {
        assert_eq!(token_info_plain(&raw), None, "left to serde_json: {raw}");
    }
}

#[test]
fn token_info_in_codex_form_is_read_by_whole_keys_and_anything_else_member_by_member() {
    use super::{token_info_as_codex_writes_it, token_info_plain};
    let usage = |counts: [&str; 5]| {
        format!(
            r#"{{"input_tokens":{},"cached_input_tokens":{},"output_tokens":{},"reasoning_output_tokens":{},"total_tokens":{}}}"#,
            counts[0], counts[1], counts[2], counts[3], counts[4]
        )
    };
    let info = |total: &str, last: &str, window: &str| {
        format!(
            r#"{{"total_token_usage":{total},"last_token_usage":{last},"model_context_window":{window}}}"#
        )
    };
    let small = usage(["3602", "2944", "42", "0", "3644"]);
    let max = usage(["18446744073709551615", "0", "1", "9999999999999999999", "7"]);
    // Codex's form: read by whole keys, and as serde_json reads it.
    for raw in [
        info(&small, &small, "258400"),
        info(&max, &small, "null"),
        info(&small, &max, "0"),
    ] {
        let read = token_info_as_codex_writes_it(&raw);
        assert!(read.is_some(), "Codex's form: {raw}");
        assert_eq!(read, typed_token_info(&raw), "{raw}");
    }
    // Other forms serde_json accepts: not by whole keys, but member by member, with the same
    // result.
    let spaced = small.replace(',', ", ");
    let reordered = r#"{"cached_input_tokens":2944,"input_tokens":3602,"output_tokens":42,"reasoning_output_tokens":0,"total_tokens":3644}"#;
    let with_cache_write = small.replace('}', r#","cache_write_input_tokens":5}"#);
    let short = r#"{"input_tokens":1}"#;
    for raw in [
        info(&spaced, &small, "258400"),
        info(&small, reordered, "258400"),
        info(&small, &with_cache_write, "258400"),
        info(&small, short, "1"),
        format!(r#"{{"last_token_usage":{small},"total_token_usage":{small}}}"#),
        format!(r#"{{"total_token_usage":{small},"last_token_usage":{small}}}"#),
        format!(
            r#"{{"total_token_usage":{small},"last_token_usage":{small},"model_context_window":1,"x":2}}"#
        ),
    ] {
        assert_eq!(
            token_info_as_codex_writes_it(&raw),
            None,
            "not Codex's form: {raw}"
        );
        let plain = token_info_plain(&raw);
        assert!(plain.is_some(), "read member by member: {raw}");
        assert_eq!(plain, typed_token_info(&raw), "{raw}");
    }
    // Codex's keys around what only serde_json judges: neither plain read takes it.
    let overflow = usage(["18446744073709551616", "0", "0", "0", "0"]);
    let repeated = small.replace('}', r#","input_tokens":1}"#);
    let odd_counts =
        ["null", "-0", "1.0", "1e2", "-1"].map(|count| usage(["1", count, "2", "3", "4"]));
    for raw in odd_counts
        .iter()
        .flat_map(|odd| [info(odd, &small, "1"), info(&small, odd, "1")])
        .chain([
        info(&overflow, &small, "1"),
        info(&small, &repeated, "1"),
        info(&small, &small, "1.5"),
        info(&small, &small, "-1"),
        format!(
            r#"{{"total_token_usage":{small},"last_token_usage":{small},"model_context_window":1,"total_token_usage":{small}}}"#
        ),
    ]) {
        assert_eq!(token_info_as_codex_writes_it(&raw), None, "{raw}");
        assert_eq!(token_info_plain(&raw), None, "left to serde_json: {raw}");
    }
}

/// Expected values from Python's `datetime` (`datetime.fromisoformat(t[:19])` in UTC, then
/// `.timestamp()`), not from this code.
#[test]
fn timestamps_read_as_unix_seconds() {
    let cases = [
        ("2025-11-17T21:32:46.911Z", Some(1_763_415_166)),
        ("1970-01-01T00:00:00Z", Some(0)),
        ("2024-02-29T23:59:59.999999Z", Some(1_709_251_199)),
        ("1969-12-31T23:59:59Z", Some(-1)),
        ("2025-11-17 21:32:46Z", None),
        ("2025-11-17", None),
        ("t", None),
    ];
    for (text, seconds) in cases {
        assert_eq!(super::unix_seconds(text), seconds, "{text}");
    }
    // Every way a line is read keeps its line's own seconds: a full read, a repeated
    // `turn_context` and a repeated `token_count` (both read without their payload).
    let context = r#""type":"turn_context","payload":{"cwd":"/w","model":"m"}}"#;
    let count =
        r#""type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":null}}"#;
    let lines: Vec<String> = [
        (0, context),
        (1, context),
        (2, count),
        (3, count),
        (4, count),
    ]
    .iter()
    .map(|(s, rest)| format!(r#"{{"timestamp":"2025-11-17T21:32:4{s}.000Z",{rest}"#))
    .collect();
    let rollout = load_text(&lines.join("\n")).expect("loads");
    let read: Vec<_> = rollout.records.iter().map(|r| r.unix_seconds).collect();
    assert_eq!(
        read,
        (0..5).map(|s| Some(1_763_415_160 + s)).collect::<Vec<_>>()
    );
}

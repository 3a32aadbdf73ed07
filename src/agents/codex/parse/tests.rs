//! Loading: generations, exact bytes and line numbers, and bad lines.

use crate::agents::codex::model::{Generation, RecordKind};
use crate::agents::codex::parse::{LoadError, LoadOptions, load, load_at};
use crate::core::parallel::Threads;

fn load_text(text: &str) -> Result<crate::agents::codex::model::Rollout, LoadError> {
    load("t.jsonl", text.as_bytes(), LoadOptions::default())
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

/// A timestamp reads as serde_json reads the string: unescaped when it has escapes, and a key
/// written with an escape is the same key.
#[test]
fn timestamps_read_as_their_string_text() {
    let plain =
        r#"{"timestamp":"2025-11-20T14:00:05.000Z","type":"session_meta","payload":{"id":"x"}}"#;
    let escaped = r#"{"timestamp":"2025-11-20T14:00:05.000\u005a","type":"event_msg","payload":{"type":"x"}}"#;
    // A key written with an escape.
    let declined = r#"{"timestamp":"2025-11-20T14:00:06.000Z","\u0074ype":"event_msg","payload":{"type":"x"}}"#;
    let text = format!("{plain}\n{escaped}\n{declined}\n");
    let rollout = load_text(&text).expect("loads");
    let read: Vec<_> = rollout.records.iter().map(|r| r.unix_seconds).collect();
    // `date -u -d 2025-11-20T14:00:05Z +%s`
    assert_eq!(read, [Some(1763647205), Some(1763647205), Some(1763647206)]);
}

#[test]
fn records_keep_line_numbers_and_items_their_exact_bytes() {
    let first = r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#;
    let item = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#;
    let second = format!(r#"{{"timestamp":"t","type":"response_item","payload":{item}}}"#);
    let rollout = load_text(&format!("{first}\r\n\n{second}\n")).expect("loads");
    assert_eq!(rollout.records.len(), 2);
    assert_eq!(rollout.records[0].line, 1);
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
        b"{\"type\":\"message\",\"role\":\"user\",\"content\":[]}\n{oops",
        LoadOptions {
            strict: true,
            threads: Threads::new(1),
            ..LoadOptions::default()
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
        let error = load("t.jsonl", bytes, LoadOptions::default()).expect_err("not a rollout");
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

/// Reading in ranges on several threads, a piece at a time, gives exactly what one thread gives
/// reading the input in one piece: line numbers, item ids, skipped lines, notes (a later
/// `session_meta` in another range), strict errors. Parts of 64 bytes and pieces of 128 cut
/// every fixture and sample many times, lines across pieces among them.
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
                            // Parts a few lines long.
                            min_part_bytes: 64,
                            ..LoadOptions::default()
                        },
                    )
                )
            };
            // One thread reading the input in one piece.
            let expected = format!(
                "{:?}",
                load(&name, &bytes, options(1, usize::MAX / 4, strict))
            );
            assert!(
                one(1) == expected,
                "{name}, pieces of 128 bytes, strict {strict}"
            );
            if let Ok(rollout) = load(
                &name,
                bytes.clone(),
                LoadOptions {
                    strict,
                    threads: Threads::new(1),
                    ..LoadOptions::default()
                },
            ) {
                assert!(
                    rollout.notes.is_sorted_by_key(|(line, _)| *line),
                    "{name}: notes in line order"
                );
            }
            for threads in [2, 5] {
                assert!(
                    one(threads) == expected,
                    "{name}, {threads} threads, strict {strict}"
                );
            }
        }
    }
}

/// Each item's digest, made while loading, is the hash fingerprinting would make of the bytes
/// it sends, on every fixture (era A items among them, sent without their server ids) and
/// sample.
#[test]
fn item_digests_hash_what_is_sent() {
    let mut items = 0;
    let mut rewritten = 0;
    for (name, bytes) in crate::test_support::fixture_bytes()
        .into_iter()
        .chain(crate::test_support::real_sample_bytes())
    {
        let Ok(rollout) = load(&name, bytes, LoadOptions::default()) else {
            continue;
        };
        for item in &rollout.items {
            let sent = item.wire_json().as_bytes();
            assert_eq!(
                item.digest,
                Some(crate::core::hash::hash("item", sent)),
                "{name}:{}",
                item.line
            );
            items += 1;
            rewritten += usize::from(item.wire.is_some());
        }
    }
    // The fixtures and recordings alone hold 739 (the real samples, when present, more).
    assert!(
        items > 600 && rewritten > 0,
        "{items} items, {rewritten} rewritten"
    );
}

/// Records are a third token_count events; their usage snapshots are boxed so that a record
/// stays small.
#[cfg(target_pointer_width = "64")]
#[test]
fn records_stay_small() {
    assert!(std::mem::size_of::<crate::agents::codex::model::Record>() <= 128);
}

/// Only escapes of UTF-16 surrogates (`\uD800`–`\uDFFF`) send a line to a full parse. A line
/// with another `\u` escape (`\u00e9`, or `\ud55c`, a Hangul syllable) is read as any line
/// is: an out-of-range number in a field promptc does not read does not cost it the line. A
/// line with a surrogate escape is checked fully, number range included, and a lone
/// surrogate is skipped with serde_json's reason.
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
    use crate::agents::codex::model::ItemKind;
    use std::borrow::Cow;
    for name in super::item::ITEM_TYPES {
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

/// Expected values from Python's `datetime` (`int(datetime.fromisoformat(t).timestamp())`),
/// not from this code; a timestamp without an offset is not a point in time.
#[test]
fn timestamps_read_as_unix_seconds() {
    let cases = [
        ("2025-11-17T21:32:46.911Z", Some(1_763_415_166)),
        ("1970-01-01T00:00:00Z", Some(0)),
        ("2024-02-29T23:59:59.999999Z", Some(1_709_251_199)),
        ("1969-12-31T23:59:59Z", Some(-1)),
        ("2025-11-17 21:32:46Z", Some(1_763_415_166)),
        ("2025-11-17T23:32:46+02:00", Some(1_763_415_166)),
        ("2025-11-17T21:32:46.911", None),
        ("2025-11-17", None),
        ("t", None),
    ];
    for (text, seconds) in cases {
        assert_eq!(super::unix_seconds(text), seconds, "{text}");
    }
    // Every line keeps its own seconds, repeated `turn_context` and `token_count` lines too.
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

fn options(threads: usize, min_part_bytes: usize, strict: bool) -> LoadOptions {
    LoadOptions {
        strict,
        threads: Threads::new(threads),
        min_part_bytes,
        ..LoadOptions::default()
    }
}

/// Lines written while the file is read, past the length it had when asked, are read too, the
/// line being written across that length whole; a file cut short while it is read gives the
/// lines before the cut, and the cut line as it is. Each as the bytes at the end load.
#[test]
fn a_file_that_grows_or_shrinks_while_read_gives_the_lines_it_had_at_the_end() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/rollouts/compaction_replacement.jsonl"
    ))
    .expect("fixture");
    let newline = memchr::memchr_iter(b'\n', &bytes).nth(5).expect("6 lines");
    let cuts = [
        0,
        1,
        100,
        newline,
        newline + 1,
        newline + 2,
        bytes.len() / 2,
        bytes.len(),
    ];
    for options in [options(1, 64, false), options(3, 64, false)] {
        let whole = format!("{:?}", load("f", &bytes, options));
        for cut in cuts {
            let grown = load_at("f", cut as u64, &super::read_from(&bytes), options);
            let grown = format!("{grown:?}");
            assert!(grown == whole, "grown from {cut}, {options:?}");
            let shrunk = load_at(
                "f",
                bytes.len() as u64,
                &super::read_from(&bytes[..cut]),
                options,
            );
            let expected = load("f", &bytes[..cut], options);
            assert!(
                format!("{shrunk:?}") == format!("{expected:?}"),
                "cut at {cut}"
            );
        }
    }
}

/// A read that fails is an error naming the file, from any thread.
#[test]
fn a_failed_read_is_an_error_naming_the_file() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/rollouts/era_c_turns.jsonl"
    ))
    .expect("fixture");
    for fail_from in [0, 10, bytes.len() / 2] {
        let read_at = |offset: u64, buffer: &mut [u8]| {
            if offset as usize >= fail_from {
                return Err(std::io::Error::other("disk on fire"));
            }
            super::read_from(&bytes)(offset, buffer)
        };
        let error = load_at(
            "f.jsonl",
            bytes.len() as u64,
            &read_at,
            options(2, 64, false),
        )
        .expect_err("the read fails");
        assert_eq!(error.to_string(), "f.jsonl: cannot read: disk on fire");
    }
}

/// A string without escapes is read in place, one with escapes unescaped into its own copy.
#[test]
fn strings_without_escapes_are_read_in_place() {
    use std::borrow::Cow;
    let plain: super::line::Str<'_> = serde_json::from_str(r#""abc""#).expect("a string");
    assert!(matches!(plain.0, Cow::Borrowed("abc")));
    let escaped: super::line::Str<'_> = serde_json::from_str(r#""a\nb""#).expect("a string");
    assert!(matches!(escaped.0, Cow::Owned(ref text) if text == "a\nb"));
    assert!(serde_json::from_str::<super::line::Str<'_>>("5").is_err());
}

/// A file cut short while its ranges are read (a read past three quarters cuts it to a
/// quarter), or one read that comes back empty in the middle: whatever was read keeps its
/// line numbers, so every item is the JSON of the line it names.
#[test]
fn a_file_cut_while_its_ranges_are_read_keeps_its_line_numbers() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let fixture = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/rollouts/era_b_steps.jsonl"
    ))
    .expect("fixture");
    let mut bytes = fixture.clone();
    while bytes.len() < 400_000 {
        bytes.extend_from_slice(&fixture[fixture.iter().position(|&b| b == b'\n').unwrap() + 1..]);
    }
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let len = bytes.len();
    for threads in [2, 4] {
        for empty_once in [false, true] {
            let (cut, emptied) = (AtomicBool::new(false), AtomicBool::new(false));
            let read_at = |offset: u64, buffer: &mut [u8]| {
                let offset = offset as usize;
                if empty_once && offset > len / 3 && !emptied.swap(true, Ordering::SeqCst) {
                    return Ok(0);
                }
                if !empty_once && offset > len * 3 / 4 {
                    cut.store(true, Ordering::SeqCst);
                }
                let now = if cut.load(Ordering::SeqCst) {
                    len / 4
                } else {
                    len
                };
                super::read_from(&bytes[..now])(offset as u64, buffer)
            };
            let rollout =
                load_at("cut", len as u64, &read_at, options(threads, 1000, false)).expect("loads");
            for item in &rollout.items {
                let line = lines[item.line - 1];
                assert!(
                    line.windows(item.text.len())
                        .any(|w| w == item.text.as_bytes()),
                    "{threads} threads, empty once {empty_once}: item of line {} is not on it",
                    item.line
                );
            }
            assert!(rollout.items.len() > 100, "{} items", rollout.items.len());
        }
    }
}

/// A strict load stops reading at the first skipped line: a bad first line costs a piece of
/// the file, not all of it.
#[test]
fn a_strict_load_stops_reading_at_the_first_skipped_line() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let fixture = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/rollouts/era_b_steps.jsonl"
    ))
    .expect("fixture");
    let mut bytes = b"{oops\n".to_vec();
    while bytes.len() < 2_000_000 {
        bytes.extend_from_slice(&fixture);
    }
    let read = AtomicUsize::new(0);
    let read_at = |offset: u64, buffer: &mut [u8]| {
        let got = super::read_from(&bytes)(offset, buffer)?;
        read.fetch_add(got, Ordering::SeqCst);
        Ok(got)
    };
    let error =
        load_at("s", bytes.len() as u64, &read_at, options(2, 1 << 20, true)).expect_err("strict");
    assert!(error.to_string().starts_with("s:1:2: "), "{error}");
    let read = read.load(Ordering::SeqCst);
    assert!(read < 100_000, "{read} bytes read");
}

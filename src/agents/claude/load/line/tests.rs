use proptest::prelude::*;

use super::{LineError, Repeated, read_line, read_split, read_whole};
use crate::agents::claude::record::Line;
use crate::test_support::{claude_recorded_bytes, claude_sample_bytes};

/// A line's reading as text, to hold one way of reading to another.
fn shown(read: &Result<Line, LineError>) -> String {
    match read {
        Ok(line) => format!("{line:?}"),
        Err(e) => format!("error at {:?}: {}", e.column, e.reason),
    }
}

/// Every non-blank line of the recorded transcripts and the real samples, in file order.
fn recorded_lines() -> Vec<String> {
    let mut files = claude_sample_bytes();
    files.extend(claude_recorded_bytes());
    files
        .iter()
        .flat_map(|(_, bytes)| {
            String::from_utf8_lossy(bytes)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Read `lines` both ways, in order and each way with its own shared texts: how many the split
/// read, and the first line whose readings differ.
fn split_against_whole(lines: &[String], lean: bool) -> (usize, Option<String>) {
    let (mut split_repeated, mut whole_repeated) = (Repeated::default(), Repeated::default());
    let mut split = 0;
    for (k, line) in lines.iter().enumerate() {
        let whole = read_whole(line, k + 1, lean, &mut whole_repeated);
        let Some(read) = read_split(line, k + 1, lean, &mut split_repeated) else {
            // Read whole by `read_line` too: keep the shared texts in step.
            let _ = read_whole(line, k + 1, lean, &mut split_repeated);
            continue;
        };
        split += 1;
        if shown(&read) != shown(&whole) {
            return (
                split,
                Some(format!("{line:.300}\n{}\n{}", shown(&read), shown(&whole))),
            );
        }
    }
    (split, None)
}

#[test]
fn a_split_line_reads_as_the_whole_line_reads() {
    let lines = recorded_lines();
    for lean in [false, true] {
        let (split, differs) = split_against_whole(&lines, lean);
        assert_eq!(differs, None);
        // Claude Code writes what the content's scan reads: most lines are read split.
        let conversational = lines
            .iter()
            .filter(|l| l.contains(r#""type":"user""#) || l.contains(r#""type":"assistant""#))
            .count();
        assert!(
            split * 100 > conversational * 90,
            "{split} of {conversational} split"
        );
    }
}

/// Lines the split cannot vouch for: each is read whole, and the bad ones say why as before.
#[test]
fn a_line_the_split_cannot_vouch_for_is_read_whole() {
    let deep = format!(
        r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"x","n":{}1{}}}]}}}}"#,
        "[".repeat(110),
        "]".repeat(110)
    );
    let cases: &[(&str, Option<&str>)] = &[
        // A control character in the content's text: not JSON.
        (
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"a\u{1}b\"}}",
            Some("control character"),
        ),
        // Not in serde's form: a float, spaces, an escape serde writes otherwise.
        (
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":{"n":1.5}}]}}"#,
            None,
        ),
        (
            r#"{"type":"user","message":{"role":"user","content": "spaced"}}"#,
            None,
        ),
        (
            r#"{"type":"user","message":{"role":"user","content":"a \/ slash"}}"#,
            None,
        ),
        // The message's role is not the line's type.
        (
            r#"{"type":"user","message":{"role":"assistant","content":"x"}}"#,
            None,
        ),
        // The content twice, or under an escaped key.
        (
            r#"{"type":"user","message":{"role":"user","content":"a","content":"b"}}"#,
            Some("duplicate field `content`"),
        ),
        (
            r#"{"type":"user","message":{"role":"user","cont\u0065nt":"a"}}"#,
            None,
        ),
        // What follows the content is not JSON.
        (
            r#"{"type":"user","message":{"role":"user","content":"a"},}"#,
            Some("trailing comma"),
        ),
        (
            r#"{"type":"user","message":{"role":"user","content":"a"}} x"#,
            Some("trailing characters"),
        ),
        // What follows the content would continue the `0` in its place into a number.
        (
            r#"{"type":"user","message":{"role":"user","content":"a".5}}"#,
            Some("expected `,` or `}`"),
        ),
        (
            r#"{"type":"user","message":{"role":"user","content":"a"e5}}"#,
            Some("expected `,` or `}`"),
        ),
        (
            r#"{"type":"user","message":{"role":"user","content":"a"E+3}}"#,
            Some("expected `,` or `}`"),
        ),
        (
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"x"}].25e-1}}"#,
            Some("expected `,` or `}`"),
        ),
        // Deeper than the scan goes (serde's limit is further).
        (&deep, None),
    ];
    for (line, error) in cases {
        assert!(
            read_split(line, 1, true, &mut Repeated::default()).is_none(),
            "{line}"
        );
        let read = read_line(line.as_bytes(), 1, true, &mut Repeated::default());
        assert_eq!(
            shown(&read),
            shown(&read_whole(line, 1, true, &mut Repeated::default()))
        );
        match error {
            Some(error) => assert!(shown(&read).contains(error), "{line}: {}", shown(&read)),
            None => assert!(read.is_ok(), "{line}: {}", shown(&read)),
        }
    }
}

/// Lines to mutate: a user line of each content shape and an assistant line.
const SEEDS: &[&str] = &[
    r#"{"parentUuid":"a","type":"user","uuid":"b","message":{"role":"user","content":"say \"hi\"\n\u001b"},"sessionId":"s","version":"2.1.100"}"#,
    r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"ok\\done"}]},"uuid":"c","version":"2.1.332","toolUseResult":{"stdout":"ok"}}"#,
    r#"{"parentUuid":"c","message":{"id":"m","type":"message","role":"assistant","model":"claude","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"n":-3,"a":[true,null]}}],"usage":{"input_tokens":3}},"type":"assistant","uuid":"d"}"#,
];

/// Bytes a mutation puts in: JSON's structure, escapes, a control character, a space.
const INSERTS: &[u8] = b"\"\\{}[]:,0-.e \x01\tnu";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A line cut, grown or changed anywhere reads the same either way: where the split reads
    /// it, it reads what serde reads of the whole line.
    #[test]
    fn a_mutated_line_reads_as_the_whole_line_reads(
        seed in 0..SEEDS.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..3u8, 0..INSERTS.len()), 1..4),
    ) {
        let mut bytes = SEEDS[seed].as_bytes().to_vec();
        for (at, kind, insert) in edits {
            let at = at.index(bytes.len() + 1);
            match kind {
                0 => bytes.insert(at, INSERTS[insert]),
                1 if at < bytes.len() => { bytes.remove(at); }
                _ if at < bytes.len() => bytes[at] = INSERTS[insert],
                _ => {}
            }
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Ok(());
        };
        // With no line before, and after a 2.1.3xx line (the content's scan takes the sha256).
        for before in [None, Some(SEEDS[1])] {
            let primed = || {
                let mut repeated = Repeated::default();
                if let Some(line) = before {
                    let _ = read_whole(line, 1, false, &mut repeated);
                }
                repeated
            };
            if let Some(split) = read_split(text, 2, false, &mut primed()) {
                prop_assert_eq!(shown(&split), shown(&read_whole(text, 2, false, &mut primed())));
            }
        }
    }
}

/// A 2.1.3xx line's sha256 is the same whether the content's scan took it (the line before was
/// 2.1.3xx too) or it was taken after (the guess was wrong), and so is a 2.1.100 line's none.
#[test]
fn a_message_sha256_does_not_hang_on_the_line_before() {
    use crate::agents::claude::record::LineKind;
    let line = |version: &str| {
        format!(
            r#"{{"type":"user","version":"{version}","message":{{"role":"user","content":[{{"tool_use_id":"t","type":"tool_result","content":"a \"b\"\n"}}]}},"uuid":"u"}}"#
        )
    };
    let sha = |line: &str, before: &str| {
        let mut repeated = Repeated::default();
        assert!(matches!(
            read_split(before, 1, true, &mut repeated),
            Some(Ok(_))
        ));
        match read_split(line, 2, true, &mut repeated).map(|r| r.map(|l| l.kind)) {
            Some(Ok(LineKind::User(u))) => u.message_sha256,
            _ => panic!("not read as a user line"),
        }
    };
    let (new, old) = (line("2.1.332"), line("2.1.100"));
    let expected = crate::agents::claude::content::message_sha256(
        "user",
        [r#"[{"tool_use_id":"t","type":"tool_result","content":"a \"b\"\n"}]"#].into_iter(),
    );
    assert!(expected.is_some());
    assert_eq!(sha(&new, &new).map(|s| *s), expected);
    assert_eq!(sha(&new, &old).map(|s| *s), expected);
    assert_eq!(sha(&old, &new), None);
    assert_eq!(sha(&old, &old), None);
}

/// A shape line of the same text as the shape line before shares its text; another does not.
#[test]
fn a_repeated_shape_is_kept_once() {
    use crate::agents::claude::record::LineKind;
    let line = |hash: &str, text: &str| {
        format!(
            r#"{{"type":"api-request-shape","shapeHash":"{hash}","shape":{{"system":[{{"type":"text","text":"{text}"}}],"tools":[]}}}}"#
        )
    };
    let mut repeated = Repeated::default();
    let mut shape = |k: usize, line: &str| match read_whole(line, k, true, &mut repeated) {
        Ok(Line {
            kind: LineKind::ApiRequestShape { shape, .. },
            ..
        }) => shape,
        _ => panic!("not read as a shape line"),
    };
    let a = shape(1, &line(&"a".repeat(64), "one"));
    let again = shape(2, &line(&"a".repeat(64), "one"));
    let b = shape(3, &line(&"b".repeat(64), "two"));
    let b_again = shape(4, &line(&"b".repeat(64), "two"));
    assert!(std::sync::Arc::ptr_eq(&a, &again));
    assert!(std::sync::Arc::ptr_eq(&b, &b_again));
    assert!(!std::sync::Arc::ptr_eq(&a, &b));
    assert!(b.contains(r#""text":"two""#) && a.contains(r#""text":"one""#));
}

/// A replay record's `params` as the record before's are shared with them.
#[test]
fn repeated_params_are_kept_once() {
    use crate::agents::claude::record::LineKind;
    let line = |id: &str, params: &str| {
        format!(r#"{{"type":"api-request","id":"{id}","keep":0,"tail":[],"params":{params}}}"#)
    };
    let mut repeated = Repeated::default();
    let mut params = |k: usize, line: &str| match read_whole(line, k, true, &mut repeated) {
        Ok(Line {
            kind: LineKind::ApiRequest(r),
            ..
        }) => r.params,
        _ => panic!("not read as a record"),
    };
    let a = params(1, &line("a", r#"{"max_tokens":1}"#));
    let again = params(2, &line("b", r#"{"max_tokens":1}"#));
    let other = params(3, &line("c", r#"{"max_tokens":2}"#));
    assert!(std::sync::Arc::ptr_eq(&a, &again));
    assert!(!std::sync::Arc::ptr_eq(&a, &other));
    assert_eq!(
        (&*a, &*other),
        (r#"{"max_tokens":1}"#, r#"{"max_tokens":2}"#)
    );
}

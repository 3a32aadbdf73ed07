use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::load::{LineContext, LineId, LineKind, LoadError, Loader};
use super::session::Session;
use super::thread::{RequestKind, Role, ThreadKey};
use super::{conversation, load};
use crate::core::parallel::Threads;
use crate::test_support::claude_sample_bytes;

fn non_blank_lines(bytes: &[u8]) -> usize {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .count()
}

/// `tests/conformance/claude/<version>/<scenario>/` of every case that ran.
fn recorded_cases() -> Vec<(PathBuf, Value)> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude");
    let mut out = Vec::new();
    for version in sorted_dirs(&base) {
        for case in sorted_dirs(&version) {
            let Ok(text) = std::fs::read_to_string(case.join("case.json")) else {
                continue;
            };
            let meta: Value = serde_json::from_str(&text).expect("case.json is JSON");
            if meta["available"] == Value::Bool(true) {
                out.push((case, meta));
            }
        }
    }
    assert!(
        out.len() >= 55,
        "the recorded Claude suite: {} cases",
        out.len()
    );
    out
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every transcript a case wrote, by its path below `home/`, in the order the runs made them
/// (2.0.77 also leaves an empty session file at a resume: left out).
fn transcripts(case: &Path, meta: &Value) -> Vec<(String, Vec<u8>)> {
    let mut paths: Vec<&str> = Vec::new();
    for run in meta["runs"].as_array().expect("runs") {
        for p in run["new_transcripts"].as_array().expect("new_transcripts") {
            paths.push(p.as_str().expect("path"));
        }
    }
    for p in meta["transcripts"].as_array().expect("transcripts") {
        let p = p.as_str().expect("path");
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    paths
        .into_iter()
        .map(|p| {
            (
                p.to_string(),
                std::fs::read(case.join("home").join(p)).expect("transcript"),
            )
        })
        .filter(|(_, bytes)| !bytes.is_empty())
        .collect()
}

fn requests(case: &Path) -> Vec<Value> {
    std::fs::read_to_string(case.join("requests.jsonl"))
        .expect("requests.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("request row"))
        .collect()
}

#[test]
fn every_line_of_every_real_sample_and_recording_is_a_record_or_skipped() {
    let mut inputs = claude_sample_bytes();
    for (case, meta) in recorded_cases() {
        inputs.extend(transcripts(&case, &meta));
    }
    // The recordings alone hold 144 (the real samples, when present, 67 more).
    assert!(inputs.len() > 130, "{} transcripts", inputs.len());
    for (name, bytes) in &inputs {
        let t = load(name, bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.non_blank_lines, non_blank_lines(bytes), "{name}");
        assert_eq!(t.lines.len() + t.skipped.len(), t.non_blank_lines, "{name}");
        // Every one of these files is valid JSON of known line types.
        assert!(t.skipped.is_empty(), "{name}: {:?}", t.skipped.first());
        assert!(t.notes.is_empty(), "{name}: {:?}", t.notes);
    }
}

/// SOURCES.md of the samples counts, per file, the distinct `message.id`s of assistant lines
/// with usage: every such line must be in a response, under its id.
#[test]
fn every_usage_of_a_real_sample_is_a_responses() {
    let samples = claude_sample_bytes();
    if samples.is_empty() {
        return;
    }
    let sources = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/claude-code-samples/SOURCES.md"),
    )
    .expect("SOURCES.md");
    let mut checked = 0;
    for line in sources
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(".jsonl |"))
    {
        let file = line
            .trim_start_matches("| ")
            .split(" |")
            .next()
            .expect("file");
        let Some(count) = line
            .split(" msg ids with usage")
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let (_, bytes) = samples
            .iter()
            .find(|(n, _)| n == file)
            .expect("sample listed");
        let t = load(file, bytes).expect("loads");
        let c = conversation(&t);
        let ids: BTreeSet<&str> = c
            .responses
            .iter()
            .filter(|r| r.usage.is_some())
            .filter_map(|r| r.message_id.as_deref())
            .collect();
        assert_eq!(ids.len(), count, "{file}");
        let lines_in_responses: usize = c.responses.iter().map(|r| r.lines.len()).sum();
        let assistant_lines = t
            .lines
            .iter()
            .filter(|l| matches!(l.kind, LineKind::Assistant(_)) && l.duplicate_of.is_none())
            .count();
        assert_eq!(lines_in_responses, assistant_lines, "{file}");
        checked += 1;
    }
    assert_eq!(checked, samples.len(), "every sample is in SOURCES.md");
}

/// The mock answered each request under its own `message_id`, so the transcript tells exactly
/// which captured request each of its responses answers.
#[test]
fn responses_are_the_captured_requests_thread_by_thread() {
    for (case, meta) in recorded_cases() {
        let captured = requests(&case);
        let ids_of = |kinds: &[&str]| -> Vec<String> {
            captured
                .iter()
                .filter(|r| kinds.contains(&r["kind"].as_str().unwrap_or("")))
                .map(|r| r["message_id"].as_str().expect("id").to_string())
                .collect()
        };
        let mut main = Vec::new();
        let mut side = BTreeSet::new();
        let mut compactions = 0;
        for (name, bytes) in transcripts(&case, &meta) {
            let t = load(&name, &bytes).expect("loads");
            let c = conversation(&t);
            for request in &c.requests {
                let Some(r) = request.response else {
                    if request.thread == ThreadKey::Main {
                        compactions += 1;
                    }
                    continue;
                };
                let id = c.responses[r].message_id.clone().expect("id").to_string();
                if request.thread == ThreadKey::Main {
                    // 1.0.30 copies the history into each resumed session's file.
                    if !main.contains(&id) {
                        main.push(id);
                    }
                } else {
                    side.insert(id);
                }
            }
        }
        let case = case.display();
        assert_eq!(main, ids_of(&["conversation"]), "{case}: main thread");
        let expected: BTreeSet<String> = ids_of(&["subagent", "warmup"]).into_iter().collect();
        assert_eq!(side, expected, "{case}: subagents");
        // 1.0.30 records no trace of a compaction made under `-p` (no boundary, no summary).
        let expected = match meta["version"].as_str() {
            Some("1.0.30") => 0,
            _ => ids_of(&["compaction"]).len(),
        };
        assert_eq!(compactions, expected, "{case}: compactions");
    }
}

#[test]
fn parallel_results_are_gathered_in_file_order() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude");
    for version in ["1.0.30", "2.1.100", "2.1.332"] {
        let case = base.join(version).join("parallel_calls");
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap())
                .unwrap();
        let (name, bytes) = transcripts(&case, &meta).remove(0);
        let t = load(&name, &bytes).unwrap();
        let c = conversation(&t);
        let second = &c.requests[1];
        let history = c.history(&t, second);
        let last = history.messages.last().expect("messages");
        assert_eq!(last.role, Role::User, "{version}");
        let answered: Vec<&str> = last
            .lines
            .iter()
            .filter_map(|&i| match &t.lines[i].kind {
                LineKind::User(u) => u.tool_results.first().map(AsRef::as_ref),
                _ => None,
            })
            .collect();
        // What the build sent (requests.jsonl): both results, in the order written.
        let sent = &requests(&case)
            .into_iter()
            .filter(|r| r["kind"] == "conversation")
            .nth(1)
            .unwrap()["body"]["messages"];
        let sent_last = sent.as_array().unwrap().last().unwrap()["content"]
            .as_array()
            .unwrap();
        let sent_ids: Vec<&str> = sent_last
            .iter()
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect();
        assert_eq!(answered, sent_ids, "{version}");
        let calls = &c.responses[c.requests[0].response.unwrap()].tool_uses;
        assert_eq!(calls.len(), 2, "{version}");
    }
}

#[test]
fn bad_lines_are_skipped_with_their_line_and_reason() {
    let text = concat!(
        "{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        "not json\n",
        "[1,2]\n",
        "\n",
        "{\"uuid\":\"b\"}\n",
        "{\"type\":\"assistant\",\"uuid\":\"c\"}\n",
        "{\"type\":\"brand-new\",\"uuid\":\"d\"}\n",
        "{\"type\":\"assistant\",\"uuid\":\"e\",\"parentUuid\":\"a\",\"message\":{\"id\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":\"many\"}}}\n",
        "{\"type\":\"user\",\"uuid\":\"f\",\"message\":{\"content\":\"cut",
    );
    let t = load("t.jsonl", text.as_bytes()).unwrap();
    let skipped: Vec<(usize, &str)> = t
        .skipped
        .iter()
        .map(|s| (s.line, s.reason.as_str()))
        .collect();
    assert_eq!(skipped.len(), 5, "{skipped:?}");
    assert_eq!(skipped[0].0, 2);
    assert!(skipped[0].1.starts_with("not JSON: "), "{skipped:?}");
    assert_eq!(skipped[1], (3, "JSON array, not an object"));
    assert_eq!(skipped[2], (5, "a JSON object without a `type`"));
    assert_eq!(skipped[3], (6, "`assistant` line without a `message`"));
    assert_eq!(skipped[4].0, 9);
    assert!(
        skipped[4]
            .1
            .starts_with("last line cut short (no newline): not JSON"),
        "{skipped:?}"
    );
    assert_eq!(t.non_blank_lines, 8);
    assert_eq!(t.lines.len(), 3);
    assert!(matches!(&t.lines[1].kind, LineKind::Unknown(name) if &**name == "brand-new"));
    assert_eq!(
        t.notes,
        [
            "line 8: `usage` of an unexpected shape, counted as none",
            "1 line(s) of unknown type `brand-new` kept, not read (first at line 7)",
        ]
    );
}

/// Recording notes a run's `uuid`s before it records the run's lines (so that their cache
/// misses overlap): each line still points at the first line of its uuid, and a parent written
/// after its child is still looked for in a cycle, as recording line by line does, however the
/// file is cut.
#[test]
fn uuids_noted_a_run_at_a_time_read_as_noted_line_by_line() {
    let line = |uuid: &str, parent: Option<&str>| {
        serde_json::json!({"type": "user", "uuid": uuid, "parentUuid": parent,
                           "version": "2.1.100", "sessionId": "s",
                           "message": {"role": "user", "content": "hi"}})
    };
    // A skipped line and a line without a uuid take no index and one: the repeated `c` is
    // of the line at index 4.
    let no_uuid = serde_json::json!({"type": "user", "version": "2.1.100", "sessionId": "s",
                                     "message": {"role": "user", "content": "hi"}});
    let text = transcript_of(&[
        line("a", None),
        line("b", Some("a")),
        line("a", Some("b")),
        serde_json::json!([1]),
        no_uuid,
        line("c", Some("d")),
        line("d", Some("c")),
        line("c", Some("d")),
    ]);
    let duplicates =
        |t: &super::Transcript| t.lines.iter().map(|l| l.duplicate_of).collect::<Vec<_>>();
    let mut by_line = Loader::lean("t.jsonl", Threads::new(1));
    by_line.push(text.as_bytes());
    let by_line = by_line.finish().unwrap();
    let expected = [None, None, Some(0), None, None, None, Some(4)];
    assert_eq!(duplicates(&by_line), expected);
    // `c` and `d` are each other's parents: a cycle, found because `c` names a parent
    // written after it.
    assert!(by_line.needs_content);
    // Without them, nothing calls for the contents.
    let ordered = text
        .lines()
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    let mut loader = Loader::lean("t.jsonl", Threads::new(2));
    loader.push(ordered.as_bytes());
    assert!(!loader.finish().unwrap().needs_content);
    // Cut in pieces of a line or two, and whole: one run of all the lines.
    for piece in [1, 40, 200, text.len()] {
        let mut loader = Loader::lean("t.jsonl", Threads::new(2));
        loader
            .read_pieces_from(&mut text.as_bytes(), piece, &mut |_| {})
            .unwrap();
        let by_run = loader.finish().unwrap();
        assert_eq!(duplicates(&by_run), expected, "{piece}");
        assert!(by_run.needs_content, "{piece}");
        let mut loader = Loader::lean("t.jsonl", Threads::new(2));
        for chunk in text.as_bytes().chunks(piece) {
            loader.push(chunk);
        }
        let pushed = loader.finish().unwrap();
        assert_eq!(duplicates(&pushed), expected, "{piece}");
        assert!(pushed.needs_content, "{piece}");
    }
}

/// With a helper thread, bad lines are skipped as on one thread, and the last line cut short is
/// named so, whatever the pieces.
#[test]
fn a_helper_thread_reads_bad_lines_as_one_thread_does() {
    let text = concat!(
        "{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        "not json\n",
        "\r\n",
        "[1,2]\n",
        "{\"type\":\"user\",\"uuid\":\"a\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"again\"}]}}\n",
        "{\"type\":\"brand-new\"}\n",
        "{\"type\":\"user\",\"uuid\":\"f\",\"message\":{\"content\":\"cut",
    );
    let one = load("t.jsonl", text.as_bytes()).unwrap();
    for piece in 1..text.len() {
        let mut loader = Loader::with_threads("t.jsonl", Threads::new(2));
        for chunk in text.as_bytes().chunks(piece) {
            loader.push(chunk);
        }
        let two = loader.finish().unwrap();
        assert_eq!(
            format!("{:?}", two.lines),
            format!("{:?}", one.lines),
            "{piece}"
        );
        assert_eq!(
            format!("{:?}", two.skipped),
            format!("{:?}", one.skipped),
            "{piece}"
        );
        assert_eq!(two.notes, one.notes, "{piece}");
        assert_eq!(two.non_blank_lines, 6, "{piece}");
    }
    assert_eq!(one.lines[1].duplicate_of, Some(0));
    assert!(
        one.skipped
            .last()
            .unwrap()
            .reason
            .starts_with("last line cut short")
    );
}

#[test]
fn a_file_of_no_json_object_is_no_transcript() {
    assert!(matches!(
        load("e.jsonl", b"\n\n"),
        Err(LoadError::Empty { .. })
    ));
    let binary = [0u8, 159, 146, 150, 10, 255, 0];
    match load("b.bin", &binary) {
        Err(LoadError::NotATranscript {
            line: 1, reason, ..
        }) => {
            assert!(reason.starts_with("not UTF-8"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn pieces_of_any_size_load_as_the_whole() {
    for (case, meta) in recorded_cases().into_iter().step_by(7) {
        for (name, bytes) in transcripts(&case, &meta) {
            let whole = load(&name, &bytes).unwrap();
            for piece in [1, 7, 4096] {
                let mut loader = Loader::new(&name);
                for chunk in bytes.chunks(piece) {
                    loader.push(chunk);
                }
                let t = loader.finish().unwrap();
                assert_eq!(
                    format!("{:?}", t.lines),
                    format!("{:?}", whole.lines),
                    "{name}"
                );
            }
            // Pieces read on a helper thread (and here): the same lines, in the same order.
            for piece in [1, 300, 4096, 1 << 20] {
                let mut loader = Loader::with_threads(&name, Threads::new(2));
                for chunk in bytes.chunks(piece) {
                    loader.push(chunk);
                }
                let t = loader.finish().unwrap();
                let read = |t: &super::Transcript| {
                    format!(
                        "{:?}",
                        (
                            &t.lines,
                            &t.skipped,
                            &t.notes,
                            t.non_blank_lines,
                            &t.versions
                        )
                    )
                };
                assert_eq!(read(&t), read(&whole), "{name} in {piece}");
            }
        }
    }
}

/// The builds a transcript names are its lines' versions in the order first met, however the
/// lines were read (each thread shares a run of lines' context apart).
#[test]
fn the_builds_are_the_lines_versions_in_the_order_first_met() {
    let line = |version: Option<&str>| {
        let version = version.map_or(String::new(), |v| format!(r#","version":"{v}""#));
        format!(r#"{{"type":"progress","sessionId":"s"{version}}}"#)
    };
    let versions = [
        Some("2.0.1"),
        Some("2.0.1"),
        None,
        Some("2.1.100"),
        Some("2.0.1"),
        None,
        Some("2.1.332"),
        Some("2.1.100"),
    ];
    let text: String = (0..40)
        .flat_map(|_| versions.iter().map(|v| line(*v) + "\n"))
        .collect();
    let expected = ["2.0.1", "2.1.100", "2.1.332"];
    for piece in [1, 64, 1 << 20] {
        for threads in [1, 2] {
            let mut loader = Loader::with_threads("t.jsonl", Threads::new(threads));
            for chunk in text.as_bytes().chunks(piece) {
                loader.push(chunk);
            }
            let t = loader.finish().unwrap();
            let found: Vec<&str> = t.versions.iter().map(|v| &**v).collect();
            assert_eq!(found, expected, "{piece} {threads}");
        }
    }
}

/// A source that hands over its bytes a few at a time, now and then interrupted, and fails
/// with `fail` once they are all read (`None`: it ends).
struct Trickle<'a> {
    bytes: &'a [u8],
    calls: usize,
    fail: Option<std::io::ErrorKind>,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(5) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        if self.bytes.is_empty() {
            return match self.fail {
                Some(kind) => Err(std::io::Error::new(kind, "the disk went away")),
                None => Ok(0),
            };
        }
        let n = (self.calls % 13 + 1)
            .min(buffer.len())
            .min(self.bytes.len());
        buffer[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// A file read to its end by `read_from` (its bytes read on the helper's side, or here with one
/// thread) loads as the whole read at once: the same lines, numbered the same, the same lines
/// skipped (the last one cut short), whatever the pieces and however the source hands its
/// bytes over; each piece's lines are recorded before the next call.
#[test]
fn a_source_read_to_its_end_loads_as_the_whole() {
    let bad = concat!(
        "{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        "not json\n",
        "\r\n",
        "[1,2]\n",
        "{\"type\":\"brand-new\"}\n",
        "{\"type\":\"user\",\"uuid\":\"f\",\"message\":{\"content\":\"cut",
    );
    let mut files = vec![("bad.jsonl".to_string(), bad.as_bytes().to_vec())];
    for (case, meta) in recorded_cases().into_iter().step_by(9) {
        files.extend(transcripts(&case, &meta));
    }
    let read = |t: &super::Transcript| {
        format!("{:?}", (&t.lines, &t.skipped, &t.notes, t.non_blank_lines))
    };
    for (name, bytes) in &files {
        let whole = read(&load(name, bytes).unwrap());
        for threads in [1, 2] {
            for piece in [1, 7, 300, 4096, 1 << 20] {
                let mut loader = Loader::with_threads(name, Threads::new(threads));
                // A few bytes a call, and, for some pieces, as many as asked.
                let mut trickle = Trickle {
                    bytes,
                    calls: 0,
                    fail: None,
                };
                let mut whole_reads = &bytes[..];
                let source: &mut (dyn std::io::Read + Send) = match piece {
                    300 | 1_048_576 => &mut whole_reads,
                    _ => &mut trickle,
                };
                let mut recorded = 0;
                loader
                    .read_pieces_from(source, piece, &mut |t| {
                        assert!(t.non_blank_lines >= recorded, "{name}");
                        recorded = t.non_blank_lines;
                    })
                    .unwrap();
                let t = loader.finish().unwrap();
                assert!(recorded > 0, "{name} in {piece} on {threads}");
                assert_eq!(read(&t), whole, "{name} in {piece} on {threads}");
            }
        }
    }
}

/// A source that fails partway is the error of `read_from`, on either side, with no thread
/// left waiting, and the lines read before it are recorded as on one thread.
#[test]
fn a_source_that_fails_is_the_error() {
    let (_, bytes) = claude_sample_bytes()
        .into_iter()
        .chain(crate::test_support::claude_recorded_bytes())
        .max_by_key(|(_, b)| b.len())
        .expect("a transcript");
    for piece in [64, 4096] {
        let read = |threads: usize| {
            let mut loader = Loader::with_threads("f.jsonl", Threads::new(threads));
            let mut source = Trickle {
                bytes: &bytes[..bytes.len().min(200_000)],
                calls: 0,
                fail: Some(std::io::ErrorKind::BrokenPipe),
            };
            let err = loader
                .read_pieces_from(&mut source, piece, &mut |_| {})
                .unwrap_err();
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::BrokenPipe,
                "{piece} on {threads}"
            );
            let t = loader.finish().unwrap();
            assert!(t.non_blank_lines > 10, "{piece} on {threads}");
            format!("{:?}", (&t.lines, &t.skipped, &t.notes, t.non_blank_lines))
        };
        assert!(read(2) == read(1), "{piece}");
    }
}

/// A panic on the reading thread reaches the caller as it was raised.
#[test]
fn a_panic_reading_a_source_is_resumed_as_raised() {
    struct Exploding;
    impl std::io::Read for Exploding {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            panic!("the source exploded")
        }
    }
    for threads in [1, 2] {
        let panic = std::panic::catch_unwind(|| {
            let mut loader = Loader::with_threads("p.jsonl", Threads::new(threads));
            let _ = loader.read_pieces_from(&mut Exploding, 4096, &mut |_| {});
        })
        .unwrap_err();
        assert_eq!(
            panic.downcast_ref::<&str>(),
            Some(&"the source exploded"),
            "on {threads}"
        );
    }
}

/// After a line longer than a piece, the pieces are a piece's bytes again: the steps grow from
/// each as it comes, not from the rest of the file at once.
#[test]
fn pieces_after_a_long_line_are_short_again() {
    let line = |i: usize, text: &str| {
        format!(
            "{{\"type\":\"user\",\"uuid\":\"u{i}\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
        )
    };
    let mut bytes = line(0, &"x".repeat(1 << 20));
    for i in 1..=400 {
        bytes.push_str(&line(i, &"y".repeat(200)));
    }
    for threads in [1, 2] {
        let mut loader = Loader::with_threads("long.jsonl", Threads::new(threads));
        let mut calls = 0;
        loader
            .read_pieces_from(&mut bytes.as_bytes(), 4096, &mut |_| calls += 1)
            .unwrap();
        let t = loader.finish().unwrap();
        assert_eq!(t.lines.len(), 401);
        // About 100 kB of short lines in pieces of 4 kB.
        assert!(calls > 20, "{calls} pieces on {threads}");
    }
}

/// Many megabytes pushed at once (standard input, `watch`'s first read) are handed to the helper
/// a megabyte at a time: the same lines, numbered the same, as read on one thread.
#[test]
fn a_file_pushed_at_once_reads_as_on_one_thread() {
    let mut bytes = Vec::new();
    for (_, sample) in claude_sample_bytes() {
        bytes.extend_from_slice(&sample);
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
    }
    // A last line without its newline, after many megabytes.
    bytes.extend_from_slice(
        br#"{"type":"user","uuid":"last","message":{"role":"user","content":"x"}}"#,
    );
    let read = |threads: usize| {
        let mut loader = Loader::with_threads("all.jsonl", Threads::new(threads));
        loader.push(&bytes);
        let t = loader.finish().unwrap();
        format!("{:?}", (&t.lines, &t.skipped, &t.notes, t.non_blank_lines))
    };
    if bytes.len() > 3 << 20 {
        // Not `assert_eq!`: the records of 16 MB of lines are no message.
        assert!(
            read(2) == read(1),
            "{} bytes read on two threads",
            bytes.len()
        );
    }
}

#[test]
fn a_compaction_is_a_request_of_its_own_kind() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude");
    for version in ["1.0.128", "2.0.77", "2.1.100", "2.1.332"] {
        let case = base.join(version).join("auto_compaction");
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap())
                .unwrap();
        let main = meta["session_id"].as_str().unwrap();
        let (name, bytes) = transcripts(&case, &meta)
            .into_iter()
            .find(|(n, _)| n.ends_with(&format!("{main}.jsonl")))
            .unwrap();
        let t = load(&name, &bytes).unwrap();
        let c = conversation(&t);
        let kinds: Vec<RequestKind> = c.thread(&ThreadKey::Main).map(|r| r.kind).collect();
        // The order the mock saw them in (requests.jsonl), side requests left out.
        let captured: Vec<RequestKind> = requests(&case)
            .iter()
            .filter_map(|r| match r["kind"].as_str() {
                Some("conversation") => Some(RequestKind::Sampling),
                Some("compaction") => Some(RequestKind::Compaction),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, captured, "{version}");
    }
}

/// The captured body with its blobs put back (CONFORMANCE.md, "Layout of a Claude case").
fn expand(value: &Value, blobs: &Path) -> Value {
    match value {
        Value::Object(map) if map.len() == 1 && map.contains_key("$blob") => {
            let hash = map["$blob"].as_str().expect("hash");
            let text = std::fs::read_to_string(blobs.join(format!("{hash}.json"))).expect("blob");
            serde_json::from_str(&text).expect("blob JSON")
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), expand(v, blobs)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| expand(v, blobs)).collect()),
        other => other.clone(),
    }
}

/// 2.1.3xx: every captured sampling request (main thread and subagents) is rebuilt from the
/// transcript byte for byte, but for `metadata` and the billing block (named), and its digest
/// is the one the build recorded.
#[test]
fn replay_records_rebuild_every_captured_body_and_verify_its_digest() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude");
    let mut checked = 0;
    for (case, meta) in recorded_cases() {
        if meta["version"] != "2.1.332" {
            continue;
        }
        let loaded: Vec<_> = transcripts(&case, &meta)
            .into_iter()
            .map(|(name, bytes)| {
                let t = load(&name, &bytes).unwrap();
                let c = conversation(&t);
                (t, c)
            })
            .collect();
        for captured in requests(&case) {
            if !matches!(captured["kind"].as_str(), Some("conversation" | "subagent")) {
                continue;
            }
            let id = captured["message_id"].as_str().unwrap();
            let (t, c, request) = loaded
                .iter()
                .find_map(|(t, c)| {
                    c.requests.iter().find_map(|r| {
                        let response = &c.responses[r.response?];
                        (response.message_id.as_deref() == Some(id)).then_some((t, c, r))
                    })
                })
                .unwrap_or_else(|| panic!("{}: no response {id}", case.display()));
            let replayed = super::replay::replay(t, c, request)
                .unwrap_or_else(|e| panic!("{}: {id}: {e}", case.display()));
            assert!(replayed.verified(), "{}: {id}: digest", case.display());
            assert_eq!(replayed.digest, captured["digest"].as_str().unwrap());
            let mut sent = expand(&captured["body"], &base.join("blobs"));
            sent["metadata"] = Value::Null;
            sent["system"][0] = Value::Null;
            assert_eq!(
                serde_json::to_string(&replayed.body).unwrap(),
                serde_json::to_string(&sent).unwrap(),
                "{}: {id}",
                case.display()
            );
            let parts: Vec<&str> = replayed.unknown.iter().map(|u| u.part.as_str()).collect();
            assert_eq!(parts, ["metadata", "system[0]"]);
            checked += 1;
        }
    }
    assert_eq!(checked, 42, "2.1.332's conversation and subagent requests");
}

/// A message's content as a list of blocks.
fn blocks_of(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    }
}

/// Builds before 2.1.3xx: the messages compiled by the build's rules against the captured ones,
/// but for the injected context promptc names (text blocks of the first message that begin
/// `<system-reminder>`, which those builds do not record).
#[test]
fn older_builds_send_the_messages_their_rules_say() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude");
    let mut report = Vec::new();
    let mut checked = 0;
    for (case, meta) in recorded_cases() {
        if meta["version"] == "2.1.332" {
            continue;
        }
        let loaded: Vec<_> = transcripts(&case, &meta)
            .into_iter()
            .map(|(name, bytes)| {
                let t = load(&name, &bytes).unwrap();
                let c = conversation(&t);
                (t, c)
            })
            .collect();
        for captured in requests(&case) {
            if captured["kind"] != "conversation" {
                continue;
            }
            let id = captured["message_id"].as_str().unwrap();
            let Some((t, c, request)) = loaded.iter().find_map(|(t, c)| {
                c.requests.iter().find_map(|r| {
                    let response = &c.responses[r.response?];
                    (response.message_id.as_deref() == Some(id)).then_some((t, c, r))
                })
            }) else {
                report.push(format!("{}: no response {id}", case.display()));
                continue;
            };
            let compiled = super::wire::compile(t, c, request, &Default::default());
            let sent = expand(&captured["body"], &base.join("blobs"));
            let mut sent_messages: Vec<Value> = sent["messages"].as_array().unwrap().clone();
            // Where promptc names injected context unknown, the captured context blocks go.
            for unknown in &compiled.unknown {
                let Some(index) = unknown
                    .part
                    .strip_prefix("messages[")
                    .and_then(|p| p.strip_suffix("].content"))
                    .and_then(|i| i.parse::<usize>().ok())
                else {
                    continue;
                };
                if let Some(m) = sent_messages.get_mut(index) {
                    let kept: Vec<Value> = blocks_of(m)
                        .into_iter()
                        .filter(|b| {
                            !b["text"]
                                .as_str()
                                .is_some_and(|t| t.starts_with("<system-reminder>"))
                        })
                        .collect();
                    m["content"] = Value::Array(kept);
                }
            }
            let mine: Vec<Value> = compiled.body["messages"].as_array().unwrap().clone();
            let norm = |ms: &[Value]| -> Vec<(Value, Vec<Value>)> {
                ms.iter()
                    .map(|m| (m["role"].clone(), blocks_of(m)))
                    .collect()
            };
            let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            assert_eq!(
                keys(&compiled.body),
                keys(&sent),
                "{}: key order",
                case.display()
            );
            assert_eq!(compiled.body["model"], sent["model"], "{}", case.display());
            let (mut a, mut b) = (norm(&sent_messages), norm(&mine));
            // 1.0.30 under `-p` sends the last tool turn twice where promptc names that possible
            // (the breakpoints then sit on the copies): compared without the copies and the
            // breakpoints.
            if compiled
                .unknown
                .iter()
                .any(|u| u.part == "messages" && u.reason == super::wire::REPEAT_POSSIBLE)
                && a.len() == b.len() + 2
            {
                a.truncate(b.len());
                let unmark = |ms: &mut Vec<(Value, Vec<Value>)>| {
                    for (_, blocks) in ms.iter_mut() {
                        for block in blocks.iter_mut() {
                            if let Value::Object(map) = block {
                                map.remove("cache_control");
                            }
                        }
                    }
                };
                unmark(&mut a);
                unmark(&mut b);
            }
            // 1.0.30 compacts under `-p` without writing a line of it (CONFORMANCE.md): the one
            // request after that compaction is not in the transcript.
            let unrecorded_compaction = meta["version"] == "1.0.30"
                && meta["scenario"] == "auto_compaction"
                && captured["index"] == 4;
            if a != b && !unrecorded_compaction {
                let at = a
                    .iter()
                    .zip(&b)
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.len().min(b.len()));
                report.push(format!(
                    "{} #{}: {} sent / {} compiled; first difference at message {at}:\n  sent     {}\n  compiled {}",
                    case.strip_prefix(&base).unwrap().display(),
                    captured["index"],
                    a.len(),
                    b.len(),
                    a.get(at).map_or("-".into(), |m| serde_json::to_string(m).unwrap().chars().take(300).collect::<String>()),
                    b.get(at).map_or("-".into(), |m| serde_json::to_string(m).unwrap().chars().take(300).collect::<String>()),
                ));
            }
            checked += 1;
        }
    }
    assert!(
        report.is_empty(),
        "{} of {checked} differ:\n{}",
        report.len(),
        report.join("\n")
    );
    assert_eq!(checked, 153, "conversation requests of 1.0.30-2.1.100");
}

/// `steps` against the mock's cache: for every main-thread request of every case, the verdict's
/// class is what the mock did (nothing read, the previous request's whole prefix read, a part of
/// it), the prediction of a whole prefix is the tokens the mock read, and on 2.1.3xx (every
/// block recorded) the block the prediction reads up to is the mock's.
#[test]
fn steps_verdicts_agree_with_the_mock_cache() {
    use crate::AgentSession;
    use crate::cache::Verdict;
    let mut report = Vec::new();
    let mut checked = 0;
    for (case, meta) in recorded_cases() {
        let captured = requests(&case);
        let conversation_rows: Vec<&Value> = captured
            .iter()
            .filter(|r| r["kind"] == "conversation")
            .collect();
        // The file with the whole main thread: the last one a resume wrote (1.0.30 copies).
        let loaded: Vec<Session> = transcripts(&case, &meta)
            .into_iter()
            .filter(|(name, _)| !name.contains("/agent-") && !name.contains("/subagents/"))
            .map(|(name, bytes)| Session::load(&name, &bytes).unwrap())
            .collect();
        let Some(session) = loaded
            .iter()
            .filter(|s| s.thread == ThreadKey::Main)
            .max_by_key(|s| s.steps().len())
        else {
            continue;
        };
        let plan = super::session::plan(session, Default::default(), Default::default());
        for row in crate::cache::analyze(session, &plan) {
            let step = &session.claude_steps[row.step];
            // A compaction's own request and a copied one are not judged.
            if step.prompt.is_none() || step.copied {
                continue;
            }
            let verdict = &row.verdict;
            let id = step.key.as_deref().unwrap();
            let Some(at) = conversation_rows.iter().position(|r| r["message_id"] == id) else {
                report.push(format!("{}: {id} not captured", case.display()));
                continue;
            };
            let captured_row = conversation_rows[at];
            let read = captured_row["usage"]["cache_read_input_tokens"]
                .as_u64()
                .unwrap();
            let full = at.checked_sub(1).map(|p| {
                let u = &conversation_rows[p]["usage"];
                u["cache_read_input_tokens"].as_u64().unwrap()
                    + u["cache_creation_input_tokens"].as_u64().unwrap()
            });
            let mock = if read == 0 {
                "none"
            } else if Some(read) == full {
                "whole"
            } else {
                "part"
            };
            let ours: &[&str] = match verdict {
                Verdict::First
                | Verdict::ModelSwitch { .. }
                | Verdict::TtlExpired { .. }
                | Verdict::NoBreakpoint => &["none"],
                Verdict::Hit => &["whole"],
                Verdict::ComponentChanged(_)
                | Verdict::HistoryRewritten(_)
                | Verdict::Compaction
                | Verdict::LookbackExceeded => {
                    if row.read_block.is_some() {
                        &["part"]
                    } else {
                        &["none"]
                    }
                }
                // The provider read less than the recorded prefix predicts.
                Verdict::UnrecordedChange(_) => &["none", "part"],
                // What another file's requests wrote is read, whole or in part.
                Verdict::EarlierFile => &["whole", "part"],
                // The repeat broke the prefix at its first copy: what came before it was read.
                Verdict::KnownRewrite { .. } => &["part"],
                // Another session's entries for the same prefix were read.
                Verdict::WarmStart => &["part", "whole"],
                _ => &[],
            };
            let scenario = case
                .strip_prefix(case.parent().unwrap().parent().unwrap())
                .unwrap()
                .display()
                .to_string();
            if !ours.contains(&mock) {
                report.push(format!(
                    "{scenario} #{}: {} ({:?}) but the mock read {mock} ({read})",
                    captured_row["index"],
                    verdict.name(),
                    verdict
                ));
            }
            if matches!(verdict, Verdict::Hit) && row.predicted_cached != Some(read as usize) {
                report.push(format!(
                    "{scenario} #{}: predicted {:?}, read {read}",
                    captured_row["index"], row.predicted_cached
                ));
            }
            if meta["version"] == "2.1.332" {
                let mock_block = captured_row["cache"]["read_block"].as_i64().unwrap();
                let ours = row.read_block.map_or(-1, |b| b as i64);
                if !matches!(verdict, Verdict::UnrecordedChange(_) | Verdict::EarlierFile)
                    && ours != mock_block
                {
                    report.push(format!(
                        "{scenario} #{}: read to block {ours}, the mock {mock_block}",
                        captured_row["index"]
                    ));
                }
            }
            checked += 1;
        }
    }
    assert!(
        report.is_empty(),
        "{} of {checked}:\n{}",
        report.len(),
        report.join("\n")
    );
    assert!(checked > 180, "{checked} steps");
}

/// The transcript as it stood before run `run` of the case (1-based): the lines before that
/// run's prompt (a resume appends to the same file from 1.0.128 on), or the file of the earlier
/// run when the run wrote a new one (1.0.30's copies, a fork).
fn before_run(case: &Path, meta: &Value, run: usize) -> Option<(String, Vec<u8>)> {
    let runs = meta["runs"].as_array()?;
    let this = &runs[run - 1];
    let first = |r: &Value| {
        r["new_transcripts"]
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .filter(|p| {
                std::fs::read_to_string(case.join("home").join(p))
                    .is_ok_and(|t| t.contains("\"type\":\"assistant\""))
            })
            .find(|p| !p.contains("agent-"))
            .map(str::to_string)
    };
    let earlier = runs[..run - 1].iter().rev().find_map(first)?;
    let bytes = std::fs::read(case.join("home").join(&earlier)).ok()?;
    if first(this).is_some() {
        // A file of its own: the earlier file is A as it was (a copy keeps it untouched).
        return Some((earlier, bytes));
    }
    let prompt = serde_json::to_string(this["prompt"].as_str()?).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let cut = text
        .lines()
        .position(|l| l.contains("\"type\":\"user\"") && l.contains(&prompt))?;
    let kept: String = text.lines().take(cut).map(|l| format!("{l}\n")).collect();
    Some((format!("{earlier} (before run {run})"), kept.into_bytes()))
}

/// 1.0.56's `--continue` (a real sample) copied the history into a new session, uuids kept, as
/// `--fork-session` does: the copy is named, as either. A snapshot of that file is no copy of
/// it, though the file's later lines are of another session than its first.
#[test]
fn a_resume_that_copied_is_named_a_copy_and_a_snapshot_is_not() {
    use crate::AgentSession;
    let samples = claude_sample_bytes();
    let bytes = |name: &str| samples.iter().find(|(n, _)| n == name).map(|(_, b)| b);
    let (Some(first), Some(continued)) = (
        bytes("slopus__happy-cli__0-say-lol-session.jsonl"),
        bytes("slopus__happy-cli__1-continue-run-ls-tool.jsonl"),
    ) else {
        assert!(samples.is_empty(), "the happy-cli samples are missing");
        return;
    };
    let load = |bytes: &[u8]| Session::load("t.jsonl", bytes).unwrap();
    let (first, whole) = (load(first), load(continued));
    assert_eq!(
        whole.copy_of(&first),
        Some("a copy of A in a session of its own (a `--fork-session`, or a resume that copied A)")
    );
    // Its summary, its copy of the first prompt (the first session's) and the answer (its own).
    let snapshot: Vec<u8> = continued
        .split_inclusive(|b| *b == b'\n')
        .take(3)
        .flatten()
        .copied()
        .collect();
    assert_eq!(whole.copy_of(&load(&snapshot)), None);
}

/// `diff` on every recorded resume, continue and fork: B's first request of its own against A's
/// last names a drift exactly where the mock's cache read less than A's last request left
/// cached, and none where it read all of it.
#[test]
fn diff_names_the_break_of_every_recorded_resume_and_none_elsewhere() {
    use crate::diff::{DriftClass, diff};
    let mut report = Vec::new();
    let mut checked = 0;
    for (case, meta) in recorded_cases() {
        let scenario = meta["scenario"].as_str().unwrap();
        if ![
            "resume",
            "continue",
            "model_switch",
            "claude_md_edit",
            "interrupted_call",
            "fork_session",
        ]
        .contains(&scenario)
        {
            continue;
        }
        let Some((a_name, a_bytes)) = before_run(&case, &meta, 2) else {
            report.push(format!("{}: no A", case.display()));
            continue;
        };
        // A file of the session's own (1.0.128 also writes one holding only a title).
        let non_empty = |p: &&str| {
            std::fs::read_to_string(case.join("home").join(p))
                .is_ok_and(|t| t.contains("\"type\":\"assistant\""))
        };
        let b_path = meta["runs"][1]["new_transcripts"]
            .as_array()
            .and_then(|n| {
                n.iter()
                    .filter_map(Value::as_str)
                    .filter(non_empty)
                    .find(|p| !p.contains("agent-"))
            })
            .map_or_else(
                || a_name.split(" (before").next().unwrap().to_string(),
                str::to_string,
            );
        let b_bytes = std::fs::read(case.join("home").join(&b_path)).unwrap();
        let (sa, sb) = (
            Session::load(&a_name, &a_bytes).unwrap(),
            Session::load(&b_path, &b_bytes).unwrap(),
        );
        let (pa, pb) = (
            super::session::plan(&sa, Default::default(), Default::default()),
            super::session::plan(&sb, Default::default(), Default::default()),
        );
        let d = diff(&sa, &pa, &sb, &pb, None);
        // The mock: B's first conversation request of run 2 against run 1's last.
        let captured = requests(&case);
        let run_requests = |r: usize| -> Vec<&Value> {
            meta["runs"][r]["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| &captured[i.as_u64().unwrap() as usize])
                .filter(|row| row["kind"] == "conversation")
                .collect()
        };
        let (a_last, b_first) = (
            run_requests(0).last().copied(),
            run_requests(1).first().copied(),
        );
        let (Some(a_last), Some(b_first)) = (a_last, b_first) else {
            continue;
        };
        let cached = a_last["usage"]["cache_read_input_tokens"].as_u64().unwrap()
            + a_last["usage"]["cache_creation_input_tokens"]
                .as_u64()
                .unwrap();
        let read = b_first["usage"]["cache_read_input_tokens"]
            .as_u64()
            .unwrap();
        let broke = read < cached;
        let label = format!("{}/{scenario}", meta["version"].as_str().unwrap());
        // A drift that is named: the expected append of context is not a break.
        let named: Vec<_> = d
            .drifts
            .iter()
            .filter(|x| x.class != DriftClass::ContextAppended)
            .collect();
        if broke == named.is_empty() {
            report.push(format!(
                "{label}: the mock read {read} of {cached}; diff says {:?}",
                named
                    .iter()
                    .map(|x| (x.class.name(), x.component, x.detail.clone()))
                    .collect::<Vec<_>>()
            ));
        }
        // Of the recorded resumes, continues and forks, only a `--fork-session` copies A's
        // lines into a session of its own (1.0.30's resume copies them under new uuids).
        use crate::AgentSession;
        if sb.copy_of(&sa).is_some() != (scenario == "fork_session") {
            report.push(format!("{label}: B is {:?}", sb.copy_of(&sa)));
        }
        if scenario == "model_switch"
            && !d
                .drifts
                .iter()
                .any(|x| x.class == DriftClass::ParamsChanged && x.detail.contains("model switch"))
        {
            report.push(format!("{label}: no model switch in {:?}", d.drifts));
        }
        checked += 1;
    }
    assert!(
        report.is_empty(),
        "{} of {checked}:\n{}",
        report.len(),
        report.join("\n")
    );
    assert!(checked >= 28, "{checked} pairs");
}

/// `check` on every recorded main thread: tool ids are unique, nothing volatile comes before a
/// breakpoint, and a request extends the one before it, but where the build rewrites history
/// itself (1.0.30's repeated tool turn) or the transcript shows a break the mock saw too.
#[test]
fn check_holds_the_recorded_sessions_to_the_invariants() {
    let mut report = Vec::new();
    for (case, meta) in recorded_cases() {
        for (name, bytes) in transcripts(&case, &meta) {
            if name.contains("agent-") {
                continue;
            }
            let session = Session::load(&name, &bytes).unwrap();
            let plan = super::session::plan(&session, Default::default(), Default::default());
            for f in crate::check::check(&session, &plan) {
                let at = f.step.map(|k| {
                    let s = &crate::AgentSession::steps(&session)[k];
                    (
                        crate::AgentSession::turns(&session)[s.turn].number,
                        s.number,
                    )
                });
                let label = format!(
                    "{}/{} {name} {at:?}",
                    meta["version"].as_str().unwrap(),
                    meta["scenario"].as_str().unwrap(),
                );
                let expected = f.name == "input_extends_previous"
                    && (meta["version"] == "1.0.30"
                        || (meta["version"] == "2.1.100"
                            && meta["scenario"] == "interrupted_call"));
                if !expected {
                    report.push(format!("{label}: {} {}", f.name, f.detail));
                }
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// `steps` takes each request's blocks from its lines, each hashed once: they are the blocks of
/// the body `compile` gives, request by request, on every recording and real sample. So are the
/// planner's, each prompt grown from the one before (2.1.3xx's replayed requests too), and the
/// history it grows is `Conversation::history`'s.
#[test]
fn steps_blocks_are_the_compiled_bodies_blocks() {
    planned_prompts_are_the_compiled_bodies_blocks();
    use super::cache::{LineBlocks, compiled_blocks, rule_blocks};
    use super::wire::{Build, Given, compile};
    let mut inputs = claude_sample_bytes();
    for (case, meta) in recorded_cases() {
        inputs.extend(transcripts(&case, &meta));
    }
    let mut checked = 0;
    for (name, bytes) in &inputs {
        let t = load(name, bytes).unwrap();
        let c = conversation(&t);
        let mut memo = LineBlocks::default();
        for request in &c.requests {
            let Some(r) = request.response else { continue };
            let replayed = c.responses[r].lines.iter().any(
                |&i| matches!(&t.lines[i].kind, LineKind::Assistant(a) if a.request_ref.is_some()),
            );
            if replayed {
                continue;
            }
            let compiled = compile(&t, &c, request, &Given::default());
            let build = compiled
                .version
                .as_deref()
                .map_or(Build::V1_0_30, Build::of);
            let fast = rule_blocks(&t, &c, request, build, &mut memo);
            assert_eq!(
                fast,
                compiled_blocks(&compiled),
                "{name}: request at line {}",
                t.lines[request.at].number
            );
            checked += 1;
        }
    }
    // The recordings alone hold 246 (the real samples, when present, over a thousand more).
    assert!(checked > 200, "{checked} requests");
}

fn planned_prompts_are_the_compiled_bodies_blocks() {
    use super::cache::compiled_blocks;
    use super::plan::{Planned, Planner, View};
    use super::wire::{Given, compile};
    let mut inputs = claude_sample_bytes();
    for (case, meta) in recorded_cases() {
        inputs.extend(transcripts(&case, &meta));
    }
    let (mut checked, mut replayed) = (0, 0);
    for (name, bytes) in &inputs {
        let t = load(name, bytes).unwrap();
        let c = conversation(&t);
        let mut threads: Vec<ThreadKey> = c.requests.iter().map(|r| r.thread.clone()).collect();
        threads.sort();
        threads.dedup();
        for thread in &threads {
            let mut planner = Planner::new();
            for (index, request) in c.requests.iter().enumerate() {
                if &request.thread != thread {
                    continue;
                }
                let planned = planner.plan(&t, &c, index);
                let at = t.lines[request.at].number;
                if request.kind == RequestKind::Compaction {
                    assert!(matches!(planned, Planned::Compaction), "{name}: line {at}");
                    continue;
                }
                let history = c.history(&t, request);
                let mine = planner.history();
                assert_eq!(
                    format!("{:?}", mine.messages),
                    format!("{:?}", history.messages),
                    "{name}: history of the request at line {at}"
                );
                assert_eq!(
                    mine.missing_parent, history.missing_parent,
                    "{name}: line {at}"
                );
                let compiled = compile(&t, &c, request, &Given::default());
                match planned {
                    Planned::Prompt(prompt) => {
                        let view = View {
                            prompt: &prompt,
                            blocks: &planner.blocks,
                        };
                        assert_eq!(
                            view.blocks(),
                            compiled_blocks(&compiled),
                            "{name}: request at line {at}"
                        );
                        assert!(!compiled.record_elsewhere, "{name}: line {at}");
                        replayed += usize::from(compiled.verified.is_some());
                    }
                    Planned::RecordElsewhere => {
                        assert!(compiled.record_elsewhere, "{name}: line {at}")
                    }
                    Planned::Compaction => panic!("{name}: line {at}: a sampling request"),
                }
                checked += 1;
            }
        }
    }
    // The recordings alone hold 290 (the real samples, when present, over a thousand more).
    assert!(checked > 250, "{checked} requests");
    assert!(replayed >= 42, "{replayed} replayed requests");
}

/// The lines of `text`, one JSON object a line.
fn transcript_of(lines: &[serde_json::Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A call's results are gathered from every branch (parallel calls branch the tree), but only
/// those answering the copy of the call the walk went through: 2.0.31 rewrites old lines under
/// new uuids in the same file, and the original result on the old branch is not sent again.
#[test]
fn results_pair_with_the_copy_of_their_call_the_walk_went_through() {
    use serde_json::json;
    let user = |uuid: &str, parent: Option<&str>, content: serde_json::Value| {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "version": "2.0.31",
               "message": {"role": "user", "content": content}})
    };
    let assistant = |uuid: &str, parent: &str, id: &str, content: serde_json::Value| {
        json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "version": "2.0.31",
               "message": {"id": id, "model": "m", "role": "assistant", "content": content,
                           "usage": {"input_tokens": 1, "output_tokens": 1}}})
    };
    let call = json!([{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]);
    let result = json!([{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]);
    let text = transcript_of(&[
        user("u1", None, json!("read it")),
        assistant("a1", "u1", "m1", call.clone()),
        user("r1", Some("a1"), result.clone()),
        assistant("a2", "r1", "m2", json!([{"type": "text", "text": "done"}])),
        // The rewrite: the same lines under new uuids, then the session goes on.
        user("u1b", None, json!("read it")),
        assistant("a1b", "u1b", "m1", call),
        user("r1b", Some("a1b"), result),
        assistant(
            "a2b",
            "r1b",
            "m2",
            json!([{"type": "text", "text": "done"}]),
        ),
        user("p2", Some("a2b"), json!("and now?")),
        assistant("a3", "p2", "m3", json!([{"type": "text", "text": "ok"}])),
    ]);
    let t = load("rewrite.jsonl", text.as_bytes()).unwrap();
    let c = conversation(&t);
    let last = c.requests.last().unwrap();
    assert_eq!(t.lines[last.at].uuid, Some(LineId::new("a3")));
    let history = c.history(&t, last);
    let results: Vec<String> = history
        .messages
        .iter()
        .flat_map(|m| &m.lines)
        .filter(|&&i| matches!(&t.lines[i].kind, LineKind::User(u) if !u.tool_results.is_empty()))
        .map(|&i| t.lines[i].uuid.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(results, ["r1b"]);
    // The same on the real 2.0.31 sample that does it (lines 13-23 copy lines 1-10).
    let samples = claude_sample_bytes();
    let Some((name, bytes)) = samples
        .iter()
        .find(|(n, _)| n.starts_with("LilLeapo__cccc_clash_test__907c37e4"))
    else {
        return;
    };
    let t = load(name, bytes).unwrap();
    let c = conversation(&t);
    for request in &c.requests {
        for m in c.history(&t, request).messages {
            let ids: Vec<&str> = m
                .lines
                .iter()
                .filter_map(|&i| match &t.lines[i].kind {
                    LineKind::User(u) => u.tool_results.first().map(AsRef::as_ref),
                    _ => None,
                })
                .collect();
            let mut unique = ids.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(
                ids.len(),
                unique.len(),
                "{name}: request at line {}: {ids:?}",
                t.lines[request.at].number
            );
        }
    }
}

/// 1.0.x writes each subagent's lines into the session's file (`isSidechain`, no `agentId`):
/// two subagents running at once are two threads, each from its own first line (the one whose
/// parent is not a line of the sidechain), not one.
#[test]
fn each_inline_sidechain_is_a_thread_of_its_own() {
    use serde_json::json;
    let line = |kind: &str, uuid: &str, parent: Option<&str>, side: bool, id: &str| {
        let message = if kind == "user" {
            json!({"role": "user", "content": format!("prompt {uuid}")})
        } else {
            json!({"id": id, "model": "m", "role": "assistant",
                   "content": [{"type": "text", "text": "ok"}],
                   "usage": {"input_tokens": 1, "output_tokens": 1}})
        };
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": side,
               "version": "1.0.108", "message": message})
    };
    let text = transcript_of(&[
        line("user", "m1", None, false, ""),
        // Two Task subagents, their lines interleaved.
        line("user", "s1", None, true, ""),
        line("user", "s2", None, true, ""),
        line("assistant", "s1a", Some("s1"), true, "ms1"),
        line("assistant", "s2a", Some("s2"), true, "ms2"),
        line("user", "s1b", Some("s1a"), true, ""),
        line("user", "s2b", Some("s2a"), true, ""),
        line("assistant", "s1c", Some("s1b"), true, "ms1c"),
        line("assistant", "s2c", Some("s2b"), true, "ms2c"),
        line("assistant", "m1a", Some("m1"), false, "mm1"),
    ]);
    let t = load("sidechains.jsonl", text.as_bytes()).unwrap();
    let c = conversation(&t);
    let mut threads: Vec<(ThreadKey, usize)> = Vec::new();
    for r in &c.requests {
        match threads.iter_mut().find(|(k, _)| *k == r.thread) {
            Some((_, n)) => *n += 1,
            None => threads.push((r.thread.clone(), 1)),
        }
    }
    assert_eq!(
        threads,
        [
            (ThreadKey::Sidechain("s1".into()), 2),
            (ThreadKey::Sidechain("s2".into()), 2),
            (ThreadKey::Main, 1),
        ]
    );
    // Each sidechain's steps: a cold start, then the request after it (its own history).
    for root in ["s1", "s2"] {
        let s = Session::of_thread(t.clone(), c.clone(), ThreadKey::Sidechain(root.into()));
        assert_eq!(crate::AgentSession::steps(&s).len(), 2, "{root}");
        let last = &c.requests[s.claude_steps[1].request];
        let history = c.history(&t, last);
        let first = history.messages[0].lines[0];
        assert_eq!(t.lines[first].uuid, Some(LineId::new(root)));
    }
    // A real 1.0.108 session with two subagents, one after the other (lines 16 and 26 start them).
    let samples = claude_sample_bytes();
    if let Some((name, bytes)) = samples
        .iter()
        .find(|(n, _)| n.starts_with("d-kimuson__claude-code-viewer__5c0375b4"))
    {
        let t = load(name, bytes).unwrap();
        let c = conversation(&t);
        let mut roots: Vec<&ThreadKey> = c
            .requests
            .iter()
            .map(|r| &r.thread)
            .filter(|k| matches!(k, ThreadKey::Sidechain(_)))
            .collect();
        roots.dedup();
        assert_eq!(roots.len(), 2, "{name}: {roots:?}");
    }
}

/// A content array holding something other than block objects is kept as written, the blocks
/// around it still read (a result still pairs its call), and it is named in a note with its
/// line, never dropped without a word.
#[test]
fn a_content_array_with_non_blocks_is_read_around_them_and_named() {
    let text = concat!(
        "{\"type\":\"assistant\",\"uuid\":\"a\",\"parentUuid\":null,\"message\":{\"id\":\"m1\",\"model\":\"x\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{}},\"stray text\"]}}\n",
        "{\"type\":\"user\",\"uuid\":\"b\",\"parentUuid\":\"a\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"},7,{\"type\":5}]}}\n",
    );
    let t = load("t.jsonl", text.as_bytes()).unwrap();
    let LineKind::Assistant(a) = &t.lines[0].kind else {
        panic!("an assistant line")
    };
    assert_eq!(a.tool_uses, vec!["t1".into()] as Vec<std::sync::Arc<str>>);
    let LineKind::User(u) = &t.lines[1].kind else {
        panic!("a user line")
    };
    assert_eq!(u.tool_results, vec!["t1".into()] as Vec<Box<str>>);
    assert_eq!(
        t.notes,
        [
            "line 1: `message.content` block 1 is not a content block promptc reads (kept and sent as written; it pairs no call)",
            "line 2: `message.content` blocks 1, 2 are not content blocks promptc reads (kept and sent as written; they pair no call)",
        ]
    );
    // Every block is still sent, as written.
    assert_eq!(u.blocks.hashes.len(), 3);
}

/// 2.0.31 rewrites old lines under new uuids into the same file: the copied responses are the
/// requests of the original lines, shown by `steps` as copies and not judged, as `usage` counts
/// them once (a response with the same `message.id` and usage as an earlier one).
#[test]
fn steps_show_a_rewritten_files_copied_requests_as_copies() {
    use super::usage::billed_requests;
    let samples = claude_sample_bytes();
    let mut inputs: Vec<(String, Vec<u8>)> = samples
        .iter()
        .filter(|(n, _)| n.starts_with("LilLeapo__cccc_clash_test__907c37e4"))
        .cloned()
        .collect();
    // The same shape, small: two requests, their copies, one more.
    let user = |uuid: &str, parent: Option<&str>, text: &str| {
        serde_json::json!({"type": "user", "uuid": uuid, "parentUuid": parent, "version": "2.0.31",
                           "message": {"role": "user", "content": text}})
    };
    let assistant = |uuid: &str, parent: &str, id: &str, read: u64| {
        serde_json::json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "version": "2.0.31",
            "message": {"id": id, "model": "m", "role": "assistant",
                        "content": [{"type": "text", "text": "ok"}],
                        "usage": {"input_tokens": 3, "cache_read_input_tokens": read,
                                  "cache_creation_input_tokens": 10, "output_tokens": 1}}})
    };
    let text = transcript_of(&[
        user("u1", None, "one"),
        assistant("a1", "u1", "m1", 0),
        user("u2", Some("a1"), "two"),
        assistant("a2", "u2", "m2", 10),
        user("u1b", None, "one"),
        assistant("a1b", "u1b", "m1", 0),
        user("u2b", Some("a1b"), "two"),
        assistant("a2b", "u2b", "m2", 10),
        user("u3", Some("a2b"), "three"),
        assistant("a3", "u3", "m3", 20),
    ]);
    inputs.push(("rewrite.jsonl".into(), text.into_bytes()));
    for (name, bytes) in &inputs {
        let t = load(name, bytes).unwrap();
        let c = conversation(&t);
        let session = Session::of_thread(t.clone(), c.clone(), ThreadKey::Main);
        let plan = super::session::plan(&session, Default::default(), Default::default());
        let rows = crate::cache::analyze(&session, &plan);
        let copies: Vec<usize> = (0..rows.len())
            .filter(|&k| session.claude_steps[k].copied)
            .collect();
        for &k in &copies {
            assert_eq!(
                rows[k].verdict,
                crate::cache::Verdict::Copied,
                "{name}: row {k}"
            );
        }
        // What `usage` counts once: each (message.id, usage) of the file.
        let mut keys = Vec::new();
        for r in billed_requests(&t, &c, Default::default()) {
            if let Some(key) = r.key()
                && !keys.contains(&key)
            {
                keys.push(key);
            }
        }
        assert_eq!(rows.len() - copies.len(), keys.len(), "{name}");
        let expected: &[usize] = if name == "rewrite.jsonl" {
            &[2, 3]
        } else {
            &[4, 5, 6, 7]
        };
        assert_eq!(copies, expected, "{name}");
    }
}

/// `diff` of any two transcripts one build wrote, in either order, runs to its end: every step
/// of A paired once or A's own, every step of B paired once or B's own. (The first step B holds
/// that A does not came before the last pair of a compaction's and a `--continue`'s sessions:
/// asking for a reset between them indexed backwards and panicked.)
#[test]
fn diff_of_any_two_transcripts_of_a_build_accounts_for_every_step() {
    use crate::AgentSession as _;
    let mut by_version: std::collections::BTreeMap<
        String,
        Vec<(Session, crate::fingerprint::Plan)>,
    > = Default::default();
    for (case, meta) in recorded_cases() {
        let version = case.parent().unwrap().display().to_string();
        for (name, bytes) in transcripts(&case, &meta) {
            let Ok(session) = Session::load(&name, &bytes) else {
                continue;
            };
            if session.steps().is_empty() {
                continue;
            }
            let plan = super::session::plan(&session, Default::default(), Default::default());
            by_version
                .entry(version.clone())
                .or_default()
                .push((session, plan));
        }
    }
    let mut diffs = 0;
    for (version, sessions) in &by_version {
        for (sa, pa) in sessions {
            for (sb, pb) in sessions {
                let d = crate::diff::diff(sa, pa, sb, pb, None);
                // One side's steps: those paired, then its own, in order.
                let steps = |paired: fn(&(usize, usize)) -> usize, own: &[usize]| {
                    let mut all: Vec<usize> = d
                        .pairs
                        .iter()
                        .map(paired)
                        .chain(own.iter().copied())
                        .collect();
                    all.sort_unstable();
                    all
                };
                let (a, b) = (steps(|p| p.0, &d.a_only), steps(|p| p.1, &d.b_only));
                let (na, nb) = (sa.steps().len(), sb.steps().len());
                assert_eq!(
                    a,
                    (0..na).collect::<Vec<_>>(),
                    "{version}: {} against {}",
                    sa.name(),
                    sb.name()
                );
                assert_eq!(
                    b,
                    (0..nb).collect::<Vec<_>>(),
                    "{version}: {} against {}",
                    sa.name(),
                    sb.name()
                );
                diffs += 1;
            }
        }
    }
    assert!(diffs > 1000, "{diffs} diffs");
}

/// The plan and the rows `plan_and_analyze` makes (the cache simulated while the plan is made)
/// are those of a plan made first and analysed after, on every sample and recording, on one
/// thread or two.
#[test]
fn rows_of_a_cache_simulated_while_planning_are_those_after_it() {
    let mut inputs = claude_sample_bytes();
    for (case, meta) in recorded_cases() {
        inputs.extend(transcripts(&case, &meta));
    }
    let mut judged = 0;
    for (name, bytes) in &inputs {
        let session = Session::load(name, bytes).unwrap();
        // Read once, its copies are found when it settles, by sorting: those the map kept.
        let once = Session::new(super::load(name, bytes).unwrap());
        let copied = |s: &Session| s.claude_steps.iter().map(|s| s.copied).collect::<Vec<_>>();
        assert_eq!(copied(&once), copied(&session), "{name}");
        let make_plan = || super::session::plan(&session, Default::default(), Threads::new(2));
        let plan = make_plan();
        let rows = crate::cache::analyze(&session, &plan);
        judged += rows
            .iter()
            .filter(|r| r.read_block.is_some() || r.breakpoints > 0)
            .count();
        for threads in [1, 2] {
            // A plan made before, given at once: the steps are analysed as the simulation
            // hands them over.
            let made = make_plan();
            let (again, rows_again) =
                crate::cache::plan_and_analyze(&session, Threads::new(threads), move || {
                    Ok::<_, std::convert::Infallible>(made)
                })
                .unwrap();
            assert_eq!(again.fingerprints, plan.fingerprints, "{name}");
            assert_eq!(rows_again, rows, "{name}: {threads} threads");
            // A plan that fails is the answer, the simulation beside it stopped.
            let failed = crate::cache::plan_and_analyze(&session, Threads::new(threads), || {
                Err::<crate::fingerprint::Plan, _>("no plan")
            });
            assert_eq!(failed.err(), Some("no plan"), "{name}");
        }
    }
    // The recordings alone hold 284 (the real samples, when present, thousands more).
    assert!(judged > 200, "{judged} rows of a simulated cache");
}

/// `steps` on a lean load (messages' contents left out but for 2.1.3xx's that a neighbour may
/// share a message with) is `steps` on the whole one, on every sample and recording; a load
/// that cannot be lean says so.
#[test]
fn steps_of_a_lean_load_are_the_whole_loads() {
    // Each thread's rows and the facts they are drawn from.
    let steps =
        |t: &super::load::Transcript, c: &super::thread::Conversation, thread: &ThreadKey| {
            let s = Session::of_thread(t.clone(), c.clone(), thread.clone());
            let plan = super::session::plan(&s, Default::default(), Default::default());
            let rows = crate::cache::analyze(&s, &plan);
            format!(
                "{:?}\n{:?}\n{:?}",
                crate::AgentSession::steps(&s),
                plan.fingerprints,
                rows
            )
        };
    let mut inputs = claude_sample_bytes();
    for (case, meta) in recorded_cases() {
        inputs.extend(transcripts(&case, &meta));
    }
    let mut left_out = 0;
    for (name, bytes) in &inputs {
        let whole = load(name, bytes).unwrap();
        let mut loader = Loader::lean(name, Threads::new(2));
        for chunk in bytes.chunks(100_000) {
            loader.push(chunk);
        }
        let lean = loader.finish().unwrap();
        assert!(!lean.needs_content, "{name}");
        left_out += usize::from(lean.content_left_out);
        let (cw, cl) = (conversation(&whole), conversation(&lean));
        let mut threads: Vec<ThreadKey> = cw.requests.iter().map(|r| r.thread.clone()).collect();
        threads.sort();
        threads.dedup();
        for thread in &threads {
            assert_eq!(
                steps(&lean, &cl, thread),
                steps(&whole, &cw, thread),
                "{name}: {thread:?}"
            );
        }
    }
    // The recordings alone: 124 (the real samples, when present, more).
    assert!(left_out > 110, "{left_out} transcripts left contents out");
    // What calls for the contents after all.
    let lean = |text: String| {
        let mut loader = Loader::lean("t.jsonl", Threads::default());
        loader.push(text.as_bytes());
        loader.finish().unwrap()
    };
    let line = |uuid: &str, parent: Option<&str>, version: &str, content: serde_json::Value| {
        serde_json::json!({"type": "user", "uuid": uuid, "parentUuid": parent, "version": version,
                           "sessionId": "s", "message": {"role": "user", "content": content}})
    };
    let plain = transcript_of(&[line("a", None, "2.1.100", serde_json::json!("hi"))]);
    assert!(lean(plain.clone()).content_left_out && !lean(plain).needs_content);
    // A lone text block of another shape in a user message: compiled whole.
    let odd = transcript_of(&[line(
        "a",
        None,
        "2.1.100",
        serde_json::json!([{"text": "hi", "type": "text"}]),
    )]);
    assert!(lean(odd).needs_content);
    // Parents in a cycle.
    let cycle = transcript_of(&[
        line("a", Some("b"), "2.1.100", serde_json::json!("one")),
        line("b", Some("a"), "2.1.100", serde_json::json!("two")),
    ]);
    assert!(lean(cycle).needs_content);
    let own_parent = transcript_of(&[line("a", Some("a"), "2.1.100", serde_json::json!("one"))]);
    assert!(lean(own_parent).needs_content);
    // Parents before their children (a copy of a line again is not a cycle).
    let chain = transcript_of(&[
        line("a", None, "2.1.100", serde_json::json!("one")),
        line("b", Some("a"), "2.1.100", serde_json::json!("two")),
        line("a", Some("b"), "2.1.100", serde_json::json!("one")),
    ]);
    assert!(!lean(chain).needs_content);
    // A session resumed by a build that writes replay records: they may name older lines.
    let record = serde_json::json!({"type": "api-request", "id": "r", "sessionId": "s", "keep": 0,
                                    "tail": [], "version": "2.1.332"});
    let resumed = transcript_of(&[
        line("a", None, "2.1.100", serde_json::json!("hi")),
        record.clone(),
    ]);
    assert!(lean(resumed).needs_content);
    let other_session = transcript_of(&[
        line("a", None, "2.1.100", serde_json::json!("hi")),
        serde_json::json!({"type": "api-request", "id": "r", "sessionId": "t", "keep": 0,
                           "tail": [], "version": "2.1.332"}),
    ]);
    assert!(!lean(other_session).needs_content);
}

/// 2.1.3xx lines in a lean load: a content that names its line's message alone is left out
/// where neither neighbour in the file (lines that are no part of a message between) is of its
/// role, and kept where one is or is not known (the first and last of a run); a content kept is
/// the whole load's, whatever comes before it in the run (a byte order mark, `\r\n`, a blank
/// line, a line that is not JSON, escapes).
#[test]
fn a_lean_load_keeps_a_content_named_alone_where_a_neighbour_is_of_its_role() {
    use serde_json::json;
    let user = |uuid: &str, text: &str| {
        json!({"type": "user", "uuid": uuid, "version": "2.1.332", "sessionId": "s",
               "message": {"role": "user", "content": text}})
    };
    let assistant = |uuid: &str, id: &str, text: &str| {
        json!({"type": "assistant", "uuid": uuid, "version": "2.1.332", "sessionId": "s",
               "message": {"id": id, "role": "assistant", "model": "claude-sonnet-4-6",
                           "content": [{"type": "text", "text": text}]}})
    };
    let line = |v: serde_json::Value| format!("{v}\n");
    let text = [
        format!("\u{feff}{}\r\n", assistant("x0", "m0", "first of the run")),
        line(user("u1", "between two answers")),
        "\n".to_string(),
        line(
            json!({"type": "api-request", "id": "r", "sessionId": "s", "version": "2.1.332",
                    "keep": 0, "tail": []}),
        ),
        "not JSON\n".to_string(),
        line(assistant("x1", "m1", "between two prompts")),
        line(user(
            "u2",
            "before a prompt: \"quoted\", a\\backslash, é and \u{1F600}",
        )),
        line(json!({"type": "progress", "sessionId": "s", "version": "2.1.332"})),
        line(user("u3", "after a prompt")),
        line(assistant("x2", "m2", "one block")),
        line(assistant("x3", "m2", "its next block")),
        line(user("u4", "last of the run")),
    ]
    .concat();
    let contents = |lean: bool| {
        let mut loader = match lean {
            // On one thread lines are read one at a time, each content kept.
            true => Loader::lean("t.jsonl", Threads::new(2)),
            false => Loader::new("t.jsonl"),
        };
        loader.push(text.as_bytes());
        let t = loader.finish().unwrap();
        assert_eq!(t.left_out_named.any, lean);
        assert_eq!(t.content_left_out, lean);
        assert_eq!(t.skipped.len(), 1);
        t.lines
            .iter()
            .filter_map(|l| match &l.kind {
                LineKind::User(u) => Some(u.content.to_string()),
                LineKind::Assistant(a) => Some(a.content.to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let (whole, lean) = (contents(false), contents(true));
    let left_out: Vec<usize> = (0..lean.len()).filter(|&i| lean[i].is_empty()).collect();
    // u1 and x1.
    assert_eq!(left_out, [1, 2]);
    for i in (0..whole.len()).filter(|i| !left_out.contains(i)) {
        assert_eq!(lean[i], whole[i]);
    }
}

/// A message formed of lines apart in the file needs a content a lean load left out: planning
/// says so, and the file is loaded again whole; of lines next to each other, it does not.
#[test]
fn a_message_of_lines_apart_calls_for_the_contents_a_lean_load_left_out() {
    use serde_json::json;
    let line = |kind: &str, uuid: &str, parent: Option<&str>, extra: serde_json::Value| {
        let mut line = json!({"type": kind, "uuid": uuid, "parentUuid": parent,
                              "version": "2.1.332", "sessionId": "s"});
        line.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        line
    };
    let user = |uuid: &str, parent: &str, text: &str| {
        line(
            "user",
            uuid,
            Some(parent),
            json!({"message": {"role": "user", "content": text}}),
        )
    };
    let assistant = |uuid: &str, parent: Option<&str>, id: &str, extra: serde_json::Value| {
        let mut extra = extra;
        extra["message"] = json!({"id": id, "role": "assistant", "model": "claude-sonnet-4-6",
                                  "content": [{"type": "text", "text": id}],
                                  "usage": {"input_tokens": 3, "output_tokens": 1}});
        line("assistant", uuid, parent, extra)
    };
    let first = assistant("a0", None, "m0", json!({}));
    let one = user("u1", "a0", "one");
    let two = user("u2", "u1", "two");
    // A line of another thread between the two.
    let aside = assistant("s1", None, "ms", json!({"isSidechain": true}));
    let answer = assistant("a1", Some("u2"), "m1", json!({"requestRef": "r-elsewhere"}));
    let load = |lines: &[serde_json::Value]| {
        let mut load = super::session::GrowingLoad::new(Loader::lean("t.jsonl", Threads::new(2)));
        load.push(transcript_of(lines).as_bytes());
        load.finish().unwrap()
    };
    // Then a prompt between two answers: both left out, each a message of its own.
    let three = user("u3", "a1", "three");
    let last = assistant(
        "a2",
        Some("u3"),
        "m2",
        json!({"requestRef": "r-elsewhere-too"}),
    );
    let next_to = load(&[
        first.clone(),
        one.clone(),
        two.clone(),
        answer.clone(),
        three,
        last,
    ]);
    assert!(next_to.transcript.left_out_named.any);
    assert!(!next_to.transcript.needs_content);
    let apart = [first, one, aside, two, answer];
    assert!(load(&apart).transcript.needs_content);
    // A lean transcript planned whole says so too.
    let mut loader = Loader::lean("t.jsonl", Threads::new(2));
    loader.push(transcript_of(&apart).as_bytes());
    let t = loader.finish().unwrap();
    assert!(t.left_out_named.any && !t.needs_content);
    assert!(Session::new(t).transcript.needs_content);
}

/// A resume's copy of a response holds its final output count where the original's only line
/// stopped at a partial one (happy-cli's `resumed-session.jsonl`, 1.0.51: output 1, then 99 in
/// the copy, which has no `requestId` and no parent): the same response, counted and judged
/// once.
#[test]
fn a_copy_with_the_final_output_count_is_the_same_response() {
    use super::usage::billed_requests;
    let line = |uuid: &str, parent: Option<&str>, request: Option<&str>, output: u64| {
        let mut v = serde_json::json!({"type": "assistant", "uuid": uuid, "parentUuid": parent,
            "version": "1.0.51",
            "message": {"id": "m1", "model": "m", "role": "assistant",
                        "content": [{"type": "text", "text": "ok"}],
                        "usage": {"input_tokens": 4, "cache_read_input_tokens": 13583,
                                  "cache_creation_input_tokens": 2523, "output_tokens": output}}});
        if let Some(r) = request {
            v["requestId"] = r.into();
        }
        v
    };
    let user = |uuid: &str, parent: Option<&str>, text: &str| {
        serde_json::json!({"type": "user", "uuid": uuid, "parentUuid": parent, "version": "1.0.51",
                           "message": {"role": "user", "content": text}})
    };
    let text = transcript_of(&[
        user("u1", None, "one"),
        line("a1", Some("u1"), Some("req_1"), 1),
        line("a1copy", None, None, 99),
    ]);
    let t = load("resumed.jsonl", text.as_bytes()).unwrap();
    let c = conversation(&t);
    let session = Session::of_thread(t.clone(), c.clone(), ThreadKey::Main);
    let copied: Vec<bool> = session.claude_steps.iter().map(|s| s.copied).collect();
    assert_eq!(copied, [false, true]);
    let billed = billed_requests(&t, &c, Default::default());
    let keys: Vec<_> = billed.iter().map(|r| r.key()).collect();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1], "one response, counted once");
    let outputs: Vec<u64> = billed.iter().map(|r| r.tokens.output).collect();
    assert_eq!(
        outputs,
        [99, 99],
        "the final output count, whichever is counted"
    );
}

/// Each line's session, subagent, build and working directory are its own; lines in a row that
/// write the same share one copy, a line that changes one of them shares the others, and a
/// line that writes none of them does not make the next copy them again.
#[test]
fn lines_in_a_row_share_what_they_repeat() {
    use serde_json::json;
    let line = |uuid: &str, parent: Option<&str>, cwd: &str, agent: Option<&str>| {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
               "version": "2.1.100", "cwd": cwd, "agentId": agent,
               "message": {"role": "user", "content": "hi"}})
    };
    let text = transcript_of(&[
        line("u1", None, "/a", None),
        line("u2", Some("u1"), "/a", None),
        line("u3", Some("u2"), "/b", None),
        line("u4", Some("u3"), "/b", Some("x")),
        json!({"type": "user", "uuid": "u5", "parentUuid": "u4",
               "message": {"role": "user", "content": "hi"}}),
        line("u6", Some("u5"), "/b", Some("x")),
    ]);
    let t = load("context.jsonl", text.as_bytes()).unwrap();
    let context = |k: usize| &t.lines[k].context;
    let texts = |k: usize| {
        let c = context(k);
        [&c.session_id, &c.agent_id, &c.version, &c.cwd].map(|f| f.as_deref().map(str::to_string))
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(texts(0), [some("s1"), None, some("2.1.100"), some("/a")]);
    assert_eq!(texts(1), texts(0));
    assert_eq!(texts(2), [some("s1"), None, some("2.1.100"), some("/b")]);
    assert_eq!(
        texts(3),
        [some("s1"), some("x"), some("2.1.100"), some("/b")]
    );
    assert_eq!(texts(4), [None, None, None, None]);
    use super::wire::Build;
    assert_eq!(context(3).build, Build::V2_1_100);
    // A line without a version is read by the oldest rules, as the planner reads it.
    assert_eq!(context(4).build, Build::V1_0_30);
    assert!(std::sync::Arc::ptr_eq(context(0), context(1)));
    assert!(!std::sync::Arc::ptr_eq(context(1), context(2)));
    let shared = |a: &Option<std::sync::Arc<str>>, b: &Option<std::sync::Arc<str>>| {
        std::sync::Arc::ptr_eq(a.as_ref().unwrap(), b.as_ref().unwrap())
    };
    assert!(shared(&context(1).session_id, &context(2).session_id));
    assert!(shared(&context(1).version, &context(3).version));
    assert!(shared(&context(2).cwd, &context(3).cwd));
    assert_eq!(texts(5), texts(3));
    let fields =
        |c: &LineContext| [&c.session_id, &c.agent_id, &c.version, &c.cwd].map(Clone::clone);
    for (three, five) in fields(context(3)).iter().zip(&fields(context(5))) {
        assert!(shared(three, five));
    }
}

/// A message's `stop_reason` is not read: a line is not refused for it, whatever it holds.
#[test]
fn a_stop_reason_of_any_shape_is_read() {
    use serde_json::json;
    let text = transcript_of(&[
        json!({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi",
               "stop_reason": {}}}),
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1",
               "message": {"id": "m1", "model": "m", "role": "assistant", "stop_reason": 5,
                           "content": [{"type": "text", "text": "ok"}],
                           "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    ]);
    let t = load("stop_reason.jsonl", text.as_bytes()).unwrap();
    assert!(t.skipped.is_empty(), "{:?}", t.skipped);
    assert_eq!(t.lines.len(), 2);
    assert_eq!(conversation(&t).requests.len(), 1);
}

/// The models a session names, in the order first met, each once: responses in a row share
/// their model's text, and a model met again after another is not named twice.
#[test]
fn the_models_are_named_once_in_the_order_first_met() {
    use serde_json::json;
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    for (k, model) in ["m-one", "m-one", "m-two", "m-one", "m-three"]
        .iter()
        .enumerate()
    {
        let (u, a) = (format!("u{k}"), format!("a{k}"));
        lines.push(
            json!({"type": "user", "uuid": u, "parentUuid": parent, "sessionId": "s",
                          "version": "2.1.100",
                          "message": {"role": "user", "content": format!("prompt {k}")}}),
        );
        lines.push(
            json!({"type": "assistant", "uuid": a, "parentUuid": u, "sessionId": "s",
                          "version": "2.1.100", "requestId": format!("req{k}"),
                          "message": {"id": format!("msg{k}"), "role": "assistant",
                                      "model": model,
                                      "content": [{"type": "text", "text": "ok"}],
                                      "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        );
        parent = Some(a);
    }
    let session = Session::new(load("t.jsonl", transcript_of(&lines).as_bytes()).unwrap());
    assert_eq!(session.models(), ["m-one", "m-two", "m-three"]);
}

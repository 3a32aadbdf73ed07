use super::Planner;
use crate::AgentSession;
use crate::agents::claude::load::Loader;
use crate::agents::claude::session::{GrowingLoad, Session, plan};
use crate::cache::Analysis;
use crate::core::parallel::Threads;
use crate::test_support::{claude_recorded_bytes, claude_sample_bytes};
use crate::watch::{Event, Growing, Loader as WatchLoader, Watch};

/// What a session's steps, plan and rows say, as text: each step (its prompt by its blocks'
/// data, not by the lists that hold them), its fingerprint and its row, for the first `upto`.
fn outputs(session: &Session, upto: usize, rows: &[crate::cache::StepCache]) -> String {
    let plan = plan(session, Default::default(), Threads::default());
    let mut text = format!(
        "{:?}\n{:?}\n{:?}\n{}\n",
        session.thread,
        session.turns(),
        session.transcript.notes,
        session.transcript.skipped.len()
    );
    for k in 0..upto {
        let s = &session.claude_steps[k];
        let prompt = s.prompt.as_ref().map(|p| {
            let blocks: Vec<_> = session.blocks().slice(p.list, ..p.len).iter().collect();
            (&p.head, &p.breakpoints, blocks)
        });
        text += &format!(
            "{k}: {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}\n{:?}\n{:?}\n{:?}\n",
            session.steps()[k],
            s.request,
            s.kind,
            s.model,
            s.version,
            s.copied,
            s.history_before,
            s.repeat_possible,
            s.key,
            prompt,
            plan.fingerprints[k],
            rows.get(k),
        );
    }
    text
}

/// A plan as text: per step its fingerprint and its view's entries (by their data, not by the
/// lists that hold them).
fn plan_text(plan: &crate::fingerprint::Plan) -> String {
    let mut text = String::new();
    for (k, &(list, len)) in plan.views.iter().enumerate() {
        let entries: Vec<_> = plan.data.slice(list, ..len).iter().collect();
        text += &format!("{k}: {:?}\n{entries:?}\n", plan.fingerprints[k]);
    }
    text
}

/// A session grown from `bytes` cut after the lines `cuts` end (a growth per cut), with its
/// plan and analysis grown alongside; at each cut in `compare`, its outputs are those of the
/// file loaded whole up to there (the rows of its settled steps). Returns the cuts compared.
fn grown_is_whole(
    name: &str,
    bytes: &[u8],
    every: usize,
    compare: &dyn Fn(usize) -> bool,
) -> usize {
    let ends: Vec<usize> = memchr::memchr_iter(b'\n', bytes).map(|i| i + 1).collect();
    let mut cuts = ends.iter().copied().step_by(every).chain([bytes.len()]);
    let mut current = None;
    for cut in cuts.by_ref() {
        if let Ok(session) = Session::load(name, &bytes[..cut]) {
            current = Some((session, cut));
            break;
        }
    }
    let Some((mut session, mut from)) = current else {
        return 0;
    };
    let mut planner = Planner::new(Default::default(), Threads::default());
    Session::extend_plan(&mut planner, &session, 0);
    let mut analysis = Analysis::default();
    let settled = session.settled(false);
    analysis.update(&session, Session::plan(&planner), 0, settled);
    let mut compared = 0;
    for (n, cut) in cuts.enumerate() {
        if cut <= from {
            continue;
        }
        // The last line may have no newline: `watch` leaves it unread, and so does this.
        let grown = &bytes[from..cut];
        let complete = memchr::memrchr(b'\n', grown).map_or(0, |i| i + 1);
        let (_, unchanged) = session.load_appended(&grown[..complete], 0);
        let kept = Session::extend_plan(&mut planner, &session, unchanged);
        let settled = session.settled(false);
        analysis.update(
            &session,
            Session::plan(&planner),
            kept.min(unchanged),
            settled,
        );
        from += complete;
        if compare(n) || from == bytes.len() {
            let loaded = &bytes[..from];
            let whole_session = Session::load(name, loaded).unwrap();
            let whole_plan = plan(&whole_session, Default::default(), Threads::default());
            let whole_rows = crate::cache::analyze(&whole_session, &whole_plan);
            assert_eq!(
                outputs(&session, settled, analysis.rows()),
                outputs(&whole_session, settled, &whole_rows[..settled]),
                "{name}, every {every} lines, at byte {from}"
            );
            // The plan grown alongside is the whole's, entries and all.
            assert_eq!(
                plan_text(Session::plan(&planner)),
                plan_text(&whole_plan),
                "{name}, every {every} lines, at byte {from}"
            );
            // The steps not settled yet are the whole's too, but for their rows.
            assert_eq!(
                outputs(&session, session.steps().len(), &[]),
                outputs(&whole_session, whole_session.steps().len(), &[]),
                "{name}, every {every} lines, at byte {from}"
            );
            compared += 1;
        }
    }
    compared
}

/// Every recorded transcript grown a line (and two, and five lines) at a time is, at every cut,
/// the transcript loaded whole up to there: steps, prompts, fingerprints and settled rows.
#[test]
fn a_transcript_grown_line_by_line_is_the_transcript_loaded_whole() {
    let mut compared = 0;
    for (name, bytes) in claude_recorded_bytes() {
        for every in [1, 2, 5] {
            compared += grown_is_whole(&name, &bytes, every, &|_| true);
        }
    }
    assert!(compared > 1500, "{compared} cuts compared");
}

/// The real samples, grown a line at a time, compared with the whole at a few cuts.
#[test]
fn a_real_sample_grown_line_by_line_is_the_sample_loaded_whole() {
    let samples = claude_sample_bytes();
    let mut compared = 0;
    for (name, bytes) in &samples {
        let lines = memchr::memchr_iter(b'\n', bytes).count().max(1);
        let step = (lines / 6).max(1);
        compared += grown_is_whole(name, bytes, 1, &|n| n % step == step - 1);
    }
    assert!(
        samples.is_empty() || compared > samples.len() * 3,
        "{compared}"
    );
}

/// A file loaded in pieces whose steps grow while the helper thread reads the next piece
/// ([`GrowingLoad`]) is the file loaded whole and then read: lean or not, whatever the pieces
/// (cut inside lines, of one run or of many that both threads read).
#[test]
fn steps_grown_while_loading_are_the_whole_files() {
    let mut inputs = claude_recorded_bytes();
    inputs.extend(claude_sample_bytes());
    let mut grown = 0;
    for (name, bytes) in &inputs {
        for lean in [false, true] {
            let whole = |threads| match lean {
                true => Loader::lean(name, threads),
                false => Loader::with_threads(name, threads),
            };
            let mut loader = whole(Threads::new(1));
            loader.push(bytes);
            let expected = Session::new(loader.finish().unwrap());
            let expected_plan = plan(&expected, Default::default(), Threads::default());
            let expected_rows = crate::cache::analyze(&expected, &expected_plan);
            for size in [613, 8 << 10, 1 << 20] {
                let mut load = GrowingLoad::new(whole(Threads::new(2)));
                for piece in bytes.chunks(size) {
                    load.push(piece);
                }
                let session = load.finish().unwrap();
                assert_eq!(
                    session.transcript.needs_content, expected.transcript.needs_content,
                    "{name}"
                );
                if session.transcript.needs_content {
                    continue;
                }
                let session_plan = plan(&session, Default::default(), Threads::default());
                let rows = crate::cache::analyze(&session, &session_plan);
                let context = format!("{name}, lean {lean}, pieces of {size}");
                assert_eq!(
                    outputs(&session, session.steps().len(), &rows),
                    outputs(&expected, expected.steps().len(), &expected_rows),
                    "{context}"
                );
                assert_eq!(
                    plan_text(&session_plan),
                    plan_text(&expected_plan),
                    "{context}"
                );
                grown += 1;
            }
        }
    }
    assert!(grown > 600, "{grown} loads compared");
}

/// A watch's step rows, fed `bytes` in chunks of `size`, then finished: their debug form (a
/// row reported again replacing the one before), and how many times reported rows were
/// revised.
fn watched_rows(name: &str, bytes: &[u8], size: usize) -> (Vec<String>, usize) {
    let loader = WatchLoader::<Session> {
        load: Box::new(|name: &str, bytes: &[u8]| {
            Session::load(name, bytes).map_err(|e| e.to_string())
        }),
        planner: Box::new(|_: &Session| Planner::new(Default::default(), Threads::default())),
    };
    let mut watch = Watch::new(name, loader);
    let mut rows = Vec::new();
    let mut steps = Vec::new();
    let mut revised = 0;
    let mut take = |watch: &Watch<Session>, events: Vec<Event>| {
        let Some((_, _, current)) = watch.current() else {
            return;
        };
        for event in events {
            match event {
                Event::Step { step, .. } => {
                    rows.push(format!("{:?}", current[step]));
                    steps.push(step);
                }
                Event::Revised { step } => {
                    rows.truncate(step);
                    steps.truncate(step);
                    revised += 1;
                }
                _ => {}
            }
        }
    };
    for chunk in bytes.chunks(size) {
        let events = watch.push(chunk).expect("loads");
        take(&watch, events);
    }
    let events = watch.finish().expect("loads");
    take(&watch, events);
    assert_eq!(
        steps,
        (0..steps.len()).collect::<Vec<_>>(),
        "{name}: in order, once"
    );
    (rows, revised)
}

/// Whatever the chunks (1 byte: cut inside every line and every UTF-8 sequence), a watch's
/// rows are the whole file's, each once, in order: every recorded transcript, and the real
/// samples in chunks of a few sizes.
#[test]
fn watched_rows_are_the_whole_files_rows_whatever_the_chunks() {
    let rows_of = |name: &str, bytes: &[u8]| -> Option<Vec<String>> {
        // A last line without its newline is read when the watch ends, as a whole load reads it.
        let session = Session::load(name, bytes).ok()?;
        let plan = plan(&session, Default::default(), Threads::default());
        let rows = crate::cache::analyze(&session, &plan);
        Some(rows.iter().map(|r| format!("{r:?}")).collect())
    };
    let mut watched = 0;
    for (name, bytes) in claude_recorded_bytes() {
        let Some(whole) = rows_of(&name, &bytes) else {
            continue;
        };
        for size in [1, 7, 64, 4096] {
            // No row reported is ever revised on what Claude Code wrote.
            assert_eq!(
                watched_rows(&name, &bytes, size),
                (whole.clone(), 0),
                "{name}, chunks of {size}"
            );
        }
        watched += 1;
    }
    for (name, bytes) in claude_sample_bytes() {
        let whole = rows_of(&name, &bytes).expect("a sample loads");
        for size in [613, 65536] {
            // No row reported is ever revised on what Claude Code wrote.
            assert_eq!(
                watched_rows(&name, &bytes, size),
                (whole.clone(), 0),
                "{name}, chunks of {size}"
            );
        }
        watched += 1;
    }
    assert!(watched > 100, "{watched}");
}

/// A line of a parent read after the line that names it changes what the earlier line reads:
/// the conversation and the steps are made again, as a whole load makes them.
#[test]
fn a_parent_read_after_its_child_makes_the_steps_again() {
    let line = |v: serde_json::Value| v.to_string() + "\n";
    let user = |uuid: &str, parent: Option<&str>, text: &str| {
        line(
            serde_json::json!({"type": "user", "uuid": uuid, "parentUuid": parent,
            "version": "2.1.100", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": text}}),
        )
    };
    let assistant = |uuid: &str, parent: &str, id: &str| {
        line(
            serde_json::json!({"type": "assistant", "uuid": uuid, "parentUuid": parent,
            "version": "2.1.100", "timestamp": "2026-01-01T00:00:01Z", "requestId": id,
            "message": {"id": id, "model": "claude-sonnet-4-6", "role": "assistant",
                "content": [{"type": "text", "text": "hi"}],
                "usage": {"input_tokens": 3, "cache_creation_input_tokens": 2000,
                          "cache_read_input_tokens": 0, "output_tokens": 5}}}),
        )
    };
    // The answer names a prompt written after it.
    let text = [
        user("a", None, "first"),
        assistant("b", "a", "m1"),
        user("d", Some("b"), "second"),
        assistant("e", "c", "m2"),
        user("c", Some("d"), "late"),
        assistant("f", "c", "m3"),
    ]
    .concat();
    let compared = grown_is_whole("late.jsonl", text.as_bytes(), 1, &|_| true);
    assert_eq!(compared, 5);
    // Whole, the second answer's history ends with the late prompt: three turns.
    let session = Session::load("late.jsonl", text.as_bytes()).unwrap();
    assert_eq!(session.turns().len(), 3);
}

/// The 2.1.332 tool call recording: its name and text.
fn tool_call_2_1_332() -> (String, String) {
    let (name, bytes) = claude_recorded_bytes()
        .into_iter()
        .find(|(name, _)| name.starts_with("2.1.332/tool_call/"))
        .expect("the 2.1.332 tool call recording");
    (name, String::from_utf8(bytes).unwrap())
}

/// `edited` grown line by line is `edited` loaded whole, and its first request's step is not
/// that of `unedited` (the edit is one the growth must see).
fn grown_as_whole_though_edited(name: &str, edited: &str, unedited: &str, edit: &str) {
    let compared = grown_is_whole(name, edited.as_bytes(), 1, &|_| true);
    assert!(compared > 10, "{compared}");
    let whole = Session::load(name, edited.as_bytes()).unwrap();
    let other = Session::load(name, unedited.as_bytes()).unwrap();
    assert_ne!(outputs(&whole, 1, &[]), outputs(&other, 1, &[]), "{edit}");
}

/// A replay record's message read after the request that names it (here the first prompt's
/// blob, moved to the end of a 2.1.332 recording): the request is planned by the build's rules
/// until the blob is read, then from its record, as a whole load plans it.
#[test]
fn a_blob_read_after_its_request_plans_the_steps_again() {
    let (name, text) = tool_call_2_1_332();
    let mut lines: Vec<&str> = text.lines().collect();
    let blob = lines
        .iter()
        .position(|l| l.contains(r#""type":"api-request-blob""#))
        .expect("a blob");
    let moved = lines.remove(blob);
    let before: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let late = format!("{before}{moved}\n");
    grown_as_whole_though_edited(&name, &late, &before, "the blob changes the first prompt");
}

/// A shape written again under its hash with another text (an edited file): `replay` takes
/// the last, so the requests planned with the first are planned again once it is read, as a
/// whole load plans them.
#[test]
fn a_shape_written_again_otherwise_plans_the_steps_again() {
    let (name, text) = tool_call_2_1_332();
    let shape = text
        .lines()
        .find(|l| l.contains(r#""type":"api-request-shape""#))
        .expect("a shape");
    let mut again: serde_json::Value = serde_json::from_str(shape).unwrap();
    again["shape"]["system"][1]["text"] = serde_json::json!("another system prompt");
    let edited = format!("{text}{again}\n");
    grown_as_whole_though_edited(&name, &edited, &text, "the last text is the system prompt");
}

/// A response's lines after its first (its output counted again) change its step, not the
/// ones before: the growth says which steps stayed, on every recorded transcript and sample.
#[test]
fn a_response_that_grows_changes_its_step_only() {
    let mut changed_last = 0;
    let mut inputs = claude_recorded_bytes();
    inputs.extend(claude_sample_bytes());
    for (name, bytes) in inputs {
        let ends: Vec<usize> = memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1).collect();
        let mut loader = Loader::new(&name);
        loader.push(&bytes[..ends[0]]);
        let Ok((t, recorder)) = loader.finish_recorded() else {
            continue;
        };
        let mut session = Session::read(t, Some(recorder));
        for pair in ends.windows(2) {
            let before = session.steps().len();
            let (_, unchanged) = session.load_appended(&bytes[pair[0]..pair[1]], 0);
            // Only the last step (whose response is being written) may have changed.
            assert!(unchanged + 1 >= before, "{name}: {unchanged} of {before}");
            changed_last += usize::from(unchanged < before);
        }
    }
    assert!(
        changed_last > 0,
        "{changed_last} lines changed the last step"
    );
}

/// A backend that reuses one `message.id` for every response (a new prompt in between starts a
/// new response), writing a first line of zero usage then the counts: each response is a copy
/// exactly where `usage::copied_responses` says so of the whole, at every line, and growing it
/// is loading it whole. (The copies are kept per id and counts: 2 000 such responses took
/// `steps` 2.3 s when each change read its id's whole group again, 4 000 took 17.8 s.)
#[test]
fn responses_under_one_reused_id_are_copies_as_the_whole_says() {
    let line = |v: serde_json::Value| v.to_string() + "\n";
    let mut text = String::new();
    let mut parent = serde_json::Value::Null;
    for i in 0..40 {
        let (u, a, b) = (format!("u{i}"), format!("a{i}"), format!("b{i}"));
        text += &line(
            serde_json::json!({"type": "user", "uuid": u, "parentUuid": parent,
            "version": "2.1.100", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": format!("prompt {i}")}}),
        );
        // Every third response repeats the input counts of the one before it.
        let input = 100 + if i % 3 == 2 { i - 1 } else { i };
        let usage = |input: usize, output: usize| {
            serde_json::json!({"input_tokens": input, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": output})
        };
        for (uuid, parent, usage) in [(&a, &u, usage(0, 0)), (&b, &a, usage(input, 7))] {
            text += &line(serde_json::json!({"type": "assistant", "uuid": uuid,
                "parentUuid": parent, "version": "2.1.100",
                "timestamp": "2026-01-01T00:00:01Z",
                "message": {"id": "msg_same", "model": "qwen", "role": "assistant",
                    "content": [{"type": "text", "text": "ok"}], "usage": usage}}));
        }
        parent = serde_json::Value::String(b);
    }
    let bytes = text.as_bytes();
    assert!(grown_is_whole("reused.jsonl", bytes, 1, &|_| true) > 100);
    let ends: Vec<usize> = memchr::memchr_iter(b'\n', bytes).map(|i| i + 1).collect();
    let mut session = Session::load("reused.jsonl", &bytes[..ends[0]]).unwrap();
    let mut copies = 0;
    for pair in ends.windows(2) {
        session.load_appended(&bytes[pair[0]..pair[1]], 0);
        let whole = Session::load("reused.jsonl", &bytes[..pair[1]]).unwrap();
        let copied =
            crate::agents::claude::usage::copied_responses(&whole.transcript, &whole.conversation);
        let says: Vec<bool> = session.claude_steps.iter().map(|s| s.copied).collect();
        let reference: Vec<bool> = whole
            .claude_steps
            .iter()
            .map(|s| {
                whole.conversation.requests[s.request]
                    .response
                    .is_some_and(|r| copied[r])
            })
            .collect();
        assert_eq!(says, reference, "at byte {}", pair[1]);
        // Read once, the copies are found when the session settles: the same.
        let transcript = crate::agents::claude::load("reused.jsonl", &bytes[..pair[1]]).unwrap();
        let once = Session::new(transcript);
        let once_says: Vec<bool> = once.claude_steps.iter().map(|s| s.copied).collect();
        assert_eq!(once_says, reference, "read once, at byte {}", pair[1]);
        copies = says.iter().filter(|&&c| c).count();
    }
    // Responses 2, 5, ... 38 repeat the counts of 1, 4, ... 37.
    assert_eq!(copies, 13);
}

/// A file whose first requests are a subagent's, then the main thread's: the thread shown
/// changes from the subagent to the main one, every step is made again from a new planner, and
/// the plan a watch grows takes the new planner's blocks (it kept the old ones and sliced them
/// past their end: a panic).
#[test]
fn a_thread_shown_that_changes_plans_the_watch_again() {
    let line = |v: serde_json::Value| v.to_string() + "\n";
    let usage = serde_json::json!({"input_tokens": 3, "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 0, "output_tokens": 5});
    let mut text = String::new();
    let mut parent = serde_json::Value::Null;
    for i in 0..4 {
        let (u, a) = (format!("s{i}"), format!("t{i}"));
        text += &line(
            serde_json::json!({"type": "user", "uuid": u, "parentUuid": parent,
            "isSidechain": true, "agentId": "ag", "version": "2.1.100",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": format!("subagent prompt {i}, a few words")}}),
        );
        text += &line(
            serde_json::json!({"type": "assistant", "uuid": a, "parentUuid": u,
            "isSidechain": true, "agentId": "ag", "version": "2.1.100",
            "timestamp": "2026-01-01T00:00:01Z", "requestId": format!("r{i}"),
            "message": {"id": format!("m{i}"), "model": "claude-sonnet-4-6", "role": "assistant",
                "content": [{"type": "text", "text": "sure"}], "usage": usage}}),
        );
        parent = serde_json::Value::String(a);
    }
    text += &line(
        serde_json::json!({"type": "user", "uuid": "u", "parentUuid": null,
        "version": "2.1.100", "timestamp": "2026-01-01T00:00:02Z",
        "message": {"role": "user", "content": "main"}}),
    );
    text += &line(
        serde_json::json!({"type": "assistant", "uuid": "a", "parentUuid": "u",
        "version": "2.1.100", "timestamp": "2026-01-01T00:00:03Z", "requestId": "r9",
        "message": {"id": "m9", "model": "claude-sonnet-4-6", "role": "assistant",
            "content": [{"type": "text", "text": "hi"}], "usage": usage}}),
    );
    assert_eq!(
        grown_is_whole("shown.jsonl", text.as_bytes(), 1, &|_| true),
        9
    );
    let whole = Session::load("shown.jsonl", text.as_bytes()).unwrap();
    assert_eq!(whole.thread, crate::agents::claude::thread::ThreadKey::Main);
    assert_eq!(whole.steps().len(), 1);
    // A watch reported the subagent's rows before the main thread came: it says they were
    // revised, and reports the main thread's row, as `steps` on the whole file gives it.
    let plan = plan(&whole, Default::default(), Threads::default());
    let rows: Vec<String> = crate::cache::analyze(&whole, &plan)
        .iter()
        .map(|r| format!("{r:?}"))
        .collect();
    let (watched, revised) = watched_rows("shown.jsonl", text.as_bytes(), 1);
    assert_eq!(watched, rows);
    assert_eq!(revised, 1);
}

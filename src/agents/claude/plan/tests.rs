//! The planner against `Conversation::history` and `compiled_blocks(compile(..))` on generated
//! transcripts of every odd shape the history walk handles: branches met and left again,
//! parallel results on other branches, a response's lines after a later request, same-role
//! runs, compaction boundaries, missing parents, cycles, blocks no build writes.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Planned, Planner, View};
use crate::agents::claude::cache::compiled_blocks;
use crate::agents::claude::thread::{RequestKind, ThreadKey};
use crate::agents::claude::wire::{Given, compile};
use crate::agents::claude::{conversation, load};

/// One generated line: its kind, which line is its parent, and a few choices its kind makes.
#[derive(Debug, Clone)]
struct Spec {
    kind: u8,
    parent: u8,
    choice: u8,
}

fn spec() -> impl Strategy<Value = Spec> {
    (0u8..12, 0u8..12, any::<u8>()).prop_map(|(kind, parent, choice)| Spec {
        kind,
        parent,
        choice,
    })
}

/// The transcript of `specs`, in `version`'s builds.
fn transcript(specs: &[Spec], version: &str) -> String {
    let uuid = |i: usize| format!("u{i}");
    let mut out = String::new();
    let mut calls: Vec<String> = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let c = usize::from(s.choice);
        let parent = match s.parent {
            0..=5 => i.checked_sub(1).map(uuid),
            6 | 7 => Some(uuid(c % (i + 1))),
            8 => None,
            9 => Some("missing".to_string()),
            _ => Some(uuid(i + 1 + c % 3)),
        };
        let text = |n: usize| match n % 4 {
            0 => format!("<system-reminder>context {i}</system-reminder>"),
            _ => format!("text {i}.{n}"),
        };
        let mut line = json!({
            "uuid": uuid(i),
            "parentUuid": parent,
            "sessionId": "s",
            "version": version,
            "timestamp": format!("2026-01-01T00:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
            "isSidechain": false,
        });
        let user = |content: Value| json!({"role": "user", "content": content});
        match s.kind {
            0 => {
                line["type"] = json!("user");
                line["message"] = user(json!(text(c)));
            }
            1 => {
                line["type"] = json!("user");
                let blocks: Vec<Value> = (0..1 + c % 2)
                    .map(|n| json!({"type": "text", "text": text(c + n)}))
                    .collect();
                line["message"] = user(Value::Array(blocks));
            }
            2 if !calls.is_empty() => {
                line["type"] = json!("user");
                let blocks: Vec<Value> = (0..1 + c % 2)
                    .map(|n| {
                        let id = &calls[(c + n) % calls.len()];
                        json!({"type": "tool_result", "tool_use_id": id, "content": text(n)})
                    })
                    .collect();
                line["message"] = user(Value::Array(blocks));
            }
            2..=4 => {
                line["type"] = json!("assistant");
                let content = if s.kind == 4 {
                    (0..1 + c % 2)
                        .map(|n| {
                            calls.push(format!("t{i}.{n}"));
                            json!({"type": "tool_use", "id": format!("t{i}.{n}"), "name": "Bash", "input": {}})
                        })
                        .collect()
                } else {
                    vec![json!({"type": "text", "text": text(c)})]
                };
                line["requestId"] = json!(format!("r{}", c % 5));
                line["message"] = json!({
                    "id": format!("m{}", c % 5),
                    "model": if c % 7 == 0 { "claude-b" } else { "claude-a" },
                    "role": "assistant",
                    "content": content,
                    "usage": {"input_tokens": 3, "cache_creation_input_tokens": 10 * i,
                              "cache_read_input_tokens": 100 * i, "output_tokens": 5},
                });
            }
            5 => {
                line["type"] = json!("attachment");
                line["attachment"] = json!({"type": "todo"});
                match c % 3 {
                    0 => {}
                    1 => {
                        line["rendered"] = json!("x");
                        line["renderedRole"] = json!("system");
                    }
                    _ => {
                        line["rendered"] = json!("x");
                        line["renderedRole"] = json!("user");
                    }
                }
            }
            6 => {
                line["type"] = json!("system");
                line["subtype"] = json!("compact_boundary");
                line["logicalParentUuid"] = json!(uuid(c % (i + 1)));
            }
            7 => line["type"] = json!("progress"),
            8 => {
                line["type"] = json!("user");
                line["message"] = user(json!(text(c)));
                if c % 2 == 0 {
                    line["isVisibleInTranscriptOnly"] = json!(true);
                } else {
                    line["isCompactSummary"] = json!(true);
                }
            }
            9 => {
                line["type"] = json!("user");
                let odd = match c % 4 {
                    0 => json!(["a string block", {"type": "text", "text": text(c)}]),
                    1 => json!([{"text": text(c), "type": "text"}]),
                    2 => {
                        json!([{"type": "text", "text": text(c), "cache_control": {"type": "ephemeral"}}])
                    }
                    _ => json!([{"type": "text", "text": text(c)}, 7]),
                };
                line["message"] = user(odd);
            }
            _ => {
                line["type"] = json!("user");
                line["message"] = user(json!([{"type": "text", "text": text(c)}]));
                line["isMeta"] = json!(true);
            }
        }
        out.push_str(&serde_json::to_string(&line).unwrap());
        out.push('\n');
    }
    out
}

/// Every request's history and blocks from the planner, against the whole walk and compile.
fn check(text: &str) -> Result<(), TestCaseError> {
    let t = load("generated.jsonl", text.as_bytes()).unwrap();
    let c = conversation(&t);
    let mut planner = Planner::new();
    for (index, request) in c.requests.iter().enumerate() {
        if request.thread != ThreadKey::Main {
            continue;
        }
        let planned = planner.plan(&t, &c, index);
        if request.kind == RequestKind::Compaction {
            continue;
        }
        let at = t.lines[request.at].number;
        let compiled = compile(&t, &c, request, &Given::default());
        let Planned::Prompt(prompt) = planned else {
            prop_assert!(false, "line {at}: no prompt");
            unreachable!()
        };
        let view = View {
            prompt: &prompt,
            blocks: &planner.blocks,
        };
        prop_assert_eq!(view.blocks(), compiled_blocks(&compiled), "line {}", at);
        let walked = c.history(&t, request);
        let grown = planner.history();
        // A cycle's request is compiled whole: its history is not the builder's.
        let mut seen = std::collections::BTreeSet::new();
        let mut next = c.leaf(&t, request).and_then(Result::ok);
        while let Some(i) = next.filter(|&i| seen.insert(i)) {
            next = c.parent_of(i).and_then(Result::ok);
        }
        if next.is_none() {
            prop_assert_eq!(
                format!("{:?}", grown.messages),
                format!("{:?}", walked.messages),
                "line {}",
                at
            );
            prop_assert_eq!(grown.missing_parent, walked.missing_parent);
        }
    }
    // And the steps over them are analysed without a panic.
    let session = crate::agents::claude::session::Session::new(t.clone());
    let plan =
        crate::agents::claude::session::plan(&session, Default::default(), Default::default());
    crate::cache::analyze(&session, &plan);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn planned_prompts_are_the_walked_and_compiled_ones(
        specs in proptest::collection::vec(spec(), 1..100),
        version in 0usize..3,
    ) {
        let version = ["1.0.30", "2.0.77", "2.1.100"][version];
        check(&transcript(&specs, version))?;
    }
}

/// A request whose leaf enters a cycle of `parentUuid`s: compiled whole, the same as before.
#[test]
fn a_cycle_of_parents_is_compiled_whole() {
    let text = concat!(
        r#"{"type":"user","uuid":"a","parentUuid":"b","version":"2.1.100","message":{"role":"user","content":"one"}}"#,
        "\n",
        r#"{"type":"user","uuid":"b","parentUuid":"a","version":"2.1.100","message":{"role":"user","content":"two"}}"#,
        "\n",
        r#"{"type":"assistant","uuid":"c","parentUuid":"b","version":"2.1.100","message":{"id":"m","model":"x","role":"assistant","content":[{"type":"text","text":"hi"}]}}"#,
        "\n",
    );
    check(text).unwrap();
    let t = load("cycle.jsonl", text.as_bytes()).unwrap();
    let c = conversation(&t);
    let mut planner = Planner::new();
    let Planned::Prompt(prompt) = planner.plan(&t, &c, 0) else {
        panic!("a prompt")
    };
    let blocks = View {
        prompt: &prompt,
        blocks: &planner.blocks,
    }
    .blocks();
    // The walk goes round the cycle until it has as many lines as the file: one user message.
    assert_eq!(blocks.len(), 3 + 4, "{blocks:?}");
}

/// Every request of `text`: the planner's blocks are compile's (or both say the record is in
/// another file).
fn planned_as_compiled(name: &str, text: &str) {
    let t = load(name, text.as_bytes()).unwrap();
    let c = conversation(&t);
    let mut threads: Vec<ThreadKey> = c.requests.iter().map(|r| r.thread.clone()).collect();
    threads.sort();
    threads.dedup();
    for thread in threads {
        let mut planner = Planner::new();
        for (index, request) in c.requests.iter().enumerate() {
            if request.thread != thread || request.kind == RequestKind::Compaction {
                continue;
            }
            let planned = planner.plan(&t, &c, index);
            let compiled = compile(&t, &c, request, &Given::default());
            match planned {
                Planned::Prompt(prompt) => {
                    let view = View {
                        prompt: &prompt,
                        blocks: &planner.blocks,
                    };
                    assert_eq!(view.blocks(), compiled_blocks(&compiled), "{name}: {index}");
                }
                Planned::RecordElsewhere => assert!(compiled.record_elsewhere, "{name}: {index}"),
                Planned::Compaction => panic!("{name}: {index}"),
            }
        }
    }
}

/// 2.1.3xx replay records that cannot be followed, or hold what the planner does not take
/// apart: the planner gives what `compile` gives (the build's rules, the record in another
/// file, the body compiled whole), made from a recorded transcript.
#[test]
fn replay_records_of_every_odd_shape_plan_as_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/conformance/claude/2.1.332/tool_call/home/.claude/projects/-tmp-promptc-claude-work",
    );
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let records: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i]["type"] == "api-request")
        .collect();
    assert!(records.len() >= 2);
    let mutated = |name: &str, change: &dyn Fn(&mut Vec<Value>)| {
        let mut lines = lines.clone();
        change(&mut lines);
        let text: String = lines
            .iter()
            .map(|l| format!("{}\n", serde_json::to_string(l).unwrap()))
            .collect();
        planned_as_compiled(name, &text);
    };
    mutated("as recorded", &|_| {});
    mutated("no blobs", &|ls| {
        ls.retain(|l| l["type"] != "api-request-blob")
    });
    mutated("no shape", &|ls| {
        ls.retain(|l| l["type"] != "api-request-shape")
    });
    mutated("base loops", &|ls| {
        let id = ls[records[1]]["id"].clone();
        ls[records[1]]["base"] = id;
    });
    mutated("base elsewhere", &|ls| {
        ls[records[1]]["base"] = json!("elsewhere")
    });
    mutated("record elsewhere", &|ls| {
        ls[records[0]]["id"] = json!("elsewhere")
    });
    // A record that cannot find a message, and every record after it: each of their
    // requests planned by the build's rules, as compiled.
    mutated("a message other than the one its record names", &|ls| {
        let first_user = ls.iter().position(|l| l["type"] == "user").unwrap();
        ls[first_user]["message"]["content"] = json!("not the prompt that was sent");
    });
    // A record naming a message its request's history does not have yet but the next one's
    // has: the record is followed again once the message is there.
    mutated("a record's message found only later", &|ls| {
        let later = ls[records[1]]["tail"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        ls[records[0]]["tail"][0] = later;
    });
    mutated("params not an object", &|ls| {
        ls[records[1]]["params"] = json!([1])
    });
    mutated("a one-hour breakpoint", &|ls| {
        for &r in &records {
            for entry in ls[r]["cacheControl"].as_array_mut().unwrap() {
                entry["value"]["ttl"] = json!("1h");
            }
        }
    });
    for (label, path) in [
        ("on a message", json!(["messages", 0])),
        ("past the messages", json!(["messages", 99, "content", 0])),
        ("past the blocks", json!(["messages", 0, "content", 9])),
        ("into a block", json!(["messages", 0, "content", 0, "text"])),
        ("past the system", json!(["system", 9])),
        ("on no part", json!(["metadata", 0])),
        ("on the tools", json!(["tools", 0])),
    ] {
        mutated(label, &|ls| {
            for &r in &records {
                ls[r]["cacheControl"][0]["path"] = path.clone();
            }
        });
    }
    mutated("a lone text block of another order", &|ls| {
        for l in ls.iter_mut().filter(|l| l["type"] == "api-request-blob") {
            if l["message"]["role"] == "user" {
                l["message"]["content"] = json!([{"text": "hi", "type": "text"}]);
            }
        }
    });
}

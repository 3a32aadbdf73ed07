//! Fingerprints: the documented encoding, and the incremental per-step views against a direct
//! normalization of each step's history.

use crate::agents::codex::plan::plan;
use crate::agents::codex::session::Session;
use crate::core::parallel::Threads;
use crate::fingerprint::{Plan, PlanOptions, common_prefix, hash, hex};
use crate::test_support::{all_fixtures, real_samples, session};

/// Expected values computed independently with the Python `xxhash` package (4.1.0), which
/// wraps the reference C implementation: `xxh3_128(tag + b"\0" + bytes).hexdigest()`, and for
/// the chain `xxh3_128(xxh3_128(b"input\0").digest() + xxh3_128(b"item\0" + item).digest())`.
#[test]
fn encoding_matches_an_independent_xxh3() {
    let item = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#;
    assert_eq!(
        hex(&hash("item", item.as_bytes())),
        "5512f103695c17f282d5f1fbf4e25b93"
    );
    assert_eq!(
        hex(&hash("instructions", b"Be brief.")),
        "097fad228a9f826e2d0d00a7cf47337b"
    );
    let s = session(&[item]);
    let p = plan(&s, &PlanOptions::default());
    assert_eq!(
        hex(&p.fingerprints[0].input),
        "2c860cf032425dbcaa5948abe91a7103"
    );
}

/// The tag, the zero and the bytes are hashed as one input, whatever their lengths: XXH3's
/// streaming state must give what its one-shot function gives on the concatenation (its code
/// paths change at 16, 128 and 240 bytes and at each 1 KB block).
#[test]
fn tag_and_bytes_hash_as_one_input() {
    let bytes: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
    for len in [
        0, 1, 10, 11, 115, 116, 122, 123, 124, 234, 235, 1018, 1019, 1024, 2043, 4091, 65_531,
        70_000,
    ] {
        for tag in ["item", "instructions", &"t".repeat(3000)] {
            let mut whole = tag.as_bytes().to_vec();
            whole.push(0);
            whole.extend_from_slice(&bytes[..len]);
            assert_eq!(
                hash(tag, &bytes[..len]),
                xxhash_rust::xxh3::xxh3_128(&whole).to_be_bytes(),
                "{tag} {len}"
            );
        }
    }
}

fn check_views_match_direct_normalization(name: &str, s: &Session) {
    let p = plan(s, &PlanOptions::default());
    for step in 0..s.replay.steps.len() {
        let direct = s.model_view(s.replay.step_history(step));
        let direct_json: Vec<&str> = direct.entries.iter().map(|e| s.view_json(e)).collect();
        let planned_json: Vec<&str> = crate::agents::codex::plan::view(&p, step)
            .iter()
            .map(|e| s.view_json(e))
            .collect();
        assert_eq!(planned_json, direct_json, "{name} step {step}");
        // The chain after all items is the input fingerprint.
        assert_eq!(
            p.chain(step, direct_json.len()),
            &p.fingerprints[step].input,
            "{name}"
        );
    }
}

#[test]
fn incremental_views_equal_direct_normalization_on_fixtures() {
    for (name, s) in all_fixtures() {
        check_views_match_direct_normalization(&name, &s);
    }
}

#[test]
fn incremental_views_equal_direct_normalization_on_real_samples() {
    for (name, s) in real_samples() {
        check_views_match_direct_normalization(&name, &s);
    }
}

#[test]
fn a_late_output_rewrites_the_earlier_prefix() {
    // Step 2 sees call c1 without output (synthetic inserted); step 3 sees the real output, which
    // arrived after a user message: the view forks and the fingerprints stay correct.
    let s = session(&[
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#,
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"also"}]}"#,
        r#"{"type":"reasoning","summary":[],"encrypted_content":"x"}"#,
        r#"{"type":"function_call_output","call_id":"c1","output":"late"}"#,
        r#"{"type":"reasoning","summary":[],"encrypted_content":"y"}"#,
    ]);
    check_views_match_direct_normalization("late output", &s);
    let p = plan(&s, &PlanOptions::default());
    assert_eq!(s.replay.steps.len(), 3);
    // Step 3's input does not extend step 2's: they share only the user message and the call.
    assert_eq!(common_prefix(&p, 1, &p, 2), 2);
}

#[test]
fn common_prefix_equals_a_naive_comparison() {
    for (name, s) in all_fixtures() {
        let p = plan(&s, &PlanOptions::default());
        for step in 1..s.replay.steps.len() {
            let a: Vec<&str> = crate::agents::codex::plan::view(&p, step - 1)
                .iter()
                .map(|e| s.view_json(e))
                .collect();
            let b: Vec<&str> = crate::agents::codex::plan::view(&p, step)
                .iter()
                .map(|e| s.view_json(e))
                .collect();
            let naive = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            assert_eq!(
                common_prefix(&p, step - 1, &p, step),
                naive,
                "{name} step {step}"
            );
        }
    }
}

/// The request fingerprint covers the components in the documented text, in its order, an
/// unknown component as `unknown` and no checkpoint as `none` (module docs, "Encoding"); the
/// text is written out here, not by the code under test.
#[test]
fn request_fingerprint_is_the_documented_text_of_its_components() {
    let fixtures = all_fixtures();
    let (mut unknown, mut checkpoints) = (0, 0);
    for (name, s) in &fixtures {
        let p = plan(s, &PlanOptions::default());
        for (step, f) in p.fingerprints.iter().enumerate() {
            let or = |h: &Option<crate::fingerprint::Hash>, missing: &str| {
                h.as_ref().map_or(missing.to_string(), hex)
            };
            unknown += usize::from(f.instructions.is_none());
            checkpoints += usize::from(f.checkpoint.is_some());
            let text = format!(
                "instructions={}\ntools={}\nparams={}\nprompt_cache_key={}\ncheckpoint={}\ninput={}\n",
                or(&f.instructions, "unknown"),
                or(&f.tools, "unknown"),
                hex(&f.params),
                or(&f.prompt_cache_key, "unknown"),
                or(&f.checkpoint, "none"),
                hex(&f.input),
            );
            assert_eq!(
                f.request,
                hash("request", text.as_bytes()),
                "{name} step {step}"
            );
        }
    }
    assert!(unknown > 0 && checkpoints > 0, "both forms are exercised");
}

#[test]
fn unknown_components_are_named_not_hashed() {
    let s = session(&[
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
    ]);
    let p = plan(&s, &PlanOptions::default());
    assert_eq!(
        p.fingerprints[0].unknown(),
        ["instructions", "tools", "prompt_cache_key"]
    );
    let p = plan(
        &s,
        &PlanOptions {
            instructions: Some("Be brief.".into()),
            tools: Some(vec![r#"{"type":"function","name":"shell"}"#.into()]),
            estimate_tokens: false,
            threads: Threads::new(1),
            ..PlanOptions::default()
        },
    );
    assert_eq!(p.fingerprints[0].unknown(), ["prompt_cache_key"]);
    assert_eq!(
        hex(p.fingerprints[0].instructions.as_ref().expect("known")),
        "097fad228a9f826e2d0d00a7cf47337b"
    );
}

#[test]
fn tool_order_changes_the_exact_but_not_the_canonical_tools_fingerprint() {
    let s = session(&[
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
    ]);
    let tools = |list: &[&str]| PlanOptions {
        tools: Some(list.iter().map(|t| t.to_string()).collect()),
        ..PlanOptions::default()
    };
    let a = plan(
        &s,
        &tools(&[
            r#"{"type":"function","name":"a"}"#,
            r#"{"name":"b","type":"function"}"#,
        ]),
    );
    let b = plan(
        &s,
        &tools(&[
            r#"{"type":"function","name":"b"}"#,
            r#"{"type":"function","name":"a"}"#,
        ]),
    );
    assert_ne!(a.fingerprints[0].tools, b.fingerprints[0].tools);
    assert_eq!(
        a.fingerprints[0].tools_canonical,
        b.fingerprints[0].tools_canonical
    );
}

/// The plan is built on one thread or several (the headers beside the views, the request
/// fingerprints in blocks, which tests make 4 steps long so that samples span many): the
/// result is the same.
#[test]
fn plans_do_not_depend_on_the_thread_count() {
    for (name, s) in all_fixtures().into_iter().chain(real_samples()) {
        for (estimate_tokens, instructions) in [
            (false, None),
            (true, None),
            (false, Some("Be brief.".to_string())),
        ] {
            let plans: Vec<Plan> = [1, 2, 3]
                .into_iter()
                .map(|threads| {
                    plan(
                        &s,
                        &PlanOptions {
                            estimate_tokens,
                            instructions: instructions.clone(),
                            threads: Threads::new(threads),
                            ..PlanOptions::default()
                        },
                    )
                })
                .collect();
            let one = &plans[0];
            // Each step's fingerprint is that step's, whichever block made it: its params and
            // instructions from its own turn context, its input from its own view. (What the
            // params bytes are is pinned apart from `compile::params`, by
            // `every_component_matches_the_reference_script`.)
            assert_eq!(one.fingerprints.len(), s.replay.steps.len(), "{name}");
            for (step, fingerprint) in one.fingerprints.iter().enumerate() {
                let params = crate::agents::codex::compile::params(s.step_context(step));
                assert_eq!(fingerprint.params, hash("params", params.as_bytes()));
                let text = instructions.as_deref().or_else(|| {
                    s.step_context(step)
                        .and_then(|c| c.base_instructions.as_deref())
                        .or(s.rollout.meta.as_ref()?.base_instructions.as_deref())
                });
                let expected = text.map(|t| hash("instructions", t.as_bytes()));
                assert_eq!(fingerprint.instructions, expected, "{name} step {step}");
                let len = one.views[step].1;
                assert_eq!(fingerprint.input_items, len, "{name} step {step}");
                assert_eq!(
                    &fingerprint.input,
                    one.chain(step, len),
                    "{name} step {step}"
                );
            }
            for other in &plans[1..] {
                let label = format!("{name}, tokens {estimate_tokens}, {instructions:?}");
                assert_eq!(one.fingerprints, other.fingerprints, "{label}");
                assert_eq!(
                    crate::agents::codex::plan::codex(one).instructions,
                    crate::agents::codex::plan::codex(other).instructions,
                    "{label}"
                );
                assert_eq!(one.instruction_tokens, other.instruction_tokens, "{label}");
                for step in 0..s.replay.steps.len() {
                    assert_eq!(
                        one.request_tokens(step),
                        other.request_tokens(step),
                        "{label} step {step}"
                    );
                    let len = one.views[step].1;
                    assert_eq!(len, other.views[step].1, "{label} step {step}");
                    assert_eq!(one.chain(step, len), other.chain(step, len), "{label}");
                }
            }
        }
    }
}

/// Rollout lines for the rewrite tests.
fn item(payload: &str) -> String {
    format!(r#"{{"timestamp":"t","type":"response_item","payload":{payload}}}"#)
}

fn user(text: &str) -> String {
    item(&format!(
        r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}"#
    ))
}

fn answer(text: &str) -> String {
    item(&format!(
        r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}"#
    ))
}

fn call(id: &str) -> String {
    item(&format!(
        r#"{{"type":"function_call","name":"shell","arguments":"{{}}","call_id":"{id}"}}"#
    ))
}

fn output(id: &str) -> String {
    item(&format!(
        r#"{{"type":"function_call_output","call_id":"{id}","output":"ok"}}"#
    ))
}

fn rollback(turns: u32) -> String {
    format!(
        r#"{{"timestamp":"t","type":"event_msg","payload":{{"type":"thread_rolled_back","num_turns":{turns}}}}}"#
    )
}

#[test]
fn rollbacks_of_rollbacks_compactions_and_late_outputs_share_prefixes_correctly() {
    let lines = [
        user("one"),
        answer("a1"), // step 0: [one]
        user("two"),
        call("c2"), // step 1: [one a1 two]
        rollback(1),
        user("three"),
        call("c3"), // step 2: [one a1 three], shares [one a1] with step 1
        user("four"),
        answer("a4"), // step 3: c3 has a synthetic output
        output("c3"),
        answer("a5"), // step 4: the late output rewrites step 3's view after c3
        rollback(1),  // a rollback of a rollback: cut at "four", c3 unanswered again
        user("five"),
        answer("a6"), // step 5
        r#"{"timestamp":"t","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}]}}"#.to_string(),
        rollback(1), // right after a compaction: back to nothing
        user("six"),
        answer("a7"), // step 6
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let s = session(&refs);
    check_views_match_direct_normalization("rewrites", &s);
    let p = plan(&s, &PlanOptions::default());
    assert_eq!(s.replay.steps.len(), 7);
    assert_eq!(
        s.replay.epochs.len(),
        5,
        "two rollbacks, a compaction, a rollback"
    );
    let inputs: Vec<usize> = (0..7).map(|k| p.views[k].1).collect();
    // A step's input is the history before its output. Step 3 holds c3's synthetic output;
    // step 4 the real one after "four" and "a4".
    assert_eq!(inputs, [1, 3, 3, 6, 7, 6, 1]);
    assert_eq!(
        common_prefix(&p, 1, &p, 2),
        2,
        "one a1 survive the rollback"
    );
    assert_eq!(common_prefix(&p, 3, &p, 4), 4, "forked after c3");
    assert_eq!(
        common_prefix(&p, 4, &p, 5),
        4,
        "rolled back to one a1 three c3"
    );
    assert_eq!(
        common_prefix(&p, 3, &p, 5),
        5,
        "c3's synthetic output is back"
    );
    assert_eq!(common_prefix(&p, 5, &p, 6), 0);
}

/// A call at the start, then cycles of a kept turn and a turn answering that call, rolled back:
/// every cycle rewrites the view from the first entry on. The views after each rewrite were
/// all built before, so the plan stores each entry of the two families of views (call answered
/// or not) once: linear, not one copy of the history per cycle.
#[test]
fn rewrites_in_the_middle_of_the_history_reuse_earlier_views() {
    let cycles = 200;
    let mut lines = vec![user("start"), call("c0")];
    for n in 0..cycles {
        lines.push(user(&format!("kept {n}")));
        lines.push(answer(&format!("a{n}")));
        lines.push(user(&format!("answer {n}")));
        lines.push(output("c0"));
        lines.push(answer(&format!("b{n}")));
        lines.push(rollback(1));
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let s = session(&refs);
    check_views_match_direct_normalization("mid-rewrites", &s);
    let p = plan(&s, &PlanOptions::default());
    let stored = crate::agents::codex::plan::codex(&p)
        .entries
        .stored_items()
        .count();
    // Each cycle adds a kept turn to both families and an answer turn to one: about 7 entries.
    assert!(
        stored < 10 * cycles,
        "{stored} view entries stored for {cycles} cycles"
    );
}

/// `tests/reference/fingerprints.json`, written by `tests/reference/fingerprints.py` from the
/// documented encoding, apart from promptc.
fn reference() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/fingerprints.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the reference file"))
        .expect("the reference file is JSON")
}

/// Every component of every step of the reference script's rollouts (`request`, `tools`,
/// `tools_canonical`, `params`, `prompt_cache_key`, `checkpoint` and the rest) is the value the
/// script computed from the documented encoding.
#[test]
fn every_component_matches_the_reference_script() {
    let reference = reference();
    let cases = reference["cases"].as_array().expect("cases");
    assert!(cases.len() >= 3);
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let lines: Vec<&str> = case["lines"]
            .as_array()
            .expect("lines")
            .iter()
            .map(|l| l.as_str().expect("a line"))
            .collect();
        let s = session(&lines);
        let options = PlanOptions {
            instructions: case["instructions"].as_str().map(str::to_string),
            tools: case["tools"].as_array().map(|tools| {
                tools
                    .iter()
                    .map(|t| t.as_str().expect("a tool").to_string())
                    .collect()
            }),
            ..PlanOptions::default()
        };
        let p = plan(&s, &options);
        let expected = case["steps"].as_array().expect("steps");
        assert_eq!(p.fingerprints.len(), expected.len(), "{name}: steps");
        for (step, (f, want)) in p.fingerprints.iter().zip(expected).enumerate() {
            let got = serde_json::to_value(crate::render::fingerprint::FingerprintDocument::new(f))
                .expect("serializes");
            assert_eq!(want.as_object().map(|o| o.len()), Some(9), "{name}");
            // The request last: a wrong component is named before the request it changes.
            for component in [
                "instructions",
                "tools",
                "tools_canonical",
                "params",
                "prompt_cache_key",
                "checkpoint",
                "input",
                "input_items",
                "request",
            ] {
                assert_eq!(
                    got[component], want[component],
                    "{name} step {step}: {component} differs from the reference script's"
                );
            }
        }
    }
}

/// `fixtures/baseline.json` (written by `--update-baseline`, so by promptc) keeps the encoding:
/// each component is one the reference script computed from the rollout's own lines, and each
/// request fingerprint is the hash of its components' text.
#[test]
fn the_committed_baseline_matches_the_reference_script() {
    let reference = reference();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/baseline.json");
    let baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("baseline")).expect("JSON");
    let rollouts = baseline["rollouts"].as_object().expect("rollouts");
    assert_eq!(
        rollouts.keys().collect::<Vec<_>>(),
        reference["baseline"]
            .as_object()
            .expect("baseline")
            .keys()
            .collect::<Vec<_>>(),
        "the reference covers every rollout of the baseline: run tests/reference/fingerprints.py"
    );
    for (file, steps) in rollouts {
        let allowed = &reference["baseline"][file];
        for entry in steps.as_array().expect("steps") {
            let at = format!("{file} turn {} step {}", entry["turn"], entry["step"]);
            for (component, values) in allowed.as_object().expect("components") {
                if component == "instructions" && entry[component].is_null() {
                    continue;
                }
                let values = values.as_array().expect("values");
                assert!(
                    values.contains(&entry[component]),
                    "{at}: {component} {} is none of the reference's {values:?}",
                    entry[component]
                );
            }
            let show =
                |key: &str, missing: &str| entry[key].as_str().unwrap_or(missing).to_string();
            let text = format!(
                "instructions={}\ntools={}\nparams={}\nprompt_cache_key={}\ncheckpoint={}\ninput={}\n",
                show("instructions", "unknown"),
                show("tools", "unknown"),
                show("params", ""),
                show("prompt_cache_key", "unknown"),
                show("checkpoint", "none"),
                show("input", ""),
            );
            assert_eq!(
                entry["request"].as_str(),
                Some(hex(&hash("request", text.as_bytes())).as_str()),
                "{at}: request"
            );
        }
    }
}

/// Loaded without the items' JSON but the messages' (`LoadOptions::keep_item_json` off, as
/// `fingerprint`, `steps`, `report` and `sessions` load), every fixture, real sample and
/// conformance rollout plans, analyses and summarizes as loaded whole: fingerprints, views,
/// verdicts, losses and summaries read hashes, kinds and counts, and messages only; token
/// estimates made while reading (`estimate_tokens`, as `steps` loads) are the plan's own.
#[test]
fn plans_rows_and_summaries_need_no_item_json_but_the_messages() {
    use crate::LoadOptions;
    let mut inputs = crate::test_support::fixture_bytes();
    inputs.extend(crate::test_support::real_sample_bytes());
    let conformance = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut dirs = vec![conformance];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("folder").flatten() {
            let path = entry.path();
            // Codex rollouts only: `claude/` holds Claude Code transcripts.
            if path.is_dir() && !path.ends_with("claude") {
                dirs.push(path);
            } else if path.is_file() && path.to_string_lossy().contains("/home/") {
                inputs.push((
                    path.display().to_string(),
                    std::fs::read(&path).expect("read"),
                ));
            }
        }
    }
    assert!(inputs.len() > 200, "{} inputs", inputs.len());
    let mut dropped = 0;
    for ((name, bytes), estimate_tokens) in inputs.iter().flat_map(|i| [(i, false), (i, true)]) {
        let without = LoadOptions {
            keep_item_json: false,
            estimate_tokens,
            ..LoadOptions::default()
        };
        let (whole, lean) = match (
            Session::load(name, bytes, LoadOptions::default()),
            Session::load(name, bytes, without),
        ) {
            (Ok(whole), Ok(lean)) => (whole, lean),
            (whole, lean) => {
                assert_eq!(
                    whole.err().map(|e| e.to_string()),
                    lean.err().map(|e| e.to_string())
                );
                continue;
            }
        };
        let options = PlanOptions {
            estimate_tokens,
            ..PlanOptions::default()
        };
        let (a, b) = (plan(&whole, &options), plan(&lean, &options));
        assert!(format!("{a:?}") == format!("{b:?}"), "{name}: plans");
        assert!(
            format!("{:?}", a.fingerprints) == format!("{:?}", b.fingerprints),
            "{name}"
        );
        assert!(
            format!("{:?}", a.views) == format!("{:?}", b.views),
            "{name}: views"
        );
        let rows = |s: &Session, p: &Plan| format!("{:?}", crate::cache::analyze(s, p));
        assert!(rows(&whole, &a) == rows(&lean, &b), "{name}: rows");
        let summary =
            |s: &Session| format!("{:?}", crate::agents::codex::discover::summarize_session(s));
        assert!(summary(&whole) == summary(&lean), "{name}: summary");
        dropped += lean
            .rollout
            .items
            .iter()
            .filter(|i| i.json().is_empty())
            .count();
    }
    assert!(dropped > 1000, "{dropped} items let their JSON go");
}

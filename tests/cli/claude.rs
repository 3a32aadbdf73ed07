//! Claude Code transcripts through the binary: found by their content (no flag), `steps` and
//! `compile`, held against the recordings of `tests/conformance/claude/`.

use serde_json::Value;

use crate::support::{code, json, root, run, skip, transcript};

fn fixture(name: &str) -> String {
    format!("fixtures/claude/{name}.jsonl")
}

#[test]
fn steps_of_each_claude_fixture() {
    for name in [
        "tool_call_2.1.100",
        "claude_md_edit_2.1.100",
        "parallel_calls_1.0.30",
        "bad_lines",
    ] {
        insta::assert_snapshot!(
            format!("claude_steps__{name}"),
            transcript(&["steps", &fixture(name)])
        );
    }
}

/// The numbers are the mock's (`requests.jsonl` of the case the fixture was recorded in), and
/// so are the verdicts: the third request reads only the tools and the first system block (the
/// mock's `read_block` 23 is its first breakpoint), since the resumed process re-rendered the
/// system prompt (git status) and the first message (the edited CLAUDE.md), which 2.1.100 does
/// not record: the parts named are those, not the tools the read covered.
#[test]
fn steps_json_carries_anthropics_numbers_and_the_cause() {
    let steps = json(&[
        "steps",
        "--format",
        "json",
        &fixture("claude_md_edit_2.1.100"),
    ]);
    let rows = steps["steps"].as_array().expect("steps");
    let read: Vec<u64> = rows
        .iter()
        .map(|s| s["usage"]["cache_read_input_tokens"].as_u64().unwrap())
        .collect();
    let written: Vec<u64> = rows
        .iter()
        .map(|s| s["usage"]["cache_creation_input_tokens"].as_u64().unwrap())
        .collect();
    // The neutral columns say the same: the whole prompt, what was read of it, what written.
    for s in rows {
        let u = &s["usage"];
        let whole = u["input_tokens"].as_u64().unwrap()
            + u["cache_creation_input_tokens"].as_u64().unwrap()
            + u["cache_read_input_tokens"].as_u64().unwrap();
        assert_eq!(s["observed_input_tokens"].as_u64(), Some(whole));
        assert_eq!(s["observed_cached_tokens"], u["cache_read_input_tokens"]);
        assert_eq!(s["cache_write_tokens"], u["cache_creation_input_tokens"]);
    }
    let case = root().join("tests/conformance/claude/2.1.100/claude_md_edit/requests.jsonl");
    match std::fs::read_to_string(&case) {
        Ok(text) => {
            let mock: Vec<Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let usage = |k: &str| -> Vec<u64> {
                mock.iter()
                    .map(|r| r["usage"][k].as_u64().unwrap())
                    .collect()
            };
            assert_eq!(read, usage("cache_read_input_tokens"));
            assert_eq!(written, usage("cache_creation_input_tokens"));
        }
        Err(_) => skip("tests/conformance is not present (outside the repository checkout)"),
    }
    let verdicts: Vec<&str> = rows
        .iter()
        .map(|s| s["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["first_request", "hit", "unrecorded_change", "hit"]
    );
    assert!(
        rows[2]["explanation"]
            .as_str()
            .unwrap()
            .ends_with("not recorded by this build and before it: system, messages[0].content"),
        "{}",
        rows[2]["explanation"]
    );
    // What the first two requests left cached, less what the third read.
    assert_eq!(
        rows[2]["lost_tokens"].as_u64(),
        Some(read[1] + written[1] - read[2])
    );
    assert_eq!(
        (rows[2]["turn"].as_u64(), rows[2]["step"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(steps["schema_version"], 1);
}

#[test]
fn bad_lines_are_warned_with_file_and_line_and_the_rest_is_read() {
    let output = run(&["steps", &fixture("bad_lines")]);
    assert_eq!(code(&output), 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[0].starts_with("warning: fixtures/claude/bad_lines.jsonl:5:"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("warning: fixtures/claude/bad_lines.jsonl:6: skipped: JSON array"),
        "{stderr}"
    );
    assert!(
        lines[2].contains(":11:60: skipped: last line cut short"),
        "{stderr}"
    );
}

/// `--strict` holds for a transcript as for a rollout: every command that reads one stops at
/// its first bad line (exit 2, the file, line and column on stderr, nothing on stdout); without
/// it the same file is read with warnings.
#[test]
fn strict_fails_on_a_transcripts_first_bad_line() {
    let file = fixture("bad_lines");
    for command in [
        vec!["steps", "--strict", &file],
        vec!["view", "--strict", &file],
        vec!["compile", "--strict", &file],
        vec!["fingerprint", "--strict", &file],
        vec!["check", "--strict", &file],
        vec!["diff", "--strict", &file, &file],
    ] {
        let output = run(&command);
        assert_eq!(code(&output), 2, "{command:?}");
        assert!(output.stdout.is_empty(), "{command:?}: nothing on stdout");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr,
            format!("error: {file}:5:2: not JSON: expected ident (--strict)\n"),
            "{command:?}"
        );
    }
    let lenient = run(&["view", &file]);
    assert_eq!(code(&lenient), 0);
    assert!(String::from_utf8_lossy(&lenient.stderr).contains(&format!("warning: {file}:5:2:")));
}

/// 2.1.3xx: the CLI says the rebuild is verified, and names what the transcript cannot hold.
#[test]
fn compile_of_a_replay_recorded_request_is_verified() {
    let dir = root().join("tests/conformance/claude/2.1.332/resume/home/.claude/projects");
    let Ok(mut projects) = std::fs::read_dir(&dir) else {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    };
    let project = projects.next().unwrap().unwrap().path();
    let file = std::fs::read_dir(project)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let file = file.to_string_lossy().into_owned();
    for (turn, step) in [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")] {
        let compiled = json(&[
            "compile", "--format", "json", "--turn", turn, "--step", step, &file,
        ]);
        assert_eq!(compiled["verified"], true, "turn {turn} step {step}");
        let parts: Vec<&str> = compiled["approximations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["part"].as_str().unwrap())
            .collect();
        assert_eq!(parts, ["metadata", "system[0]"]);
        assert_eq!(compiled["request"]["model"], "claude-opus-5-5");
    }
}

/// `compile` prints beside the body the fingerprint `fingerprint` gives that request (as for a
/// rollout), with the same `--system`/`--tools`: every step of the fixtures and of the recorded
/// 2.1.332 tool call (a body rebuilt from replay records).
#[test]
fn compile_carries_the_requests_fingerprint() {
    let mut files: Vec<String> = [
        "tool_call_2.1.100",
        "claude_md_edit_2.1.100",
        "parallel_calls_1.0.30",
    ]
    .map(fixture)
    .to_vec();
    let projects = root().join("tests/conformance/claude/2.1.332/tool_call/home/.claude/projects");
    for project in std::fs::read_dir(projects).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(project.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if file.path().extension().is_some_and(|e| e == "jsonl") {
                files.push(file.path().to_string_lossy().into_owned());
            }
        }
    }
    assert!(files.len() > 3, "the recorded 2.1.332 case");
    for file in &files {
        let fingerprints = json(&["fingerprint", "--json", file]);
        for step in fingerprints["steps"].as_array().unwrap() {
            let (turn, number) = (step["turn"].to_string(), step["step"].to_string());
            let compiled = json(&[
                "compile", "--json", file, "--turn", &turn, "--step", &number,
            ]);
            assert_eq!(
                compiled["fingerprint"], step["fingerprint"],
                "{file} {turn}.{number}"
            );
            assert!(compiled["fingerprint"]["request"].is_string(), "{file}");
        }
    }
    // With --system: an older build's fingerprint takes it, as its body does; a body rebuilt
    // from replay records sends what it recorded, and so does its fingerprint.
    let dir = tempfile::tempdir().unwrap();
    let system = dir.path().join("system.json");
    std::fs::write(
        &system,
        r#"[{"type": "text", "text": "You are someone else."}]"#,
    )
    .unwrap();
    let system = system.to_str().unwrap();
    for file in &files {
        let with = json(&["compile", "--json", "--system", system, file]);
        let given = json(&["fingerprint", "--json", "--system", system, file]);
        let plain = json(&["fingerprint", "--json", file]);
        let last =
            |doc: &Value| doc["steps"].as_array().unwrap().last().unwrap()["fingerprint"].clone();
        assert_eq!(with["fingerprint"], last(&given), "{file}");
        let replayed = with["verified"].is_boolean();
        assert_eq!(with["fingerprint"] == last(&plain), replayed, "{file}");
    }
    let text = run(&["compile", &fixture("tool_call_2.1.100")]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("\nFINGERPRINT") || text.contains("fingerprint"),
        "{text}"
    );
}

/// `--system` and `--tools` of the wrong kind are errors naming the file, not parts taken as
/// given (which the fingerprints would then call known): a captured request without the part,
/// a tool list as the system, system blocks or a string as the tools, a request record.
#[test]
fn given_system_and_tools_of_the_wrong_kind_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, value: Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, value.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let system = serde_json::json!([{"type": "text", "text": "You are Claude Code."}]);
    let tools = serde_json::json!([{"name": "Bash", "input_schema": {"type": "object"}}]);
    let no_tools = file(
        "no_tools.json",
        serde_json::json!({"model": "m", "messages": []}),
    );
    let tool_list = file("tools.json", tools.clone());
    let blocks = file("system.json", system.clone());
    let text = file("text.json", Value::String("You are Claude Code.".into()));
    let server_tools = file(
        "server_tools.json",
        serde_json::json!([{"type": "web_search_20250305", "name": "web_search"}]),
    );
    let transcript = fixture("tool_call_2.1.100");
    for (flag, given, says) in [
        ("--tools", &no_tools, "a captured request without `tools`"),
        ("--system", &no_tools, "a captured request without `system`"),
        ("--system", &tool_list, "not a `system` for --system"),
        ("--tools", &blocks, "not a `tools` for --tools"),
        ("--tools", &text, "not a `tools` for --tools"),
        ("--system", &server_tools, "not a `system` for --system"),
    ] {
        for command in ["compile", "steps", "check"] {
            let output = run(&[command, flag, given, &transcript]);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(code(&output), 2, "{command} {flag} {given}: {stderr}");
            assert!(
                stderr.starts_with(&format!("error: {given}: {says}")),
                "{command} {flag} {given}: {stderr}"
            );
        }
    }
    // The right kinds, bare or in a captured request (its body, or a record holding the body).
    let body = serde_json::json!({"model": "m", "messages": [], "system": system, "tools": tools});
    for given in [
        (blocks.clone(), tool_list.clone()),
        (
            file("body.json", body.clone()),
            file("body.json", body.clone()),
        ),
        (
            file("record.json", serde_json::json!({"index": 0, "body": body})),
            file("record.json", serde_json::json!({"index": 0, "body": body})),
        ),
        (text.clone(), tool_list.clone()),
    ] {
        let compiled = json(&[
            "compile",
            "--json",
            "--system",
            &given.0,
            "--tools",
            &given.1,
            &transcript,
        ]);
        assert_eq!(compiled["request"]["tools"], tools, "{given:?}");
    }
}

/// A flag of the other agent's is named on stderr as not used (not an error: `check` and `diff`
/// take both agents' sessions), and so are `--system` and `--tools` where a request is rebuilt
/// from replay records, which hold the ones it sent.
#[test]
fn flags_not_used_for_a_session_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let given = dir.path().join("system.json");
    std::fs::write(
        &given,
        r#"[{"type": "text", "text": "You are Claude Code."}]"#,
    )
    .unwrap();
    let given = given.to_str().unwrap();
    let transcript = fixture("tool_call_2.1.100");
    let rollout = "fixtures/rollouts/era_b_steps.jsonl";
    let not_used = |flag: &str, file: &str, kind: &str, theirs: &str| {
        format!("warning: {flag} is for {theirs}, and {file} is {kind}: not used for it\n")
    };
    let claude = |flag: &str| {
        not_used(
            flag,
            &transcript,
            "a Claude Code transcript",
            "Codex rollouts",
        )
    };
    let codex = |flag| not_used(flag, rollout, "a Codex rollout", "Claude Code transcripts");
    for (args, expected) in [
        (
            vec!["compile", "--instructions", given, &transcript],
            claude("--instructions"),
        ),
        (
            vec!["compile", "--output-schema", "missing.json", &transcript],
            claude("--output-schema"),
        ),
        (
            vec!["steps", "--instructions", given, &transcript],
            claude("--instructions"),
        ),
        (
            vec!["compile", "--system", given, rollout],
            codex("--system"),
        ),
        (
            vec!["fingerprint", "--system", given, rollout],
            codex("--system"),
        ),
        (
            vec!["diff", "--system", given, rollout, rollout],
            codex("--system").repeat(2),
        ),
    ] {
        let output = run(&args);
        assert_eq!(code(&output), 0, "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            expected,
            "{args:?}"
        );
    }
    let replayed = root().join("tests/conformance/claude/2.1.332/tool_call/home/.claude/projects");
    let Some(replayed) = std::fs::read_dir(&replayed).ok().and_then(|mut d| d.next()) else {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    };
    let project = replayed.unwrap().path();
    let file = std::fs::read_dir(&project)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let file = file.to_str().unwrap();
    let output = run(&["compile", "--system", given, file]);
    assert_eq!(code(&output), 0);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "warning: --system and --tools are not used for this request: {file} records the ones it sent (replay records)\n"
        )
    );
    // Without the flags, nothing is said.
    assert_eq!(run(&["compile", file]).stderr, b"");
}

/// An older build with the captured system blocks and tools given: equal to what was sent but
/// for what no flag gives (metadata, max_tokens, temperature, the injected context).
#[test]
fn compile_with_the_captured_system_and_tools() {
    let case = root().join("tests/conformance/claude/2.1.100/tool_call");
    let Ok(text) = std::fs::read_to_string(case.join("requests.jsonl")) else {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    };
    let first: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let blobs = case.parent().unwrap().parent().unwrap().join("blobs");
    let expand = |v: &Value| -> Value {
        match v.get("$blob").and_then(Value::as_str) {
            Some(h) => serde_json::from_str(
                &std::fs::read_to_string(blobs.join(format!("{h}.json"))).unwrap(),
            )
            .unwrap(),
            None => v.clone(),
        }
    };
    let mut system = first["body"]["system"].clone();
    for block in system.as_array_mut().unwrap() {
        block["text"] = expand(&block["text"]);
    }
    let tools = expand(&first["body"]["tools"]);
    let dir = std::env::temp_dir().join(format!("promptc-claude-given-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (system_file, tools_file) = (dir.join("system.json"), dir.join("tools.json"));
    std::fs::write(&system_file, system.to_string()).unwrap();
    std::fs::write(&tools_file, tools.to_string()).unwrap();
    let compiled = json(&[
        "compile",
        "--format",
        "json",
        "--turn",
        "1",
        "--step",
        "2",
        "--system",
        system_file.to_str().unwrap(),
        "--tools",
        tools_file.to_str().unwrap(),
        &fixture("tool_call_2.1.100"),
    ]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(compiled["request"]["system"], system);
    assert_eq!(compiled["request"]["tools"], tools);
    let named: Vec<&str> = compiled["approximations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["part"].as_str().unwrap())
        .collect();
    assert_eq!(
        named,
        [
            "messages[0].content",
            "metadata",
            "max_tokens",
            "thinking",
            "context_management"
        ]
    );
    // Everything not named is what was sent.
    let mut sent = first["body"].clone();
    sent["system"] = system;
    sent["tools"] = tools;
    for part in ["metadata", "max_tokens", "thinking", "context_management"] {
        sent[part] = Value::Null;
    }
    let mut mine = compiled["request"].clone();
    // The first prompt's injected context blocks (named) are left out of both.
    for body in [&mut sent, &mut mine] {
        let first = &mut body["messages"][0]["content"];
        if let Value::String(text) = first {
            *first = serde_json::json!([{"type": "text", "text": text}]);
        }
        if let Value::Array(blocks) = first {
            blocks.retain(|b| {
                !b["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("<system-reminder>"))
            });
        }
    }
    let (mine, sent) = (mine.to_string(), sent.to_string());
    let at = mine.bytes().zip(sent.bytes()).position(|(a, b)| a != b);
    assert!(
        mine == sent,
        "differ at byte {at:?}: …{}",
        &mine[at.unwrap_or(0).saturating_sub(80)..][..160.min(mine.len())]
    );
}

/// The session file of run `run` (0-based) of a recorded case, when the suite is present.
fn case_file(case: &str, run: usize) -> Option<String> {
    let dir = root().join("tests/conformance/claude").join(case);
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).ok()?).ok()?;
    let path = meta["runs"][run]["new_transcripts"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|p| {
            std::fs::read_to_string(dir.join("home").join(p))
                .is_ok_and(|t| t.contains("\"type\":\"assistant\""))
        })?;
    Some(dir.join("home").join(path).to_string_lossy().into_owned())
}

/// 1.0.30's resume writes a new file; under `claude -p` the first file's last request sent its
/// tool turn twice, the resumed one once (the mock read 13 224 of 13 354): the transcripts do
/// not say it was `-p`, so `diff` names the repeat as a possible cause, with the unrecorded parts.
#[test]
fn diff_of_a_copied_resume_names_the_possible_causes() {
    let (Some(a), Some(b)) = (case_file("1.0.30/resume", 0), case_file("1.0.30/resume", 1)) else {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    };
    // A resume's copy is of A's requests, under new uuids: no fork.
    let text = String::from_utf8(run(&["diff", &a, &b]).stdout).unwrap();
    assert!(text.contains("B continues A with 2 more step(s)"), "{text}");
    let output = run(&["diff", "--format", "json", &a, &b]);
    assert_eq!(
        code(&output),
        1,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let d: Value = serde_json::from_slice(&output.stdout).unwrap();
    // The copy's two requests are A's (the same response ids); B's own follow.
    assert_eq!(d["aligned_steps"], 2);
    assert_eq!(d["drifts"].as_array().unwrap().len(), 1);
    assert_eq!(d["drifts"][0]["class"], "unrecorded_change");
    assert_eq!(d["drifts"][0]["expected"], false);
    let detail = d["drifts"][0]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "B's first request read 13224 of the 13354 tokens A's last request left cached"
        ) && detail
            .ends_with("changed: system, messages[0].content, or the build's repeated tool turn"),
        "{d}"
    );
}

/// A fork whose first own request reads all the parent left cached: no drift to name (exit 0),
/// and B said to copy A into a session of its own.
#[test]
fn diff_of_a_fork_that_keeps_the_prefix_names_nothing() {
    let (Some(a), Some(b)) = (
        case_file("2.1.332/fork_session", 0),
        case_file("2.1.332/fork_session", 1),
    ) else {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    };
    let d = json(&["diff", "--format", "json", &a, &b]);
    assert_eq!(d["drifts"], serde_json::json!([]));
    // Its file names no parent, but holds A's lines under a session of its own.
    let text = String::from_utf8(run(&["diff", &a, &b]).stdout).unwrap();
    assert!(
        text.contains(
            "B is a copy of A in a session of its own (a `--fork-session`, or a resume that \
             copied A) with 2 more step(s)"
        ),
        "{text}"
    );
    // The fork's copies of A's two requests are A's; its own begin at turn 2.
    assert_eq!(d["aligned_steps"], 2);
    assert_eq!(
        d["b_only_steps"][0],
        serde_json::json!({"turn": 2, "step": 1})
    );
    // And its first own request read all that A's last left cached.
    let (sa, sb) = (
        json(&["steps", "--format", "json", &a]),
        json(&["steps", "--format", "json", &b]),
    );
    let a_last = &sa["steps"][1]["usage"];
    let left = a_last["cache_read_input_tokens"].as_u64().unwrap()
        + a_last["cache_creation_input_tokens"].as_u64().unwrap();
    assert_eq!(
        sb["steps"][2]["observed_cached_tokens"].as_u64(),
        Some(left)
    );
}

#[test]
fn a_claude_transcript_and_a_codex_rollout_are_not_compared() {
    let output = run(&[
        "diff",
        &fixture("tool_call_2.1.100"),
        "fixtures/rollouts/era_b_steps.jsonl",
    ]);
    assert_eq!(code(&output), 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("one is a Claude Code transcript"));
}

/// `check`: the fixtures keep every invariant; 2.1.100 rewrites the first prompt after an
/// interrupt (its text gains a newline when the "Continue" line joins it: the mock read only
/// part of the prefix), which `check` names.
#[test]
fn check_passes_the_fixtures_and_names_a_rewritten_history() {
    let files: Vec<String> = [
        "tool_call_2.1.100",
        "claude_md_edit_2.1.100",
        "parallel_calls_1.0.30",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect();
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    let output = run(&args);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let Some(resumed) = case_file("2.1.100/interrupted_call", 0) else {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    };
    let report = json(&["check", "--format", "json", &resumed]);
    assert_eq!(report["passed"], false);
    let failures = report["rollouts"][0]["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    assert!(
        failures
            .iter()
            .all(|f| f["check"] == "input_extends_previous"),
        "{failures:?}"
    );
    assert_eq!(
        (failures[0]["turn"].as_u64(), failures[0]["step"].as_u64()),
        (Some(2), Some(1))
    );
}

/// `XXH3-128(tag ‖ 0x00 ‖ bytes)`, as ARCHITECTURE.md documents the encoding.
fn tagged(tag: &str, bytes: &[u8]) -> [u8; 16] {
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    h.update(tag.as_bytes());
    h.update(&[0]);
    h.update(bytes);
    h.digest128().to_be_bytes()
}

fn without_breakpoints(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), without_breakpoints(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_breakpoints).collect()),
        other => other.clone(),
    }
}

/// The input chain of every request, computed here from `compile`'s body by the documented
/// rule (ARCHITECTURE.md, "Fingerprint encoding"), is what `fingerprint` prints; requests of
/// one session differ, and a second run prints the same.
#[test]
fn fingerprints_follow_their_documented_encoding() {
    let file = fixture("claude_md_edit_2.1.100");
    let printed = json(&["fingerprint", "--format", "json", &file]);
    let steps = printed["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    for s in steps {
        let (turn, step) = (s["turn"].to_string(), s["step"].to_string());
        let compiled = json(&[
            "compile", "--format", "json", "--turn", &turn, "--step", &step, &file,
        ]);
        let mut chain = tagged("claude-messages-chain", b"");
        let mut blocks = 0;
        for m in compiled["request"]["messages"].as_array().unwrap() {
            let content = match &m["content"] {
                Value::String(t) => vec![serde_json::json!({"type": "text", "text": t})],
                Value::Array(items) => items.clone(),
                _ => vec![],
            };
            for block in content {
                let pair = without_breakpoints(&serde_json::json!([m["role"], block]));
                let one = tagged(
                    "claude-block",
                    serde_json::to_string(&pair).unwrap().as_bytes(),
                );
                let mut bytes = chain.to_vec();
                bytes.extend_from_slice(&one);
                chain = tagged("claude-messages-chain", &bytes);
                blocks += 1;
            }
        }
        let hex: String = chain.iter().map(|b| format!("{b:02x}")).collect();
        let f = &s["fingerprint"];
        assert_eq!(f["input"], hex.as_str(), "turn {turn} step {step}");
        assert_eq!(f["input_items"], blocks);
        // 2.1.100 records neither the system prompt nor the tools, nor the context it puts
        // into the first message; the Messages API has no cache key.
        assert_eq!(f["tools"], Value::Null);
        assert_eq!(f["instructions"], Value::Null);
        assert_eq!(f["prompt_cache_key"], Value::Null);
        assert_eq!(
            f["unknown"],
            serde_json::json!(["instructions", "tools", "input"])
        );
    }
    let requests: std::collections::BTreeSet<&str> = steps
        .iter()
        .map(|s| s["fingerprint"]["request"].as_str().unwrap())
        .collect();
    assert_eq!(requests.len(), 4);
    assert_eq!(json(&["fingerprint", "--format", "json", &file]), printed);
}

/// `view`: the transcript's lines beside the messages sent. 1.0.30 may have sent the tool turn
/// twice (`?`: it did under `claude -p`); 2.0.77 leaves the call an interrupt left unanswered
/// out (`-`) and sends the synthetic answer of its branch instead (the case's requests.jsonl
/// has both).
#[test]
fn view_shows_the_lines_beside_the_messages_sent() {
    insta::assert_snapshot!(
        "claude_view__parallel_calls_1.0.30",
        transcript(&["view", &fixture("parallel_calls_1.0.30")])
    );
    let Some(file) = case_file("2.0.77/interrupted_call", 0) else {
        skip("tests/conformance is not present (outside the repository checkout)");
        return;
    };
    let view = json(&["view", "--format", "json", &file]);
    let dropped: Vec<&str> = view["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["sent"] == false)
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        dropped,
        ["assistant/tool_use", "assistant/text"],
        "the dangling call and the last answer"
    );
    let roles: Vec<&str> = view["model_view"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(view["model_view"][1]["lines"], serde_json::json!([5]));
}

/// A transcript that records no request (a session opened and left: bookkeeping, a system
/// line, a local command) is still a transcript: `view` shows its lines and an empty model view,
/// its JSON lists the skipped line and the notes as a rollout's does; `compile` has nothing to
/// compile and says so, naming the file.
#[test]
fn view_of_a_transcript_without_a_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("opened-and-left.jsonl");
    let lines = [
        r#"{"type":"permission-mode","permissionMode":"acceptEdits","sessionId":"s1"}"#,
        r#"{"parentUuid":null,"isSidechain":false,"type":"system","subtype":"informational","content":"Auto mode","uuid":"00000000-0000-4000-8000-000000000001","timestamp":"2026-12-01T10:00:00.000Z","sessionId":"s1","version":"2.1.97"}"#,
        r#"{"parentUuid":"00000000-0000-4000-8000-000000000001","isSidechain":false,"type":"user","message":{"role":"user","content":"<command-name>/exit</command-name>"},"uuid":"00000000-0000-4000-8000-000000000002","timestamp":"2026-12-01T10:00:01.000Z","sessionId":"s1","version":"2.1.97"}"#,
        r#"{"type":"a-line-type-of-a-later-build","sessionId":"s1"}"#,
        r#"{"type":"user","message":"#,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
    let file = file.to_str().expect("UTF-8 path");

    let output = run(&["view", file]);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("TRANSCRIPT (2 lines of the main thread)"),
        "{text}"
    );
    assert!(text.contains("L3     user/prompt"), "{text}");
    assert!(
        text.contains("MODEL VIEW (the transcript records no request)"),
        "{text}"
    );
    // The note names its line itself, once.
    assert!(
        text.contains("note      1 line(s) of unknown type `a-line-type-of-a-later-build` kept, not read (first at line 4)\n"),
        "{text}"
    );

    let view = json(&["view", "--format", "json", file]);
    assert_eq!(view["selection"], Value::Null);
    assert_eq!(view["model_view"], serde_json::json!([]));
    let kinds: Vec<(u64, bool)> = view["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| (l["line"].as_u64().unwrap(), l["sent"].as_bool().unwrap()))
        .collect();
    assert_eq!(kinds, [(2, false), (3, false)]);
    assert_eq!(
        view["skipped_lines"],
        serde_json::json!([{"line": 5, "column": 25, "reason": "not JSON: EOF while parsing a value"}])
    );
    assert_eq!(
        view["notes"],
        serde_json::json!([{
            "line": null,
            "note": "1 line(s) of unknown type `a-line-type-of-a-later-build` kept, not read (first at line 4)"
        }])
    );

    // A turn asked for that it does not have: an error naming the file.
    let output = run(&["view", "--turn", "1", file]);
    assert_eq!(code(&output), 2);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(&format!("\nerror: {file}: ")),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let output = run(&["compile", file]);
    assert_eq!(code(&output), 2);
    assert!(output.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr).ends_with(&format!(
            "\nerror: {file}: the transcript records no request\n"
        )),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Baselines hold Claude Code transcripts beside Codex rollouts: written once, a rerun passes,
/// and a transcript whose requests changed fails naming what changed.
#[test]
fn baselines_hold_claude_transcripts() {
    let dir = std::env::temp_dir().join(format!("promptc-claude-baseline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let baseline = dir.join("baseline.json");
    let transcript = dir.join("session.jsonl");
    let original = std::fs::read_to_string(root().join(fixture("claude_md_edit_2.1.100"))).unwrap();
    std::fs::write(&transcript, &original).unwrap();
    let (b, t) = (baseline.to_str().unwrap(), transcript.to_str().unwrap());
    let codex = "fixtures/rollouts/era_b_steps.jsonl";
    let written = run(&["check", "--baseline", b, "--update-baseline", t, codex]);
    assert_eq!(
        code(&written),
        0,
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );
    let stderr = String::from_utf8_lossy(&written.stderr);
    assert!(stderr.contains("(1 rollout, 1 transcript)"), "{stderr}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    assert_eq!(saved["transcripts"][t].as_array().map(Vec::len), Some(4));
    assert_eq!(saved["rollouts"][codex].as_array().map(Vec::len), Some(3));
    assert_eq!(code(&run(&["check", "--baseline", b, t, codex])), 0);
    // The resumed run with another model: its two requests change model (and so the prefix).
    let switched: String = original
        .lines()
        .enumerate()
        .map(|(i, l)| if i >= 8 { l.replace("claude-sonnet-4-6", "claude-opus-4-6") } else { l.to_string() } + "\n")
        .collect();
    std::fs::write(&transcript, switched).unwrap();
    let report = json(&["check", "--format", "json", "--baseline", b, t]);
    std::fs::remove_dir_all(&dir).ok();
    let names: Vec<&str> = report["rollouts"][0]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    // The model is one of the parameters, as for Codex.
    assert_eq!(names, ["baseline:params_changed"], "{report}");
    assert_eq!(report["rollouts"][0]["failures"][0]["turn"], 2);
}

/// A transcript on standard input, or compressed, is told by its lines as a plain file is: the
/// same steps, not a Codex rollout of skipped lines.
#[test]
fn transcripts_on_stdin_and_compressed_read_like_plain_ones() {
    let name = fixture("tool_call_2.1.100");
    let plain = std::fs::read(root().join(&name)).unwrap();
    let expected = run(&["steps", "--format", "json", &name]);
    assert_eq!(code(&expected), 0);
    let expected = String::from_utf8(expected.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let compressed =
        ruzstd::encoding::compress_to_vec(&plain[..], ruzstd::encoding::CompressionLevel::Fastest);
    let zst = dir.path().join("transcript.jsonl.zst");
    std::fs::write(&zst, &compressed).unwrap();
    let zst = zst.to_str().unwrap();
    let from_file = run(&["steps", "--format", "json", zst]);
    assert_eq!(
        code(&from_file),
        0,
        "{}",
        String::from_utf8_lossy(&from_file.stderr)
    );
    assert_eq!(
        String::from_utf8(from_file.stdout)
            .unwrap()
            .replace(zst, &name),
        expected,
        "compressed"
    );
    for bytes in [plain, compressed] {
        let mut child = crate::support::promptc()
            .args(["steps", "--format", "json", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(&bytes).unwrap();
        });
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap();
        assert_eq!(
            code(&output),
            0,
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            output.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            String::from_utf8(output.stdout)
                .unwrap()
                .replace("\"-\"", &format!("{name:?}")),
            expected,
            "stdin"
        );
    }
}

/// `compile --json` lists the request's message blocks as its input items, as for a rollout:
/// one per block of the body's messages, in order, the last one's chain the fingerprint's input.
#[test]
fn compile_lists_the_message_blocks_as_input_items() {
    for name in [
        "tool_call_2.1.100",
        "claude_md_edit_2.1.100",
        "parallel_calls_1.0.30",
    ] {
        let compiled = json(&["compile", "--json", &fixture(name)]);
        let items = compiled["input_items"].as_array().unwrap();
        let blocks: usize = compiled["request"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_array().map_or(1, Vec::len))
            .sum();
        assert_eq!(items.len(), blocks, "{name}");
        assert_eq!(compiled["fingerprint"]["input_items"], blocks, "{name}");
        assert_eq!(
            items.last().unwrap()["chain"],
            compiled["fingerprint"]["input"],
            "{name}"
        );
        for (k, item) in items.iter().enumerate() {
            assert_eq!(
                (item["index"].as_u64(), item["origin"].as_str()),
                (Some(k as u64), Some("raw")),
                "{name}"
            );
        }
        let hashes: std::collections::HashSet<&str> =
            items.iter().map(|i| i["hash"].as_str().unwrap()).collect();
        assert_eq!(hashes.len(), items.len(), "{name}: each block its own hash");
    }
}

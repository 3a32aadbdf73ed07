//! A Claude Code home's sessions and billed requests, on the recorded conformance homes (held
//! against the mock's own log of what it billed) and on the real samples (held against a plain
//! loop over their lines).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::home::{FileRole, Home, HomeBuilder, file_role};
use super::usage::{Purpose, Totals};
use crate::providers::anthropic::prices::{AnthropicPrices, Priced, Tokens};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude");
    let mut out = Vec::new();
    for version in std::fs::read_dir(&root).expect("recorded cases").flatten() {
        for case in std::fs::read_dir(version.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if case.path().join("case.json").is_file() {
                out.push(case.path());
            }
        }
    }
    out.sort();
    assert!(
        out.len() >= 50,
        "the recorded Claude Code cases are present"
    );
    out
}

/// Every `.jsonl` under `dir`, by path relative to it (`/`-separated), sorted.
fn jsonl_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let rel = p.strip_prefix(dir).expect("under dir");
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, std::fs::read(&p).expect("readable")));
            }
        }
    }
    out.sort();
    out
}

fn build(files: &[(String, Vec<u8>)], verdicts: bool) -> Home {
    let mut b = HomeBuilder::new(verdicts);
    for (path, bytes) in files {
        b.add_bytes(path, bytes).expect("transcript loads");
    }
    b.finish()
}

fn case_home(case: &Path) -> (Value, Vec<(String, Vec<u8>)>) {
    let meta: Value =
        serde_json::from_slice(&std::fs::read(case.join("case.json")).expect("case.json"))
            .expect("case.json is JSON");
    let files = jsonl_under(&case.join("home/.claude/projects"));
    (meta, files)
}

fn mock_rows(case: &Path) -> Vec<Value> {
    std::fs::read_to_string(case.join("requests.jsonl"))
        .expect("requests.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a request row"))
        .collect()
}

fn usage_tokens(u: &Value) -> Tokens {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let written = n(&u["cache_creation_input_tokens"]);
    let h1 = n(&u["cache_creation"]["ephemeral_1h_input_tokens"]).min(written);
    Tokens {
        input: n(&u["input_tokens"]),
        cache_write_5m: written - h1,
        cache_write_1h: h1,
        cache_read: n(&u["cache_read_input_tokens"]),
        output: n(&u["output_tokens"]),
    }
}

#[test]
fn file_roles_follow_the_layout_of_each_build() {
    assert_eq!(
        file_role("-tmp-w/0b1c.jsonl"),
        Some(FileRole::Main {
            project: "-tmp-w".into(),
            session: "0b1c".into()
        })
    );
    assert_eq!(
        file_role("-tmp-w/agent-a73abf5.jsonl"),
        Some(FileRole::SiblingAgent {
            project: "-tmp-w".into(),
            agent: "a73abf5".into()
        })
    );
    assert_eq!(
        file_role("-tmp-w\\0b1c\\subagents\\agent-aff8.jsonl"),
        Some(FileRole::NestedAgent {
            project: "-tmp-w".into(),
            session: "0b1c".into(),
            agent: "aff8".into()
        })
    );
    assert_eq!(
        file_role("-tmp-w/0b1c/subagents/workflows/wf_1/agent-b2.jsonl")
            .map(|r| r.project().to_string()),
        Some("-tmp-w".into())
    );
    assert_eq!(file_role("0b1c.jsonl"), None, "a file outside a project");
    assert_eq!(file_role("-tmp-w/0b1c/notes.jsonl"), None);
    assert_eq!(file_role("-tmp-w/0b1c.json"), None);
}

/// Each recorded home: one session per run's session id, every subagent file in its session,
/// and the requests the transcripts can account for equal to what the mock billed.
#[test]
fn recorded_homes_count_what_the_mock_billed() {
    for case in cases() {
        let name = case.display().to_string();
        let (meta, files) = case_home(&case);
        let home = build(&files, false);
        assert!(home.ignored.is_empty(), "{name}: {:?}", home.ignored);

        // Sessions: exactly the runs' sessions (no subagent file makes one of its own).
        let runs: BTreeSet<String> = meta["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .filter_map(|r| r["session_id"].as_str().map(str::to_string))
            .collect();
        let ids: BTreeSet<String> = home.sessions.iter().map(|s| s.id.clone()).collect();
        assert!(ids.is_superset(&runs), "{name}: sessions {ids:?}");
        // 2.0.x: the warmups of a start whose session file stayed empty are that session's.
        for s in home.sessions.iter().filter(|s| !runs.contains(&s.id)) {
            assert_eq!(meta["version"], "2.0.77", "{name}: {s:?}");
            assert_eq!(
                s.conversation_requests + s.subagent_requests,
                0,
                "{name}: {s:?}"
            );
            assert!(s.side_requests > 0, "{name}: {s:?}");
        }
        let placed: usize = home.sessions.iter().map(|s| s.files.len()).sum();
        assert_eq!(
            placed + home.empty.len(),
            files.len(),
            "{name}: every file in one session"
        );
        for s in &home.sessions {
            assert_eq!(s.cwd.as_deref(), meta["paths"]["cwd"].as_str(), "{name}");
            assert!(
                s.versions
                    .contains(meta["version"].as_str().expect("version"))
            );
        }

        // Billed: conversation and subagent rows are in the transcripts, 2.0.x warmups too (as
        // side requests); Haiku side requests and compactions are in no line.
        let rows = mock_rows(&case);
        let expect = |kinds: &[&str]| -> BTreeMap<String, Tokens> {
            rows.iter()
                .filter(|r| kinds.contains(&r["kind"].as_str().unwrap_or("")))
                .map(|r| {
                    (
                        r["message_id"].as_str().expect("id").to_string(),
                        usage_tokens(&r["usage"]),
                    )
                })
                .collect()
        };
        let counted = |purposes: &[Purpose]| -> BTreeMap<String, Tokens> {
            home.requests
                .iter()
                .filter(|r| purposes.contains(&r.request.purpose))
                .filter(|r| r.request.model.as_deref() != Some("<synthetic>"))
                .map(|r| {
                    (
                        r.request.message_id.clone().expect("an id"),
                        r.request.tokens,
                    )
                })
                .collect()
        };
        let in_conversation = counted(&[Purpose::Conversation, Purpose::Subagent]);
        assert_eq!(
            in_conversation,
            expect(&["conversation", "subagent"]),
            "{name}: conversation and subagent requests"
        );
        let n = home
            .requests
            .iter()
            .filter(|r| r.request.purpose != Purpose::Side)
            .count();
        let synthetic = home
            .requests
            .iter()
            .filter(|r| r.request.model.as_deref() == Some("<synthetic>"))
            .count();
        assert_eq!(n, in_conversation.len() + synthetic, "{name}: each once");
        assert_eq!(
            counted(&[Purpose::Side]),
            expect(&["warmup"]),
            "{name}: warmups"
        );
        let subagents: usize = home.sessions.iter().map(|s| s.subagent_requests).sum();
        assert_eq!(subagents, expect(&["subagent"]).len(), "{name}: subagents");

        // A compaction's request is recorded by its boundary (1.0.10x+), its usage nowhere.
        let made = rows.iter().filter(|r| r["kind"] == "compaction").count();
        let recorded: usize = home.sessions.iter().map(|s| s.compactions).sum();
        if meta["version"] == "1.0.30" {
            assert_eq!(recorded, 0, "{name}: 1.0.30 writes no boundary");
        } else {
            assert_eq!(recorded, made, "{name}: compactions");
        }
    }
}

#[test]
fn a_resume_that_copies_the_old_lines_counts_them_once_and_links_the_sessions() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude/1.0.30/resume");
    let (meta, files) = case_home(&case);
    let home = build(&files, false);
    let first = meta["runs"][0]["session_id"].as_str().expect("first run");
    let second = meta["runs"][1]["session_id"].as_str().expect("second run");
    let s = home.find(second);
    assert_eq!(s.len(), 1);
    assert_eq!(
        s[0].copied_from,
        BTreeSet::from([first.to_string()]),
        "the resumed session names the one it copied"
    );
    assert!(home.copies > 0, "the copy holds the first run's responses");
    // Each run's own requests count in its session (the mock: 2 conversation requests each).
    for id in [first, second] {
        assert_eq!(home.find(id)[0].conversation_requests, 2, "{id}");
    }
    assert_eq!(home.latest().map(|s| s.id.as_str()), Some(second));
    assert_eq!(home.find(&first[..6]).len(), 1, "a unique prefix finds it");
}

/// The real samples as a home: `projects/<slug>/...` as SOURCES.md says each file lay.
fn sample_home() -> Option<Vec<(String, Vec<u8>)>> {
    let samples = crate::test_support::claude_sample_bytes();
    if samples.is_empty() {
        return None;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/claude-code-samples");
    let sources = std::fs::read_to_string(dir.join("SOURCES.md")).expect("SOURCES.md");
    let mut place: HashMap<&str, String> = HashMap::new();
    for row in sources.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if let (Some(file), Some(path)) = (cells.get(1), cells.get(3))
            && let Some((_, rel)) = path.rsplit_once("projects/")
        {
            place.insert(file, rel.to_string());
        }
    }
    Some(
        samples
            .into_iter()
            .map(|(name, bytes)| {
                // A fixture outside any home: a project of its own, named after its repository.
                let rel = place.get(name.as_str()).cloned().unwrap_or_else(|| {
                    let (repo, file) = name.rsplit_once("__").expect("OWNER__REPO__file");
                    format!("{repo}/{file}")
                });
                (rel, bytes)
            })
            .collect(),
    )
}

/// The plain loop: every assistant line of every file as JSON, one response per `message.id`
/// (+ `requestId`, in one file) with each count at its largest over its lines; a prompt between two lines of one id makes a new
/// response (reused ids); a line whose `uuid` came before is a copy; in a file or across files,
/// the same id and usage is one response (a copy under new uuids).
fn plain_totals(files: &[(String, Vec<u8>)]) -> (usize, Tokens) {
    // (first timestamp, not a main file, path, responses): the order files are counted in.
    type File = (Option<String>, bool, String, Vec<(String, Tokens)>);
    let mut per_file: Vec<File> = Vec::new();
    for (path, bytes) in files {
        let mut seen_uuid = BTreeSet::new();
        let mut order: Vec<(String, usize)> = Vec::new();
        let mut listed = BTreeSet::new();
        let mut usage: HashMap<(String, usize), Tokens> = HashMap::new();
        let mut open: HashMap<String, (usize, usize)> = HashMap::new();
        let mut prompts = 0usize;
        let mut first_ts = None;
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if let Some(u) = v["uuid"].as_str()
                && !seen_uuid.insert(u.to_string())
            {
                continue;
            }
            if first_ts.is_none() && v["type"] != "summary" {
                first_ts = v["timestamp"].as_str().map(str::to_string);
            }
            let m = &v["message"];
            match v["type"].as_str() {
                Some("user") => {
                    let results = m["content"]
                        .as_array()
                        .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
                    if !results {
                        prompts += 1;
                    }
                }
                Some("assistant") if m["model"] != "<synthetic>" => {
                    let Some(id) = m["id"].as_str() else { continue };
                    let thread = format!(
                        "{}/{}",
                        v["isSidechain"].as_bool().unwrap_or(false),
                        v["agentId"].as_str().unwrap_or("")
                    );
                    let id = format!("{thread} {id} {}", v["requestId"].as_str().unwrap_or(""));
                    let n = match open.get(&id) {
                        Some(&(n, p)) if p == prompts => n,
                        Some(&(n, _)) => n + 1,
                        None => 0,
                    };
                    open.insert(id.clone(), (n, prompts));
                    if listed.insert((id.clone(), n)) {
                        order.push((id.clone(), n));
                    }
                    if m["usage"].is_object() {
                        let line = usage_tokens(&m["usage"]);
                        let t = usage.entry((id, n)).or_default();
                        t.input = t.input.max(line.input);
                        t.cache_write_5m = t.cache_write_5m.max(line.cache_write_5m);
                        t.cache_write_1h = t.cache_write_1h.max(line.cache_write_1h);
                        t.cache_read = t.cache_read.max(line.cache_read);
                        t.output = t.output.max(line.output);
                    }
                }
                _ => {}
            }
        }
        let responses = order
            .into_iter()
            .filter_map(|k| {
                let t = *usage.get(&k)?;
                let (key, _) = k;
                // Across files the id alone: 1.0.x copies drop the `requestId`.
                let id = key.split(' ').nth(1).expect("thread, id, request id");
                Some((id.to_string(), t))
            })
            .collect();
        let main = matches!(file_role(path), Some(FileRole::Main { .. }));
        per_file.push((first_ts, !main, path.clone(), responses));
    }
    per_file
        .sort_by(|a, b| (a.0.is_none(), &a.0, a.1, &a.2).cmp(&(b.0.is_none(), &b.0, b.1, &b.2)));
    // A copy repeats the id and the input counts; its output may be the final count where the
    // original's lines stopped at a partial one.
    // In a file, a response and its copies count the largest output any holds.
    let input = |t: &Tokens| [t.input, t.cache_write_5m, t.cache_write_1h, t.cache_read];
    let mut counted: BTreeSet<(String, [u64; 4])> = BTreeSet::new();
    let (mut n, mut total) = (0, Tokens::default());
    for (_, _, _, responses) in per_file {
        let mut output: BTreeMap<(String, [u64; 4]), u64> = BTreeMap::new();
        for (id, t) in &responses {
            let o = output.entry((id.clone(), input(t))).or_default();
            *o = (*o).max(t.output);
        }
        for (id, mut t) in responses {
            t.output = output[&(id.clone(), input(&t))];
            if counted.insert((id, input(&t))) {
                n += 1;
                total.add(&t);
            }
        }
    }
    (n, total)
}

fn home_totals(home: &Home) -> (usize, Tokens) {
    let mut total = Tokens::default();
    let mut n = 0;
    for r in &home.requests {
        if r.request.model.as_deref() == Some("<synthetic>") {
            continue;
        }
        n += 1;
        total.add(&r.request.tokens);
    }
    (n, total)
}

#[test]
fn totals_equal_a_plain_loop_over_the_files() {
    for case in cases() {
        let (_, files) = case_home(&case);
        assert_eq!(
            home_totals(&build(&files, false)),
            plain_totals(&files),
            "{}",
            case.display()
        );
    }
    let Some(files) = sample_home() else { return };
    let home = build(&files, false);
    assert_eq!(home_totals(&home), plain_totals(&files), "the real samples");
    assert!(home.ignored.is_empty(), "{:?}", home.ignored);
}

#[test]
fn sample_sessions_keep_their_subagent_files() {
    let Some(files) = sample_home() else { return };
    let home = build(&files, false);
    // 2.1.7's subagent file lay under its session's folder.
    let s = home.find("04872614");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].files.len(), 2, "{:?}", s[0].files);
    assert!(s[0].subagent_requests > 0);
    // happy-cli's resume fixtures share uuids: the second copies the first's response.
    let resumed = home
        .sessions
        .iter()
        .find(|s| {
            s.files
                .iter()
                .any(|f| f.ends_with("1-continue-run-ls-tool.jsonl"))
        })
        .expect("the resumed fixture");
    assert_eq!(resumed.copied_from.len(), 1, "{resumed:?}");
    // Newest first.
    let last: Vec<_> = home
        .sessions
        .iter()
        .map(|s| s.last_timestamp.clone())
        .collect();
    let mut sorted = last.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(last, sorted);
}

fn models_seen() -> BTreeSet<String> {
    let mut models = BTreeSet::new();
    for case in cases() {
        for row in mock_rows(&case) {
            if let Some(m) = row["body"]["model"].as_str() {
                models.insert(m.to_string());
            }
        }
    }
    for (_, bytes) in crate::test_support::claude_sample_bytes() {
        for line in bytes.split(|&b| b == b'\n') {
            if let Ok(v) = serde_json::from_slice::<Value>(line)
                && let Some(m) = v["message"]["model"].as_str()
            {
                models.insert(m.to_string());
            }
        }
    }
    models
}

#[test]
fn every_model_seen_is_priced_or_named_unpriced() {
    let prices = AnthropicPrices::builtin();
    let unknown: Vec<String> = models_seen()
        .into_iter()
        .filter(|m| prices.price(m, None) == Priced::Unknown)
        .collect();
    assert!(unknown.is_empty(), "no price and no reason: {unknown:?}");
    for (model, p) in &prices.models {
        assert!(
            p.source.starts_with("http") || p.source.starts_with("weaker: http"),
            "{model}"
        );
        // Anthropic's multipliers: 5-minute writes 1.25x input, 1-hour writes 2x.
        assert!((p.cache_write_5m - 1.25 * p.input).abs() < 1e-9, "{model}");
        assert!((p.cache_write_1h - 2.0 * p.input).abs() < 1e-9, "{model}");
        assert!(p.cache_read <= 0.1 * p.input + 1e-9, "{model}");
    }
}

#[test]
fn a_request_costs_its_tokens_at_its_models_price() {
    let prices = AnthropicPrices::builtin();
    let t = Tokens {
        input: 1_000,
        cache_write_5m: 10_000,
        cache_write_1h: 20_000,
        cache_read: 100_000,
        output: 2_000,
    };
    // Sonnet 4 by hand: 1000*3 + 10000*3.75 + 20000*6 + 100000*0.3 + 2000*15, per million.
    let by_hand = (3_000.0 + 37_500.0 + 120_000.0 + 30_000.0 + 30_000.0) / 1e6;
    let cost = prices
        .cost("claude-sonnet-4-20250514", None, &t)
        .expect("priced");
    assert!((cost - by_hand).abs() < 1e-12, "{cost}");
    // Over 200K prompt tokens Sonnet 4 is on its long-context tier: twice the input prices.
    let long = Tokens {
        cache_read: 300_000,
        ..t
    };
    let by_hand = (6_000.0 + 75_000.0 + 240_000.0 + 180_000.0 + 45_000.0) / 1e6;
    let cost = prices.cost("claude-sonnet-4", None, &long).expect("priced");
    assert!((cost - by_hand).abs() < 1e-12, "{cost}");
    // Sonnet 4.6 has no such tier.
    let flat = prices
        .cost("claude-sonnet-4-6", None, &long)
        .expect("priced");
    assert!((flat - (3_000.0 + 37_500.0 + 120_000.0 + 90_000.0 + 30_000.0) / 1e6).abs() < 1e-12);
    // A price in force from a day: the earlier one before it.
    let read = |day| match prices.price("claude-sonnet-5-5", Some(day)) {
        Priced::Price(p) => p.cache_read,
        other => panic!("{other:?}"),
    };
    assert_eq!(read("2026-10-06"), 0.2);
    assert_eq!(read("2026-10-07"), 0.1);
    // A backend's model is named unpriced, an unknown model is unknown: neither is guessed.
    assert!(matches!(prices.price("glm-4.7", None), Priced::Unpriced(_)));
    assert_eq!(prices.price("claude-opus-9", None), Priced::Unknown);
    let mut totals = Totals::default();
    let home = build(&case_home(&cases()[0]).1, false);
    for r in &home.requests {
        totals.add(&r.request, &prices);
    }
    assert_eq!(totals.requests, home.requests.len());
}

/// With verdicts, every counted request of a recorded home gets the verdict `steps` gives it:
/// the stages' analysis of the file's session.
#[test]
fn verdicts_are_those_of_steps() {
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/claude/2.1.332/resume");
    let (_, files) = case_home(&case);
    let home = build(&files, true);
    for (path, bytes) in &files {
        let session = super::session::Session::load(path, bytes).expect("loads");
        let plan = super::session::plan(
            &session,
            super::wire::Given::default(),
            crate::core::parallel::Threads::default(),
        );
        let theirs: Vec<_> = crate::cache::analyze(&session, &plan)
            .into_iter()
            .filter(|row| session.claude_steps[row.step].kind == super::RequestKind::Sampling)
            .map(|row| Some(row.verdict))
            .collect();
        let mine: Vec<_> = home
            .requests
            .iter()
            .filter(|r| &*r.file == path.as_str())
            .map(|r| r.request.verdict.clone())
            .collect();
        assert_eq!(mine, theirs, "{path}");
        assert!(mine.iter().all(Option::is_some));
    }
}

/// A response of a backend behind `ANTHROPIC_BASE_URL` (no `requestId`): a first line of zero
/// usage, or a last line with a placeholder input after a first line with the real prompt,
/// counts each field at its largest over the lines, once.
#[test]
fn a_proxys_streamed_response_counts_its_largest_counts_once() {
    let line = |id: &str, uuid: &str, parent: &str, input: u64, output: u64| {
        format!(
            r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":"{parent}","sessionId":"s1","timestamp":"2026-06-29T10:00:00.000Z","cwd":"/w","version":"2.1.140","message":{{"id":"{id}","role":"assistant","model":"qwen3:8b","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":{input},"output_tokens":{output}}}}}}}"#
        )
    };
    let prompt = r#"{"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s1","timestamp":"2026-06-29T10:00:00.000Z","cwd":"/w","version":"2.1.140","message":{"role":"user","content":"hi"}}"#;
    let text = [
        prompt.to_string(),
        line("m1", "a1", "u0", 0, 0),
        line("m1", "a2", "a1", 1200, 40),
        line("m2", "a3", "a2", 29121, 0),
        line("m2", "a4", "a3", 2050, 420),
    ]
    .join("\n");
    let files = vec![("-w/s1.jsonl".to_string(), text.into_bytes())];
    let home = build(&files, false);
    let got: Vec<(u64, u64)> = home
        .requests
        .iter()
        .map(|r| (r.request.tokens.input, r.request.tokens.output))
        .collect();
    assert_eq!(got, vec![(1200, 40), (29121, 420)]);
    assert_eq!(home_totals(&home), plain_totals(&files));
    let prices = AnthropicPrices::builtin();
    let mut t = Totals::default();
    for r in &home.requests {
        t.add(&r.request, &prices);
    }
    assert_eq!(
        (t.unpriced_requests, t.cost),
        (2, 0.0),
        "a local model is not priced"
    );

    // 2.0.31 (LilLeapo 907c37e4) rewrote earlier lines into the same file under new uuids: the
    // same id and usage again is a copy; the same id with new usage after a prompt is a backend
    // reusing ids (`msg_<time to the second>`), a response of its own.
    let again = prompt.replace("\"u0\"", "\"u9\"");
    let text = [
        prompt.to_string(),
        line("m1", "a1", "u0", 1200, 40),
        again.clone(),
        line("m1", "b1", "u9", 1200, 40),
        again.replace("\"u9\"", "\"u8\""),
        line("m1", "c1", "u8", 1500, 60),
    ]
    .join("\n");
    let files = vec![("-w/s1.jsonl".to_string(), text.into_bytes())];
    let home = build(&files, false);
    let got: Vec<(u64, u64)> = home
        .requests
        .iter()
        .map(|r| (r.request.tokens.input, r.request.tokens.output))
        .collect();
    assert_eq!(got, vec![(1200, 40), (1500, 60)]);
    assert_eq!(home.copies, 1);
    assert_eq!(home_totals(&home), plain_totals(&files));
}

/// A resume's copy that kept the old lines' timestamps (and sorts first by name): the original
/// session keeps its request, the copy's session names it.
#[test]
fn a_copy_with_the_old_timestamps_leaves_the_request_to_the_original() {
    let user = |uuid: &str, session: &str, ts: &str| {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"sessionId":"{session}","timestamp":"{ts}","cwd":"/w","version":"1.0.30","message":{{"role":"user","content":"hi"}}}}"#
        )
    };
    let answer = |uuid: &str, parent: &str, session: &str, id: &str, ts: &str| {
        format!(
            r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":"{parent}","sessionId":"{session}","timestamp":"{ts}","cwd":"/w","version":"1.0.30","message":{{"id":"{id}","role":"assistant","model":"claude-sonnet-4-20250514","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":7}}}}}}"#
        )
    };
    let (t0, t1, t2) = (
        "2025-07-01T10:00:00.000Z",
        "2025-07-01T10:00:05.000Z",
        "2025-07-01T11:00:00.000Z",
    );
    let original = [
        user("u1", "bbbb", t0),
        answer("a1", "u1", "bbbb", "msg_1", t1),
    ]
    .join("\n");
    let copy = [
        user("u1", "aaaa", t0),
        answer("a1", "u1", "aaaa", "msg_1", t1),
        user("u2", "aaaa", t2),
        answer("a2", "u2", "aaaa", "msg_2", t2),
    ]
    .join("\n");
    let files = vec![
        ("-w/aaaa.jsonl".to_string(), copy.into_bytes()),
        ("-w/bbbb.jsonl".to_string(), original.into_bytes()),
    ];
    let home = build(&files, false);
    let by_id = |id: &str| home.find(id)[0].clone();
    assert_eq!(by_id("bbbb").conversation_requests, 1);
    assert_eq!(by_id("aaaa").conversation_requests, 1);
    assert_eq!(
        by_id("aaaa").copied_from,
        BTreeSet::from(["bbbb".to_string()])
    );
    assert_eq!(home.copies, 1);
    assert_eq!(home_totals(&home), plain_totals(&files));
}

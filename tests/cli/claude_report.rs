//! `promptc report` over Claude Code homes: the totals held to what the mock billed in every
//! recorded case and to a plain loop over the real samples' lines, the dollars to Anthropic's
//! list prices of that usage, the losses to `steps`' verdicts, and the page in a browser.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::claude_home::{cases, home_of, mock_rows, run_with, sample_home};
use crate::support::{code, root, stdout_json};

fn report(env: &[(&str, &Path)], args: &[&str]) -> Value {
    let mut all = vec!["report", "--timezone", "UTC", "--format", "json"];
    all.extend_from_slice(args);
    let output = run_with(env, &all);
    assert_eq!(
        code(&output),
        0,
        "{all:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&all, &output)
}

/// Requests and Anthropic's five counts: uncached input, 5-minute and 1-hour writes, reads,
/// output.
type Counts = [u64; 6];

fn counts(group: &Value) -> Counts {
    let get = |k: &str| {
        group[k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k} in {group}"))
    };
    [
        get("requests"),
        get("unwritten_input_tokens"),
        get("cache_write_5m_input_tokens"),
        get("cache_write_1h_input_tokens"),
        get("cached_input_tokens"),
        get("output_tokens"),
    ]
}

/// A response's usage as Anthropic reports it: uncached, 5-minute and 1-hour writes, reads,
/// output (a write without its split is a 5-minute one, the default TTL).
fn usage_counts(u: &Value) -> [u64; 5] {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let written = n(&u["cache_creation_input_tokens"]);
    let h1 = n(&u["cache_creation"]["ephemeral_1h_input_tokens"]).min(written);
    [
        n(&u["input_tokens"]),
        written - h1,
        h1,
        n(&u["cache_read_input_tokens"]),
        n(&u["output_tokens"]),
    ]
}

fn add(sum: &mut Counts, usage: [u64; 5]) {
    sum[0] += 1;
    for i in 0..5 {
        sum[i + 1] += usage[i];
    }
}

/// The mock's rows a transcript records: the conversation's, its subagents' and 2.0.77's
/// warmups (1.x's Haiku side requests and the compactions are in no line).
fn billed(case: &Path) -> Vec<Value> {
    mock_rows(case)
        .into_iter()
        .filter(|r| ["conversation", "subagent", "warmup"].contains(&r["kind"].as_str().unwrap()))
        .collect()
}

/// USD per million tokens of Anthropic's list (src/providers/anthropic/prices.json), read here as
/// its README says: the model by its id, else without a `-YYYYMMDD` date; the price of the
/// day; the long-context tier when the whole prompt is over its limit.
struct Prices(Value);

impl Prices {
    fn load() -> Prices {
        Prices(
            serde_json::from_str(
                &std::fs::read_to_string(root().join("src/providers/anthropic/prices.json"))
                    .unwrap(),
            )
            .unwrap(),
        )
    }

    /// `None`: not priced.
    fn cost(&self, model: &str, day: &str, usage: [u64; 5]) -> Option<f64> {
        let models = self.0["models"].as_object().unwrap();
        let bare = match model.rsplit_once('-') {
            Some((stem, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => {
                stem
            }
            _ => model,
        };
        let mut price = models.get(model).or_else(|| models.get(bare))?;
        if price["from"].as_str().is_some_and(|from| day < from) {
            price = price["history"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|h| h["from"].as_str().is_none_or(|f| f <= day))
                .max_by_key(|h| h["from"].as_str().map(str::to_string))
                .unwrap();
        }
        let prompt: u64 = usage[..4].iter().sum();
        let tier = &price["long_context"];
        if tier["above_prompt_tokens"]
            .as_u64()
            .is_some_and(|above| prompt > above)
        {
            price = tier;
        }
        let rates = [
            "input",
            "cache_write_5m",
            "cache_write_1h",
            "cache_read",
            "output",
        ]
        .map(|k| price[k].as_f64().unwrap());
        Some((0..5).map(|i| usage[i] as f64 * rates[i]).sum::<f64>() / 1e6)
    }
}

/// Every recorded case: the report's requests and counts are exactly what the mock billed
/// for the requests the transcripts record, its side requests the warmups, its dollars those
/// counts at Anthropic's list prices; the compactions are named, not counted.
#[test]
fn totals_and_dollars_are_what_the_mock_billed_in_every_recorded_case() {
    if !crate::claude_home::recorded() {
        return;
    }
    let prices = Prices::load();
    for case in cases() {
        let name = case.display().to_string();
        let home = home_of(&case);
        let got = report(
            &[],
            &["--agent", "claude", "--claude-home", home.to_str().unwrap()],
        );
        let rows = billed(&case);
        let (mut want, mut side) = ([0; 6], [0; 6]);
        let mut cost = 0.0;
        for r in &rows {
            let usage = usage_counts(&r["usage"]);
            add(&mut want, usage);
            if r["kind"] == "warmup" {
                add(&mut side, usage);
            }
            let model = r["body"]["model"].as_str().unwrap();
            cost += prices
                .cost(model, "2026-12-03", usage)
                .unwrap_or_else(|| panic!("{name}: {model} priced"));
        }
        assert_eq!(counts(&got["total"]), want, "{name}");
        assert_eq!(counts(&got["side_requests"]), side, "{name}: side requests");
        let paid = got["total"]["cost_usd"].as_f64().unwrap();
        assert!((paid - cost).abs() < 1e-6, "{name}: ${paid} vs ${cost}");
        assert_eq!(got["total"]["unpriced_requests"], 0, "{name}");
        let claude = &got["notes"]["claude"];
        assert_eq!(claude["requests"].as_u64().unwrap(), want[0], "{name}");
        let compactions = mock_rows(&case)
            .iter()
            .filter(|r| r["kind"] == "compaction")
            .count();
        if case.parent().unwrap().ends_with("1.0.30") {
            assert_eq!(
                claude["compactions"], 0,
                "{name}: 1.0.30 writes no boundary"
            );
        } else {
            assert_eq!(claude["compactions"], compactions, "{name}");
        }
        assert_eq!(got["agents"], serde_json::json!(["claude"]), "{name}");
        assert!(
            claude["counting"]
                .as_str()
                .unwrap()
                .contains("one request per response"),
            "{name}"
        );
    }
}

/// The plain loop: every assistant line of every file as JSON; one response per `message.id`
/// (with `requestId` and the thread, in a file), each count at its largest over its lines; a new
/// prompt between two lines of one id starts a new response; a line whose `uuid` came before
/// in its file is a copy; across files (in order of their first time, main files first), the
/// same id and usage is one response. By session and by UTC day.
fn plain_loop(projects: &Path) -> (BTreeMap<String, Counts>, BTreeMap<String, Counts>) {
    type Response = (String, [u64; 5], String);
    // First time, not a main file, path, session, responses (id, usage, day).
    type File = (Option<String>, bool, String, String, Vec<Response>);
    let mut files: Vec<File> = Vec::new();
    for path in walk(projects) {
        let rel: Vec<String> = path
            .strip_prefix(projects)
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let stem = rel.last().unwrap().trim_end_matches(".jsonl").to_string();
        let main = rel.len() == 2 && !stem.starts_with("agent-");
        let session = if main && stem.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
            stem
        } else if main {
            // A file not named by a session id (transcript tools' fixtures): by its path.
            path.display().to_string()
        } else if rel.len() > 2 {
            rel[1].clone()
        } else {
            match lines.iter().find_map(|v| v["sessionId"].as_str()) {
                Some(id) => id.to_string(),
                None => continue,
            }
        };
        let mut seen = std::collections::HashSet::new();
        let mut prompts = 0;
        let mut open: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        let mut order: Vec<(String, usize)> = Vec::new();
        let mut usage: BTreeMap<(String, usize), ([u64; 5], String)> = BTreeMap::new();
        let mut first = None;
        for v in &lines {
            if let Some(u) = v["uuid"].as_str()
                && !seen.insert(u.to_string())
            {
                continue;
            }
            if first.is_none() && v["type"] != "summary" {
                first = v["timestamp"].as_str().map(str::to_string);
            }
            let m = &v["message"];
            match v["type"].as_str() {
                Some("user") => {
                    let results = m["content"]
                        .as_array()
                        .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
                    prompts += usize::from(!results);
                }
                Some("assistant") if m["model"] != "<synthetic>" => {
                    let Some(id) = m["id"].as_str() else { continue };
                    let key = format!(
                        "{}/{} {id} {}",
                        v["isSidechain"].as_bool().unwrap_or(false),
                        v["agentId"].as_str().unwrap_or(""),
                        v["requestId"].as_str().unwrap_or("")
                    );
                    let n = match open.get(&key) {
                        Some(&(n, p)) if p == prompts => n,
                        Some(&(n, _)) => n + 1,
                        None => 0,
                    };
                    open.insert(key.clone(), (n, prompts));
                    if !order.contains(&(key.clone(), n)) {
                        order.push((key.clone(), n));
                    }
                    if m["usage"].is_object() {
                        let line = usage_counts(&m["usage"]);
                        let day = v["timestamp"].as_str().unwrap_or("")[..10].to_string();
                        let entry = usage.entry((key, n)).or_insert(([0; 5], day));
                        for (count, on_line) in entry.0.iter_mut().zip(line) {
                            *count = (*count).max(on_line);
                        }
                    }
                }
                _ => {}
            }
        }
        let responses = order
            .into_iter()
            .filter_map(|k| {
                let (counts, day) = usage.get(&k)?.clone();
                let id = k.0.split(' ').nth(1).unwrap().to_string();
                Some((id, counts, day))
            })
            .collect();
        files.push((first, !main, rel.join("/"), session, responses));
    }
    files.sort_by(|a, b| (a.0.is_none(), &a.0, a.1, &a.2).cmp(&(b.0.is_none(), &b.0, b.1, &b.2)));
    let mut counted = std::collections::HashSet::new();
    let (mut by_session, mut by_day) = (BTreeMap::new(), BTreeMap::new());
    for (_, _, _, session, responses) in files {
        // A copy repeats the id and the input counts (`usage_counts`' first four); its output
        // may be the final count where the original's lines stopped at a partial one: in a
        // file, a response and its copies count the largest output any holds.
        let input = |u: &[u64; 5]| -> [u64; 4] { u[..4].try_into().unwrap() };
        let mut output: BTreeMap<(String, [u64; 4]), u64> = BTreeMap::new();
        for (id, usage, _) in &responses {
            let o = output.entry((id.clone(), input(usage))).or_default();
            *o = (*o).max(usage[4]);
        }
        for (id, mut usage, day) in responses {
            usage[4] = output[&(id.clone(), input(&usage))];
            if counted.insert((id, input(&usage))) {
                add(by_session.entry(session.clone()).or_insert([0; 6]), usage);
                add(by_day.entry(day).or_insert([0; 6]), usage);
            }
        }
    }
    by_session.retain(|_, c: &mut Counts| c[0] > 0);
    (by_session, by_day)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn groups(report: &Value) -> BTreeMap<String, Counts> {
    report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["key"].as_str().unwrap().to_string(), counts(g)))
        .collect()
}

/// The totals per session and per day equal the plain loop's, on every recorded home and on
/// the real samples (other backends' lines without `requestId`, reused ids and zero-usage first
/// lines, 1.0.x resumes that copy the old lines, 2.0.x and 2.1.x subagent files).
#[test]
fn totals_per_session_and_day_equal_a_plain_loop_over_the_lines() {
    if !crate::claude_home::recorded() {
        return;
    }
    let mut homes: Vec<(String, PathBuf)> = cases()
        .iter()
        .map(|c| (c.display().to_string(), home_of(c)))
        .collect();
    let samples = sample_home();
    if let Some(home) = &samples {
        homes.push(("the real samples".into(), home.path().to_path_buf()));
    }
    for (name, home) in homes {
        let (by_session, by_day) = plain_loop(&home.join("projects"));
        let args = ["--agent", "claude", "--claude-home", home.to_str().unwrap()];
        let mut session_args = args.to_vec();
        session_args.extend(["--by", "session"]);
        assert_eq!(groups(&report(&[], &session_args)), by_session, "{name}");
        assert_eq!(groups(&report(&[], &args)), by_day, "{name}");
    }
}

/// The `claude_md_edit` fixture (2.1.100): what `report` says was lost, and why, is what
/// `steps` shows: its cause is the verdict of the request that read less than the one before
/// left in the cache (what it read and wrote), the tokens that difference; the cold start is
/// what the first request wrote. The miss is priced at what the lost tokens were written again
/// for, less the read price.
#[test]
fn losses_are_steps_verdicts() {
    let file = "fixtures/claude/claude_md_edit_2.1.100.jsonl";
    let steps = crate::support::json(&["steps", file, "--json"]);
    let rows = steps["steps"].as_array().unwrap();
    let got = report(&[], &[file]);
    let by_cause = got["total"]["by_cause"].as_object().unwrap();
    let mut expected: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut previous: Option<&Value> = None;
    let mut miss = 0.0;
    for row in rows {
        let usage = |k: &str| row["usage"][k].as_u64().unwrap();
        let verdict = row["verdict"].as_str().unwrap();
        // What the request before left cached (it read and wrote), less what this one read.
        let left = previous.map_or(0, |p| {
            p["usage"]["cache_read_input_tokens"].as_u64().unwrap()
                + p["usage"]["cache_creation_input_tokens"].as_u64().unwrap()
        });
        let lost = match verdict {
            "first_request" => usage("cache_creation_input_tokens"),
            "hit" => 0,
            _ => left.saturating_sub(usage("cache_read_input_tokens")),
        };
        if verdict != "first_request" {
            assert_eq!(row["lost_tokens"].as_u64().unwrap(), lost, "{row}");
        }
        let cause = if verdict == "first_request" {
            "cold_start"
        } else {
            verdict
        };
        if lost > 0 {
            let e = expected.entry(cause.to_string()).or_default();
            e.0 += 1;
            e.1 += lost;
            if cause != "cold_start" {
                // claude-sonnet-4-6: a 5-minute write $3.75, a read $0.30 per million.
                assert_eq!(row["model"], "claude-sonnet-4-6");
                assert_eq!(usage("cache_creation_1h_input_tokens"), 0);
                miss += lost as f64 * (3.75 - 0.30) / 1e6;
            }
        }
        previous = Some(row);
    }
    let got_causes: BTreeMap<String, (u64, u64)> = by_cause
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                (
                    v["requests"].as_u64().unwrap(),
                    v["tokens"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(got_causes, expected);
    // The README's `steps` of this file: the resumed run's first request read 16 970 of the
    // 24 121 tokens the run before left (24 056 read and 65 written).
    assert_eq!(expected["unrecorded_change"], (1, 24_121 - 16_970));
    assert_eq!(expected["cold_start"], (1, 24_056));
    let misses = got["total"]["miss_cost_usd"].as_f64().unwrap();
    assert!((misses - miss).abs() < 1e-6, "{misses} vs {miss}");
    assert_eq!(got["total"]["lost_input_tokens"], 24_121 - 16_970);
    let top = &got["top_sessions"][0];
    assert_eq!(top["agent"], "claude");
    assert_eq!(top["top_cause"], "unrecorded_change");
    // A file given outside a home is named by its path (its name is no session id).
    assert_eq!(top["command"], format!("promptc steps {file}"));
}

/// Over every recorded home, each request's cause in `--by cause` is the verdict `steps` gives
/// it in its file (every thread: the main one of each session file, each subagent's in its
/// own), hits and requests without a judgement under `none`.
#[test]
fn causes_by_request_are_the_verdicts_of_steps() {
    if !crate::claude_home::recorded() {
        return;
    }
    for case in cases() {
        let name = case.display().to_string();
        let home = home_of(&case);
        let got = report(
            &[],
            &[
                "--agent",
                "claude",
                "--claude-home",
                home.to_str().unwrap(),
                "--by",
                "cause",
            ],
        );
        let mut want: BTreeMap<String, u64> = BTreeMap::new();
        let files: Vec<PathBuf> = walk(&home.join("projects"))
            .into_iter()
            .filter(|f| std::fs::metadata(f).unwrap().len() > 0)
            .collect();
        for file in &files {
            let steps = crate::support::json(&["steps", file.to_str().unwrap(), "--json"]);
            for row in steps["steps"].as_array().unwrap() {
                if row["compaction"] == true {
                    continue;
                }
                let cause = match row["verdict"].as_str().unwrap() {
                    "hit" | "no_cache_fields" | "no_usage" | "earlier_file" | "copied"
                    | "no_breakpoint" => "none".to_string(),
                    // A first request writes what it sends, warm (some of it read) or not.
                    "first_request" | "warm_start" => "cold_start".to_string(),
                    "compaction_reset" => "compaction".to_string(),
                    "prefix_broken" | "prefix_broken_context" => {
                        let part = row["break_at"].as_str().unwrap_or("");
                        let group = ["tools", "system", "params"]
                            .into_iter()
                            .find(|g| part.starts_with(g))
                            .unwrap_or("history");
                        format!("prefix_broken:{group}")
                    }
                    v => v.to_string(),
                };
                *want.entry(cause).or_default() += 1;
            }
        }
        let got: BTreeMap<String, u64> = got["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["key"].as_str().unwrap().to_string(),
                    g["requests"].as_u64().unwrap(),
                )
            })
            .collect();
        // A 1.0.x resume's or fork's file copies the old lines: `steps` of each file judges
        // them again (2.1.x's copies it marks `copied`), the report counts each once, where it
        // was first written.
        let copies = report(
            &[],
            &["--agent", "claude", "--claude-home", home.to_str().unwrap()],
        )["notes"]["claude"]["copies"]
            .as_u64()
            .unwrap();
        let total = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
        if copies > 0 && got != want {
            assert_eq!(
                total(&got) + copies,
                total(&want),
                "{name}: {got:?} vs {want:?}"
            );
            continue;
        }
        // 1.0.x writes a subagent's lines in the main file (a sidechain), which `steps` does
        // not show: the report has them too.
        let inline = if case
            .parent()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("/1.0.30")
            || case
                .parent()
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with("/1.0.128")
        {
            mock_rows(&case)
                .iter()
                .filter(|r| r["kind"] == "subagent")
                .count() as u64
        } else {
            0
        };
        if inline > 0 {
            assert_eq!(total(&got), total(&want) + inline, "{name}");
            for (cause, n) in &want {
                assert!(got.get(cause).is_some_and(|g| g >= n), "{name}: {cause}");
            }
            continue;
        }
        assert_eq!(got, want, "{name}");
    }
}

/// Prices given with `--pricing` come before Anthropic's list, as they do for Codex's models:
/// writes at `cache_write` (else input), reads at `cached_input`.
#[test]
fn a_price_file_prices_claude_models_too() {
    if !crate::claude_home::recorded() {
        return;
    }
    let case = root().join("tests/conformance/claude/2.1.100/tool_call");
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"models":{"claude-sonnet-4-6":{"input":1,"cached_input":0.1,"output":2,"cache_write":1.5}}}"#,
    )
    .unwrap();
    let got = report(
        &[],
        &[
            "--agent",
            "claude",
            "--claude-home",
            home_of(&case).to_str().unwrap(),
            "--pricing",
            prices.to_str().unwrap(),
        ],
    );
    let mut want = 0.0;
    for r in billed(&case) {
        assert_eq!(r["body"]["model"], "claude-sonnet-4-6");
        let [input, w5, w1, read, output] = usage_counts(&r["usage"]);
        want +=
            (input as f64 + (w5 + w1) as f64 * 1.5 + read as f64 * 0.1 + output as f64 * 2.0) / 1e6;
    }
    let paid = got["total"]["cost_usd"].as_f64().unwrap();
    assert!((paid - want).abs() < 1e-6, "{paid} vs {want}");
}

/// Files and folders given: a transcript is told from a rollout by its lines; `--agent`
/// keeps one agent's; both agents in one report keep Codex's numbers as Codex's report has
/// them, and add Anthropic's columns.
#[test]
fn both_agents_in_one_report() {
    let codex = root().join("fixtures/report");
    let transcript = root().join("fixtures/claude/claude_md_edit_2.1.100.jsonl");
    let (codex, transcript) = (codex.to_str().unwrap(), transcript.to_str().unwrap());
    let both = report(&[], &[codex, transcript, "--by", "agent"]);
    let codex_alone = report(&[], &[codex]);
    let claude_alone = report(&[], &[transcript]);
    let by_agent = groups(&both);
    assert_eq!(by_agent.len(), 2);
    let group = |r: &Value, key: &str| -> Value {
        r["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == key)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let codex_group = group(&both, "codex");
    for field in [
        "requests",
        "input_tokens",
        "cached_input_tokens",
        "uncached_input_tokens",
        "output_tokens",
        "reasoning_output_tokens",
        "cost_usd",
        "lost_input_tokens",
    ] {
        assert_eq!(codex_group[field], codex_alone["total"][field], "{field}");
    }
    assert_eq!(
        counts(&group(&both, "claude")),
        counts(&claude_alone["total"])
    );
    assert_eq!(both["files"], 6);
    assert_eq!(both["agents"], serde_json::json!(["codex", "claude"]));
    // A prompt's input is all of it: Codex's cached, Anthropic's reads and writes included.
    let total = &both["total"];
    assert_eq!(
        total["input_tokens"].as_u64().unwrap(),
        codex_alone["total"]["input_tokens"].as_u64().unwrap()
            + claude_alone["total"]["input_tokens"].as_u64().unwrap()
    );
    let only_codex = report(&[], &[codex, transcript, "--agent", "codex"]);
    assert_eq!(only_codex, codex_alone);
    // Text: Anthropic's columns, Codex's reasoning, both price tables.
    let output = run_with(&[], &["report", codex, transcript, "--timezone", "UTC"]);
    let text = String::from_utf8_lossy(&output.stdout);
    for column in [
        "UNCACHED  WRITE 5M  WRITE 1H",
        "READ",
        "REASONING",
        "Prices: USD",
        "Prices of Claude Code's requests",
    ] {
        assert!(text.contains(column), "{column}: {text}");
    }
}

/// The page of a report of both agents loads in a real browser without a console message; its
/// table by agent and its day bars (read, written, uncached) are the JSON report's numbers.
#[test]
fn html_page_of_both_agents_in_a_browser() {
    if !crate::claude_home::recorded() {
        return;
    }
    let Some(browser) = crate::report::chromium() else {
        assert!(
            !crate::support::under_ci(),
            "Chromium is needed for the HTML test under CI (.ci/run installs it)"
        );
        crate::support::skip("no chromium on PATH: the HTML page is not tested in a browser");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let codex = root().join("fixtures/report");
    let claude = home_of(&root().join("tests/conformance/claude/2.1.332/subagent"));
    let claude_home = claude.to_str().unwrap();
    let inputs = [codex.to_str().unwrap(), claude_home];
    let mut args = vec!["report", "--timezone", "UTC", "--format", "html", "-o"];
    args.push(page.to_str().unwrap());
    args.extend(inputs);
    let output = run_with(&[], &args);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let profile = tempfile::tempdir().unwrap();
    let loaded = std::process::Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(loaded.status.success(), "chromium failed");
    let log = String::from_utf8_lossy(&loaded.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let dom = String::from_utf8_lossy(&loaded.stdout);
    let mut by_agent_args = inputs.to_vec();
    by_agent_args.extend(["--by", "agent"]);
    let by_agent = report(&[], &by_agent_args);
    // The table by agent: one row per agent, its cells the JSON's numbers as the text shows them.
    let table = &dom[dom.find("id=\"agents\"").expect("the table by agent")..];
    let table = &table[..table.find("</table>").unwrap()];
    for agent in ["codex", "claude"] {
        let row = &table[table.find(&format!("<td>{agent}</td>")).expect(agent)..];
        let row = &row[..row.find("</tr>").unwrap()];
        let cells: Vec<&str> = row
            .split("<td>")
            .skip(1)
            .map(|c| c.trim_end_matches("</td>"))
            .collect();
        let group = by_agent["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == agent)
            .unwrap();
        assert_eq!(cells[1], group["requests"].to_string(), "{agent}: {row}");
    }
    // Day bars: read below, written above it, uncached on top, each its JSON count.
    let days = report(&[], &inputs);
    let days: BTreeMap<String, &Value> = days["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["key"].as_str().unwrap().to_string(), g))
        .collect();
    for (class, field) in [
        ("cached", "cached_input_tokens"),
        ("written", "cache_write_input_tokens"),
        ("uncached", "unwritten_input_tokens"),
    ] {
        let bars = crate::report::attributes(&dom, "rect", class, &["data-day", "data-tokens"]);
        assert_eq!(bars.len(), days.len(), "{class} bars");
        for bar in bars {
            assert_eq!(
                bar[1].parse::<u64>().unwrap(),
                days[&bar[0]][field].as_u64().unwrap(),
                "{class} {}",
                bar[0]
            );
        }
    }
    assert!(
        dom.contains("<th>Agent</th>"),
        "the top sessions say their agent"
    );
}

/// Claude Code's requests are dated and filtered as Codex's: the day in `--timezone`, the
/// filters inclusive. The recorded cases ran at 13:28-13:31 UTC on 2026-12-03: the 4th at UTC+14.
#[test]
fn days_follow_the_time_zone_and_the_date_filters() {
    if !crate::claude_home::recorded() {
        return;
    }
    let home = home_of(&root().join("tests/conformance/claude/2.1.100/claude_md_edit"));
    let home = home.to_str().unwrap();
    let day = |zone: &str, extra: &[&str]| {
        let mut args = vec![
            "report",
            "--agent",
            "claude",
            "--claude-home",
            home,
            "--timezone",
            zone,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let output = run_with(&[], &args);
        assert_eq!(
            code(&output),
            0,
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report = stdout_json(&args, &output);
        let keys: Vec<String> = report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| format!("{} {}", g["key"].as_str().unwrap(), g["requests"]))
            .collect();
        keys
    };
    assert_eq!(day("UTC", &[]), ["2026-12-03 4"]);
    assert_eq!(day("Pacific/Kiritimati", &[]), ["2026-12-04 4"]);
    assert_eq!(
        day(
            "Pacific/Kiritimati",
            &["--since", "2026-12-04", "--until", "2026-12-04"]
        ),
        ["2026-12-04 4"]
    );
    assert!(day("Pacific/Kiritimati", &["--until", "2026-12-03"]).is_empty());
    assert!(day("UTC", &["--since", "2026-12-04"]).is_empty());
}

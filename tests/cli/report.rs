//! `promptc report`: totals held to an independent computation over the rollouts' own counters,
//! dates and zones, prices, bad input, and the output formats.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ruzstd::encoding::{CompressionLevel, compress_to_vec};
use serde_json::Value;

use crate::support::{code, promptc, root, run, stdout_json};

const A: &str = "019b8e40-0000-7000-8000-00000000000a";
const B: &str = "019b8e40-0000-7000-8000-00000000000b";
const C: &str = "019b8e40-0000-7000-8000-00000000000c";
const D: &str = "019b8e40-0000-7000-8000-00000000000d";

fn fixture_dir() -> PathBuf {
    root().join("fixtures/report")
}

fn fixture_path(id: &str) -> PathBuf {
    let name = std::fs::read_dir(fixture_dir())
        .expect("fixtures/report")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.contains(id))
        .expect("a fixture of that session");
    fixture_dir().join(name)
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

/// A Codex home as Codex lays it out: dated folders, one rollout compressed in
/// `archived_sessions`, and a `.jsonl.zst` that is not zstd data.
fn home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(fixture_dir()).expect("fixtures/report") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(&path).expect("read fixture");
        if name.contains(C) {
            let compressed = compress_to_vec(&bytes[..], CompressionLevel::Fastest);
            write(
                &dir.path().join(format!("archived_sessions/{name}.zst")),
                &compressed,
            );
        } else {
            // rollout-YYYY-MM-DD...: sessions/YYYY/MM/DD/
            let date = &name["rollout-".len().."rollout-YYYY-MM-DD".len()];
            let folder = date.replace('-', "/");
            write(
                &dir.path().join(format!("sessions/{folder}/{name}")),
                &bytes,
            );
        }
    }
    // A rollout whose writer was killed mid-line: read up to its last whole line.
    let a = std::fs::read_to_string(fixture_path(A)).unwrap();
    let cut = &a[..a.len() - 40];
    write(
        &dir.path().join(
            "sessions/2026/01/08/rollout-2026-01-08T08-00-00-019b8e40-0000-7000-8000-000000000098.jsonl",
        ),
        cut.replace(A, "019b8e40-0000-7000-8000-000000000098").as_bytes(),
    );
    let mut broken = vec![0x28, 0xb5, 0x2f, 0xfd];
    broken.extend_from_slice(b"not a frame");
    write(
        &dir.path().join(
            "sessions/2026/01/08/rollout-2026-01-08T09-00-00-019b8e40-0000-7000-8000-000000000099.jsonl.zst",
        ),
        &broken,
    );
    dir
}

/// A session's tokens, computed the plain way: the distinct cumulative counters of its
/// `token_count` lines, in order; its tokens are the last, less the last counters it shares
/// with its parent's when its parent is among `files`, else less the counters its first
/// request started from (its first counters less that request's `last_token_usage`: zero but
/// for a fork, whose counters go on from its parent's).
fn independent(files: &[PathBuf]) -> BTreeMap<String, [u64; 4]> {
    type Counters = (Option<String>, Vec<[u64; 4]>, [u64; 4]);
    let mut counters: BTreeMap<String, Counters> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(file).expect("read");
        let mut id = None;
        let mut parent = None;
        let mut list: Vec<[u64; 4]> = Vec::new();
        let mut first_last = [0; 4];
        for line in text.lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let payload = &value["payload"];
            if value["type"] == "session_meta" && id.is_none() {
                id = payload["id"].as_str().map(str::to_string);
                parent = payload["forked_from_id"].as_str().map(str::to_string);
            }
            if value["type"] == "event_msg" && payload["type"] == "token_count" {
                let total = &payload["info"]["total_token_usage"];
                if total.is_null() {
                    continue;
                }
                let read = |usage: &Value| {
                    [
                        "input_tokens",
                        "cached_input_tokens",
                        "output_tokens",
                        "reasoning_output_tokens",
                    ]
                    .map(|k| usage[k].as_u64().expect("a count"))
                };
                let counts = read(total);
                if list.is_empty() {
                    first_last = read(&payload["info"]["last_token_usage"]);
                }
                if list.last() != Some(&counts) {
                    list.push(counts);
                }
            }
        }
        if let Some(id) = id {
            counters.insert(id, (parent, list, first_last));
        } else {
            assert!(
                list.is_empty(),
                "{}: usage without a session id",
                file.display()
            );
        }
    }
    let mut tokens = BTreeMap::new();
    for (id, (parent, list, first_last)) in &counters {
        let Some(last) = list.last() else { continue };
        let base = parent
            .as_ref()
            .and_then(|p| counters.get(p))
            .and_then(|(_, parent_list, _)| {
                list.iter()
                    .zip(parent_list)
                    .take_while(|(a, b)| a == b)
                    .last()
                    .map(|(a, _)| *a)
            })
            .unwrap_or(std::array::from_fn(|i| list[0][i] - first_last[i]));
        tokens.insert(id.clone(), std::array::from_fn(|i| last[i] - base[i]));
    }
    tokens
}

fn report_json(args: &[&str]) -> Value {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    let output = run(&all);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&all, &output)
}

fn counts(group: &Value) -> [u64; 4] {
    let get = |k: &str| group[k].as_u64().expect("a count");
    [
        get("input_tokens"),
        get("cached_input_tokens"),
        get("output_tokens"),
        get("reasoning_output_tokens"),
    ]
}

fn groups(report: &Value) -> BTreeMap<String, &Value> {
    report["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| (g["key"].as_str().unwrap().to_string(), g))
        .collect()
}

#[test]
fn totals_equal_the_rollouts_own_counters() {
    let home = home();
    let report = report_json(&[
        "--codex-home",
        home.path().to_str().unwrap(),
        "--by",
        "session",
        "--timezone",
        "UTC",
        "--format",
        "json",
    ]);
    let mut files: Vec<PathBuf> = [A, B, C, D, "00000000000e"]
        .iter()
        .map(|id| fixture_path(id))
        .collect();
    files.push(home.path().join(
        "sessions/2026/01/08/rollout-2026-01-08T08-00-00-019b8e40-0000-7000-8000-000000000098.jsonl",
    ));
    let expected = independent(&files);
    let groups = groups(&report);
    assert_eq!(
        groups.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    let mut sum = [0; 4];
    for (id, tokens) in &expected {
        assert_eq!(&counts(groups[id]), tokens, "session {id}");
        for i in 0..4 {
            sum[i] += tokens[i];
        }
    }
    assert_eq!(counts(&report["total"]), sum);
    // By hand (fixtures/README.md, section F): A's last counters 15 600 (its resume appended
    // to the same file), B's own 5 300 (15 500 less the 10 200 copied from A), C 6 100 read
    // from archived_sessions through zstd, D 8 200 (its parent is not here); and A's copy cut
    // in its last line, a repeat of the counters before: 15 600/4 992/400/80 again.
    assert_eq!(sum, [35_200 + 15_600, 17_024 + 4_992, 800 + 400, 130 + 80]);
    assert_eq!(counts(groups[B]), [5_300, 5_120, 120, 40]);
    // Re-emitted counts are the same request: A made 3 requests, not 6.
    assert_eq!(groups[A]["requests"], 3);
    assert_eq!(report["files"], 7);
}

/// The same plain computation over the real samples, when they are beside the repository.
#[test]
fn real_sample_totals_equal_their_own_counters() {
    let files = crate::support::all_samples();
    if files.is_empty() {
        return;
    }
    let mut args = vec!["--by", "session", "--timezone", "UTC", "--format", "json"];
    let paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let report = report_json(&args);
    let expected = independent(&files);
    let groups = groups(&report);
    assert_eq!(
        groups.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (id, tokens) in &expected {
        assert_eq!(&counts(groups[id]), tokens, "session {id}");
    }
    // 019b3cd4, which ccusage 18.0.11 counts as 34.19 M input: 17.16 M (BENCHMARKS.md).
    assert_eq!(
        groups["019b3cd4-2000-7553-b475-7027684d1f18"]["input_tokens"],
        17_158_824
    );
}

/// `report --by session` of a Codex home, as JSON.
fn home_by_session(home: &Path) -> Value {
    report_json(&[
        "--codex-home",
        home.to_str().unwrap(),
        "--by",
        "session",
        "--format",
        "json",
    ])
}

/// Forks the real Codex CLI recorded (`codex exec fork`, 0.152.1 to 0.171.0: the conformance
/// suite's homes): the fork's file copies none of its parent's lines, but its counters go on
/// from the parent's. Its own tokens are its requests', whether the parent is read or not.
#[test]
fn real_forks_count_their_own_requests() {
    let mut seen = 0;
    for version in ["0.152.1", "0.162.1", "0.171.0"] {
        let home = root().join(format!("tests/conformance/{version}/fork/home"));
        if !home.is_dir() {
            continue;
        }
        seen += 1;
        let mut files: Vec<PathBuf> = Vec::new();
        let mut stack = vec![home.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    files.push(path);
                }
            }
        }
        let expected = independent(&files);
        let report = home_by_session(&home);
        let groups = groups(&report);
        assert_eq!(groups.len(), 2, "{version}");
        for (id, tokens) in &expected {
            assert_eq!(&counts(groups[id]), tokens, "{version} session {id}");
        }
        let fork = report["top_sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| !s["fork"].is_null())
            .expect("a fork");
        assert_eq!(fork["fork"]["parent_counters"], "subtracted");
        // Read alone, the fork counts the same.
        let path = files
            .iter()
            .find(|f| f.to_str().unwrap().contains(fork["id"].as_str().unwrap()))
            .unwrap();
        let alone = report_json(&[path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(
            counts(&alone["total"]),
            counts(groups[fork["id"].as_str().unwrap()])
        );
        assert_eq!(
            alone["notes"]["forks_subtracted"].as_array().unwrap().len(),
            1
        );
    }
    if seen > 0 {
        // 0.171.0 by hand: the parent's counters stood at 18 363 input tokens at the fork; the
        // fork's two requests used 9 304 and 9 397 (their `last_token_usage`), its counters
        // ending at 37 064 = 18 363 + 18 701.
        let report = home_by_session(&root().join("tests/conformance/0.171.0/fork/home"));
        let groups = groups(&report);
        assert_eq!(
            groups["01a235fe-2b89-7a80-8bb7-5c585a098b44"]["input_tokens"],
            18_701
        );
        assert_eq!(
            groups["01a235fe-2931-7c83-aca7-0875ae32363a"]["input_tokens"],
            27_667
        );
    }
}

/// Every conformance case (tests/conformance: the real Codex CLI, 0.58.0 to 0.171.0, against a
/// mock provider that recorded the usage it returned for each request): `report`'s totals are
/// what the provider billed. The exception is `killed_call` from 0.141.0 on, where Codex is
/// killed before it writes one request's `token_count`: the rollout lacks exactly that
/// request's usage, and so does the report.
#[test]
fn totals_are_what_the_provider_billed_in_every_conformance_case() {
    let cases = root().join("tests/conformance");
    let Ok(versions) = std::fs::read_dir(&cases) else {
        return;
    };
    let mut checked = 0;
    for version in versions {
        let version = version.unwrap().path();
        let Ok(scenarios) = std::fs::read_dir(&version) else {
            continue;
        };
        for scenario in scenarios {
            let case = scenario.unwrap().path();
            let home = case.join("home");
            let Ok(requests) = std::fs::read_to_string(case.join("requests.jsonl")) else {
                continue;
            };
            if !home.is_dir() {
                continue;
            }
            let billed: Vec<[u64; 3]> = requests
                .lines()
                .map(|line| {
                    let usage = &serde_json::from_str::<Value>(line).unwrap()["usage"];
                    [
                        usage["input_tokens"].as_u64().unwrap_or(0),
                        usage["input_tokens_details"]["cached_tokens"]
                            .as_u64()
                            .unwrap_or(0),
                        usage["output_tokens"].as_u64().unwrap_or(0),
                    ]
                })
                .collect();
            let sum: [u64; 3] = std::array::from_fn(|i| billed.iter().map(|b| b[i]).sum());
            let report = report_json(&["--codex-home", home.to_str().unwrap(), "--format", "json"]);
            let total = &report["total"];
            let got = [
                total["input_tokens"].as_u64().unwrap(),
                total["cached_input_tokens"].as_u64().unwrap(),
                total["output_tokens"].as_u64().unwrap(),
            ];
            let missing: [u64; 3] = std::array::from_fn(|i| sum[i] - got[i].min(sum[i]));
            let killed = case.ends_with("killed_call");
            assert!(
                got == sum || (killed && billed.contains(&missing)),
                "{}: report {got:?}, billed {sum:?} over {} requests",
                case.display(),
                billed.len()
            );
            checked += 1;
        }
    }
    assert!(checked == 0 || checked >= 100, "{checked} cases");
}

#[test]
fn bad_input_and_caveats_are_named() {
    let home = home();
    let output = promptc()
        .args([
            "report",
            "--codex-home",
            home.path().to_str().unwrap(),
            "--timezone",
            "UTC",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    assert_eq!(code(&output), 0);
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let notes = &report["notes"];
    let skipped = notes["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{notes}");
    assert!(
        skipped[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("099.jsonl.zst")
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("099.jsonl.zst: skipped"), "{stderr}");
    let one = |key: &str| {
        let list = notes[key].as_array().unwrap();
        assert_eq!(list.len(), 1, "{key}: {list:?}");
        list[0].as_str().unwrap().to_string()
    };
    assert!(one("no_usage").contains("00000000000e"));
    let partly = notes["partly_read"].as_array().unwrap();
    assert_eq!(partly.len(), 1, "{partly:?}");
    assert!(partly[0]["path"].as_str().unwrap().ends_with("098.jsonl"));
    assert_eq!(partly[0]["skipped_lines"], 1);
    assert!(one("forks_subtracted").contains(B));
    assert!(one("forks_unknown_parent").contains(D));
    // C ran gpt-oss-120b, which Codex runs locally: deliberately without a price.
    let unpriced = report["unpriced_models"].as_array().unwrap();
    assert_eq!(unpriced.len(), 1);
    assert_eq!(unpriced[0]["key"], "gpt-oss-120b");
    assert_eq!(unpriced[0]["input_tokens"], 6_100);
    let reason = unpriced[0]["reason"].as_str().unwrap();
    assert!(reason.contains("runs locally"), "{reason}");
}

#[test]
fn costs_and_losses_by_hand() {
    let report = report_json(&[
        fixture_dir().to_str().unwrap(),
        "--timezone",
        "UTC",
        "--format",
        "json",
    ]);
    let total = &report["total"];
    // gpt-5.2-codex at $1.75 / $0.175 / $14 per million: A 10 608 uncached, 4 992 cached,
    // 400 output = $0.0250376; B 180, 5 120, 120 = $0.002891; D 4 232, 3 968, 160 =
    // $0.0103404. C's model has no price.
    assert_eq!(total["cost_usd"], 0.038269);
    assert_eq!(total["unpriced_requests"], 2);
    // A's third request came 23 hours after the second, whose 5 200 input tokens were
    // cacheable in 40 granules of 128: 5 120 lost to the idle gap, $1.575 per million more.
    assert_eq!(total["lost_input_tokens"], 5_120);
    assert_eq!(total["by_cause"]["idle_gap"]["tokens"], 5_120);
    assert_eq!(total["miss_cost_usd"], 0.008064);
    // First requests: cacheable 4 992 (A), 2 944 (C), 3 968 (D); B's first is A's copy.
    assert_eq!(total["by_cause"]["cold_start"]["tokens"], 11_904);
    let top = &report["top_sessions"][0];
    assert_eq!(top["id"], A);
    assert_eq!(top["top_cause"], "idle_gap");
    assert_eq!(top["command"], format!("promptc steps {A}"));
}

#[test]
fn days_follow_the_time_zone_and_the_date_filters() {
    let dir = fixture_dir();
    let dir = dir.to_str().unwrap();
    let day = |zone: &str, key: &str| {
        let report = report_json(&[dir, "--timezone", zone, "--format", "json"]);
        groups(&report).get(key).map(|g| g["input_tokens"].clone())
    };
    // B's request at 10:00:31 UTC on the 6th is on the 7th at UTC+14, and D's at 12:05 UTC
    // on the 7th is on the 8th.
    assert_eq!(day("UTC", "2026-01-07"), Some(8_200.into()));
    assert_eq!(day("UTC", "2026-01-08"), None);
    assert_eq!(day("Pacific/Kiritimati", "2026-01-07"), Some(5_300.into()));
    assert_eq!(day("Pacific/Kiritimati", "2026-01-08"), Some(8_200.into()));
    let sixth = report_json(&[
        dir,
        "--timezone",
        "UTC",
        "--since",
        "2026-01-06",
        "--until",
        "2026-01-06",
        "--format",
        "json",
    ]);
    // A's resumed request (5 400) and B's own (5 300).
    assert_eq!(sixth["total"]["input_tokens"], 10_700);
    assert_eq!(sixth["sessions"], 2);
    let by_week = report_json(&[dir, "--timezone", "UTC", "--by", "week", "--format", "json"]);
    let weeks: Vec<&str> = by_week["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    // 2026-01-04 is a Sunday (ISO week 1); the 5th to the 7th are in week 2.
    assert_eq!(weeks, ["2026-W01", "2026-W02"]);
}

#[test]
fn a_price_file_extends_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"as_of":"2030-01-01","source":"test","models":{"gpt-oss-120b":{"input":1.25,"cached_input":0.125,"output":10}}}"#,
    )
    .unwrap();
    let report = report_json(&[
        fixture_dir().to_str().unwrap(),
        "--pricing",
        prices.to_str().unwrap(),
        "--format",
        "json",
    ]);
    // C: 3 156 uncached × $1.25 + 2 944 cached × $0.125 + 120 output × $10 = $0.005513.
    assert_eq!(report["total"]["cost_usd"], 0.043782);
    assert_eq!(report["unpriced_models"], Value::Array(vec![]));
    std::fs::write(&prices, r#"{"models":{"m":{"input":"cheap"}}}"#).unwrap();
    let output = run(&[
        "report",
        fixture_dir().to_str().unwrap(),
        "--pricing",
        prices.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("prices.json"));
}

/// C's two requests moved to either side of midnight UTC on 2026-08-21, when gpt-5.6-sol's
/// promotion began, and run on that model.
fn sol_across_the_price_change(dir: &Path) -> PathBuf {
    let c = std::fs::read_to_string(fixture_path(C))
        .unwrap()
        .replace("2026-01-04T08:00", "2026-08-20T23:59")
        .replace("2026-01-04T08:02", "2026-08-21T00:01")
        .replace("\"model\":\"gpt-oss-120b\"", "\"model\":\"gpt-5.6-sol\"")
        // As GPT-5.6 reports it: 128 of the second request's uncached input written to the cache.
        .replace(
            "\"cached_input_tokens\":2944,",
            "\"cached_input_tokens\":2944,\"cache_write_input_tokens\":128,",
        );
    let path = dir.join(format!("rollout-2026-08-20T23-59-00-{C}.jsonl"));
    write(&path, c.as_bytes());
    path
}

#[test]
fn each_request_is_priced_at_the_price_of_its_day() {
    let dir = tempfile::tempdir().unwrap();
    let path = sol_across_the_price_change(dir.path());
    let path = path.to_str().unwrap();
    let report = report_json(&[path, "--timezone", "UTC", "--by", "day", "--format", "json"]);
    let days = groups(&report);
    // 2026-08-20 at the launch price ($5 / $0.50 / $30): 3 000 uncached, 0 cached, 50 output
    // = $0.015 + $0.0015 = $0.0165. 2026-08-21 at the promotion ($4 / $0.40 / $20, cache writes
    // $5): 28 uncached + 128 written, 2 944 cached, 70 output = $0.000112 + $0.00064 +
    // $0.0011776 + $0.0014 = $0.0033296.
    assert_eq!(days["2026-08-20"]["cost_usd"], 0.0165);
    assert_eq!(days["2026-08-21"]["cost_usd"], 0.00333);
    assert_eq!(days["2026-08-21"]["cache_write_input_tokens"], 128);
    assert_eq!(report["total"]["cost_usd"], 0.01983);
    assert_eq!(report["total"]["unpriced_requests"], 0);
    // The UTC day decides, whatever the time zone the report is read in: at UTC-10 both
    // requests are on the 20th, and still cost the same.
    let honolulu = report_json(&[path, "--timezone", "Pacific/Honolulu", "--format", "json"]);
    assert_eq!(honolulu["total"]["cost_usd"], 0.01983);
    // A file's own history replaces the built-in one: the promotion from the 22nd instead.
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"models":{"gpt-5.6-sol":{"input":4,"cached_input":0.4,"output":20,"from":"2026-08-22",
            "history":[{"input":5,"cached_input":0.5,"output":30,"from":"2026-07-09"}]}}}"#,
    )
    .unwrap();
    let later = report_json(&[
        path,
        "--pricing",
        prices.to_str().unwrap(),
        "--format",
        "json",
    ]);
    // Both at the launch price, and the file's price has no cache-write price, so writes cost
    // the input price: 156 × $5 + 2 944 × $0.50 + 70 × $30 = $0.004352 for the second.
    assert_eq!(later["total"]["cost_usd"], 0.020852);
}

#[test]
fn text_report() {
    let output = run(&["report", "fixtures/report", "--timezone", "UTC"]);
    assert_eq!(code(&output), 0);
    // No progress bar when stderr is not a terminal, and no warning for these files.
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

/// Session text on the HTML page is escaped as on every page: a model name and a working
/// directory carrying bidi, zero-width and control characters show them as escapes, never raw
/// (a U+202E would reverse the rest of its line), in every grouping; the JSON report keeps the
/// text, written with escapes.
#[test]
fn html_page_shows_bidi_and_control_characters_as_escapes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = std::fs::read_to_string(fixture_path(C)).expect("fixture");
    let edited = text
        .replace(
            "\"model\":\"gpt-oss-120b\"",
            "\"model\":\"gpt\\u202eoss\\u2066\\u200b\\u001b[31m\"",
        )
        .replace("/home/dev/widgets", "/home/dev/\\u202ewidgets");
    assert_ne!(
        text, edited,
        "the fixture names the model and the directory"
    );
    let file = dir
        .path()
        .join(fixture_path(C).file_name().expect("a name"));
    write(&file, edited.as_bytes());
    let file = file.to_str().expect("UTF-8 path");
    let report = |by: &str, format: &[&str]| {
        let mut args = vec!["report", file, "--timezone", "UTC", "--by", by];
        args.extend(format);
        run(&args)
    };
    for by in ["model", "cwd", "session"] {
        let output = report(by, &["--format", "html", "-o", "-"]);
        assert_eq!(code(&output), 0, "{by}");
        let html = String::from_utf8(output.stdout).expect("UTF-8");
        for raw in ['\u{202e}', '\u{2066}', '\u{200b}', '\u{1b}'] {
            assert!(
                !html.contains(raw),
                "--by {by}: a raw {:?} on the page",
                raw
            );
        }
        if by == "model" {
            assert!(
                html.contains("gpt\\u{202e}oss\\u{2066}\\u{200b}\\x1b[31m"),
                "{html}"
            );
        }
        if by == "cwd" {
            assert!(html.contains("/home/dev/\\u{202e}widgets"), "--by cwd");
        }
    }
    // JSON keeps the text, written with `\u` escapes a terminal shows as such.
    let output = report("model", &["--json"]);
    assert_eq!(code(&output), 0);
    let json = String::from_utf8(output.stdout).expect("UTF-8");
    for raw in ['\u{202e}', '\u{2066}', '\u{200b}'] {
        assert!(!json.contains(raw), "a raw {raw:?} in JSON");
    }
    let report: Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        report["groups"][0]["key"],
        "gpt\u{202e}oss\u{2066}\u{200b}\u{1b}[31m"
    );
}

/// A Chromium on PATH (`$CHROMIUM` first), or `None`.
pub fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| {
            ["chromium", "chromium-browser", "google-chrome"].map(|name| dir.join(name))
        })
        .find(|candidate| candidate.is_file())
}

/// The numbers of the `name` attributes of every tag `<tag ... class="class" ...>` in `html`,
/// in order.
pub fn attributes(html: &str, tag: &str, class: &str, names: &[&str]) -> Vec<Vec<String>> {
    let open = format!("<{tag} class=\"{class}\"");
    html.match_indices(&open)
        .map(|(at, _)| {
            let end = html[at..].find('>').expect("a closed tag") + at;
            let element = &html[at..end];
            names
                .iter()
                .map(|name| {
                    let key = format!(" {name}=\"");
                    let start = element.find(&key).unwrap_or_else(|| {
                        panic!("{name} in {element}");
                    }) + key.len();
                    let len = element[start..].find('"').expect("a closed value");
                    element[start..start + len].to_string()
                })
                .collect()
        })
        .collect()
}

/// The page loads in a real browser without a console message (a blocked fetch, a script
/// error), its charts are there with the sizes the JSON report's numbers give, and a
/// screenshot is written to `target/report-screenshot.png` for the person reviewing.
#[test]
fn html_page_in_a_browser() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is needed for the HTML test under CI (.ci/run installs it)"
        );
        crate::support::skip("no chromium on PATH: the HTML page is not tested in a browser");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let fixtures = fixture_dir();
    let fixtures = fixtures.to_str().unwrap();
    let output = run(&[
        "report",
        fixtures,
        "--timezone",
        "UTC",
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let url = format!("file://{}", page.display());
    let browse = |extra: &[&str]| {
        let profile = tempfile::tempdir().unwrap();
        let mut command = std::process::Command::new(&browser);
        command.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
            "--window-size=1100,1700",
        ]);
        command.arg(format!("--user-data-dir={}", profile.path().display()));
        command.args(extra).arg(&url);
        command.output().expect("chromium runs")
    };
    let loaded = browse(&["--dump-dom"]);
    assert!(loaded.status.success(), "chromium failed");
    let log = String::from_utf8_lossy(&loaded.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let dom = String::from_utf8_lossy(&loaded.stdout);
    for id in [
        "chart-days",
        "chart-causes",
        "chart-hit-rate",
        "top-sessions",
        "groups",
    ] {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "no #{id} in the page"
        );
    }
    // Day bars: the same days and tokens as the JSON report, each bar's height its tokens
    // over the scale's top times the plot height (208 units of 260).
    let report = report_json(&[fixtures, "--timezone", "UTC", "--format", "json"]);
    let days = groups(&report);
    let chart = &dom[dom.find("id=\"chart-days\"").expect("the day chart")..];
    let at = chart.find("data-max=\"").expect("data-max") + "data-max=\"".len();
    let max: f64 = chart[at..at + chart[at..].find('"').unwrap()]
        .parse()
        .expect("a number");
    let largest = days
        .values()
        .map(|d| d["input_tokens"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(
        max >= largest as f64 && max <= 2.5 * largest as f64,
        "scale {max}"
    );
    for (class, field) in [
        ("cached", "cached_input_tokens"),
        ("uncached", "uncached_input_tokens"),
    ] {
        let bars = attributes(&dom, "rect", class, &["data-day", "data-tokens", "height"]);
        assert_eq!(bars.len(), days.len(), "{class} bars");
        for bar in bars {
            let expected = days[&bar[0]][field].as_u64().unwrap();
            assert_eq!(
                bar[1].parse::<u64>().unwrap(),
                expected,
                "{class} {}",
                bar[0]
            );
            let height: f64 = bar[2].parse().unwrap();
            let want = 208.0 * expected as f64 / max;
            assert!(
                (height - want).abs() < 0.01,
                "{class} {}: {height} vs {want}",
                bar[0]
            );
        }
    }
    // Cause bars: the longest (560 units) for the cause with the most tokens.
    let causes = attributes(
        &dom,
        "rect",
        "cause",
        &["data-cause", "data-tokens", "width"],
    );
    let by_cause = report["total"]["by_cause"].as_object().unwrap();
    assert_eq!(causes.len(), by_cause.len());
    let most = by_cause
        .values()
        .map(|c| c["tokens"].as_u64().unwrap())
        .max()
        .unwrap();
    for bar in causes {
        let tokens = by_cause[&bar[0]]["tokens"].as_u64().unwrap();
        assert_eq!(bar[1].parse::<u64>().unwrap(), tokens);
        let width: f64 = bar[2].parse().unwrap();
        assert!((width - (560.0 * tokens as f64 / most as f64).max(1.0)).abs() < 0.01);
    }
    // One line per top session, one point per request.
    let lines = attributes(
        &dom,
        "polyline",
        "session",
        &["data-session", "data-points"],
    );
    let top = report["top_sessions"].as_array().unwrap();
    assert_eq!(lines.len(), top.len());
    for (line, session) in lines.iter().zip(top) {
        assert_eq!(line[0], session["id"].as_str().unwrap());
        assert_eq!(line[1], session["requests"].to_string());
    }
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("report-screenshot.png");
    let _ = std::fs::remove_file(&target);
    let shot = browse(&[&format!("--screenshot={}", target.display())]);
    assert!(
        shot.status.success(),
        "chromium failed to take the screenshot"
    );
    let size = std::fs::metadata(&target).map_or(0, |m| m.len());
    assert!(
        size > 20_000,
        "screenshot of {size} bytes at {}",
        target.display()
    );
}

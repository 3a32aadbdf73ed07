//! `view --format html` and `diff --format html`: the page's steps are `steps`' rows, each
//! step's difference is the plan's (`steps --json`'s shared prefix, `compile`'s input), session
//! text is inert, and the pages load in headless Chromium.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{code, json, root, run};

/// Write `args`' page (`--format html -o FILE`) and return its text.
fn page(args: &[&str], dir: &Path, name: &str) -> String {
    let file = dir.join(name);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "html", "-o", file.to_str().unwrap()]);
    let output = run(&all);
    assert!(
        matches!(code(&output), 0 | 1),
        "promptc {all:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stdout.is_empty(),
        "-o FILE leaves standard output empty"
    );
    std::fs::read_to_string(&file).unwrap()
}

/// The values of `names` on every element that opens with `<tag class="class…"`, in order.
fn attributes(html: &str, open: &str, names: &[&str]) -> Vec<Vec<String>> {
    html.match_indices(open)
        .map(|(at, _)| {
            let end = html[at..].find('>').expect("a closed tag") + at;
            let element = &html[at..end];
            names
                .iter()
                .map(|name| {
                    let key = format!(" {name}=\"");
                    let start = element
                        .find(&key)
                        .unwrap_or_else(|| panic!("{name} in {element}"))
                        + key.len();
                    let len = element[start..].find('"').expect("a closed value");
                    element[start..start + len].to_string()
                })
                .collect()
        })
        .collect()
}

fn steps_of(html: &str) -> Vec<Vec<String>> {
    attributes(
        html,
        "<section class=\"step",
        &["data-turn", "data-step", "data-verdict"],
    )
}

/// `steps --json`'s (turn, step, verdict) rows.
fn expected_steps(file: &str) -> Vec<Vec<String>> {
    json(&["steps", file, "--json"])["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            vec![
                s["turn"].to_string(),
                s["step"].to_string(),
                s["verdict"].as_str().unwrap().to_string(),
            ]
        })
        .collect()
}

fn claude_fixtures() -> Vec<String> {
    crate::support::fixtures("claude")
}

/// Every Codex and Claude Code fixture: one section per `steps` row, same numbers, same verdict.
#[test]
fn one_section_per_step_with_its_numbers_and_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = crate::support::fixtures("rollouts");
    files.extend(claude_fixtures());
    for file in &files {
        let html = page(&["view", file], dir.path(), "page.html");
        assert_eq!(steps_of(&html), expected_steps(file), "{file}");
        assert!(html.starts_with("<!DOCTYPE html>"), "{file}");
        // Self-contained: nothing is fetched.
        for fetch in ["src=\"http", "href=\"http", "<link", "src=\"//", "@import"] {
            assert!(!html.contains(fetch), "{file}: {fetch}");
        }
    }
}

/// A Codex step's difference is the plan's: as many items as `compile` sends, as many shared as
/// `steps` finds, the rest appended, one fold each.
#[test]
fn each_codex_step_shows_what_it_appended() {
    let dir = tempfile::tempdir().unwrap();
    for file in crate::support::fixtures("rollouts") {
        let html = page(&["view", &file], dir.path(), "page.html");
        let rows = json(&["steps", &file, "--json"]);
        let prefixes = attributes(
            &html,
            "<p class=\"prefix\"",
            &["data-items", "data-shared", "data-appended"],
        );
        let rows = rows["steps"].as_array().unwrap();
        assert_eq!(prefixes.len(), rows.len(), "{file}");
        for (row, prefix) in rows.iter().zip(&prefixes) {
            let (turn, step) = (row["turn"].to_string(), row["step"].to_string());
            let compiled = json(&["compile", &file, "--turn", &turn, "--step", &step, "--json"]);
            let items = compiled["input_items"].as_array().unwrap().len();
            assert_eq!(prefix[0], items.to_string(), "{file} {turn}.{step}: items");
            if row["verdict"] != "first" {
                assert_eq!(
                    prefix[1],
                    row["shared_prefix_items"].to_string(),
                    "{file} {turn}.{step}: shared"
                );
            }
        }
        // One fold per appended item (at most 64 a step, then a count), where the request
        // extends the one before; a break shows its items side by side instead.
        let sections: Vec<&str> = html.split("<section class=\"step").skip(1).collect();
        assert_eq!(sections.len(), prefixes.len(), "{file}");
        for (section, prefix) in sections.iter().zip(&prefixes) {
            let appended = prefix[2].parse::<usize>().unwrap();
            if section.contains("<div class=\"break\">") {
                assert!(
                    appended > 0 || section.contains("<del>"),
                    "{file}: a break shows a change"
                );
                continue;
            }
            assert_eq!(
                section.matches("<details class=\"item\"").count(),
                appended.min(65),
                "{file}: one fold per appended item"
            );
        }
    }
}

/// A transcript line's hostile text (markup, a bidi override, a control) is text on the page.
#[test]
fn session_text_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let source =
        std::fs::read_to_string(root().join("fixtures/rollouts/plain_items.jsonl")).unwrap();
    let hostile = r#"<script>alert(1)</script><img src=x onerror=alert(2)>\u202eevil\u0007 & 'q'"#;
    let mut replaced = false;
    let lines: Vec<String> = source
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            // Era A's lines are the items themselves; later eras wrap them in a payload.
            let payload = match value.get("payload") {
                Some(_) => &mut value["payload"],
                None => &mut value,
            };
            if !replaced
                && payload["type"] == "message"
                && payload["role"] == "user"
                && let Some(text) = payload["content"][0].get_mut("text")
            {
                *text = Value::String(serde_json::from_str(&format!("\"{hostile}\"")).unwrap());
                replaced = true;
            }
            value.to_string()
        })
        .collect();
    assert!(replaced, "the fixture has a user message");
    let file = dir.path().join("hostile.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let html = page(&["view", file.to_str().unwrap()], dir.path(), "page.html");
    assert!(!html.contains("<script>alert"), "markup is escaped");
    assert!(!html.contains("<img"), "markup is escaped");
    assert!(
        !html.contains('\u{202e}'),
        "a bidi override is shown, not applied"
    );
    assert!(!html.contains('\u{7}'), "a control is shown, not written");
    assert!(html.contains("&lt;script&gt;alert(1)"), "the text is there");
    assert!(html.contains("\\u{202e}evil"), "the override is visible");
    // The page's own script is the only one.
    assert_eq!(html.matches("<script>").count(), 1);
}

/// `diff --format html`: both sides' steps, aligned as `diff` aligns them, the first difference
/// marked at the pair `diff --json` names.
#[test]
fn diff_page_marks_the_first_break() {
    let dir = tempfile::tempdir().unwrap();
    for case in crate::support::diff_cases() {
        let (a, b) = crate::support::diff_pair(&case);
        let html = page(&["diff", &a, &b], dir.path(), "diff.html");
        let d = json(&["diff", &a, &b, "--json"]);
        let a_steps =
            html.matches("<section class=\"step").count() - html.matches("id=\"b-s-").count();
        let expected = d["aligned_steps"].as_u64().unwrap() as usize
            + d["a_only_steps"].as_array().unwrap().len();
        assert_eq!(a_steps, expected, "{case}: A's steps");
        let first: Vec<_> = html.match_indices("data-first-break=\"true\"").collect();
        match d["common_prefix"].as_object() {
            // No aligned pair differs: a resume's break is at B's request of the first
            // unexpected drift; an expected reset (a rollback, a fork) is none.
            None => match d["drifts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["expected"] == false)
            {
                None => assert!(first.is_empty(), "{case}: no break, none marked"),
                Some(drift) => {
                    assert_eq!(first.len(), 1, "{case}: one first break");
                    let pair = &html[first[0].0..];
                    let sections = attributes(
                        pair,
                        "<section class=\"step",
                        &["id", "data-turn", "data-step"],
                    );
                    let b = sections
                        .iter()
                        .find(|s| s[0].starts_with("b-"))
                        .expect("B's step in the marked pair");
                    assert_eq!(
                        b[1..],
                        [drift["b_turn"].to_string(), drift["b_step"].to_string()],
                        "{case}: the break is at B's step of the first drift"
                    );
                }
            },
            Some(prefix) => {
                assert_eq!(first.len(), 1, "{case}: one first break");
                let pair = &html[first[0].0..];
                let section =
                    attributes(pair, "<section class=\"step", &["data-turn", "data-step"]);
                assert_eq!(
                    section[0],
                    vec![prefix["turn"].to_string(), prefix["step"].to_string()],
                    "{case}: the break is at A's step diff names"
                );
            }
        }
    }
}

#[test]
fn output_file_is_only_for_the_page() {
    let output = run(&[
        "view",
        "fixtures/rollouts/plain_items.jsonl",
        "-o",
        "/nonexistent/x",
    ]);
    assert_eq!(code(&output), 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("--format html"));
}

/// `-o -` is standard output, as `-` is standard input: the page written there is the one
/// written to a file, and the text form takes it too.
#[test]
fn output_dash_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = "fixtures/claude/tool_call_2.1.100.jsonl";
    let written = page(&["view", file], dir.path(), "page.html");
    let output = run(&["view", file, "--format", "html", "-o", "-"]);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap(), written);
    assert!(!dir.path().join("-").exists());
    let text = run(&["view", file, "-o", "-"]);
    assert_eq!(code(&text), 0, "{}", String::from_utf8_lossy(&text.stderr));
    assert_eq!(text.stdout, run(&["view", file]).stdout);
}

/// A Chromium on PATH (`$CHROMIUM` first), or `None`.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser", "google-chrome"].map(|n| dir.join(n)))
        .find(|candidate| candidate.is_file())
}

/// Load `page` in headless Chromium: its DOM, after asserting no console message.
fn browse(browser: &Path, page: &Path, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
            "--window-size=1400,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed on {}",
        page.display()
    );
    let log = String::from_utf8_lossy(&output.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "{}: console messages: {console:#?}",
        page.display()
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Pages of fixtures, a real sample of each agent, a recorded conformance case of each and a
/// diff load without a console message, with every step in the DOM; a screenshot of one is
/// written to `target/page-screenshot.png` for the person reviewing.
#[test]
fn pages_in_a_browser() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is needed for the HTML test under CI (.ci/run installs it)"
        );
        crate::support::skip("no chromium on PATH: the session page is not tested in a browser");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<String> = vec![
        "fixtures/rollouts/compaction_replacement.jsonl".into(),
        "fixtures/rollouts/missing_output_with_id.jsonl".into(),
        "fixtures/claude/tool_call_2.1.100.jsonl".into(),
        "tests/conformance/0.171.0/tool_calls/home".into(),
        "tests/conformance/claude/2.0.77/resume/home/.claude/projects/-tmp-promptc-claude-work/6932427d-3c6e-4826-8b04-acf9d1b3b4d3.jsonl".into(),
    ];
    // The conformance case's rollout: the one file under its home.
    let home = root().join(&files[3]);
    files[3] = walk(&home)
        .into_iter()
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a rollout in the conformance case")
        .to_string_lossy()
        .into_owned();
    match crate::support::samples() {
        Some(samples) => {
            files.push(
                samples
                    .join("AcidicSoil__codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl")
                    .to_string_lossy()
                    .into_owned(),
            );
            let claude = samples.parent().unwrap().join("claude-code-samples");
            if let Some(first) = walk(&claude)
                .into_iter()
                .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            {
                files.push(first.to_string_lossy().into_owned());
            }
        }
        None => crate::support::skip("no real samples: pages of real sessions are not tested"),
    }
    for (k, file) in files.iter().enumerate() {
        let name = format!("page-{k}.html");
        page(&["view", file], dir.path(), &name);
        let dom = browse(&browser, &dir.path().join(&name), &["--dump-dom"]);
        assert_eq!(
            steps_of(&dom),
            expected_steps(file),
            "{file}: the DOM's steps"
        );
    }
    let (a, b) = crate::support::diff_pair("history_rewritten");
    page(&["diff", &a, &b], dir.path(), "diff.html");
    let dom = browse(&browser, &dir.path().join("diff.html"), &["--dump-dom"]);
    assert_eq!(dom.matches("data-first-break=\"true\"").count(), 1);
    assert!(
        dom.contains("<del>") && dom.contains("<ins>"),
        "the break's characters are marked"
    );
    let shot = root().join("target/page-screenshot.png");
    browse(
        &browser,
        &dir.path().join("page-0.html"),
        &[&format!("--screenshot={}", shot.display())],
    );
    assert!(
        std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
        "a screenshot"
    );
}

/// The items of the assembled input in a DOM, each its text.
fn assembled(dom: &str) -> Vec<String> {
    let start = dom
        .find("<div class=\"assembled\">")
        .expect("an assembled input")
        + "<div class=\"assembled\">".len();
    let end = start + dom[start..].find("</div>").expect("its end");
    dom[start..end]
        .split("<pre>")
        .skip(1)
        .map(|p| {
            let text = p.trim_end_matches("</pre>");
            text.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
        })
        .collect()
}

/// `XXH3-128(tag ‖ 0x00 ‖ bytes)` in hex, as ARCHITECTURE.md's fingerprint encoding.
fn tagged_hex(tag: &str, bytes: &[u8]) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    h.update(tag.as_bytes());
    h.update(&[0]);
    h.update(bytes);
    h.digest128()
        .to_be_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// "The request, part by part": every step's input assembled by the page's script from the
/// chain of requests (each holding only what it appended) is the input `compile` sends, item by
/// item: Codex's model view (each item as its fingerprint hashes it; `compile` prints them as the
/// build sends them), Claude Code's message blocks.
#[test]
fn every_requests_input_assembles_from_the_page() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is needed for the HTML test under CI (.ci/run installs it)"
        );
        crate::support::skip("no chromium on PATH: the session page is not tested in a browser");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "fixtures/rollouts/era_c_turns.jsonl",
        "fixtures/rollouts/rollback.jsonl",
        "fixtures/claude/claude_md_edit_2.1.100.jsonl",
    ] {
        page(&["view", file], dir.path(), "page.html");
        let steps = json(&["steps", file, "--json"]);
        for s in steps["steps"].as_array().unwrap() {
            let (turn, step) = (s["turn"].to_string(), s["step"].to_string());
            let url = format!("page.html#input-s-{turn}-{step}");
            let dom = browse(&browser, &dir.path().join(url), &["--dump-dom"]);
            let compiled = json(&["compile", file, "--json", "--turn", &turn, "--step", &step]);
            let items = assembled(&dom);
            if !file.contains("claude") {
                let hashes: Vec<String> = items
                    .iter()
                    .map(|text| tagged_hex("item", text.as_bytes()))
                    .collect();
                let expected: Vec<&str> = compiled["input_items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i["hash"].as_str().unwrap())
                    .collect();
                assert_eq!(hashes, expected, "{file} turn {turn} step {step}");
                continue;
            }
            let expected: Vec<Value> = {
                // Each message's blocks, string content as one text block, breakpoints left out.
                compiled["request"]["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|m| match &m["content"] {
                        Value::String(t) => vec![serde_json::json!({"type": "text", "text": t})],
                        Value::Array(blocks) => blocks
                            .iter()
                            .map(|b| {
                                let mut b = b.clone();
                                b.as_object_mut().map(|o| o.remove("cache_control"));
                                b
                            })
                            .collect(),
                        _ => Vec::new(),
                    })
                    .collect()
            };
            let items: Vec<Value> = items
                .iter()
                .map(|t| serde_json::from_str(t).unwrap())
                .collect();
            assert_eq!(items, expected, "{file} turn {turn} step {step}");
        }
    }
}

/// The assembled input of a step of a page: as many items as `compile` sends, those the page
/// embeds equal to the plan's (by hash), a note standing for each it does not embed; whatever
/// the length of the chain of requests behind it (the script walks it in a loop: a recursion
/// overflowed the stack past a few thousand requests).
fn assemble_in_browser(browser: &Path, dir: &Path, file: &Path, turn: &str, step: &str) {
    let file = file.to_str().unwrap();
    let url = format!("page.html#input-s-{turn}-{step}");
    let dom = browse(browser, &dir.join(url), &["--dump-dom"]);
    let compiled = json(&["compile", file, "--json", "--turn", turn, "--step", step]);
    let expected: Vec<&str> = compiled["input_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["hash"].as_str().unwrap())
        .collect();
    let items = assembled(&dom);
    assert_eq!(
        items.len(),
        expected.len(),
        "{file} turn {turn} step {step}"
    );
    for (k, (text, hash)) in items.iter().zip(&expected).enumerate() {
        if !text.starts_with('\u{2026}') {
            assert_eq!(
                &tagged_hex("item", text.as_bytes()),
                hash,
                "{file}: item {k}"
            );
        }
    }
}

/// A request that appends more items than the page embeds (a compaction's long replacement
/// history), and the last request of a chain of 12 000: their inputs still assemble whole.
#[test]
fn long_inputs_and_long_chains_assemble() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is needed for the HTML test under CI (.ci/run installs it)"
        );
        crate::support::skip("no chromium on PATH: the session page is not tested in a browser");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // fixtures/rollouts/compaction_replacement.jsonl with 75 more items in its replacement.
    let text =
        std::fs::read_to_string(root().join("fixtures/rollouts/compaction_replacement.jsonl"))
            .unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut v: Value = serde_json::from_str(line).unwrap();
            if v["type"] == "compacted" {
                let history = v["payload"]["replacement_history"].as_array_mut().unwrap();
                for k in 0..75 {
                    history.push(serde_json::json!({"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": format!("earlier {k}")}]}));
                }
            }
            v.to_string()
        })
        .collect();
    let long = dir.path().join("long.jsonl");
    std::fs::write(&long, lines.join("\n") + "\n").unwrap();
    page(&["view", long.to_str().unwrap()], dir.path(), "page.html");
    let steps = json(&["steps", long.to_str().unwrap(), "--json"]);
    let mut widest = 0;
    for s in steps["steps"].as_array().unwrap() {
        widest = widest.max(s["input_items"].as_u64().unwrap());
        let (turn, step) = (s["turn"].to_string(), s["step"].to_string());
        assemble_in_browser(&browser, dir.path(), &long, &turn, &step);
    }
    assert!(
        widest > 64,
        "a request past what the page embeds: {widest} items"
    );
    // 12 000 requests of a question and an answer each (Responses-API items, one per line): a
    // recursion over the chain overflowed Chromium's stack past about 10 000.
    let mut chain = String::new();
    for k in 0..12000 {
        for (role, kind) in [("user", "input_text"), ("assistant", "output_text")] {
            chain.push_str(
                &serde_json::json!({"type": "message", "role": role,
                    "content": [{"type": kind, "text": format!("{role} {k}")}]})
                .to_string(),
            );
            chain.push('\n');
        }
    }
    let chained = dir.path().join("chain.jsonl");
    std::fs::write(&chained, chain).unwrap();
    page(
        &["view", chained.to_str().unwrap()],
        dir.path(),
        "page.html",
    );
    let last = json(&["steps", chained.to_str().unwrap(), "--json"])["steps"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let (turn, step) = (last["turn"].to_string(), last["step"].to_string());
    assemble_in_browser(&browser, dir.path(), &chained, &turn, &step);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The report's hit-rate chart puts request numbers across: each session's points are evenly
/// spaced whatever the gaps between its requests (on a time axis a day-long session squeezed
/// the rest into a sliver).
#[test]
fn report_hit_rate_chart_is_by_request_number() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let output = run(&[
        "report",
        "fixtures/report",
        "--timezone",
        "UTC",
        "--format",
        "html",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(
        code(&output),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(&file).unwrap();
    let lines = attributes(
        &html,
        "<polyline class=\"session\"",
        &["points", "data-points"],
    );
    assert!(!lines.is_empty());
    for line in &lines {
        let xs: Vec<f64> = line[0]
            .split(' ')
            .map(|p| p.split_once(',').unwrap().0.parse().unwrap())
            .collect();
        assert_eq!(xs.len().to_string(), line[1]);
        for pair in xs.windows(3) {
            let (a, b) = (pair[1] - pair[0], pair[2] - pair[1]);
            assert!(a > 0.0 && (a - b).abs() < 0.02, "evenly spaced: {xs:?}");
        }
    }
}

//! The analysis of a session whose provider keys its cache on breakpoints (Claude Code's), held
//! to what the reference says: the mock in `conformance/claude_mock.py` (its cache follows
//! Anthropic's documentation) and the numbers the transcript records. Each of these failed on
//! the first version of the breakpoint path (a cold review's findings).

use serde_json::Value;

use crate::agents::claude::session::{Session, plan};
use crate::cache::{PrefixBreak, Verdict, analyze};
use crate::core::hash::{Hash, hash};
use crate::providers::anthropic::{
    Block, Part, PromptView, Simulation, message_chain_next, message_chain_start,
};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// A prompt of one head block and `n` message blocks, a breakpoint on the last block.
struct Prompt {
    head: Vec<Block>,
    chain: Vec<Hash>,
    breakpoints: Vec<(usize, i64)>,
}

fn prompt(n: usize) -> Prompt {
    let head = vec![Block {
        part: Part::System(0),
        hash: hash("t", b"system"),
        known: true,
        breakpoint: None,
    }];
    let mut link = message_chain_start();
    let chain = (0..n)
        .map(|i| {
            link = message_chain_next(&link, &hash("m", &i.to_le_bytes()));
            link
        })
        .collect();
    Prompt {
        breakpoints: vec![(head.len() + n - 1, 300)],
        head,
        chain,
    }
}

impl PromptView for Prompt {
    fn head(&self) -> &[Block] {
        &self.head
    }
    fn message_blocks(&self) -> usize {
        self.chain.len()
    }
    fn message_chain(&self, k: usize) -> Hash {
        self.chain[k]
    }
    fn breakpoints(&self) -> &[(usize, i64)] {
        &self.breakpoints
    }
}

/// CONFORMANCE.md's usage model (and claude_mock.py, `AnthropicCache.usage_for`): "the read is
/// the longest prefix found, and the hit refreshes the entry's TTL". Request B reads A's entry
/// through the lookback at t=200 (its breakpoint is 2 blocks later), so A's entry lives until
/// 500; request C, A's prompt again at t=400 (a retry, a rewind), reads it. The simulation
/// refreshes only the entries at the request's own breakpoints: C finds A's entry expired.
#[test]
fn a_hit_through_the_lookback_refreshes_the_entry_it_read() {
    let mut cache = Simulation::default();
    let (a, b) = (prompt(5), prompt(7));
    assert_eq!(cache.request_view("m", &a, 0, None).read_block, None);
    assert_eq!(cache.request_view("m", &b, 200, None).read_block, Some(5));
    let c = cache.request_view("m", &a, 400, None);
    assert_eq!(
        c.read_block,
        Some(5),
        "{c:?}: the hit at 200 refreshed the entry"
    );
}

/// The 2.1.332 `tool_call` recording with every `cacheControl` emptied and nothing cached (a
/// session run with prompt caching off): the second request extends the first one exactly.
fn uncached_session() -> Option<Session> {
    let dir = root().join("tests/conformance/claude/2.1.332/tool_call/home/.claude/projects");
    let project = std::fs::read_dir(dir).ok()?.next()?.ok()?.path();
    let file = std::fs::read_dir(project)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "jsonl")
                && !p
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("agent-")
        })?;
    let text = std::fs::read_to_string(file).ok()?;
    let mut out = String::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v["type"] == "api-request" {
            v["cacheControl"] = Value::Array(Vec::new());
        }
        if v["type"] == "assistant" {
            let u = &mut v["message"]["usage"];
            let whole = u["input_tokens"].as_u64().unwrap()
                + u["cache_creation_input_tokens"].as_u64().unwrap()
                + u["cache_read_input_tokens"].as_u64().unwrap();
            u["input_tokens"] = whole.into();
            u["cache_creation_input_tokens"] = 0.into();
            u["cache_read_input_tokens"] = 0.into();
            u["cache_creation"] =
                serde_json::json!({"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0});
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    Some(Session::load("uncached.jsonl", out.as_bytes()).unwrap())
}

/// A request after one that sent no breakpoint (nothing was cached) is not a broken prefix: it
/// extends the previous request block for block. `steps` says `prefix_broken` at the first new
/// block while `check` (on `prefix_break`) passes: the two disagree.
#[test]
fn a_request_after_one_without_breakpoints_is_not_a_broken_prefix() {
    let Some(session) = uncached_session() else {
        return;
    };
    let plan = plan(&session, Default::default(), Default::default());
    let rows = analyze(&session, &plan);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[1].shared_items, plan.views[0].1,
        "it extends the first request"
    );
    assert!(
        !matches!(
            rows[1].verdict,
            Verdict::HistoryRewritten(_) | Verdict::ComponentChanged(_)
        ),
        "{:?} at {:?}, prefix_break {:?}",
        rows[1].verdict,
        rows[1].location,
        rows[1].prefix_break
    );
}

/// `fixtures/claude/tool_call_2.1.100.jsonl` with its first response's writes kept an hour (as
/// the usage says: `ephemeral_1h_input_tokens`) and the second request 400 s later, reading the
/// whole prefix. The read proves nothing expired; the verdict says `ttl_expired` (the
/// simulation takes the TTL from the build's rules, 5 minutes, not from the usage). 31 of the
/// 57 `ttl_expired` verdicts of the real samples read the whole previous prefix this way.
#[test]
fn writes_kept_an_hour_do_not_expire_after_five_minutes() {
    let text = std::fs::read_to_string(root().join("fixtures/claude/tool_call_2.1.100.jsonl"))
        .expect("fixture");
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if i == 4 {
            v["message"]["usage"]["cache_creation"] = serde_json::json!({"ephemeral_1h_input_tokens": 23968, "ephemeral_5m_input_tokens": 0});
        }
        if i >= 5
            && let Some(t) = v["timestamp"].as_str()
        {
            v["timestamp"] = t.replace("13:30:41", "13:37:21").into();
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    let session = Session::load("one_hour.jsonl", out.as_bytes()).unwrap();
    let plan = plan(&session, Default::default(), Default::default());
    let rows = analyze(&session, &plan);
    assert_eq!(
        rows[1].observed_cached,
        Some(23968),
        "the whole prefix was read"
    );
    assert!(
        !matches!(rows[1].verdict, Verdict::TtlExpired { .. }),
        "{:?} though the read is the whole prefix",
        rows[1].verdict
    );
}

/// The 2.1.100 `claude_md_edit` recording: the mock read the third request's prompt up to block
/// 23 (`requests.jsonl`: `read_block` 23, its first breakpoint, 16 970 tokens), past every tool.
/// The tools are read, so they did not change: they are not among the parts that must have.
#[test]
fn an_unrecorded_change_does_not_name_parts_the_read_covered() {
    let path = root().join("fixtures/claude/claude_md_edit_2.1.100.jsonl");
    let session = Session::load("claude_md_edit", &std::fs::read(path).unwrap()).unwrap();
    let plan = plan(&session, Default::default(), Default::default());
    let rows = analyze(&session, &plan);
    let Verdict::UnrecordedChange(parts) = &rows[2].verdict else {
        panic!("{:?}", rows[2].verdict);
    };
    assert!(rows[2].observed_cached.unwrap() > 0);
    assert!(
        !parts.iter().any(|p| p == "tools"),
        "read {:?} tokens, yet the suspects are {parts:?}",
        rows[2].observed_cached
    );
}

/// A resume two hours after A's last request reads nothing (the 5-minute entries expired):
/// `steps` on B says `ttl_expired`, but `diff A B` says an unexpected `unrecorded_change` ("one
/// the build does not record changed: tools, system, messages[0].content") and exits 1. Built
/// from the 2.1.100 `resume` recording: A is the file before run 2, B the whole file with run
/// 2 two hours later and its first request reading nothing.
#[test]
fn a_resume_after_the_ttl_is_no_unrecorded_change() {
    let dir = root().join("tests/conformance/claude/2.1.100/resume/home/.claude/projects");
    let Some(project) = std::fs::read_dir(dir)
        .ok()
        .and_then(|mut d| d.next())
        .map(|e| e.unwrap().path())
    else {
        return;
    };
    let file = std::fs::read_dir(project)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("agent-")
        })
        .unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines
        .iter()
        .position(|l| l.contains("\"type\":\"user\"") && l.contains("Now print second."))
        .unwrap();
    let a_text: String = lines[..cut].iter().map(|l| format!("{l}\n")).collect();
    let mut b_text = a_text.clone();
    let mut first_id: Option<String> = None;
    for line in &lines[cut..] {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if let Some(t) = v["timestamp"].as_str() {
            // Two hours later (the recording ran within one hour of the day).
            let hour: u32 = t[11..13].parse().unwrap();
            v["timestamp"] = format!("{}{:02}{}", &t[..11], hour + 2, &t[13..]).into();
        }
        if v["type"] == "assistant" {
            let id = v["message"]["id"].as_str().unwrap().to_string();
            if first_id.is_none() || first_id.as_deref() == Some(id.as_str()) {
                first_id = Some(id);
                let u = &mut v["message"]["usage"];
                let read = u["cache_read_input_tokens"].as_u64().unwrap();
                let write = u["cache_creation_input_tokens"].as_u64().unwrap();
                u["cache_read_input_tokens"] = 0.into();
                u["cache_creation_input_tokens"] = (read + write).into();
                u["cache_creation"]["ephemeral_5m_input_tokens"] = (read + write).into();
            }
        }
        b_text.push_str(&v.to_string());
        b_text.push('\n');
    }
    let a = Session::load("a.jsonl", a_text.as_bytes()).unwrap();
    let b = Session::load("b.jsonl", b_text.as_bytes()).unwrap();
    let (pa, pb) = (
        plan(&a, Default::default(), Default::default()),
        plan(&b, Default::default(), Default::default()),
    );
    let steps_b = analyze(&b, &pb);
    let resumed = steps_b
        .iter()
        .find(|r| r.observed_cached == Some(0) && r.step > 0)
        .expect("B's first request after A's end");
    assert!(
        matches!(resumed.verdict, Verdict::TtlExpired { .. }),
        "{:?}",
        resumed.verdict
    );
    let d = crate::diff::diff(&a, &pa, &b, &pb, None);
    assert!(
        !d.has_unexpected(),
        "steps says {}; diff says {:?}",
        resumed.verdict.name(),
        d.drifts
            .iter()
            .map(|x| (x.class.name(), x.detail.clone()))
            .collect::<Vec<_>>()
    );
}

/// `slopus__happy-cli__duplicate-assistant-response.jsonl` (1.0.51, no tool at all): the third
/// request's read short of the prediction is put on "1.0.x run as `claude -p` sends the last tool
/// turn twice", in a session that made no tool call.
#[test]
fn a_repeated_tool_turn_needs_a_tool_turn() {
    let Some((name, bytes)) = crate::test_support::claude_sample_bytes()
        .into_iter()
        .find(|(n, _)| n.contains("duplicate-assistant-response"))
    else {
        return;
    };
    assert!(!String::from_utf8_lossy(&bytes).contains("tool_use"));
    let session = Session::load(&name, &bytes).unwrap();
    let plan = plan(&session, Default::default(), Default::default());
    for row in analyze(&session, &plan) {
        assert!(
            !matches!(row.verdict, Verdict::KnownRewrite { .. }),
            "step {}: {:?} in a session without a tool call",
            row.step,
            row.verdict
        );
    }
}

/// `check` holds a session to `prefix_break`; when the previous request sent no breakpoint
/// there is none, whatever the verdict says. (Companion of the test above: shows the
/// disagreement directly.)
#[test]
fn steps_and_check_agree_on_a_broken_prefix() {
    let Some(session) = uncached_session() else {
        return;
    };
    let plan = plan(&session, Default::default(), Default::default());
    for row in analyze(&session, &plan) {
        let verdict_broken = matches!(
            row.verdict,
            Verdict::HistoryRewritten(_) | Verdict::ComponentChanged(_)
        );
        let check_broken = matches!(
            row.prefix_break,
            Some(PrefixBreak::Input(_) | PrefixBreak::Component(_))
        );
        assert_eq!(
            verdict_broken, check_broken,
            "step {}: verdict {:?}, prefix_break {:?}",
            row.step, row.verdict, row.prefix_break
        );
    }
}

/// The lookback: a breakpoint reads an entry up to 20 blocks before it, not 21.
#[test]
fn the_lookback_reaches_20_blocks_back_not_21() {
    let mut cache = Simulation::default();
    cache.request_view("m", &prompt(5), 0, None);
    // prompt(n)'s breakpoint is at block n (one head block, n message blocks).
    assert_eq!(
        cache.request_view("m", &prompt(25), 10, None).read_block,
        Some(5)
    );
    let mut cache = Simulation::default();
    cache.request_view("m", &prompt(5), 0, None);
    let far = cache.request_view("m", &prompt(26), 10, None);
    assert_eq!(far.read_block, None, "{far:?}");
    assert!(!far.expired);
}

/// An entry is the model's: the same prompt sent to another model reads nothing; back to the
/// first model within the TTL, it reads again.
#[test]
fn entries_are_per_model() {
    let mut cache = Simulation::default();
    cache.request_view("a", &prompt(5), 0, None);
    assert_eq!(
        cache.request_view("b", &prompt(5), 10, None).read_block,
        None
    );
    assert_eq!(
        cache.request_view("a", &prompt(5), 20, None).read_block,
        Some(5)
    );
}

/// A 5-minute entry is gone after 300 s (the lookup says so: `expired`); an hour's lives on.
#[test]
fn entries_expire_after_their_ttl() {
    let mut cache = Simulation::default();
    cache.request_view("m", &prompt(5), 0, None);
    let late = cache.request_view("m", &prompt(5), 301, None);
    assert_eq!(
        late,
        crate::providers::Lookup {
            read_block: None,
            expired: true
        }
    );
    let mut hour = prompt(5);
    hour.breakpoints[0].1 = 3600;
    let mut cache = Simulation::default();
    cache.request_view("m", &hour, 0, None);
    assert_eq!(
        cache.request_view("m", &prompt(5), 3000, None).read_block,
        Some(5)
    );
}

/// A prompt below the model's minimum cacheable length writes nothing (1 024 tokens for
/// Sonnet; 4 096 for Opus 4.5 and later), without error.
#[test]
fn a_prompt_below_the_minimum_writes_nothing() {
    for (model, tokens, cached) in [
        ("claude-sonnet-4-6", 1000, false),
        ("claude-sonnet-4-6", 1024, true),
        ("claude-opus-4-6", 2000, false),
        ("claude-opus-4-6", 4096, true),
    ] {
        let mut cache = Simulation::default();
        cache.request_view(model, &prompt(5), 0, Some(tokens));
        let next = cache.request_view(model, &prompt(5), 10, Some(tokens));
        assert_eq!(
            next.read_block.is_some(),
            cached,
            "{model} at {tokens} tokens"
        );
    }
}

/// The minimum is the model's of each request, however the model changes from one request to
/// the next (the cache keeps the last model's minimum).
#[test]
fn the_minimum_follows_each_requests_model() {
    let mut cache = Simulation::default();
    let mut read = |model: &str, now: i64| {
        cache
            .request_view(model, &prompt(5), now, Some(2000))
            .read_block
            .is_some()
    };
    let (opus, sonnet) = ("claude-opus-4-6", "claude-sonnet-4-6");
    // 2 000 tokens: below Opus 4.6's minimum, above Sonnet's.
    let reads = [
        read(opus, 0),
        read(opus, 10),
        read(sonnet, 20),
        read(opus, 30),
        read(opus, 40),
        read(sonnet, 50),
    ];
    assert_eq!(reads, [false, false, false, false, false, true]);
}

/// `fixtures/claude/tool_call_2.1.100.jsonl` (5-minute writes) with the second request 400 s
/// after the first and reading nothing: the entries expired, which is named before the provider
/// is blamed, with the gap and the TTL; what the first request left is the loss.
#[test]
fn an_idle_gap_past_the_ttl_is_ttl_expired() {
    let text = std::fs::read_to_string(root().join("fixtures/claude/tool_call_2.1.100.jsonl"))
        .expect("fixture");
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if i >= 5
            && let Some(t) = v["timestamp"].as_str()
        {
            v["timestamp"] = t.replace("13:30:41", "13:37:21").into();
        }
        if i >= 5 && v["type"] == "assistant" {
            let u = &mut v["message"]["usage"];
            let read = u["cache_read_input_tokens"].as_u64().unwrap();
            let write = u["cache_creation_input_tokens"].as_u64().unwrap();
            u["cache_read_input_tokens"] = 0.into();
            u["cache_creation_input_tokens"] = (read + write).into();
            u["cache_creation"] = serde_json::json!({"ephemeral_5m_input_tokens": read + write, "ephemeral_1h_input_tokens": 0});
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    let session = Session::load("idle.jsonl", out.as_bytes()).unwrap();
    let plan = plan(&session, Default::default(), Default::default());
    let rows = analyze(&session, &plan);
    let Verdict::TtlExpired {
        gap_seconds,
        ttl_seconds,
    } = rows[1].verdict
    else {
        panic!("{:?}", rows[1].verdict);
    };
    assert!(gap_seconds > 300, "{gap_seconds}");
    assert_eq!(ttl_seconds, 300);
    assert_eq!(rows[1].lost_tokens, 23968, "what the first request wrote");
}

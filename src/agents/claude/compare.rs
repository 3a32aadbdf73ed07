//! Two Claude Code transcripts held against each other (`diff`), and one against the invariants
//! a cache-friendly session keeps (`check`), in Claude's terms: B's first request of its own
//! against A's last, and each request against the one before it.

use crate::providers::anthropic::without_cache_control;
use serde_json::Value;

use super::cache::{Step, steps};
use super::load::Transcript;
use super::thread::{Conversation, RequestKind};
use super::wire::{Compiled, Given, compile};

/// One thing that differs between two requests, and what it does to the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// `model_switch`, `tools_changed`, `system_changed`, `params_changed`, `context_changed`,
    /// `history_rewritten`, `compaction`, `possible_unrecorded_change`.
    pub class: &'static str,
    /// The part of the request: `model`, `tools`, `system[2]`, `messages[0].content`, ...
    pub part: String,
    /// Asked for (a model switch, a compaction) rather than a cost nobody chose.
    pub expected: bool,
    pub detail: String,
    /// The lines that differ, `- ` for A's and `+ ` for B's.
    pub lines: Vec<String>,
}

/// What `diff` finds.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a_requests: usize,
    pub b_requests: usize,
    /// B's requests that are A's too (the same response ids: a copy, a fork, the same file).
    pub shared: usize,
    /// B's first request of its own (turn, step), if it has one.
    pub b_first: Option<(usize, usize)>,
    pub drifts: Vec<Drift>,
    /// B's first request: what it read against what A's last request left in the cache.
    pub read: Option<(u64, u64)>,
}

impl Comparison {
    pub fn unexpected(&self) -> usize {
        self.drifts.iter().filter(|d| !d.expected).count()
    }
}

fn main_steps(t: &Transcript, c: &Conversation) -> Vec<Step> {
    steps(t, c, &c.shown_thread())
}

fn response_id(c: &Conversation, s: &Step) -> Option<String> {
    let r = c.requests[s.request].response?;
    c.responses[r].message_id.as_deref().map(str::to_string)
}

/// B against A.
pub fn diff(ta: &Transcript, ca: &Conversation, tb: &Transcript, cb: &Conversation) -> Comparison {
    let sa = main_steps(ta, ca);
    let sb = main_steps(tb, cb);
    // A's response ids, to find B's requests that are A's (a set: B may be long).
    let a_ids: std::collections::BTreeSet<String> =
        sa.iter().filter_map(|s| response_id(ca, s)).collect();
    let sampling = |s: &&Step| s.kind == RequestKind::Sampling && !s.copied;
    let shared = sb
        .iter()
        .filter(|s| response_id(cb, s).is_some_and(|id| a_ids.contains(&id)))
        .count();
    let mut out = Comparison {
        a_requests: sa.iter().filter(sampling).count(),
        b_requests: sb.iter().filter(sampling).count(),
        shared,
        b_first: None,
        drifts: Vec::new(),
        read: None,
    };
    let a_last = sa.iter().rfind(|s| sampling(s));
    // B's first request that is not A's; a compaction before it is part of what happened.
    let b_index = sb
        .iter()
        .position(|s| sampling(&s) && !response_id(cb, s).is_some_and(|id| a_ids.contains(&id)));
    let (Some(a_last), Some(b_index)) = (a_last, b_index) else {
        return out;
    };
    let b_first = &sb[b_index];
    out.b_first = Some((b_first.turn, b_first.step));
    let a_body = compile(ta, ca, &ca.requests[a_last.request], &Given::default());
    let b_body = compile(tb, cb, &cb.requests[b_first.request], &Given::default());
    if sb[..b_index]
        .iter()
        .any(|s| s.kind == RequestKind::Compaction && !s.copied)
    {
        out.drifts.push(Drift {
            class: "compaction",
            part: "messages".into(),
            expected: true,
            detail: "a compaction replaced the history before B's first request".into(),
            lines: Vec::new(),
        });
    }
    out.drifts.extend(request_drift(&a_body, &b_body));
    let a_cached = a_last.usage.map(|u| {
        u.cache_read_input_tokens
            .saturating_add(u.cache_creation_input_tokens)
    });
    let b_read = b_first.usage.map(|u| u.cache_read_input_tokens);
    if let (Some(cached), Some(read)) = (a_cached, b_read) {
        out.read = Some((read, cached));
        let recorded_break = out
            .drifts
            .iter()
            .any(|d| d.expected || d.class != "possible_unrecorded_change");
        if read < cached && !recorded_break {
            let unrecorded: Vec<&str> = [
                a_body.body["tools"].is_null().then_some("tools"),
                a_body.body["system"].is_null().then_some("system"),
                a_body
                    .unknown
                    .iter()
                    .any(|u| u.part == "messages[0].content")
                    .then_some("the context injected into messages[0] (CLAUDE.md, git status)"),
                a_body
                    .unknown
                    .iter()
                    .any(|u| u.reason == super::wire::REPEAT_POSSIBLE)
                    .then_some("A's last tool turn, sent twice by 1.0.x run as `claude -p`"),
            ]
            .into_iter()
            .flatten()
            .collect();
            out.drifts.push(Drift {
                class: "possible_unrecorded_change",
                part: unrecorded.join(", "),
                expected: false,
                detail: if unrecorded.is_empty() {
                    format!("B's first request read {read} of the {cached} tokens A's last request left cached, though every recorded part is the same")
                } else {
                    format!(
                        "B's first request read {read} of the {cached} tokens A's last request left cached; the recorded parts are the same, so one this build does not record changed: {}",
                        unrecorded.join(", ")
                    )
                },
                lines: Vec::new(),
            });
        }
    }
    out
}

/// A message's blocks, string content as one text block, breakpoints left out.
fn blocks(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
        Value::Array(items) => items.iter().map(without_cache_control).collect(),
        _ => Vec::new(),
    }
}

fn text_lines(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// The changed lines of two texts, `- ` and `+ `, at most a few of each.
fn changed_lines(a: &str, b: &str) -> Vec<String> {
    const MOST: usize = 12;
    let diff = similar::TextDiff::from_lines(a, b);
    let mut out = Vec::new();
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => "- ",
            similar::ChangeTag::Insert => "+ ",
            similar::ChangeTag::Equal => continue,
        };
        if out.len() == MOST {
            out.push("  …".into());
            break;
        }
        out.push(format!("{sign}{}", change.value().trim_end_matches('\n')));
    }
    out
}

/// What names a changed text: the context Claude Code renders into it.
fn what_changed(lines: &[String]) -> &'static str {
    let text = lines.join("\n");
    if text.contains("CLAUDE.md") || text.contains("claudeMd") {
        "CLAUDE.md"
    } else if text.contains("gitStatus") || text.contains("Status:") || text.contains("git status")
    {
        "the git status"
    } else if text.contains("date is") || !crate::core::volatile::find(&text).is_empty() {
        "the date or a clock time"
    } else {
        "its text"
    }
}

/// How request B differs from request A where it should extend it, part by part in the cache's
/// order. Only A's request counts, not its answer: the cache holds what A sent (an answer the
/// build replaced, as 2.0.77 does a dangling call's, costs nothing).
pub fn request_drift(a: &Compiled, b: &Compiled) -> Vec<Drift> {
    let mut out = Vec::new();
    let (ab, bb) = (&a.body, &b.body);
    if ab["model"] != bb["model"] {
        out.push(Drift {
            class: "model_switch",
            part: "model".into(),
            expected: true,
            detail: format!("{} -> {}: a cache is per model", ab["model"], bb["model"]),
            lines: Vec::new(),
        });
    }
    if let (Value::Array(ta), Value::Array(tb)) = (&ab["tools"], &bb["tools"]) {
        let names = |tools: &[Value]| -> Vec<String> {
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap_or("?").to_string())
                .collect()
        };
        let (na, nb) = (names(ta), names(tb));
        let added: Vec<&String> = nb.iter().filter(|n| !na.contains(n)).collect();
        let removed: Vec<&String> = na.iter().filter(|n| !nb.contains(n)).collect();
        let changed: Vec<&String> = na
            .iter()
            .filter(|n| nb.contains(n))
            .filter(|n| {
                let find = |ts: &[Value]| {
                    ts.iter()
                        .find(|t| t["name"].as_str() == Some(n))
                        .map(without_cache_control)
                };
                find(ta) != find(tb)
            })
            .collect();
        if !added.is_empty() || !removed.is_empty() || !changed.is_empty() || na != nb {
            let list = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
            out.push(Drift {
                class: "tools_changed",
                part: "tools".into(),
                expected: false,
                detail: format!(
                    "added: [{}], removed: [{}], changed: [{}]{}",
                    list(&added),
                    list(&removed),
                    list(&changed),
                    if added.is_empty() && removed.is_empty() && changed.is_empty() {
                        " (order changed)"
                    } else {
                        ""
                    }
                ),
                lines: Vec::new(),
            });
        }
    }
    if let (Value::Array(sa), Value::Array(sb)) = (&ab["system"], &bb["system"]) {
        for i in 0..sa.len().max(sb.len()) {
            let (x, y) = (
                sa.get(i).map(without_cache_control),
                sb.get(i).map(without_cache_control),
            );
            if x == y || (x == Some(Value::Null) && y == Some(Value::Null)) {
                continue;
            }
            let lines = changed_lines(
                &x.as_ref()
                    .map(|v| text_lines(&v["text"]))
                    .unwrap_or_default(),
                &y.as_ref()
                    .map(|v| text_lines(&v["text"]))
                    .unwrap_or_default(),
            );
            let what = what_changed(&lines);
            out.push(Drift {
                class: "system_changed",
                part: format!("system[{i}]"),
                expected: false,
                detail: format!("the system block was re-rendered: {what} changed"),
                lines,
            });
            break;
        }
    }
    let params = [
        "thinking",
        "tool_choice",
        "max_tokens",
        "context_management",
        "output_config",
        "temperature",
    ];
    let changed: Vec<&str> = params
        .iter()
        .copied()
        .filter(|p| !ab[*p].is_null() && !bb[*p].is_null() && ab[*p] != bb[*p])
        .collect();
    if !changed.is_empty() {
        out.push(Drift {
            class: "params_changed",
            part: changed.join(", "),
            expected: false,
            detail: "parameters that invalidate the messages' cache changed".into(),
            lines: Vec::new(),
        });
    }
    let expected_prefix: Vec<Value> = ab["messages"].as_array().cloned().unwrap_or_default();
    let sent = bb["messages"].as_array().cloned().unwrap_or_default();
    let differing = expected_prefix
        .iter()
        .zip(&sent)
        .position(|(x, y)| x["role"] != y["role"] || blocks(x) != blocks(y));
    let at = match differing {
        Some(k) => Some(k),
        None if sent.len() < expected_prefix.len() => Some(sent.len()),
        None => None,
    };
    let compaction = out.iter().any(|d| d.class == "compaction");
    if let Some(k) = at
        && !compaction
    {
        let x = expected_prefix
            .get(k)
            .map(|m| text_lines(&Value::Array(blocks(m))))
            .unwrap_or_default();
        let y = sent
            .get(k)
            .map(|m| text_lines(&Value::Array(blocks(m))))
            .unwrap_or_default();
        let lines = changed_lines(&x, &y);
        let context = lines
            .iter()
            .any(|l| l.contains("<system-reminder>") || l.contains("system-reminder"));
        let (class, detail) = if context || k == 0 {
            (
                "context_changed",
                format!(
                    "the context Claude Code put into message {k} changed: {}",
                    what_changed(&lines)
                ),
            )
        } else {
            (
                "history_rewritten",
                format!("message {k} is not what A sent there"),
            )
        };
        out.push(Drift {
            class,
            part: format!("messages[{k}]"),
            expected: false,
            detail,
            lines,
        });
    }
    out
}

/// One invariant's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub invariant: &'static str,
    pub turn: usize,
    pub step: usize,
    pub detail: String,
}

/// The invariants `check` holds a Claude Code transcript to.
pub const INVARIANTS: &[&str] = &[
    "prefix_extends_previous",
    "no_volatile_before_first_breakpoint",
    "unique_tool_ids",
];

/// Each request of the main thread against the one before it.
pub fn check(t: &Transcript, c: &Conversation) -> (usize, Vec<Failure>) {
    let rows = main_steps(t, c);
    let mut failures = Vec::new();
    let mut previous: Option<Compiled> = None;
    let mut seen_ids: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for s in &rows {
        if s.copied {
            continue;
        }
        if s.kind == RequestKind::Compaction {
            previous = None;
            continue;
        }
        let compiled = compile(t, c, &c.requests[s.request], &Given::default());
        if let Some(prior) = &previous {
            for drift in request_drift(prior, &compiled) {
                if drift.class == "context_changed" || drift.class == "history_rewritten" {
                    failures.push(Failure {
                        invariant: "prefix_extends_previous",
                        turn: s.turn,
                        step: s.step,
                        detail: format!("{}: {}", drift.part, drift.detail),
                    });
                }
            }
        }
        if let Some(text) = before_first_breakpoint(&compiled.body) {
            let found = crate::core::volatile::find(&text);
            if let Some(v) = found.first() {
                failures.push(Failure {
                    invariant: "no_volatile_before_first_breakpoint",
                    turn: s.turn,
                    step: s.step,
                    detail: format!(
                        "`{}` before the first cache breakpoint changes on every run",
                        v.text
                    ),
                });
            }
        }
        if let Some(r) = c.requests[s.request].response {
            for id in &c.responses[r].tool_uses {
                if !seen_ids.insert(id.to_string()) {
                    failures.push(Failure {
                        invariant: "unique_tool_ids",
                        turn: s.turn,
                        step: s.step,
                        detail: format!("tool id {id} was used by an earlier call"),
                    });
                }
            }
        }
        previous = Some(compiled);
    }
    (
        rows.iter()
            .filter(|s| s.kind == RequestKind::Sampling && !s.copied)
            .count(),
        failures,
    )
}

/// The recorded text before the first breakpoint (tools, then system blocks), if the build
/// records them.
fn before_first_breakpoint(body: &Value) -> Option<String> {
    let mut text = String::new();
    for part in ["tools", "system"] {
        let Value::Array(items) = &body[part] else {
            return None;
        };
        for item in items {
            if item.is_null() {
                continue;
            }
            if item.get("cache_control").is_some() {
                text.push_str(
                    &serde_json::to_string(&without_cache_control(item)).unwrap_or_default(),
                );
                return Some(text);
            }
            text.push_str(&serde_json::to_string(item).unwrap_or_default());
            text.push('\n');
        }
    }
    Some(text)
}

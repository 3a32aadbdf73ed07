//! A Claude Code transcript's [`Page`]: `steps`' rows, each request's messages against the
//! previous request's (by the lines they hold), `compile`'s text for a bounded number of steps,
//! `view`'s lines marked sent or not.

use std::collections::HashSet;

use super::view::{kind, preview};
use crate::agents::claude::cache::{Step, Verdict};
use crate::agents::claude::load::{LineKind, Transcript};
use crate::agents::claude::thread::{Conversation, RequestKind, Role, SentMessage};
use crate::agents::claude::wire::{Given, compile};
use crate::render::RenderOptions;
use crate::render::page::shell_word;
use crate::render::page::{BODIES, HistoryRow, Page, PageStep, Piece, Tone};

/// Messages of one step's difference embedded (see the Codex page).
const PIECES: usize = 64;

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

/// A message's text: the content its lines record, one line's after another.
fn message(t: &Transcript, m: &SentMessage) -> Piece {
    let mut text = String::new();
    for &i in &m.lines {
        let content = match &t.lines[i].kind {
            LineKind::User(u) => &u.content,
            LineKind::Assistant(a) => &a.content,
            _ => continue,
        };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(content);
    }
    let what = m
        .lines
        .first()
        .map(|&i| kind(t, i).unwrap_or_default())
        .unwrap_or_else(|| role(m.role).to_string());
    let lines: Vec<String> = m
        .lines
        .iter()
        .map(|&i| t.lines[i].number.to_string())
        .collect();
    let head = m.lines.first().map(|&i| preview(t, i)).unwrap_or_default();
    Piece::new(format!("{what} (line {})  {head}", lines.join(", ")), &text)
}

fn pieces(t: &Transcript, messages: &[SentMessage], from: usize) -> Vec<Piece> {
    let mut out: Vec<Piece> = messages[from..]
        .iter()
        .take(PIECES)
        .map(|m| message(t, m))
        .collect();
    if messages.len() > from + PIECES {
        out.push(Piece::new(
            format!(
                "… {} more messages (compile prints them)",
                messages.len() - from - PIECES
            ),
            "",
        ));
    }
    out
}

fn tone(verdict: Option<&Verdict>) -> Tone {
    match verdict {
        Some(Verdict::Hit | Verdict::ColdStart | Verdict::EarlierFile) => Tone::Good,
        Some(Verdict::Compaction | Verdict::NoCacheFields) | None => Tone::Neutral,
        Some(_) => Tone::Bad,
    }
}

/// The page of a transcript: `rows` are `cache::steps`' of its shown thread.
pub fn page(t: &Transcript, c: &Conversation, rows: &[Step]) -> Page {
    let name = &t.name;
    let mut steps = Vec::with_capacity(rows.len());
    let mut previous: Option<(Vec<SentMessage>, Option<i64>)> = None;
    let mut bodies = 0;
    for (k, r) in rows.iter().enumerate() {
        let request = &c.requests[r.request];
        let history = c.history(t, request);
        let messages = history.messages;
        let at = r
            .timestamp
            .as_deref()
            .and_then(crate::core::lines::unix_seconds);
        let (shared, previous_items, removed, gap_seconds) = match &previous {
            None => (0, 0, Vec::new(), None),
            Some((before, then)) => {
                let shared = before
                    .iter()
                    .zip(&messages)
                    .take_while(|(a, b)| a.role == b.role && a.lines == b.lines)
                    .count();
                let removed = if shared < before.len() {
                    pieces(t, before, shared)
                } else {
                    Vec::new()
                };
                let gap = match (at, then) {
                    (Some(a), Some(b)) => Some(a - b),
                    _ => None,
                };
                (shared, before.len(), removed, gap)
            }
        };
        let mut changed_parts = Vec::new();
        if let Some(Verdict::PrefixBroken { part }) = &r.verdict
            && !part.starts_with("messages")
        {
            changed_parts.push(part.clone());
        }
        let usage = r.usage.as_ref();
        let compaction =
            r.kind == RequestKind::Compaction || matches!(r.verdict, Some(Verdict::Compaction));
        let (short, explanation, verdict) = match &r.verdict {
            Some(v) => (v.short(), v.explain(), v.name().to_string()),
            None if r.copied => (
                "copied".to_string(),
                "a request of another session whose lines this file copied: shown, not judged"
                    .to_string(),
                "copied".to_string(),
            ),
            None => (
                "not judged".to_string(),
                "no verdict: nothing recorded to judge".to_string(),
                "none".to_string(),
            ),
        };
        let mut step = PageStep {
            turn: r.turn,
            step: r.step,
            model: r.model.clone(),
            verdict,
            short: if r.kind == RequestKind::Compaction {
                format!("compaction request; {short}")
            } else {
                short
            },
            explanation,
            tone: tone(r.verdict.as_ref()),
            input: usage.map(|u| u.prompt_tokens()),
            read: usage.map(|u| u.cache_read_input_tokens),
            written: usage.map(|u| u.cache_creation_input_tokens),
            output: usage.map(|u| u.output_tokens),
            estimated: None,
            gap_seconds,
            compaction,
            items: messages.len(),
            shared,
            previous_items,
            changed_parts,
            appended: pieces(t, &messages, shared.min(messages.len())),
            removed,
            changed_texts: Vec::new(),
            body: None,
            command: format!(
                "promptc compile {} --turn {} --step {}",
                shell_word(name),
                r.turn,
                r.step
            ),
        };
        let last = k + 1 == rows.len();
        if last || (step.is_break() && previous.is_some() && bodies + 1 < BODIES) {
            if !last {
                bodies += 1;
            }
            let compiled = compile(t, c, request, &Given::default());
            let mut out = Vec::new();
            let options = RenderOptions {
                color: false,
                width: 100,
                full: false,
            };
            let _ = super::write_compile(&mut out, t, r, &compiled, false, &options);
            step.body = Some(String::from_utf8_lossy(&out).into_owned());
        }
        steps.push(step);
        previous = Some((messages, at));
    }
    let read: u64 = rows
        .iter()
        .filter_map(|r| r.usage.as_ref())
        .map(|u| u.cache_read_input_tokens)
        .sum();
    let input: u64 = rows
        .iter()
        .filter_map(|r| r.usage.as_ref())
        .map(|u| u.prompt_tokens())
        .sum();
    let mut models: Vec<&str> = rows.iter().filter_map(|r| r.model.as_deref()).collect();
    models.sort_unstable();
    models.dedup();
    let mut facts = vec![
        ("file".to_string(), name.to_string()),
        ("agent".to_string(), "Claude Code".to_string()),
        (
            "turns".to_string(),
            rows.last().map_or(0, |r| r.turn).to_string(),
        ),
        ("requests".to_string(), rows.len().to_string()),
        ("models".to_string(), models.join(", ")),
    ];
    if input > 0 {
        facts.push((
            "read".to_string(),
            format!(
                "{read} of {input} input tokens ({:.1}%)",
                read as f64 * 100.0 / input as f64
            ),
        ));
    }
    Page {
        title: format!("promptc: {name}"),
        agent: "claude",
        facts,
        writes: true,
        steps,
        history: history(t, c, rows),
        history_title: "Transcript lines and the last request's messages".to_string(),
    }
}

/// The main thread's lines, each marked when the last request did not send it.
fn history(t: &Transcript, c: &Conversation, rows: &[Step]) -> Vec<HistoryRow> {
    let Some(last) = rows.last() else {
        return Vec::new();
    };
    let messages = c.history(t, &c.requests[last.request]).messages;
    let mut message_of = std::collections::HashMap::new();
    for (k, m) in messages.iter().enumerate() {
        for &i in &m.lines {
            message_of.insert(i, k);
        }
    }
    let sent: HashSet<usize> = message_of.keys().copied().collect();
    (0..t.lines.len())
        .filter(|&i| {
            let line = &t.lines[i];
            line.duplicate_of.is_none() && !line.sidechain && kind(t, i).is_some()
        })
        .map(|i| {
            let what = kind(t, i).unwrap_or_default();
            HistoryRow {
                raw: Some(format!(
                    "L{:<5} {what}  {}",
                    t.lines[i].number,
                    preview(t, i)
                )),
                view: message_of
                    .get(&i)
                    .map(|k| format!("{k:>4} {}", role(messages[*k].role))),
                mark: (!sent.contains(&i)).then(|| "not sent".to_string()),
            }
        })
        .collect()
}

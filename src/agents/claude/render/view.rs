//! `view` of a Claude Code transcript: the main thread's lines as the file records them, beside
//! the messages one request was sent with (the last, or `--turn`/`--step`'s).

use crate::providers::anthropic::without_cache_control;
use std::collections::HashSet;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use crate::AgentSession;
use crate::agents::claude::load::{LineKind, Transcript};
use crate::agents::claude::session::Session;
use crate::agents::claude::wire::Compiled;
use crate::core::lines::{LineNote, SkippedDocument};
use crate::core::sanitize::escape_line;
use crate::render::{RenderOptions, Tone, paint, write_json, write_painted};

/// What kind of line, in a few words: `user/prompt`, `user/tool_result`, `assistant/tool_use`,
/// `attachment/date`, `system/compact_boundary`.
pub(crate) fn kind(t: &Transcript, i: usize) -> Option<String> {
    let line = &t.lines[i];
    Some(match &line.kind {
        LineKind::User(u) if !u.tool_results.is_empty() => "user/tool_result".into(),
        LineKind::User(u) if u.compact_summary => "user/compact_summary".into(),
        LineKind::User(u) if u.meta => "user/meta".into(),
        LineKind::User(_) => "user/prompt".into(),
        LineKind::Assistant(a) => {
            let first = serde_json::from_str::<Value>(&a.content)
                .ok()
                .and_then(|v| v[0]["type"].as_str().map(str::to_string))
                .unwrap_or_else(|| "?".into());
            if a.synthetic() {
                format!("assistant/{first} (synthetic)")
            } else {
                format!("assistant/{first}")
            }
        }
        LineKind::Attachment(a) => {
            format!("attachment/{}", a.attachment_type.as_deref().unwrap_or("?"))
        }
        LineKind::System(s) => format!("system/{}", s.subtype.as_deref().unwrap_or("?")),
        _ => return None,
    })
}

/// The start of a line's text, for a preview.
pub(crate) fn preview(t: &Transcript, i: usize) -> String {
    let text = match &t.lines[i].kind {
        LineKind::User(u) => &u.content,
        LineKind::Assistant(a) => &a.content,
        LineKind::Attachment(a) => match &a.rendered {
            Some(r) => r,
            None => return "(text not recorded by this build)".into(),
        },
        _ => return String::new(),
    };
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    block_preview(&value)
}

fn block_preview(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or("").to_string(),
                Some("tool_use") => {
                    format!("{}({})", b["name"].as_str().unwrap_or("?"), b["input"])
                }
                Some("tool_result") => match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
                Some("thinking") => format!("(thinking) {}", b["thinking"].as_str().unwrap_or("")),
                _ => b
                    .get("content")
                    .map_or_else(|| b.to_string(), Value::to_string),
            })
            .collect::<Vec<_>>()
            .join(" | "),
        other => other.to_string(),
    };
    let flat = text.replace('\n', "\\n");
    let mut out: String = flat.chars().take(60).collect();
    if flat.chars().count() > 60 {
        out.push('…');
    }
    out
}

fn blocks_of(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
        Value::Array(items) => items.iter().map(without_cache_control).collect(),
        _ => Vec::new(),
    }
}

#[derive(Serialize)]
struct ViewDocument<'a> {
    schema_version: u32,
    file: &'a str,
    agent: &'static str,
    /// The request shown; `null` when the transcript records none.
    selection: Option<Selection>,
    lines: Vec<LineRow>,
    model_view: Vec<MessageRow>,
    unknown: Vec<Value>,
    /// Lines that could not be read, as `view` of a rollout lists them.
    skipped_lines: Vec<SkippedDocument<'a>>,
    /// What the transcript's lines hold that promptc does not read (each names its lines:
    /// `line` is `null`).
    notes: Vec<LineNote<'a>>,
}

#[derive(Serialize)]
struct Selection {
    turn: usize,
    step: usize,
}

#[derive(Serialize)]
struct LineRow {
    line: usize,
    kind: String,
    /// In the history the selected request was sent with.
    sent: bool,
}

#[derive(Serialize)]
struct MessageRow {
    role: String,
    blocks: Vec<String>,
    /// The transcript lines it comes from; empty for context only a replay record holds.
    lines: Vec<usize>,
    /// Added by the build's rules (1.0.30's repeated tool turn), not a line of the file.
    added: bool,
}

/// The main thread's conversational lines, with whether `step`'s request was sent each.
pub fn write_view(
    out: &mut dyn Write,
    session: &Session,
    selected: Option<(usize, &Compiled)>,
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    let (t, c) = (&session.transcript, &session.conversation);
    // A transcript that records no request (only bookkeeping and system lines) shows its lines
    // and an empty model view.
    let compiled_unknown = selected.map_or(&[][..], |(_, c)| &c.unknown[..]);
    let selection = selected.map(|(step, _)| {
        let s = &session.steps()[step];
        Selection {
            turn: session.turns()[s.turn].number,
            step: s.number,
        }
    });
    let history = match selected {
        Some((step, _)) => c.history(t, &c.requests[session.claude_steps[step].request]),
        None => Default::default(),
    };
    let sent: HashSet<usize> = history
        .messages
        .iter()
        .flat_map(|m| m.lines.iter().copied())
        .collect();
    let main: Vec<usize> = (0..t.lines.len())
        .filter(|&i| {
            let line = &t.lines[i];
            line.duplicate_of.is_none() && !line.sidechain && kind(t, i).is_some()
        })
        .collect();
    // Each message of the body, with the lines it holds where a history message has its blocks.
    let rendered: Vec<(Vec<Value>, Vec<usize>)> = history
        .messages
        .iter()
        .map(|m| {
            let mut blocks = Vec::new();
            for &i in &m.lines {
                let text = match &t.lines[i].kind {
                    LineKind::User(u) => &u.content,
                    LineKind::Assistant(a) => &a.content,
                    _ => continue,
                };
                match serde_json::from_str::<Value>(text) {
                    Ok(Value::Array(items)) => {
                        blocks.extend(items.iter().map(without_cache_control))
                    }
                    Ok(Value::String(s)) => {
                        blocks.push(serde_json::json!({"type": "text", "text": s}))
                    }
                    _ => {}
                }
            }
            (blocks, m.lines.iter().map(|&i| t.lines[i].number).collect())
        })
        .collect();
    let messages = selected
        .and_then(|(_, c)| c.body["messages"].as_array().cloned())
        .unwrap_or_default();
    let mut used = vec![false; rendered.len()];
    let rows: Vec<MessageRow> = messages
        .iter()
        .map(|m| {
            let blocks = blocks_of(m);
            let found = rendered
                .iter()
                .enumerate()
                .position(|(k, (b, _))| !used[k] && *b == blocks);
            let (lines, added) = match found {
                Some(k) => {
                    used[k] = true;
                    (rendered[k].1.clone(), false)
                }
                None => (Vec::new(), rendered.iter().any(|(b, _)| *b == blocks)),
            };
            MessageRow {
                role: m["role"].as_str().unwrap_or("?").to_string(),
                blocks: blocks
                    .iter()
                    .map(|b| b["type"].as_str().unwrap_or("?").to_string())
                    .collect(),
                lines,
                added,
            }
        })
        .collect();
    let unknown: Vec<Value> = compiled_unknown
        .iter()
        .map(|u| serde_json::json!({"part": u.part, "reason": u.reason}))
        .collect();
    if json {
        return write_json(
            out,
            &ViewDocument {
                schema_version: crate::SCHEMA_VERSION,
                file: &t.name,
                agent: "claude",
                selection,
                lines: main
                    .iter()
                    .map(|&i| LineRow {
                        line: t.lines[i].number,
                        kind: kind(t, i).unwrap_or_default(),
                        sent: sent.contains(&i),
                    })
                    .collect(),
                model_view: rows,
                unknown,
                skipped_lines: t.skipped.iter().map(SkippedDocument::from).collect(),
                notes: t
                    .notes
                    .iter()
                    .map(|note| LineNote { line: None, note })
                    .collect(),
            },
        );
    }
    crate::render::header::write_header(out, session, options)?;
    writeln!(out)?;
    let not_sent = main.iter().filter(|i| !sent.contains(i)).count();
    let heading = match selection {
        Some(_) => format!(
            "TRANSCRIPT ({} lines of the main thread, {not_sent} not in this request)",
            main.len()
        ),
        None => format!("TRANSCRIPT ({} lines of the main thread)", main.len()),
    };
    write_painted(out, options, Tone::Heading, &heading)?;
    for (n, &i) in main.iter().enumerate() {
        let mark = if selection.is_none() || sent.contains(&i) {
            " "
        } else {
            "-"
        };
        let line = format!(
            "{mark} {n:>4} L{:<5} {:<28} {}",
            t.lines[i].number,
            escape_line(&kind(t, i).unwrap_or_default()),
            escape_line(&preview(t, i))
        );
        let tone = if sent.contains(&i) {
            Tone::Dim
        } else {
            Tone::Removed
        };
        writeln!(
            out,
            "{}",
            if mark == "-" {
                paint(options, tone, &line)
            } else {
                line
            }
        )?;
    }
    writeln!(out)?;
    let added = rows.iter().filter(|r| r.added).count();
    let heading = match &selection {
        Some(Selection { turn, step }) => format!(
            "MODEL VIEW (turn {turn} step {step}: {} messages, {added} added by the build)",
            rows.len()
        ),
        None => "MODEL VIEW (the transcript records no request)".to_string(),
    };
    write_painted(out, options, Tone::Heading, &heading)?;
    for (n, (row, m)) in rows.iter().zip(&messages).enumerate() {
        let mark = if row.added { "+" } else { " " };
        let lines = if row.lines.is_empty() {
            if row.added {
                "(repeated)".to_string()
            } else {
                "(replay record)".to_string()
            }
        } else {
            row.lines
                .iter()
                .map(|l| format!("L{l}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let line = format!(
            "{mark} {n:>4} {:<9} {:<14} {}",
            escape_line(&row.role),
            escape_line(&lines),
            escape_line(&block_preview(&m["content"]))
        );
        writeln!(
            out,
            "{}",
            if row.added {
                paint(options, Tone::Added, &line)
            } else {
                line
            }
        )?;
        if let Some(u) = compiled_unknown
            .iter()
            .find(|u| u.part == format!("messages[{n}].content"))
        {
            write_painted(
                out,
                options,
                Tone::Warning,
                &format!("?        {}", escape_line(&u.reason)),
            )?;
        }
    }
    // What the messages may hold beyond these (1.0.x `claude -p`'s repeated tool turn).
    for u in compiled_unknown.iter().filter(|u| u.part == "messages") {
        let line = format!("?        {}", escape_line(&u.reason));
        write_painted(out, options, Tone::Warning, &line)?;
    }
    Ok(())
}

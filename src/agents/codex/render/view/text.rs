//! `view`'s text form: the raw history and the model view side by side, one row per item.

use std::io::{self, Write};

use super::ViewScope;
use crate::AgentSession;
use crate::agents::codex::content::preview;
use crate::agents::codex::model::Item;
use crate::agents::codex::normalize::Origin;
use crate::agents::codex::session::Session;
use crate::core::sanitize::{escape_line, truncate};
use crate::render::header::write_header;
use crate::render::{RenderOptions, Tone, human_size, paint, write_painted};

/// One cell describing an item: kind, role or call id, size, start of text.
fn item_cell(item: &Item, json: &str, width: usize) -> String {
    let kind = match (item.type_name.as_ref(), item.role.as_deref()) {
        ("message", Some(role)) => format!("message/{role}"),
        (other, _) => other.to_string(),
    };
    let tag = item
        .call_id
        .as_deref()
        .map(|c| format!(" {}", escape_line(c)))
        .unwrap_or_default();
    let head = format!(
        "{:<22}{} {}",
        truncate(&kind, 22),
        tag,
        human_size(json.len())
    );
    let text = escape_line(&preview(item, json)).into_owned();
    let room = width.saturating_sub(head.chars().count() + 2);
    if room < 4 || text.is_empty() {
        truncate(&head, width).into_owned()
    } else {
        format!("{head}  {}", truncate(&text, room))
    }
}

/// Write `view` as text.
pub fn write_text_view(
    out: &mut dyn Write,
    session: &Session,
    scope: &ViewScope,
    options: &RenderOptions,
) -> io::Result<()> {
    write_header(out, session, options)?;
    if let Some(step) = scope.step {
        writeln!(
            out,
            "{} {}: the request's input",
            paint(options, Tone::Dim, "showing  "),
            session.step_label(step)
        )?;
    } else if scope.turns.len() == 1 && session.replay.turns.len() > 1 {
        writeln!(
            out,
            "{} items recorded in turn {}",
            paint(options, Tone::Dim, "showing  "),
            session.replay.turns[scope.turns[0]].number
        )?;
    }
    writeln!(out)?;
    let synthetic = scope
        .view
        .entries
        .iter()
        .filter(|e| matches!(e.origin, Origin::Synthetic { call } if scope.shown.contains(&call)))
        .count();
    let dropped = scope
        .view
        .dropped
        .iter()
        .filter(|d| scope.shown.contains(&d.raw_index))
        .count();
    let side_by_side = options.width >= 150;
    let rows = rows(scope);
    let raw_title = format!("RAW HISTORY ({} items)", scope.shown.len());
    let view_title = format!("MODEL VIEW ({} synthetic, {} dropped)", synthetic, dropped);
    if side_by_side {
        let column = (options.width - 3) / 2;
        write_painted(
            out,
            options,
            Tone::Heading,
            &format!("{:<column$} | {}", raw_title, view_title),
        )?;
        for row in &rows {
            let left = row_left(session, scope, row, column);
            let right = row_right(session, scope, row, column);
            let left = format!("{left:<column$}");
            writeln!(
                out,
                "{} | {}",
                paint_row(options, &left, row),
                paint_row(options, &right, row)
            )?;
        }
    } else {
        write_painted(out, options, Tone::Heading, &raw_title)?;
        for row in rows.iter().filter(|r| r.raw.is_some()) {
            let text = row_left(session, scope, row, options.width);
            writeln!(out, "{}", paint_row(options, &text, row))?;
        }
        writeln!(out)?;
        write_painted(out, options, Tone::Heading, &view_title)?;
        for row in rows
            .iter()
            .filter(|r| r.view.is_some() || r.dropped.is_some())
        {
            let text = row_right(session, scope, row, options.width);
            writeln!(out, "{}", paint_row(options, &text, row))?;
        }
    }
    Ok(())
}

/// One aligned row: a raw entry and what the model view made of it.
struct Row {
    raw: Option<usize>,
    view: Option<usize>,
    dropped: Option<&'static str>,
    synthetic: bool,
}

fn rows(scope: &ViewScope) -> Vec<Row> {
    let mut by_raw: Vec<Option<usize>> = vec![None; scope.history.len()];
    let mut synthetic_after: Vec<Vec<usize>> = vec![Vec::new(); scope.history.len()];
    for (index, entry) in scope.view.entries.iter().enumerate() {
        match entry.origin {
            Origin::Raw(i) => by_raw[i] = Some(index),
            Origin::Synthetic { call } => synthetic_after[call].push(index),
        }
    }
    let mut dropped: Vec<Option<&'static str>> = vec![None; scope.history.len()];
    for d in &scope.view.dropped {
        dropped[d.raw_index] = Some(d.reason.name());
    }
    let mut rows = Vec::new();
    for raw in scope.shown.clone() {
        rows.push(Row {
            raw: Some(raw),
            view: by_raw[raw],
            dropped: dropped[raw],
            synthetic: false,
        });
        for &view in &synthetic_after[raw] {
            rows.push(Row {
                raw: None,
                view: Some(view),
                dropped: None,
                synthetic: true,
            });
        }
    }
    rows
}

fn row_left(session: &Session, scope: &ViewScope, row: &Row, width: usize) -> String {
    match row.raw {
        None => String::new(),
        Some(raw) => {
            let entry = scope.history[raw];
            let marker = if row.dropped.is_some() {
                '-'
            } else if entry.origin != crate::agents::codex::replay::EntryOrigin::File {
                '~'
            } else {
                ' '
            };
            let head = format!("{marker}{raw:>4} L{:<5} ", entry.line);
            let room = width.saturating_sub(head.chars().count());
            let item = session.item(entry.item);
            format!(
                "{head}{}",
                item_cell(item, session.item_json(entry.item), room)
            )
        }
    }
}

fn row_right(session: &Session, scope: &ViewScope, row: &Row, width: usize) -> String {
    if let Some(reason) = row.dropped {
        let raw = row.raw.unwrap_or(0);
        return format!("-  dropped raw {raw}: {reason}");
    }
    match row.view {
        None => String::new(),
        Some(index) => {
            let entry = &scope.view.entries[index];
            let origin = match entry.origin {
                Origin::Raw(i) => scope.history[i].origin,
                Origin::Synthetic { .. } => crate::agents::codex::replay::EntryOrigin::Summary,
            };
            let (marker, label) = match origin {
                crate::agents::codex::replay::EntryOrigin::File => (' ', ""),
                crate::agents::codex::replay::EntryOrigin::Summary => ('+', "synthetic "),
                crate::agents::codex::replay::EntryOrigin::Rebuilt => ('~', "rebuilt "),
                crate::agents::codex::replay::EntryOrigin::Approximate => ('~', "approx. "),
                crate::agents::codex::replay::EntryOrigin::Parent => ('^', "parent "),
            };
            let head = format!("{marker}{index:>4} {label}");
            let room = width.saturating_sub(head.chars().count());
            let item = session.view_item(entry);
            format!("{head}{}", item_cell(item, session.view_json(entry), room))
        }
    }
}

fn paint_row(options: &RenderOptions, text: &str, row: &Row) -> String {
    if row.dropped.is_some() {
        paint(options, Tone::Removed, text)
    } else if row.synthetic {
        paint(options, Tone::Added, text)
    } else {
        text.to_string()
    }
}

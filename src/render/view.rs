//! `promptc view`: the raw history and the model view, side by side or stacked, and its JSON.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::value::RawValue;

use super::{RenderOptions, Tone, human_size, paint, raw_json, write_json};
use crate::agents::codex::content::preview;
use crate::agents::codex::model::{Item, RecordKind};
use crate::agents::codex::normalize::{ModelView, Origin, ViewItem};
use crate::agents::codex::replay::{HistoryEntry, Observation};
use crate::agents::codex::session::{SelectError, Session, TurnSelector};
use crate::core::sanitize::{escape_line, truncate};
use crate::core::shared::Slice;

/// What `view` shows: a raw history slice and its model view.
#[derive(Debug)]
pub struct ViewScope<'a> {
    pub history: Slice<'a, HistoryEntry>,
    pub view: ModelView,
    /// Raw indices shown (all when narrowing to a step or showing the whole session).
    pub shown: std::ops::Range<usize>,
    /// Turn indices shown.
    pub turns: Vec<usize>,
    /// The selected step, if any.
    pub step: Option<usize>,
}

/// Select what to show. No selection: the final history. `--turn`: the items recorded during
/// that turn. `--turn --step`: the exact input of that step's request.
pub fn scope<'a>(
    session: &'a Session,
    turn: Option<&TurnSelector>,
    step: Option<usize>,
) -> Result<ViewScope<'a>, SelectError> {
    let replay = &session.replay;
    match (turn, step) {
        (None, None) => {
            let history = replay.history();
            Ok(ViewScope {
                history,
                view: session.model_view(history),
                shown: 0..history.len(),
                turns: (0..replay.turns.len()).collect(),
                step: None,
            })
        }
        (Some(turn), None) => {
            let turn_index = session.select_turn(turn)?;
            let turn_record = &replay.turns[turn_index];
            let next_line = replay
                .turns
                .get(turn_index + 1)
                .map_or(usize::MAX, |t| t.line);
            // The epoch the turn's last step used, or the final one.
            let epoch = turn_record
                .steps
                .last()
                .map_or(replay.epochs.len() - 1, |&s| replay.steps[s].epoch);
            let history = replay.epoch(epoch);
            let start = history
                .iter()
                .position(|e| e.line >= turn_record.line)
                .unwrap_or(history.len());
            let end = history
                .iter()
                .position(|e| e.line >= next_line)
                .unwrap_or(history.len())
                .max(start);
            Ok(ViewScope {
                history,
                view: session.model_view(history),
                shown: start..end,
                turns: vec![turn_index],
                step: None,
            })
        }
        (turn, Some(_)) => {
            let step_index = session.select_step(turn, step)?;
            let history = replay.step_history(step_index);
            Ok(ViewScope {
                history,
                view: session.model_view(history),
                shown: 0..history.len(),
                turns: vec![replay.steps[step_index].turn],
                step: Some(step_index),
            })
        }
    }
}

#[derive(Serialize)]
struct ViewDocument<'a> {
    schema_version: u32,
    file: &'a str,
    generation: &'static str,
    era: &'static str,
    session: SessionDocument<'a>,
    selection: Option<SelectionDocument<'a>>,
    records: Vec<RecordDocument>,
    raw: Vec<RawEntryDocument<'a>>,
    model_view: Vec<ViewEntryDocument<'a>>,
    dropped: Vec<DroppedDocument>,
    turns: Vec<TurnDocument<'a>>,
    skipped_lines: Vec<SkippedDocument<'a>>,
    approximations: Vec<LineNote<'a>>,
    notes: Vec<LineNote<'a>>,
}

/// Session metadata shared by several documents.
#[derive(Serialize)]
pub struct SessionDocument<'a> {
    pub id: Option<&'a str>,
    pub forked_from_id: Option<&'a str>,
    pub cli_version: Option<&'a str>,
    pub originator: Option<&'a str>,
    pub cwd: Option<&'a str>,
    pub models: Vec<String>,
    pub turns: usize,
    pub steps: usize,
}

impl<'a> SessionDocument<'a> {
    /// From a session.
    pub fn new(session: &'a Session) -> SessionDocument<'a> {
        let meta = session.rollout.meta.as_ref();
        SessionDocument {
            id: meta.and_then(|m| m.id.as_deref()),
            forked_from_id: meta.and_then(|m| m.forked_from_id.as_deref()),
            cli_version: meta.and_then(|m| m.cli_version.as_deref()),
            originator: meta.and_then(|m| m.originator.as_deref()),
            cwd: meta.and_then(|m| m.cwd.as_deref()),
            models: session.models(),
            turns: session.replay.turns.len(),
            steps: session.replay.steps.len(),
        }
    }
}

#[derive(Serialize)]
struct SelectionDocument<'a> {
    turn: usize,
    turn_id: Option<&'a str>,
    step: Option<usize>,
}

#[derive(Serialize)]
struct RecordDocument {
    line: usize,
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    item_type: Option<String>,
    effect: &'static str,
    entered_history: bool,
}

#[derive(Serialize)]
struct RawEntryDocument<'a> {
    index: usize,
    line: usize,
    /// `raw` (read from the file) or, after a compaction promptc had to rebuild,
    /// `approximate`, `rebuilt` or `synthetic`.
    origin: &'static str,
    item: WrittenItem<'a>,
}

/// An item written as its JSON: a history item, checked as JSON when first written and
/// released once written, or a text of promptc's own.
enum WrittenItem<'a> {
    History {
        id: usize,
        items: &'a WrittenItems<'a>,
    },
    Own(&'a RawValue),
}

impl Serialize for WrittenItem<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            WrittenItem::History { id, items } => items.write(*id, serializer),
            WrittenItem::Own(json) => json.serialize(serializer),
        }
    }
}

/// The history items of a view document. Most appear twice, in the raw history and in the
/// model view: each one's JSON is checked (which `raw_json` does) once, when first written.
struct WrittenItems<'a> {
    session: &'a Session,
    checked: std::cell::RefCell<Vec<Option<&'a RawValue>>>,
}

impl<'a> WrittenItems<'a> {
    fn write<S: serde::Serializer>(&self, id: usize, serializer: S) -> Result<S::Ok, S::Error> {
        let session = self.session;
        let index = session.replay.dense_index(&session.rollout, id);
        let known = self.checked.borrow()[index];
        let json = known.unwrap_or_else(|| {
            let json = raw_json(session.item_json(id));
            self.checked.borrow_mut()[index] = Some(json);
            json
        });
        json.serialize(serializer)
    }
}

#[derive(Serialize)]
struct ViewEntryDocument<'a> {
    index: usize,
    origin: &'static str,
    /// The raw index of the entry (origin raw) or of the call it answers (origin synthetic).
    raw_index: usize,
    item: WrittenItem<'a>,
}

#[derive(Serialize)]
struct DroppedDocument {
    raw_index: usize,
    reason: &'static str,
}

/// A turn and its steps.
#[derive(Serialize)]
pub struct TurnDocument<'a> {
    pub number: usize,
    pub turn_id: Option<&'a str>,
    pub line: usize,
    pub rolled_back: bool,
    pub aborted: bool,
    pub steps: Vec<StepDocument<'a>>,
}

/// A step in a turn listing.
#[derive(Serialize)]
pub struct StepDocument<'a> {
    pub step: usize,
    pub line: usize,
    pub input_items: usize,
    pub pending: bool,
    /// A compaction request (only written when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub compaction: bool,
    pub model: Option<&'a str>,
    pub effort: Option<&'a str>,
    pub usage: Option<UsageDocument>,
}

/// A usage observation.
#[derive(Serialize)]
pub struct UsageDocument {
    pub line: usize,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_input_tokens: Option<u64>,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
}

impl UsageDocument {
    /// From an observation.
    pub fn new(observation: &Observation) -> UsageDocument {
        let u = &observation.usage;
        UsageDocument {
            line: observation.line,
            input_tokens: u.input_tokens,
            cached_input_tokens: u.cached_input_tokens,
            cache_write_input_tokens: u.cache_write_input_tokens,
            output_tokens: u.output_tokens,
            reasoning_output_tokens: u.reasoning_output_tokens,
        }
    }
}

#[derive(Serialize)]
struct SkippedDocument<'a> {
    line: usize,
    column: Option<usize>,
    reason: &'a str,
}

#[derive(Serialize)]
struct LineNote<'a> {
    line: usize,
    note: &'a str,
}

/// Turn documents for the given turn indices.
/// Turn documents; `input_items(step)` is the number of items the step's request sent.
pub fn turn_documents<'a>(
    session: &'a Session,
    turns: &[usize],
    input_items: &dyn Fn(usize) -> usize,
) -> Vec<TurnDocument<'a>> {
    turns
        .iter()
        .map(|&t| {
            let turn = &session.replay.turns[t];
            TurnDocument {
                number: turn.number,
                turn_id: turn.turn_id.as_deref(),
                line: turn.line,
                rolled_back: turn.rolled_back,
                aborted: turn.aborted,
                steps: turn
                    .steps
                    .iter()
                    .map(|&s| {
                        let step = &session.replay.steps[s];
                        let context = session.step_context(s);
                        StepDocument {
                            step: step.number,
                            line: step.line,
                            input_items: input_items(s),
                            pending: step.pending,
                            compaction: step.compaction,
                            model: context.and_then(|c| c.model.as_deref()),
                            effort: context.and_then(|c| c.effort.as_deref()),
                            usage: step.usage.as_ref().map(UsageDocument::new),
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Write `view --format json`. `plan` gives each step's request size (its model view's length);
/// any plan of the session will do.
pub fn write_json_view(
    out: &mut dyn Write,
    session: &Session,
    scope: &ViewScope,
    plan: &crate::fingerprint::Plan,
) -> io::Result<()> {
    let rollout = &session.rollout;
    let replay = &session.replay;
    let records = rollout
        .records
        .iter()
        .zip(&replay.effects)
        .map(|(record, effect)| RecordDocument {
            line: record.line,
            kind: record.kind.name(),
            item_type: match &record.kind {
                RecordKind::Item(id) => Some(rollout.items[*id].type_name.to_string()),
                _ => None,
            },
            effect: effect.name(),
            entered_history: *effect == crate::agents::codex::replay::Effect::EnteredHistory,
        })
        .collect();
    let in_scope = |raw_index: usize| scope.shown.contains(&raw_index);
    let items = WrittenItems {
        session,
        checked: std::cell::RefCell::new(vec![
            None;
            rollout.items.len() + replay.extra_items.len()
        ]),
    };
    let raw = scope
        .history
        .iter()
        .enumerate()
        .filter(|(i, _)| in_scope(*i))
        .map(|(index, entry)| RawEntryDocument {
            index,
            line: entry.line,
            origin: entry.origin.name(),
            item: WrittenItem::History {
                id: entry.item,
                items: &items,
            },
        })
        .collect();
    let model_view = scope
        .view
        .entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            let (origin, raw_index) = match entry.origin {
                Origin::Raw(i) => (scope.history[i].origin.name(), i),
                Origin::Synthetic { call } => ("synthetic", call),
            };
            if !in_scope(raw_index) {
                return None;
            }
            let item = match &entry.item {
                // Sent as recorded: the same text as in the raw history.
                ViewItem::History(id) if session.item(*id).wire.is_none() => WrittenItem::History {
                    id: *id,
                    items: &items,
                },
                _ => WrittenItem::Own(raw_json(session.view_json(entry))),
            };
            Some(ViewEntryDocument {
                index,
                origin,
                raw_index,
                item,
            })
        })
        .collect();
    let dropped = scope
        .view
        .dropped
        .iter()
        .filter(|d| in_scope(d.raw_index))
        .map(|d| DroppedDocument {
            raw_index: d.raw_index,
            reason: d.reason.name(),
        })
        .collect();
    let selection = scope
        .turns
        .first()
        .filter(|_| scope.turns.len() == 1)
        .map(|&t| {
            let turn = &replay.turns[t];
            SelectionDocument {
                turn: turn.number,
                turn_id: turn.turn_id.as_deref(),
                step: scope.step.map(|s| replay.steps[s].number),
            }
        });
    let document = ViewDocument {
        schema_version: crate::SCHEMA_VERSION,
        file: &rollout.name,
        generation: rollout.generation.name(),
        era: rollout.era(),
        session: SessionDocument::new(session),
        selection: if scope.step.is_some() || scope.turns.len() == 1 && replay.turns.len() > 1 {
            selection
        } else {
            None
        },
        records,
        raw,
        model_view,
        dropped,
        turns: turn_documents(session, &scope.turns, &|step| {
            plan.views[step].1 + usize::from(session.replay.steps[step].compaction)
        }),
        skipped_lines: rollout
            .skipped
            .iter()
            .map(|s| SkippedDocument {
                line: s.line,
                column: s.column,
                reason: &s.reason,
            })
            .collect(),
        approximations: replay
            .approximations
            .iter()
            .map(|(line, note)| LineNote { line: *line, note })
            .collect(),
        notes: rollout
            .notes
            .iter()
            .map(|(line, note)| LineNote { line: *line, note })
            .collect(),
    };
    write_json(out, &document)
}

/// The header every text command prints: file, session, turns and steps, warnings.
pub fn write_header(
    out: &mut dyn Write,
    session: &Session,
    options: &RenderOptions,
) -> io::Result<()> {
    let rollout = &session.rollout;
    let meta = rollout.meta.as_ref();
    let label = |name: &str| paint(options, Tone::Dim, &format!("{name:<9}"));
    writeln!(
        out,
        "{} {} ({}, era {})",
        label("file"),
        escape_line(&rollout.name),
        rollout.generation.name(),
        rollout.era()
    )?;
    let mut session_line = meta
        .and_then(|m| m.id.as_deref())
        .map_or("(no session_meta)".to_string(), |id| {
            escape_line(id).into_owned()
        });
    if let Some(version) = meta.and_then(|m| m.cli_version.as_deref()) {
        session_line.push_str(&format!("  cli {}", escape_line(version)));
    }
    if let Some(forked) = meta.and_then(|m| m.forked_from_id.as_deref()) {
        session_line.push_str(&format!("  forked from {}", escape_line(forked)));
    }
    writeln!(out, "{} {}", label("session"), session_line)?;
    if let Some(fork) = &session.fork
        && let Some(parent) = &fork.parent
    {
        writeln!(
            out,
            "{} {}: the history opens with its {} items before the fork",
            label("parent"),
            escape_line(parent),
            fork.items
        )?;
    }
    let models = session.models();
    if !models.is_empty() {
        let models: Vec<_> = models.iter().map(|m| escape_line(m).into_owned()).collect();
        writeln!(out, "{} {}", label("models"), models.join(", "))?;
    }
    writeln!(
        out,
        "{} {} turns, {} steps, {} lines read, {} skipped",
        label("history"),
        session.replay.turns.len(),
        session.replay.steps.len(),
        rollout.records.len(),
        rollout.skipped.len()
    )?;
    for skipped in &rollout.skipped {
        let column = skipped.column.map(|c| format!(":{c}")).unwrap_or_default();
        writeln!(
            out,
            "{} line {}{}: {}",
            paint(options, Tone::Warning, "skipped  "),
            skipped.line,
            column,
            escape_line(&skipped.reason)
        )?;
    }
    for (line, note) in &rollout.notes {
        writeln!(
            out,
            "{} line {line}: {}",
            paint(options, Tone::Warning, "note     "),
            escape_line(note)
        )?;
    }
    for (line, note) in &session.replay.approximations {
        writeln!(
            out,
            "{} line {line}: {}",
            paint(options, Tone::Warning, "approx   "),
            escape_line(note)
        )?;
    }
    Ok(())
}

/// `turn N step M`, and whether the step is the pending request a resume would send or a
/// compaction request.
pub fn step_label(session: &Session, step: usize) -> String {
    let s = &session.replay.steps[step];
    let turn = &session.replay.turns[s.turn];
    let pending = if s.pending {
        " (pending: what a resume sends next)"
    } else if s.compaction {
        " (compaction request: the history, then the checkpoint prompt)"
    } else {
        ""
    };
    format!("turn {} step {}{pending}", turn.number, s.number)
}

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
            step_label(session, step)
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
        writeln!(
            out,
            "{}",
            paint(
                options,
                Tone::Heading,
                &format!("{:<column$} | {}", raw_title, view_title)
            )
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
        writeln!(out, "{}", paint(options, Tone::Heading, &raw_title))?;
        for row in rows.iter().filter(|r| r.raw.is_some()) {
            let text = row_left(session, scope, row, options.width);
            writeln!(out, "{}", paint_row(options, &text, row))?;
        }
        writeln!(out)?;
        writeln!(out, "{}", paint(options, Tone::Heading, &view_title))?;
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

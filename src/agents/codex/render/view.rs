//! `promptc view`: what a selection shows (the raw history and the model view) and its JSON; the
//! text form, side by side or stacked, is `view/text.rs`.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::AgentSession;
use crate::agents::codex::model::RecordKind;
use crate::agents::codex::normalize::{ModelView, Origin, ViewItem};
use crate::agents::codex::replay::HistoryEntry;
use crate::agents::codex::session::Session;
use crate::core::lines::{LineNote, SkippedDocument};
use crate::core::shared::Slice;
use crate::core::steps::Observation;
use crate::render::{raw_json, write_json};
use crate::{SelectError, TurnSelector};

mod text;

pub use text::write_text_view;

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
        skipped_lines: rollout.skipped.iter().map(SkippedDocument::from).collect(),
        approximations: replay.approximations.iter().map(LineNote::from).collect(),
        notes: rollout.notes.iter().map(LineNote::from).collect(),
    };
    write_json(out, &document)
}

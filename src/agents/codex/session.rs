//! A loaded and replayed rollout, and the selections commands make on it (a turn, a step).

use crate::agents::codex::model::{Item, ItemId, RecordKind, Rollout, TurnContext};
use crate::agents::codex::normalize::{ModelView, ViewEntry, ViewItem, normalize};
use crate::agents::codex::parse::{LoadError, LoadOptions, load};
use crate::agents::codex::replay::{HistoryEntry, Replay, replay, replay_with_base};
use crate::core::shared::Slice;

/// A rollout with its replay.
#[derive(Debug)]
pub struct Session {
    pub rollout: Rollout,
    pub replay: Replay,
    /// For a fork (`forked_from_id`): its parent and what was taken from it.
    pub fork: Option<ForkLink>,
}

/// Where a fork branched off its parent, as the fork's first line (`session_meta`) says
/// (0.152+: `forked_from_id`, `forked_from_ordinal_exclusive`, `history_base`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkPoint {
    pub parent_id: String,
    /// The parent's lines before the fork: those with a smaller `ordinal` (0-based line index).
    pub ordinal_exclusive: Option<usize>,
    /// The byte length of those lines in the parent file.
    pub end_byte_offset: Option<usize>,
}

/// The parent of a fork, as the caller (which reads files) found it.
#[derive(Debug)]
pub enum Parent {
    /// The parent rollout, already cut at the fork point ([`parent_prefix`]) and loaded.
    Found(Box<Session>),
    /// Not found: why, for the notes.
    NotFound(String),
}

/// A fork's link to its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkLink {
    pub parent_id: String,
    /// How the caller named the parent rollout; `None` when it was not found.
    pub parent: Option<String>,
    /// Raw history items taken from the parent (they open the fork's history).
    pub items: usize,
    /// Lines of the parent before the fork point.
    pub parent_lines: usize,
}

/// The fork point a rollout's first line names, if it is a fork.
pub fn fork_point(rollout: &Rollout) -> Option<ForkPoint> {
    let first = rollout.records.first().filter(|record| record.line == 1)?;
    let RecordKind::SessionMeta(meta) = &first.kind else {
        return None;
    };
    Some(ForkPoint {
        parent_id: meta.forked_from_id.clone()?,
        ordinal_exclusive: meta.fork_ordinal_exclusive,
        end_byte_offset: meta.fork_end_byte_offset,
    })
}

/// The part of the parent rollout before the fork point: the byte offset when it ends a line,
/// else the first `ordinal_exclusive` lines, else the whole file (a fork written before these
/// fields took the whole parent).
pub fn parent_prefix<'a>(parent: &'a [u8], point: &ForkPoint) -> &'a [u8] {
    if let Some(end) = point.end_byte_offset
        && end <= parent.len()
        && (end == parent.len() || end == 0 || parent[end - 1] == b'\n')
    {
        return &parent[..end];
    }
    if let Some(lines) = point.ordinal_exclusive {
        let mut seen = 0;
        for (index, &byte) in parent.iter().enumerate() {
            if seen == lines {
                return &parent[..index];
            }
            if byte == b'\n' {
                seen += 1;
            }
        }
        if seen == lines {
            return parent;
        }
    }
    parent
}

pub use crate::core::steps::{SelectError, TurnSelector};

impl Session {
    /// Load and replay.
    pub fn load(
        name: &str,
        bytes: impl AsRef<[u8]>,
        options: LoadOptions,
    ) -> Result<Session, LoadError> {
        Ok(Session::new(load(name, bytes, options)?))
    }

    /// Replay a loaded rollout.
    pub fn new(rollout: Rollout) -> Session {
        let replay = replay(&rollout);
        Session {
            rollout,
            replay,
            fork: None,
        }
    }

    /// Replay a loaded fork: its history starts with the parent's history at the fork point
    /// (what Codex sends in the fork's first request), or, when the parent was not found, the
    /// replay says so in its approximations.
    pub fn fork(rollout: Rollout, point: &ForkPoint, parent: Parent) -> Session {
        let (replay, link) = match parent {
            Parent::Found(parent) => {
                let base: Vec<Item> = parent
                    .replay
                    .history()
                    .iter()
                    .map(|entry| {
                        let item = parent.item(entry.item);
                        Item {
                            line: 1,
                            ..item.clone()
                        }
                    })
                    .collect();
                let link = ForkLink {
                    parent_id: point.parent_id.clone(),
                    parent: Some(parent.rollout.name.clone()),
                    items: base.len(),
                    parent_lines: parent.rollout.records.len() + parent.rollout.skipped.len(),
                };
                let mut replay = replay_with_base(&rollout, base, 1);
                // The parent's own approximations (a rebuilt compaction) hold for its history.
                for (line, note) in &parent.replay.approximations {
                    replay.approximations.push((
                        1,
                        format!("parent {} line {line}: {note}", parent.rollout.name),
                    ));
                }
                (replay, link)
            }
            Parent::NotFound(why) => {
                let mut replay = replay(&rollout);
                replay.approximations.push((
                    1,
                    format!(
                        "fork of {}: parent rollout not found ({why}); Codex sends the parent's \
                         history first, and the requests here lack it",
                        point.parent_id
                    ),
                ));
                let link = ForkLink {
                    parent_id: point.parent_id.clone(),
                    parent: None,
                    items: 0,
                    parent_lines: 0,
                };
                (replay, link)
            }
        };
        Session {
            rollout,
            replay,
            fork: Some(link),
        }
    }

    /// An item by id (file items and replay-made items).
    pub fn item(&self, id: ItemId) -> &Item {
        self.replay.item(&self.rollout, id)
    }

    /// An item's exact JSON text.
    pub fn item_json(&self, id: ItemId) -> &str {
        self.replay.item_json(&self.rollout, id)
    }

    /// The JSON text of a model-view entry.
    pub fn view_json<'a>(&'a self, entry: &'a ViewEntry) -> &'a str {
        match &entry.item {
            ViewItem::History(id) => self.item(*id).wire_json(),
            ViewItem::Synthetic(item) => item.json(),
        }
    }

    /// The item of a model-view entry.
    pub fn view_item<'a>(&'a self, entry: &'a ViewEntry) -> &'a Item {
        match &entry.item {
            ViewItem::History(id) => self.item(*id),
            ViewItem::Synthetic(item) => item,
        }
    }

    /// Normalize a raw history slice.
    pub fn model_view(&self, history: Slice<'_, HistoryEntry>) -> ModelView {
        normalize(history, |id| self.item(id))
    }

    /// The turn context of a step, if the file recorded one.
    pub fn step_context(&self, step: usize) -> Option<&TurnContext> {
        let record = self.replay.steps[step].context?;
        match &self.rollout.records[record].kind {
            crate::agents::codex::model::RecordKind::TurnContext(tc) => Some(tc),
            _ => None,
        }
    }

    /// Models named by the file's turn contexts, in first-use order.
    pub fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for record in &self.rollout.records {
            if let crate::agents::codex::model::RecordKind::TurnContext(tc) = &record.kind
                && let Some(model) = &tc.model
                && !models.contains(model)
            {
                models.push(model.clone());
            }
        }
        models
    }
}

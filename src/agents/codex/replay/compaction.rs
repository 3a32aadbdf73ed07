//! `compacted` lines: the history starts again from the line's replacement history, or, in
//! files without one, from a history promptc rebuilds as Codex did.

use super::{Checkpoint, Effect, EntryOrigin, HistoryEntry, State, filter};
use crate::agents::codex::content::{
    SUMMARY_PREFIX, is_context_message, is_turn_boundary, message_texts,
};
use crate::agents::codex::model::{Compacted, Item, ItemId, ItemKind};
use crate::core::shared::Slice;

/// The budget Codex uses when it rebuilds a compacted history from user messages
/// (`build_token_limited_compacted_history`, late 2025), in approximate tokens of 4 bytes.
const COMPACT_USER_MESSAGE_MAX_TOKENS: usize = 20_000;

impl State<'_> {
    /// Start a new epoch with the history after the compaction, and a checkpoint for it.
    pub(super) fn compaction(&mut self, compacted: &Compacted, line: usize) {
        let usage = self.compaction_step(line);
        let (entries, rebuilt) = match &compacted.replacement {
            Some(ids) => (self.replacement_history(ids, line), false),
            None => (self.rebuild_compacted(&compacted.message, line), true),
        };
        self.replay.epochs.new_list_from(entries);
        self.progress.boundaries.clear();
        self.progress.scanned = 0;
        let epoch = self.epoch();
        self.replay.checkpoints.push(Checkpoint {
            line,
            digest: compacted.digest,
            epoch,
            rebuilt,
            usage,
        });
        self.open_slot();
    }

    /// Mark or add the step of the compaction request, and return its usage. Codex sends the
    /// history plus a checkpoint prompt, then writes `compacted`. Builds from 0.141 record the
    /// request's answer (the summary message), which made a step of its own: that step is the
    /// request (`tests/conformance/0.141.0/auto_compaction`). Older builds record no answer
    /// (`0.58.0/auto_compaction`: only its `token_count`): the step is added here, its input
    /// the history so far.
    fn compaction_step(&mut self, line: usize) -> Option<super::Observation> {
        let answered = self.progress.slot_step.filter(|&step| {
            !self.progress.last_was_input
                && step + 1 == self.replay.steps.len()
                && self.replay.steps[step].epoch == self.epoch()
                && !self.replay.steps[step].pending
        });
        let step = match answered {
            Some(step) => step,
            None if self.epoch_len() > 0 => {
                self.new_step(line, false);
                self.replay.steps.len() - 1
            }
            None => {
                // Nothing to compact: no request to list. Both are taken: the compaction's
                // request used whichever there is.
                let (slot, carried) = (
                    self.progress.slot_usage.take(),
                    self.progress.carried_usage.take(),
                );
                return slot.or(carried);
            }
        };
        self.replay.steps[step].compaction = true;
        if self.replay.steps[step].usage.is_none() {
            self.replay.steps[step].usage = self
                .progress
                .slot_usage
                .take()
                .or(self.progress.carried_usage.take());
        }
        self.progress.last_was_input = false;
        self.replay.steps[step].usage.clone()
    }

    /// The entries of a `replacement_history` that enter a history.
    fn replacement_history(&self, ids: &[ItemId], line: usize) -> Vec<HistoryEntry> {
        ids.iter()
            .filter(|&&id| filter(&self.rollout.items[id]) == Effect::EnteredHistory)
            .map(|&item| HistoryEntry {
                item,
                line,
                origin: EntryOrigin::File,
            })
            .collect()
    }

    /// Legacy compaction without `replacement_history`: Codex rebuilds
    /// `initial context + recent user messages (about 20k tokens) + summary`. The initial context
    /// is rebuilt from the config at resume time, which the rollout does not record: promptc
    /// reuses the contextual messages that opened the history, and says the result is approximate.
    fn rebuild_compacted(&mut self, message: &str, line: usize) -> Vec<HistoryEntry> {
        let history = self.replay.history();
        let mut entries = self.opening_context(history);
        let mut texts = self.recent_user_messages(history);
        texts.push(if message.is_empty() {
            "(no summary available)".to_string()
        } else {
            message.to_string()
        });
        let count = texts.len();
        for (index, text) in texts.into_iter().enumerate() {
            let item = self.push_rebuilt_message(text, line);
            let origin = if index + 1 == count {
                EntryOrigin::Summary
            } else {
                EntryOrigin::Rebuilt
            };
            entries.push(HistoryEntry { item, line, origin });
        }
        self.replay.approximations.push((
            line,
            "compaction without replacement_history: history rebuilt from the opening context, \
             recent user messages and the summary; Codex rebuilds the initial context from its \
             config at resume time"
                .to_string(),
        ));
        entries
    }

    /// The contextual messages that open `history`, standing for the initial context.
    fn opening_context(&self, history: Slice<'_, HistoryEntry>) -> Vec<HistoryEntry> {
        let rollout = self.rollout;
        let mut entries = Vec::new();
        for entry in history.iter() {
            let item = self.replay.item(rollout, entry.item);
            if !is_context_message(item, || item.json()) {
                break;
            }
            entries.push(HistoryEntry {
                origin: EntryOrigin::Approximate,
                ..*entry
            });
        }
        entries
    }

    /// The texts of the most recent user messages of `history` (earlier summaries left out),
    /// oldest first, within Codex's budget; the oldest one kept is cut to fit it.
    fn recent_user_messages(&self, history: Slice<'_, HistoryEntry>) -> Vec<String> {
        let rollout = self.rollout;
        let mut selected: Vec<String> = Vec::new();
        let mut budget = COMPACT_USER_MESSAGE_MAX_TOKENS * 4;
        for entry in history.iter().rev() {
            let item = self.replay.item(rollout, entry.item);
            let json = || item.json();
            if !is_turn_boundary(item, json) {
                continue;
            }
            let text = message_texts(json()).join("\n");
            if text.starts_with(SUMMARY_PREFIX) {
                continue;
            }
            if budget == 0 {
                break;
            }
            if text.len() <= budget {
                budget -= text.len();
                selected.push(text);
            } else {
                let mut cut = budget;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                selected.push(format!("{}…", &text[..cut]));
                budget = 0;
            }
        }
        selected.reverse();
        selected
    }

    /// A user message of `text` that promptc made, kept with replay's own items.
    fn push_rebuilt_message(&mut self, text: String, line: usize) -> ItemId {
        let json = serde_json::json!({
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        })
        .to_string();
        let digest = Some(crate::core::hash::hash("item", json.as_bytes()));
        self.replay.push_made(Item {
            tokens: None,
            text: json.into_boxed_str(),
            kind: ItemKind::Message,
            type_name: "message".into(),
            role: Some("user".into()),
            call_id: None,
            id: None,
            name: None,
            execution: None,
            line,
            wire: None,
            digest,
        })
    }
}

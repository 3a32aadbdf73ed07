//! The model view: a copy of a raw history repaired for the model protocol, as Codex's
//! `context_manager/normalize.rs` does before every request. The raw history is only read.
//!
//! In order: every call without an output gets a synthetic `"aborted"` output right after it
//! (`ensure_call_outputs_present`), outputs without a call are dropped (`remove_orphan_outputs`),
//! and `ghost_snapshot` items are dropped.

use std::sync::Arc;

use foldhash::HashSet;
use uuid::Uuid;

use crate::agents::codex::model::{Item, ItemId, ItemKind};
use crate::agents::codex::replay::HistoryEntry;
use crate::core::shared::Slice;

/// Codex's namespace for synthetic output ids. Changing it would change model-visible ids.
pub const SYNTHETIC_OUTPUT_ID_NAMESPACE: Uuid =
    Uuid::from_u128(0x90d38d3e_6a5b_4d52_bfe2_2f1e634bfac4);

/// Where a model-view entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The raw history entry at this index.
    Raw(usize),
    /// Made by normalization for the call at this raw index.
    Synthetic { call: usize },
}

/// The item of a model-view entry.
#[derive(Debug, Clone)]
pub enum ViewItem {
    History(ItemId),
    Synthetic(Arc<Item>),
}

/// One entry of the model view.
#[derive(Debug, Clone)]
pub struct ViewEntry {
    pub origin: Origin,
    pub item: ViewItem,
}

/// Why normalization left a raw entry out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    OrphanOutput,
    GhostSnapshot,
}

impl DropReason {
    /// Stable name used in output.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::OrphanOutput => "orphan_output",
            DropReason::GhostSnapshot => "ghost_snapshot",
        }
    }
}

/// A raw entry left out of the model view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    pub raw_index: usize,
    pub reason: DropReason,
}

/// A normalized history.
#[derive(Debug, Clone, Default)]
pub struct ModelView {
    pub entries: Vec<ViewEntry>,
    pub dropped: Vec<Dropped>,
}

/// Which kind of output pairs with a call, and the synthetic output's id prefix.
fn synthetic_kind(item: &Item) -> Option<(ItemKind, &'static str)> {
    match item.kind {
        ItemKind::FunctionCall => Some((ItemKind::FunctionCallOutput, "fco")),
        ItemKind::LocalShellCall if item.call_id.is_some() => {
            Some((ItemKind::FunctionCallOutput, "fco"))
        }
        ItemKind::CustomToolCall => Some((ItemKind::CustomToolCallOutput, "ctco")),
        ItemKind::ToolSearchCall if item.call_id.is_some() => {
            Some((ItemKind::ToolSearchOutput, "tso"))
        }
        _ => None,
    }
}

/// `<prefix>_<uuidv5(namespace, "<prefix>:<call item id>")>`, or none when the call has no id.
pub fn synthetic_output_id(prefix: &str, call_item_id: Option<&str>) -> Option<String> {
    let source = call_item_id.filter(|id| !id.is_empty())?;
    let name = format!("{prefix}:{source}");
    Some(format!(
        "{prefix}_{}",
        Uuid::new_v5(&SYNTHETIC_OUTPUT_ID_NAMESPACE, name.as_bytes())
    ))
}

/// The synthetic output Codex inserts after a call that has none.
pub fn synthetic_output(call: &Item) -> Option<Item> {
    let (kind, prefix) = synthetic_kind(call)?;
    let id = synthetic_output_id(prefix, call.id.as_deref());
    let call_id = call.call_id.clone().unwrap_or_default();
    let mut object = serde_json::Map::new();
    let type_name = match kind {
        ItemKind::FunctionCallOutput => "function_call_output",
        ItemKind::CustomToolCallOutput => "custom_tool_call_output",
        _ => "tool_search_output",
    };
    object.insert("type".into(), type_name.into());
    if let Some(id) = &id {
        object.insert("id".into(), id.clone().into());
    }
    object.insert("call_id".into(), call_id.clone().into());
    if kind == ItemKind::ToolSearchOutput {
        object.insert("status".into(), "completed".into());
        object.insert("execution".into(), "client".into());
        object.insert("tools".into(), serde_json::Value::Array(Vec::new()));
    } else {
        object.insert("output".into(), "aborted".into());
    }
    Some(Item {
        tokens: None,
        text: serde_json::Value::Object(object)
            .to_string()
            .into_boxed_str(),
        kind,
        type_name: type_name.into(),
        role: None,
        call_id: Some(call_id),
        id,
        name: None,
        execution: (kind == ItemKind::ToolSearchOutput).then(|| "client".to_string()),
        digest: None,
        line: call.line,
        wire: None,
    })
}

/// Call ids answered by each kind of output, and call ids of each kind of call.
#[derive(Default)]
struct CallIndex<'a> {
    function_outputs: HashSet<&'a str>,
    custom_outputs: HashSet<&'a str>,
    tool_search_outputs: HashSet<&'a str>,
    function_calls: HashSet<&'a str>,
    custom_calls: HashSet<&'a str>,
    tool_search_calls: HashSet<&'a str>,
}

impl<'a> CallIndex<'a> {
    fn build(items: impl Iterator<Item = &'a Item>) -> CallIndex<'a> {
        let mut index = CallIndex::default();
        for item in items {
            let call_id = item.call_id.as_deref().unwrap_or("");
            let has_call_id = item.call_id.is_some();
            match item.kind {
                ItemKind::FunctionCallOutput => index.function_outputs.insert(call_id),
                ItemKind::CustomToolCallOutput => index.custom_outputs.insert(call_id),
                ItemKind::ToolSearchOutput if has_call_id => {
                    index.tool_search_outputs.insert(call_id)
                }
                ItemKind::FunctionCall => index.function_calls.insert(call_id),
                ItemKind::LocalShellCall if has_call_id => index.function_calls.insert(call_id),
                ItemKind::CustomToolCall => index.custom_calls.insert(call_id),
                ItemKind::ToolSearchCall if has_call_id => index.tool_search_calls.insert(call_id),
                _ => false,
            };
        }
        index
    }

    fn has_output(&self, call: &Item) -> bool {
        let call_id = call.call_id.as_deref().unwrap_or("");
        match call.kind {
            ItemKind::FunctionCall | ItemKind::LocalShellCall => {
                self.function_outputs.contains(call_id)
            }
            ItemKind::CustomToolCall => self.custom_outputs.contains(call_id),
            ItemKind::ToolSearchCall => self.tool_search_outputs.contains(call_id),
            _ => true,
        }
    }

    fn is_orphan(&self, output: &Item) -> bool {
        let call_id = output.call_id.as_deref().unwrap_or("");
        match output.kind {
            ItemKind::FunctionCallOutput => !self.function_calls.contains(call_id),
            ItemKind::CustomToolCallOutput => !self.custom_calls.contains(call_id),
            ItemKind::ToolSearchOutput => {
                output.execution.as_deref() != Some("server")
                    && output.call_id.is_some()
                    && !self.tool_search_calls.contains(call_id)
            }
            _ => false,
        }
    }
}

/// Why a list of items is not in normalized form (a call without output, an output without a
/// call, a ghost snapshot), or `None` when normalizing it again would change nothing.
pub fn first_violation(items: &[&Item]) -> Option<String> {
    let index = CallIndex::build(items.iter().copied());
    for (i, item) in items.iter().enumerate() {
        let call_id = item.call_id.as_deref().unwrap_or("");
        if item.kind == ItemKind::GhostSnapshot {
            return Some(format!("item {i} is a ghost snapshot"));
        }
        if index.is_orphan(item) {
            return Some(format!("item {i} is an output with no call ({call_id})"));
        }
        if !index.has_output(item) && synthetic_kind(item).is_some() {
            return Some(format!("item {i} is a call with no output ({call_id})"));
        }
    }
    None
}

/// Normalize a raw history. `item_of` resolves an item id (file items and replay-made items).
pub fn normalize<'a>(
    history: Slice<'_, HistoryEntry>,
    item_of: impl Fn(ItemId) -> &'a Item,
) -> ModelView {
    let index = CallIndex::build(history.iter().map(|e| item_of(e.item)));
    let mut view = ModelView {
        entries: Vec::with_capacity(history.len()),
        dropped: Vec::new(),
    };
    for (raw_index, entry) in history.iter().enumerate() {
        let item = item_of(entry.item);
        if item.kind == ItemKind::GhostSnapshot {
            view.dropped.push(Dropped {
                raw_index,
                reason: DropReason::GhostSnapshot,
            });
            continue;
        }
        if index.is_orphan(item) {
            view.dropped.push(Dropped {
                raw_index,
                reason: DropReason::OrphanOutput,
            });
            continue;
        }
        view.entries.push(ViewEntry {
            origin: Origin::Raw(raw_index),
            item: ViewItem::History(entry.item),
        });
        if !index.has_output(item)
            && let Some(output) = synthetic_output(item)
        {
            view.entries.push(ViewEntry {
                origin: Origin::Synthetic { call: raw_index },
                item: ViewItem::Synthetic(Arc::new(output)),
            });
        }
    }
    view
}

#[cfg(test)]
mod tests;

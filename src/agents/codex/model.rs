//! Plain data for a loaded rollout: records (one per non-blank line), response items, session
//! metadata, turn contexts and events. No I/O, no output formats: the JSON output types live in
//! `render::json`.

use std::borrow::Cow;

pub use crate::core::usage::Usage;

/// Index of an item in [`Rollout::items`], or, with `replay::MADE` set, in
/// `Replay::extra_items` (items replay made).
pub type ItemId = usize;

/// The file layout a rollout was written in (codex-rollout.md section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Era A: a `{id,timestamp,instructions}` meta line, then bare items and `record_type` state lines.
    BareLegacy,
    /// Era A′: `{timestamp, record_type, ...flattened}` lines.
    Tagged,
    /// Eras B to D: `{timestamp, [ordinal], type, payload}` lines.
    RolloutLines,
    /// A plain JSONL of Responses-API items, no meta line.
    PlainItems,
    /// Nothing recognisable was loaded (every line skipped).
    Unknown,
}

impl Generation {
    /// Stable name used in text and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Generation::BareLegacy => "bare-legacy",
            Generation::Tagged => "tagged",
            Generation::RolloutLines => "rollout-lines",
            Generation::PlainItems => "plain-items",
            Generation::Unknown => "unknown",
        }
    }
}

/// A loaded rollout: every non-blank line is either a [`Record`] or a [`SkippedLine`].
#[derive(Debug)]
pub struct Rollout {
    /// How the caller named the input (a path, `-`), used in messages.
    pub name: String,
    pub generation: Generation,
    pub records: Vec<Record>,
    pub skipped: Vec<SkippedLine>,
    /// Every response item found, in file order (including `replacement_history` entries).
    pub items: Vec<Item>,
    /// The first `session_meta` (or the bare legacy meta line): it decides the thread id.
    pub meta: Option<SessionMeta>,
    /// Notes about the file that are not errors (a second `session_meta`, …), with their line.
    pub notes: Vec<(usize, String)>,
}

impl Rollout {
    /// The exact JSON text of an item.
    pub fn item_json(&self, id: ItemId) -> &str {
        self.items[id].json()
    }

    /// The largest `turn_context`/event era marker seen, for display (`B`, `C`, `D`, or `A`).
    pub fn era(&self) -> &'static str {
        match self.generation {
            Generation::BareLegacy | Generation::PlainItems => "A",
            Generation::Tagged => "A′",
            Generation::Unknown => "?",
            Generation::RolloutLines => {
                let newer = self
                    .records
                    .iter()
                    .any(|r| r.newer_envelope || matches!(&r.kind, RecordKind::Other { .. }));
                let lifecycle = self.records.iter().any(|r| {
                    matches!(&r.kind, RecordKind::Event(e) if matches!(e.kind, EventKind::TaskStarted | EventKind::TaskComplete))
                });
                if newer {
                    "D"
                } else if lifecycle {
                    "C"
                } else {
                    "B"
                }
            }
        }
    }
}

/// One non-blank line that was understood.
#[derive(Debug)]
pub struct Record {
    /// 1-based line number.
    pub line: usize,
    /// `timestamp` in whole seconds since the Unix epoch ([`super::parse::unix_seconds`]),
    /// read with the line (the idle gaps of cache analysis need it).
    pub unix_seconds: Option<i64>,
    /// The line carried an `ordinal` or a `metadata` sibling (era D).
    pub newer_envelope: bool,
    pub kind: RecordKind,
}

/// What a line is.
#[derive(Debug)]
pub enum RecordKind {
    SessionMeta(Box<SessionMeta>),
    /// A response item (a `response_item` line, a bare item, or a tagged `response` line).
    Item(ItemId),
    Compacted(Compacted),
    /// Shared: consecutive `turn_context` lines with the same payload read as one.
    TurnContext(std::sync::Arc<TurnContext>),
    Event(Event),
    /// `{"record_type":"state"}` filler lines of the bare legacy format.
    State,
    /// A line type known from newer Codex builds that does not affect history.
    Other {
        type_name: String,
    },
    /// A line type promptc does not know.
    Unknown {
        type_name: String,
    },
}

impl RecordKind {
    /// Stable name used in output.
    pub fn name(&self) -> String {
        match self {
            RecordKind::SessionMeta(_) => "session_meta".into(),
            RecordKind::Item(_) => "response_item".into(),
            RecordKind::Compacted(_) => "compacted".into(),
            RecordKind::TurnContext(_) => "turn_context".into(),
            RecordKind::Event(e) => format!("event_msg:{}", e.type_name),
            RecordKind::State => "state".into(),
            RecordKind::Other { type_name } => type_name.clone(),
            RecordKind::Unknown { type_name } => format!("unknown:{type_name}"),
        }
    }
}

pub use crate::core::lines::SkippedLine;

/// `session_meta` fields promptc uses (codex-rollout.md section 3.1).
#[derive(Debug, Clone, Default)]
pub struct SessionMeta {
    pub id: Option<String>,
    pub forked_from_id: Option<String>,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub originator: Option<String>,
    pub cli_version: Option<String>,
    pub model_provider: Option<String>,
    /// User instructions (AGENTS.md) in eras A/B; not the base prompt.
    pub user_instructions: Option<String>,
    /// The base instructions sent to the model (2026 files).
    pub base_instructions: Option<String>,
    /// Client-provided tool specs, exact JSON text of each (2026 files).
    pub dynamic_tools: Option<Vec<String>>,
    /// A fork's point in its parent (0.152+): the parent's lines before it
    /// (`forked_from_ordinal_exclusive`, else `history_base.end_ordinal_exclusive`) and, when
    /// written, its byte offset (`history_base.end_byte_offset`).
    pub fork_ordinal_exclusive: Option<usize>,
    pub fork_end_byte_offset: Option<usize>,
}

/// `turn_context` fields promptc uses (codex-rollout.md section 3.2). Not the user and developer
/// instructions: they reach the model as messages of the history, and the copies here were kilobytes
/// a step that nothing read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnContext {
    pub turn_id: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub summary: Option<String>,
    pub verbosity: Option<String>,
    pub base_instructions: Option<String>,
    /// `final_output_json_schema`, as compact JSON text.
    pub output_schema: Option<String>,
    pub approval_policy: Option<String>,
    pub sandbox: Option<String>,
    pub current_date: Option<String>,
    /// Which of [`TurnContext::BUILD_KEYS`] the payload has (bit `k` for key `k`): the keys
    /// that tell which Codex build wrote it (`rules::Build::identify`).
    pub build_keys: u8,
}

impl TurnContext {
    /// Keys whose presence tells the Codex build that wrote a `turn_context`.
    pub const BUILD_KEYS: [&'static str; 8] = [
        "root_turn_id",
        "comp_hash",
        "permission_profile",
        "current_date",
        "turn_id",
        "model",
        "approval_policy",
        "sandbox_policy",
    ];

    /// Written by a build that writes a `turn_context` before every request (0.58 to 0.104),
    /// not once per turn: told by the keys of newer builds being absent
    /// (`tests/conformance/0.104.0/parallel_calls`).
    pub fn per_request(&self) -> bool {
        [
            "current_date",
            "permission_profile",
            "comp_hash",
            "root_turn_id",
        ]
        .iter()
        .all(|key| !self.has_key(key))
            && ["model", "approval_policy", "sandbox_policy"]
                .iter()
                .all(|key| self.has_key(key))
    }

    /// The payload has `key`, one of [`TurnContext::BUILD_KEYS`].
    pub fn has_key(&self, key: &str) -> bool {
        Self::BUILD_KEYS
            .iter()
            .position(|k| *k == key)
            .is_some_and(|k| self.build_keys & (1 << k) != 0)
    }
}

/// A `compacted` line.
#[derive(Debug, Clone)]
pub struct Compacted {
    pub message: String,
    /// `hash("checkpoint", line)`: the whole line, what a compaction checkpoint is.
    pub digest: crate::core::hash::Hash,
    /// Item ids of `replacement_history`, when the line has one.
    pub replacement: Option<Vec<ItemId>>,
}

/// A name read from a rollout (a line, item or event type, a role): the static copy when it is
/// one promptc knows, as nearly every line's are, so that reading it allocates nothing.
pub type Name = Cow<'static, str>;

/// An `event_msg` line.
#[derive(Debug, Clone)]
pub struct Event {
    /// The payload's `type`, as written.
    pub type_name: Name,
    pub kind: EventKind,
    /// Boxed, not a `String`: 8 bytes less in every record.
    pub turn_id: Option<Box<str>>,
}

/// The events that matter to replay; everything else is `Other` (UI and telemetry).
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    TaskStarted,
    TaskComplete,
    TurnAborted,
    ThreadRolledBack {
        num_turns: u64,
    },
    // Behind a pointer: token_count lines are a third of a rollout, and the counts would
    // double every record's size.
    TokenCount(Option<std::sync::Arc<TokenInfo>>),
    ContextCompacted,
    UserMessage,
    /// `thread_settings_applied` (0.152+): the summary setting Codex sends, which
    /// `turn_context` does not record.
    ThreadSettingsApplied {
        reasoning_summary: Option<Box<str>>,
    },
    Other,
}

/// `token_count.info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub total: Usage,
    pub last: Usage,
    pub context_window: Option<u64>,
}

/// A response item: its JSON, and the few fields replay and normalization need.
#[derive(Debug, Clone)]
pub struct Item {
    /// The item's JSON as recorded (its own copy: the loader keeps no line); empty for an item
    /// other than a message loaded with `LoadOptions::keep_item_json` off.
    pub text: Box<str>,
    pub kind: ItemKind,
    /// The item's `type` as written.
    pub type_name: Name,
    pub role: Option<Name>,
    pub call_id: Option<String>,
    /// The item's own `id` (server id in era A, model-visible ids in the newest builds).
    pub id: Option<String>,
    pub name: Option<String>,
    /// `execution` of tool search items (`client` or `server`).
    pub execution: Option<String>,
    /// The line the item was read from.
    pub line: usize,
    /// The JSON as it is sent to the model, when that differs from the recorded text (era A
    /// files record server ids that Codex never sends back).
    pub wire: Option<Box<str>>,
    /// `hash("item", wire bytes)`, made when the item was read, while its line was in cache:
    /// fingerprinting every item afterwards read the whole file from memory a second time.
    /// Replay's rebuilt history items get theirs when made; `None` only for normalization's
    /// synthetic outputs (fingerprinting hashes those).
    pub digest: Option<crate::core::hash::Hash>,
    /// Estimated input tokens as sent, made when the item was read with
    /// `LoadOptions::estimate_tokens` (so that estimates need not keep the item's JSON).
    pub tokens: Option<usize>,
}

impl Item {
    /// The exact JSON text of the item (empty when not kept, see [`Item::text`]).
    pub fn json(&self) -> &str {
        &self.text
    }

    /// The item's JSON as sent to the model.
    pub fn wire_json(&self) -> &str {
        self.wire.as_deref().unwrap_or(&self.text)
    }

    /// A user-role message.
    pub fn is_user_message(&self) -> bool {
        self.kind == ItemKind::Message && self.role.as_deref() == Some("user")
    }

    /// An item the model produced in a response (starts a step's output).
    pub fn is_model_output(&self) -> bool {
        match self.kind {
            ItemKind::Message => self.role.as_deref() == Some("assistant"),
            ItemKind::Reasoning
            | ItemKind::FunctionCall
            | ItemKind::CustomToolCall
            | ItemKind::LocalShellCall
            | ItemKind::ToolSearchCall
            | ItemKind::WebSearchCall
            | ItemKind::ImageGenerationCall => true,
            _ => false,
        }
    }
}

/// Response item types (codex-rollout.md section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Message,
    Reasoning,
    FunctionCall,
    FunctionCallOutput,
    CustomToolCall,
    CustomToolCallOutput,
    LocalShellCall,
    ToolSearchCall,
    ToolSearchOutput,
    WebSearchCall,
    ImageGenerationCall,
    GhostSnapshot,
    Compaction,
    ContextCompaction,
    AgentMessage,
    AdditionalTools,
    /// Not persisted by Codex and not an API item.
    CompactionTrigger,
    /// A type promptc does not know: kept and shown, never sent.
    Unknown,
}

impl ItemKind {
    /// How calls and outputs pair up: the call-id space they share (function and local shell
    /// calls answer to function outputs; custom calls to custom outputs; tool search to tool
    /// search) and whether this is the call side. `None` for items that are neither.
    pub fn pairing(self) -> Option<(u8, bool)> {
        match self {
            ItemKind::FunctionCall | ItemKind::LocalShellCall => Some((0, true)),
            ItemKind::FunctionCallOutput => Some((0, false)),
            ItemKind::CustomToolCall => Some((1, true)),
            ItemKind::CustomToolCallOutput => Some((1, false)),
            ItemKind::ToolSearchCall => Some((2, true)),
            ItemKind::ToolSearchOutput => Some((2, false)),
            _ => None,
        }
    }

    /// Map a `type` string; `compaction_summary` is an alias of `compaction`.
    pub fn from_type(type_name: &str) -> ItemKind {
        match type_name {
            "message" => ItemKind::Message,
            "reasoning" => ItemKind::Reasoning,
            "function_call" => ItemKind::FunctionCall,
            "function_call_output" => ItemKind::FunctionCallOutput,
            "custom_tool_call" => ItemKind::CustomToolCall,
            "custom_tool_call_output" => ItemKind::CustomToolCallOutput,
            "local_shell_call" => ItemKind::LocalShellCall,
            "tool_search_call" => ItemKind::ToolSearchCall,
            "tool_search_output" => ItemKind::ToolSearchOutput,
            "web_search_call" => ItemKind::WebSearchCall,
            "image_generation_call" => ItemKind::ImageGenerationCall,
            "ghost_snapshot" => ItemKind::GhostSnapshot,
            "compaction" | "compaction_summary" => ItemKind::Compaction,
            "context_compaction" => ItemKind::ContextCompaction,
            "agent_message" => ItemKind::AgentMessage,
            "additional_tools" => ItemKind::AdditionalTools,
            "compaction_trigger" => ItemKind::CompactionTrigger,
            _ => ItemKind::Unknown,
        }
    }
}

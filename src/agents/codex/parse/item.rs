//! Response items (`response_item` payloads, bare items, `compacted` replacement histories):
//! where their JSON is, the few fields replay needs, and message contents.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{Error as _, IgnoredAny, MapAccess};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Part;
use super::line::{LineError, Str, json_kind, name, strip_position};
use crate::agents::codex::item_tokens::item_tokens;
use crate::agents::codex::model::{Compacted, Generation, Item, ItemId, ItemKind};

/// Item types, most frequent first (the real samples' counts): their names are shared, not
/// copied.
pub(super) const ITEM_TYPES: &[&str] = &[
    "reasoning",
    "function_call",
    "function_call_output",
    "message",
    "custom_tool_call",
    "custom_tool_call_output",
    "ghost_snapshot",
    "web_search_call",
    "local_shell_call",
    "tool_search_call",
    "tool_search_output",
    "image_generation_call",
    "compaction",
    "compaction_summary",
    "context_compaction",
    "agent_message",
    "additional_tools",
    "compaction_trigger",
];

/// The item key 0.152+ record and never send.
const PASSTHROUGH: &str = "internal_chat_message_metadata_passthrough";

/// Message roles.
const ROLES: &[&str] = &["assistant", "user", "developer", "system"];

/// Content part types Codex knows (`ContentItem`, codex-rollout.md section 5).
const KNOWN_CONTENT_PARTS: &[&str] = &[
    "input_text",
    "input_image",
    "output_text",
    "input_audio",
    "input_file",
    "refusal",
];

/// The top-level fields of an item that replay and normalization need. String fields may be
/// `null` (absent); `content` stays raw JSON, checked by [`Part::check_content`]. A field
/// written twice reads as its last value, as in a map.
#[derive(Default)]
struct Head<'a> {
    type_: Option<Cow<'a, str>>,
    role: Option<Cow<'a, str>>,
    call_id: Option<Cow<'a, str>>,
    id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    execution: Option<Cow<'a, str>>,
    content: Option<&'a RawValue>,
    /// Has `internal_chat_message_metadata_passthrough`, which Codex strips before sending.
    passthrough: bool,
}

/// The keys [`Head`] reads.
#[derive(Deserialize, PartialEq)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Key {
    Type,
    Role,
    CallId,
    Id,
    Name,
    Execution,
    Content,
    InternalChatMessageMetadataPassthrough,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Head<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Head<'de>, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Head<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head<'de>, A::Error> {
                let mut head = Head::default();
                while let Some(key) = map.next_key::<Key>()? {
                    let (slot, field) = match key {
                        Key::Type => (&mut head.type_, "type"),
                        Key::Role => (&mut head.role, "role"),
                        Key::CallId => (&mut head.call_id, "call_id"),
                        Key::Id => (&mut head.id, "id"),
                        Key::Name => (&mut head.name, "name"),
                        Key::Execution => (&mut head.execution, "execution"),
                        Key::Content => {
                            head.content = Some(map.next_value()?);
                            continue;
                        }
                        other => {
                            head.passthrough |=
                                other == Key::InternalChatMessageMetadataPassthrough;
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    // The item was checked as JSON: only the value's type can be wrong.
                    *slot = map
                        .next_value::<Option<Str<'de>>>()
                        .map_err(|_| A::Error::custom(format!("`{field}` is not a string")))?
                        .map(|text| text.0);
                }
                Ok(head)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl Part {
    /// Read the item whose JSON is `json`, add it (with a copy of `json`) to the items, and
    /// return its id.
    pub(super) fn item(&mut self, json: &str, line_number: usize) -> Result<ItemId, LineError> {
        if !json.trim_start().starts_with('{') {
            return Err(LineError::new("response item is not a JSON object"));
        }
        let head: Head<'_> = serde_json::from_str(json).map_err(|e| {
            LineError::new(format!(
                "response item of the wrong shape: {}",
                strip_position(&e)
            ))
        })?;
        let type_name = head
            .type_
            .ok_or_else(|| LineError::new("response item without a `type`"))?;
        let kind = ItemKind::from_type(&type_name);
        if kind == ItemKind::Message {
            self.check_content(head.content.map(RawValue::get), line_number)?;
        }
        if kind == ItemKind::Unknown {
            self.notes.push((
                line_number,
                format!("unknown item type `{type_name}`: kept, not replayed"),
            ));
        }
        let wire = self.wire_form(json, head.id.is_some(), head.passthrough, kind);
        let sent = wire.as_deref().unwrap_or(json);
        let keep = self.options.keep_item_json || kind == ItemKind::Message;
        let mut item = Item {
            digest: Some(crate::core::hash::hash("item", sent.as_bytes())),
            tokens: None,
            text: if keep { json.into() } else { Box::default() },
            kind,
            wire: None,
            type_name: name(type_name, ITEM_TYPES),
            role: head.role.map(|role| name(role, ROLES)),
            call_id: head.call_id.map(Cow::into_owned),
            id: head.id.map(Cow::into_owned),
            name: head.name.map(Cow::into_owned),
            execution: head.execution.map(Cow::into_owned),
            line: line_number,
        };
        item.tokens = (self.options.estimate_tokens).then(|| item_tokens(&item, sent));
        item.wire = wire.filter(|_| keep);
        self.items.push(item);
        Ok(self.items.len() - 1)
    }

    /// The item as Codex sends it, when that differs from what is recorded: era A files record
    /// server ids that Codex deserializes but never sends back, and 0.152+ record
    /// `internal_chat_message_metadata_passthrough` on items, which they strip before sending
    /// (every request of `tests/conformance/0.152.1/tool_calls` and `0.171.0/tool_calls`).
    fn wire_form(
        &self,
        json: &str,
        has_id: bool,
        passthrough: bool,
        kind: ItemKind,
    ) -> Option<Box<str>> {
        let era_a = matches!(
            self.generation,
            Some(Generation::BareLegacy | Generation::Tagged)
        );
        let sends_no_id = matches!(
            kind,
            ItemKind::Message
                | ItemKind::Reasoning
                | ItemKind::LocalShellCall
                | ItemKind::FunctionCall
                | ItemKind::CustomToolCall
                | ItemKind::WebSearchCall
                | ItemKind::ToolSearchCall
        );
        let drop_id = era_a && has_id && sends_no_id;
        if !(drop_id || passthrough) {
            return None;
        }
        let mut map = serde_json::from_str::<Map<String, Value>>(json).ok()?;
        if drop_id {
            map.shift_remove("id");
        }
        map.shift_remove(PASSTHROUGH);
        Some(Value::Object(map).to_string().into_boxed_str())
    }

    /// A message's `content` must be a list of parts (Codex cannot read the line otherwise);
    /// parts of unknown types are kept as recorded and noted.
    fn check_content(
        &mut self,
        content: Option<&str>,
        line_number: usize,
    ) -> Result<(), LineError> {
        let Some(content) = content else {
            return Ok(());
        };
        #[derive(Deserialize)]
        struct Part<'a> {
            #[serde(rename = "type", borrow, default)]
            type_: Option<Str<'a>>,
        }
        let parts: Vec<Part<'_>> =
            serde_json::from_str(content).map_err(|e| match content.as_bytes().first() {
                Some(b'[') => LineError::new(format!(
                    "message `content` is not a list of parts: {}",
                    strip_position(&e)
                )),
                first => LineError::new(format!(
                    "message `content` is a JSON {}, not a list of parts",
                    json_kind(first.copied())
                )),
            })?;
        for part in parts {
            let type_name = part.type_.map_or(Cow::Borrowed("(none)"), |t| t.0);
            if !KNOWN_CONTENT_PARTS.contains(&type_name.as_ref()) {
                self.notes.push((
                    line_number,
                    format!("unknown content part `{type_name}` in a message: kept as recorded"),
                ));
            }
        }
        Ok(())
    }

    /// A `compacted` payload: its message and, when it has one, its replacement history, whose
    /// entries become items.
    pub(super) fn compacted(
        &mut self,
        line: &str,
        payload: &str,
        line_number: usize,
    ) -> Result<Compacted, LineError> {
        #[derive(Deserialize)]
        struct CompactedPayload<'a> {
            #[serde(default)]
            message: Option<String>,
            #[serde(borrow, default)]
            replacement_history: Option<Vec<&'a RawValue>>,
        }
        let compacted: CompactedPayload<'_> = serde_json::from_str(payload)
            .map_err(|e| LineError::json("`compacted` payload of the wrong shape: ", &e))?;
        let replacement = match compacted.replacement_history {
            None => None,
            Some(entries) => {
                let mut ids = Vec::with_capacity(entries.len());
                for raw in entries {
                    ids.push(self.item(raw.get(), line_number)?);
                }
                Some(ids)
            }
        };
        Ok(Compacted {
            message: compacted.message.unwrap_or_default(),
            digest: crate::core::hash::hash("checkpoint", line.as_bytes()),
            replacement,
        })
    }
}

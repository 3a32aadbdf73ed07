//! Claude Code's answers to what the stages ask a session ([`AgentSession`]).

use std::borrow::Cow;

use serde_json::Value;

use super::load::LineKind;
use super::plan::view::View;
use super::session::{Session, claude};
use super::thread::{RequestKind, ThreadKey};
use super::wire::{Build, Given};
use crate::agents::{
    AgentSession, Entry, Header, HistoryRow, Reset, SettingChange, UnrecordedEffect,
};
use crate::core::request::Part;
use crate::core::steps::{Step, Turn};
use crate::fingerprint::Plan;
use crate::providers::anthropic::BreakpointPrefixCache;
use crate::providers::{CacheModel, PromptView};

/// Why 1.0.x run as `claude -p` reads less after a tool turn (`1.0.30/tool_call`).
const REPEATED_TOOL_TURN: &str = "read less than the previous request wrote: 1.0.x run as \
     `claude -p` sends the last tool turn twice, then once, which breaks the prefix at the first \
     copy";

impl Session {
    /// Models the responses named, in first-use order (Claude Code's own `<synthetic>` lines
    /// left out).
    pub fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        // Responses in a row share their model's text: each run is looked at once.
        let mut last: Option<&std::sync::Arc<str>> = None;
        for r in self.conversation.responses.iter().filter(|r| !r.synthetic) {
            let Some(m) = &r.model else { continue };
            if last.is_some_and(|l| std::sync::Arc::ptr_eq(l, m)) {
                continue;
            }
            last = Some(m);
            if !models.iter().any(|x| **x == **m) {
                models.push(m.to_string());
            }
        }
        models
    }

    fn compiled_value<'a>(
        &'a self,
        plan: &'a Plan,
        step: usize,
    ) -> (Option<&'a str>, Option<&'a [String]>) {
        let claude = claude(plan);
        let compiled = || self.compile(step, &claude.given).body;
        let system = claude.system[step].get_or_init(|| {
            let body = compiled();
            let texts: Vec<String> = match &body["system"] {
                Value::Array(blocks) => blocks
                    .iter()
                    .filter(|b| !b.is_null())
                    .map(|b| {
                        b["text"]
                            .as_str()
                            .map_or_else(|| b.to_string(), str::to_string)
                    })
                    .collect(),
                Value::String(text) => vec![text.clone()],
                _ => return None,
            };
            Some(texts.join("\n\n"))
        });
        let tools = claude.tools[step].get_or_init(|| match &compiled()["tools"] {
            Value::Array(tools) => Some(
                tools
                    .iter()
                    .map(crate::providers::anthropic::canonical_without_cache_control)
                    .collect(),
            ),
            _ => None,
        });
        (system.as_deref(), tools.as_deref())
    }

    fn view<'a>(&'a self, step: usize) -> Option<View<'a>> {
        self.claude_steps[step].prompt.as_ref().map(|prompt| View {
            prompt,
            blocks: self.blocks(),
        })
    }
}

/// A prompt whose breakpoints' TTL the usage told, not the build's rules.
struct Retimed<'a> {
    view: View<'a>,
    breakpoints: Vec<(usize, i64)>,
}

impl PromptView for Retimed<'_> {
    fn head(&self) -> &[crate::providers::anthropic::Block] {
        self.view.head()
    }
    fn message_blocks(&self) -> usize {
        self.view.message_blocks()
    }
    fn message_chain(&self, k: usize) -> crate::core::hash::Hash {
        self.view.message_chain(k)
    }
    fn breakpoints(&self) -> &[(usize, i64)] {
        &self.breakpoints
    }
}

impl AgentSession for Session {
    fn name(&self) -> &str {
        &self.transcript.name
    }

    fn id(&self) -> Option<&str> {
        self.transcript
            .lines
            .iter()
            .find_map(|l| l.context.session_id.as_deref())
    }

    /// A fork's file records no link to its parent session (its lines are copies).
    fn forked_from(&self) -> Option<&str> {
        None
    }

    /// `--fork-session` copies the parent's lines, their uuids kept, into a file of the fork's
    /// own session (every recorded build from 1.0.128 to 2.1.332; 2.0.77 keeps the parent's
    /// `sessionId` on the first copy only). A resume may copy them so too: 1.0.56's
    /// `--continue` did (a real sample), and 2.1.x resumes sometimes copy
    /// (`../shared/reference/claude-code.md`), though every recorded resume from 1.0.128 on
    /// appends to its own session. The file cannot tell which. A line of both files under the
    /// same session id is no copy: a file and a later snapshot of it share every line, and
    /// some files change session id part way.
    fn copy_of(&self, parent: &Self) -> Option<&'static str> {
        let of_parent = &parent.transcript;
        let copied = self.transcript.lines.iter().any(|l| {
            l.uuid
                .as_ref()
                .and_then(|u| of_parent.uuids.get(u))
                .is_some_and(|k| of_parent.lines[k].context.session_id != l.context.session_id)
        });
        copied.then_some(
            "a copy of A in a session of its own (a `--fork-session`, or a resume that copied A)",
        )
    }

    fn cache_model(&self) -> &'static dyn CacheModel {
        &BreakpointPrefixCache
    }

    fn agent_title(&self) -> &'static str {
        "Claude Code"
    }

    fn agent_name(&self) -> &'static str {
        "claude"
    }

    fn models(&self) -> Vec<String> {
        Session::models(self)
    }

    fn entry_title(&self, _plan: &Plan, step: usize, k: usize) -> String {
        let (json, role) = self.block_json(step, k);
        let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
        let kind = value["type"].as_str().unwrap_or("?");
        let text = match kind {
            "text" => value["text"].as_str().unwrap_or("").to_string(),
            "tool_use" => format!(
                "{}({})",
                value["name"].as_str().unwrap_or("?"),
                value["input"]
            ),
            "tool_result" => match &value["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            "thinking" => value["thinking"].as_str().unwrap_or("").to_string(),
            _ => String::new(),
        };
        let text: String = text.replace('\n', " ").chars().take(80).collect();
        let b = self.block(step, k);
        format!("{role}/{kind} (messages[{}])  {text}", b.message)
    }

    fn compiled_text(&self, plan: &Plan, step: usize) -> String {
        let compiled = self.compile(step, &claude(plan).given);
        let mut out = Vec::new();
        let options = crate::render::RenderOptions {
            color: false,
            width: 100,
            full: false,
        };
        let _ =
            super::render::write_compile(&mut out, (self, plan, step), &compiled, false, &options);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn history_rows(&self) -> (String, Vec<HistoryRow>) {
        (
            "The transcript's lines and the messages of the last request".to_string(),
            super::render::page::history(self),
        )
    }

    fn header(&self) -> Header<'_> {
        let (t, c) = (&self.transcript, &self.conversation);
        let mut lines = vec![("file", format!("{} (Claude Code transcript)", t.name))];
        lines.push((
            "session",
            format!(
                "{}  claude-code {}",
                self.id().unwrap_or("-"),
                if t.versions.is_empty() {
                    "-".to_string()
                } else {
                    t.versions.join(", ")
                }
            ),
        ));
        lines.push(("models", Session::models(self).join(", ")));
        let shown = &self.thread;
        let (main, compactions) = c.thread(shown).fold((0, 0), |(all, compactions), r| {
            (
                all + 1,
                compactions + usize::from(r.kind == RequestKind::Compaction),
            )
        });
        match shown {
            ThreadKey::Subagent(agent) => {
                lines.push(("thread", format!("subagent {agent} (its own file)")));
            }
            ThreadKey::Sidechain(_) => {
                lines.push(("thread", "sidechain (a subagent's lines)".to_string()));
            }
            ThreadKey::Main => {}
        }
        let others = if *shown == ThreadKey::Main {
            "in subagents"
        } else {
            "in other threads"
        };
        lines.push((
            "history",
            format!(
                "{} turns, {main} requests ({compactions} compaction), {} {others}, {} lines \
                 read, {} skipped",
                self.turns.len(),
                c.requests.len() - main,
                t.non_blank_lines,
                t.skipped.len()
            ),
        ));
        Header {
            lines,
            skipped: &t.skipped,
            // Each note names its line(s) itself.
            notes: t.notes.iter().map(|n| (None, n.as_str())).collect(),
            approximations: Vec::new(),
        }
    }

    fn turns(&self) -> &[Turn] {
        &self.turns
    }

    fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// A compaction's own request between the two: the history was replaced by its summary.
    fn reset_between(&self, previous: usize, step: usize) -> Option<Reset> {
        self.claude_steps[previous + 1..=step]
            .iter()
            .any(|s| s.kind == RequestKind::Compaction)
            .then_some(Reset::Compaction)
    }

    fn checkpoint_line(&self, step: usize) -> Option<usize> {
        self.claude_steps[..=step]
            .iter()
            .zip(&self.steps)
            .rfind(|(s, _)| s.kind == RequestKind::Compaction)
            .map(|(_, s)| s.line)
    }

    fn rollbacks_before(&self, _step: usize) -> usize {
        0
    }

    fn fork_parent_lines(&self) -> Option<usize> {
        None
    }

    fn instructions<'a>(&'a self, plan: &'a Plan, step: usize) -> (Option<&'a str>, &'static str) {
        if self.claude_steps[step].prompt.is_none() {
            return (None, "not recorded");
        }
        match self.compiled_value(plan, step).0 {
            Some(text) if claude(plan).given.system.is_some() => (Some(text), "--system"),
            Some(text) => (Some(text), "the transcript's replay record"),
            None => (None, "not recorded by this build"),
        }
    }

    fn tools<'a>(&'a self, plan: &'a Plan, step: usize) -> Option<&'a [String]> {
        self.claude_steps[step].prompt.as_ref()?;
        self.compiled_value(plan, step).1
    }

    fn entry<'a>(&'a self, _plan: &'a Plan, step: usize, k: usize) -> Entry<'a> {
        let b = self.block(step, k);
        let (json, role) = self.block_json(step, k);
        let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
        let line = match b.source {
            super::plan::Source::Line { line, .. } | super::plan::Source::Blob { line, .. } => {
                self.transcript.lines[line as usize].number
            }
            super::plan::Source::Compiled => self.steps[step].line,
        };
        let attachment = matches!(
            b.source,
            super::plan::Source::Line { line, .. }
                if matches!(self.transcript.lines[line as usize].kind, LineKind::Attachment(_))
        );
        let reminder = value["text"]
            .as_str()
            .is_some_and(|t| t.trim_start().starts_with("<system-reminder>"));
        Entry {
            kind: static_kind(value["type"].as_str()),
            role: Some(role),
            call_id: value["id"]
                .as_str()
                .or(value["tool_use_id"].as_str())
                .map(|id| Cow::Owned(id.to_string())),
            id: None,
            line,
            context: attachment || role == "system" || reminder,
            model_output: role == "assistant",
            synthetic: false,
            json: Cow::Owned(json),
        }
    }

    fn entry_location(&self, _plan: &Plan, step: usize, k: usize) -> Option<String> {
        let prompt = self.claude_steps[step].prompt.as_ref()?;
        (k < prompt.len).then(|| {
            let b = self.block(step, k);
            format!("messages[{}].content[{}]", b.message, b.block)
        })
    }

    fn part_name(&self, part: Part) -> &'static str {
        match part {
            Part::Instructions => "system",
            other => other.name(),
        }
    }

    fn prompt(&self, step: usize) -> Option<Box<dyn PromptView + '_>> {
        if self.claude_steps[step].kind == RequestKind::Compaction {
            return None;
        }
        let view = self.view(step)?;
        let s = &self.claude_steps[step];
        // Builds before 2.1.3xx do not record their breakpoints' TTL: the rules give 5 minutes,
        // but what the responses wrote says which (`ephemeral_1h_input_tokens`).
        match s.ttl.filter(|_| s.build < Build::V2_1_332) {
            Some(ttl) => Some(Box::new(Retimed {
                breakpoints: view.breakpoints().iter().map(|&(p, _)| (p, ttl)).collect(),
                view,
            })),
            None => Some(Box::new(view)),
        }
    }

    fn copied(&self, step: usize) -> bool {
        self.claude_steps[step].copied
    }

    /// Claude Code's compaction request is not recorded: nothing of it is shown.
    fn compaction_prompt_items(&self, _step: usize) -> usize {
        0
    }

    fn judged(&self, step: usize) -> bool {
        let s = &self.claude_steps[step];
        !s.copied && s.prompt.is_some()
    }

    fn history_from_elsewhere(&self, step: usize) -> bool {
        self.claude_steps[step].history_before
    }

    fn known_rewrite(&self, previous: usize, _step: usize) -> Option<(&'static str, &'static str)> {
        self.claude_steps[previous]
            .repeat_possible
            .then_some(("repeated_tool_turn", REPEATED_TOOL_TURN))
    }

    fn unrecorded_parts(&self, _plan: &Plan, step: usize, upto: usize) -> Vec<String> {
        self.view(step)
            .map(|v| v.unknown_parts(upto))
            .unwrap_or_default()
    }

    /// By what the changed lines hold: Claude Code renders CLAUDE.md, the git status and the
    /// date into its system prompt and first message.
    fn name_change(&self, old: &str, new: &str) -> Option<String> {
        let diff = similar::TextDiff::from_lines(old, new);
        let changed: String = diff
            .iter_all_changes()
            .filter(|c| c.tag() != similar::ChangeTag::Equal)
            .map(|c| c.value())
            .collect();
        let what = if changed.contains("CLAUDE.md") || changed.contains("claudeMd") {
            "CLAUDE.md"
        } else if changed.contains("gitStatus")
            || changed.contains("Status:")
            || changed.contains("git status")
        {
            "the git status"
        } else if changed.contains("date is") || !crate::core::volatile::find(&changed).is_empty() {
            "the date or a clock time"
        } else {
            "its text"
        };
        Some(what.to_string())
    }

    fn step_key(&self, step: usize) -> Option<&str> {
        self.claude_steps[step].key.as_deref()
    }

    fn incremental_possible(&self) -> bool {
        false
    }

    fn repairs_in_place(&self, _plan: &Plan, _step: usize) -> bool {
        false
    }

    fn step_model(&self, step: usize) -> Option<&str> {
        self.claude_steps[step].model.as_deref()
    }

    fn step_effort(&self, _step: usize) -> Option<&str> {
        None
    }

    /// The model and the parameters a change of which invalidates the messages' cache, as
    /// compile gives them.
    fn request_params(&self, step: usize) -> String {
        let body = self.compile(step, &Given::default()).body;
        serde_json::json!({
            "model": body["model"],
            "thinking": body.get("thinking"),
            "tool_choice": body.get("tool_choice"),
        })
        .to_string()
    }

    fn setting_changes(
        &self,
        _step: usize,
        _other: &Self,
        _other_step: usize,
    ) -> Vec<SettingChange> {
        Vec::new()
    }

    fn unrecorded_effect(
        &self,
        _step: usize,
        _other: &Self,
        _other_step: usize,
        _change: &SettingChange,
    ) -> Option<UnrecordedEffect> {
        None
    }

    fn setting_effect(&self, _setting: &str) -> &'static str {
        ""
    }

    /// Claude Code's compaction request is not recorded: nothing is predicted of it.
    fn compaction_request_prefix(&self, _plan: &Plan, _step: usize) -> usize {
        0
    }

    fn incremental_break(&self, _plan: &Plan, _previous: usize, _k: usize) -> Option<String> {
        None
    }

    fn model_view_violation(&self) -> Option<String> {
        None
    }

    /// A `tool_use` id an earlier call of the shown thread used.
    fn repeated_call_ids(&self) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for (k, s) in self.claude_steps.iter().enumerate() {
            let Some(r) = self.conversation.requests[s.request].response else {
                continue;
            };
            if s.copied {
                continue;
            }
            for id in &self.conversation.responses[r].tool_uses {
                if !seen.insert(id.to_string()) {
                    let (step, turn) = (&self.steps[k], &self.turns[self.steps[k].turn]);
                    out.push(format!(
                        "turn {} step {}: tool id {id} was used by an earlier call",
                        turn.number, step.number
                    ));
                }
            }
        }
        out
    }
}

/// A block's type as a static name (the entry's `kind`).
fn static_kind(kind: Option<&str>) -> &'static str {
    match kind {
        Some("text") => "text",
        Some("tool_use") => "tool_use",
        Some("tool_result") => "tool_result",
        Some("thinking") => "thinking",
        Some("redacted_thinking") => "redacted_thinking",
        Some("image") => "image",
        Some("document") => "document",
        Some(_) => "other",
        None => "?",
    }
}

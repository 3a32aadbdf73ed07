//! Each request of a thread as the Anthropic cache sees its prompt, request after request, each
//! grown from the one before: what the session's steps and its neutral plan are made of.
//!
//! A request's prompt is its head (tools, system blocks, the `{thinking, tool_choice}` params
//! block: a few [`Block`]s, shared between requests while unchanged), its message blocks as a
//! view `(list, len)` into one [`SharedLists`] of [`BlockData`] (each block's hash, the chain over
//! the blocks so far, where it comes from), and its breakpoints. Two requests' shared prefix is
//! found by comparing chains, never by walking their blocks.
//!
//! - Builds before 2.1.3xx (by rule): the history (`plan/history.rs`) is the previous request's
//!   cut back to where the new leaf's `parentUuid` walk meets it, plus the new lines; the
//!   messages are rendered again from the first one that changed, from each line's blocks as the
//!   loader hashed them (`content.rs`). The blocks are `compiled_blocks(compile(..))`'s (a test
//!   holds them so).
//! - 2.1.3xx: the replay records are read once (`plan/records.rs`); a request's messages are its
//!   base record's list forked at `keep`, plus its tail.
//! - What neither path takes apart (a cycle of `parentUuid`s, a breakpoint path of another
//!   shape, blocks no build writes) is compiled whole, for that request only.

mod cache_control;
mod history;
mod history_hashes;
mod lines;
mod records;
mod replayed;
#[cfg(test)]
mod tests;
pub mod view;

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use super::cache::compiled_blocks;
use super::content::billing;
use super::load::{LineId, LineKind, Transcript};
use super::thread::{Conversation, Request, RequestKind, Role};
use super::wire::{Build, Given, compile};
use crate::core::hash::{Hash, hash};
use crate::core::shared::{ListId, SharedLists};
use crate::providers::anthropic::{Block, Part, canonical_without_cache_control, unknown};
use history::{Builder, Cycle, RENDER};
use records::{NoReplay, Records};
pub(crate) use view::Cursor;
pub use view::View;

/// One message block of a request, as the plan keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockData {
    /// `providers::anthropic::block_hash(role, block)`: canonical JSON without `cache_control`.
    pub hash: Hash,
    /// `message_chain_next` over the message blocks up to this one.
    pub chain: Hash,
    /// `messages[message].content[block]` of the body.
    pub message: u32,
    pub block: u32,
    /// The transcript records it (else it is context the build injects without recording it).
    pub known: bool,
    pub source: Source,
    /// 1 + the position of the last unknown block up to this one (0: none).
    pub(crate) last_unknown: u32,
}

/// Where a message block comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Block `block` of the content of line `line` (an index into `Transcript::lines`).
    Line { line: u32, block: u32 },
    /// Block `block` of the message of the `api-request-blob` line `line`.
    Blob { line: u32, block: u32 },
    /// A block of a request compiled whole.
    Compiled,
}

/// A request's prompt.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The blocks before the messages.
    pub head: Arc<[Block]>,
    /// Its message blocks: the first `len` of `list` in [`Planner::blocks`].
    pub list: ListId,
    pub len: usize,
    /// Position in the whole prompt (head first) and TTL of each breakpoint, increasing.
    pub breakpoints: Vec<(usize, i64)>,
}

/// What the planner says of a request.
#[derive(Debug, Clone)]
pub enum Planned {
    Prompt(Prompt),
    /// Its response names a replay record this file does not have: a request of another
    /// session whose lines this file copied (a fork).
    RecordElsewhere,
    /// A compaction's request: no prompt is planned for it.
    Compaction,
}

/// A history message as the rule path rendered it.
#[derive(Debug, Clone, Copy)]
struct Rendered {
    /// Its blocks are `start..end` of the rendering.
    start: usize,
    end: usize,
    /// Its index among the non-empty messages (the body's `messages[i]`), if it has blocks.
    index: Option<usize>,
    /// Non-empty messages before it.
    before: usize,
    /// The last non-empty message up to it.
    last_non_empty: Option<usize>,
    /// A breakpoint can go on its last block (an object).
    last_is_object: bool,
    /// Messages up to it the rule path does not take apart.
    odd: usize,
}

/// The rule path's rendering of the history.
#[derive(Debug)]
struct RuleRendering {
    list: ListId,
    len: usize,
    rendered: Vec<Rendered>,
    /// Rendered for 2.1.100 (a newline between two texts of one message).
    newline_fix: bool,
    first_non_empty: Option<usize>,
    /// The billing code of the first prompt (of the first non-empty message), while that
    /// message is not rendered again.
    billing: Option<Hash>,
}

/// Plans one thread's requests in file order (see the module's documentation). It holds no
/// transcript: each request is planned from the lines read so far, so a transcript that grows
/// (`watch`) has its new requests planned after the earlier ones, at their cost.
pub struct Planner {
    /// Every planned prompt's message blocks.
    pub blocks: SharedLists<BlockData>,
    history: Builder,
    rule: RuleRendering,
    rule_heads: HashMap<Option<Hash>, Arc<[Block]>>,
    records: Records,
}

impl std::fmt::Debug for Planner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Planner")
            .field("blocks", &self.blocks.len())
            .finish_non_exhaustive()
    }
}

impl Default for Planner {
    fn default() -> Self {
        Planner::new()
    }
}

impl Planner {
    pub fn new() -> Planner {
        let mut blocks = SharedLists::new();
        let list = blocks.new_list();
        Planner {
            blocks,
            history: Builder::default(),
            rule: RuleRendering {
                list,
                len: 0,
                rendered: Vec::new(),
                newline_fix: false,
                first_non_empty: None,
                billing: None,
            },
            rule_heads: HashMap::new(),
            records: Records::new(),
        }
    }

    /// A line of `t` read since a request was planned changes what an earlier request would
    /// have read (a replay record named before it was read, or read twice): plan every request
    /// again, with a new planner. The record lines are read here too, not only as the next
    /// request is planned: the lines that make the planned stale may be the last ones.
    pub fn stale(&mut self, t: &Transcript) -> bool {
        self.records.read(t);
        self.records.stale()
    }

    /// The prompt of `request` (an index into `Conversation::requests`), from the lines of `t`
    /// read so far. Requests of one thread, in file order, each cost what they add to the one
    /// before.
    pub fn plan(&mut self, t: &Transcript, c: &Conversation, index: usize) -> Planned {
        let request = &c.requests[index];
        if request.kind == RequestKind::Compaction {
            return Planned::Compaction;
        }
        let version = request_line(c, request);
        let build = t.lines[version].context.build;
        self.records.read(t);
        if let Err(Cycle) = self.history.advance(t, c, request) {
            return self.compiled(t, c, request);
        }
        if let Some(reference) = replay_reference(t, c, request) {
            let records = &mut self.records;
            match records.prompt(t, &mut self.history, &mut self.blocks, reference) {
                Ok((head, list, len, breakpoints)) => {
                    return Planned::Prompt(Prompt {
                        head,
                        list,
                        len,
                        breakpoints,
                    });
                }
                Err(NoReplay::RecordElsewhere) => return Planned::RecordElsewhere,
                Err(NoReplay::Compile) => return self.compiled(t, c, request),
                Err(NoReplay::ByRule) => {}
            }
        }
        self.by_rule(t, c, request, build)
    }

    /// The history the last request planned was sent with (`Conversation::history`'s).
    pub fn history(&self) -> super::thread::History {
        let h = &self.history;
        super::thread::History {
            messages: (0..h.messages.len())
                .map(|m| super::thread::SentMessage {
                    role: h.messages[m].role,
                    lines: h.message_lines(m).to_vec(),
                })
                .collect(),
            missing_parent: h.missing_parent.clone(),
        }
    }

    /// The prompt of `compile`'s body: for what the planner does not take apart.
    fn compiled(&mut self, t: &Transcript, c: &Conversation, request: &Request) -> Planned {
        // Compiled from the lines' contents, which a lean load may have left out.
        t.left_out_named.note_needed();
        let compiled = compile(t, c, request, &Given::default());
        if compiled.record_elsewhere {
            return Planned::RecordElsewhere;
        }
        let blocks = compiled_blocks(&compiled);
        let head_len = blocks
            .iter()
            .position(|b| matches!(b.part, Part::Message(..)))
            .unwrap_or(blocks.len());
        let mut cursor = Cursor::new(self.blocks.new_list(), 0);
        for b in &blocks[head_len..] {
            let Part::Message(i, j) = b.part else {
                continue;
            };
            cursor.put(&mut self.blocks, b.hash, i, j, b.known, Source::Compiled);
        }
        Planned::Prompt(Prompt {
            head: blocks[..head_len].into(),
            list: cursor.list,
            len: cursor.pos,
            breakpoints: blocks
                .iter()
                .enumerate()
                .filter_map(|(p, b)| b.breakpoint.map(|ttl| (p, ttl)))
                .collect(),
        })
    }

    /// The prompt by the build's rules (`wire::by_rule`): the history's messages, a breakpoint
    /// on the last block of the last one (2.1.x) or two (1.x, 2.0.x), the head unrecorded.
    fn by_rule(
        &mut self,
        t: &Transcript,
        c: &Conversation,
        request: &Request,
        build: Build,
    ) -> Planned {
        self.render(t, build == Build::V2_1_100);
        let rule = &self.rule;
        if rule.rendered.last().is_some_and(|r| r.odd > 0) {
            return self.compiled(t, c, request);
        }
        let billing = (build >= Build::V2_1_100).then(|| self.billing(t));
        let head = self
            .rule_heads
            .entry(billing)
            .or_insert_with(|| rule_head(billing))
            .clone();
        let marked = if build >= Build::V2_1_100 { 1 } else { 2 };
        let mut marks = Vec::new();
        let mut next = self.rule.rendered.last().and_then(|r| r.last_non_empty);
        for _ in 0..marked {
            let Some(m) = next else { break };
            let r = &self.rule.rendered[m];
            if r.last_is_object {
                marks.push((head.len() + r.end - 1, 300));
            }
            next = m
                .checked_sub(1)
                .and_then(|p| self.rule.rendered[p].last_non_empty);
        }
        let mut breakpoints: Vec<(usize, i64)> = head
            .iter()
            .enumerate()
            .filter_map(|(p, b)| b.breakpoint.map(|ttl| (p, ttl)))
            .collect();
        breakpoints.extend(marks.into_iter().rev());
        Planned::Prompt(Prompt {
            head,
            list: self.rule.list,
            len: self.rule.len,
            breakpoints,
        })
    }

    /// The billing code of the first prompt: of the first non-empty message's texts.
    fn billing(&mut self, t: &Transcript) -> Hash {
        let rule = &mut self.rule;
        let Some(m) = rule.first_non_empty else {
            return billing("");
        };
        *rule
            .billing
            .get_or_insert_with(|| lines::first_prompt(t, self.history.message_lines(m)))
    }

    /// Render the history's messages from the first one that changed.
    fn render(&mut self, t: &Transcript, newline_fix: bool) {
        let mut from = self
            .history
            .take_dirty(RENDER)
            .min(self.rule.rendered.len());
        if newline_fix != self.rule.newline_fix {
            from = 0;
            self.rule.newline_fix = newline_fix;
        }
        let start = self
            .rule
            .rendered
            .get(from)
            .map_or(self.rule.len, |r| r.start);
        self.rule.rendered.truncate(from);
        if self.rule.first_non_empty.is_none_or(|m| m >= from) {
            self.rule.first_non_empty = None;
            self.rule.billing = None;
        }
        let mut cursor = Cursor::new(self.rule.list, start);
        let mut blocks: Vec<(Hash, Source)> = Vec::new();
        for m in from..self.history.messages.len() {
            let role = self.history.messages[m].role;
            let message_lines = self.history.message_lines(m);
            blocks.clear();
            // The last block so far, with a newline added, where it is a text block.
            let (mut last_text, mut last_is_object, mut cache_control, mut lone) =
                (None::<Hash>, false, false, false);
            let mut context = false;
            for &i in message_lines {
                if let LineKind::Attachment(a) = &t.lines[i].kind
                    && a.rendered.is_none()
                {
                    context = true;
                }
                let content = lines::content(t, i);
                if content.hashes.is_empty() {
                    continue;
                }
                // 2.1.100: a newline ends a text followed by another line's text.
                if newline_fix
                    && role == Role::User
                    && content.first_is_text
                    && let Some(with_newline) = last_text
                    && let Some(last) = blocks.last_mut()
                {
                    last.0 = with_newline;
                }
                blocks.extend(content.hashes.iter().enumerate().map(|(j, h)| {
                    let at = Source::Line {
                        line: i as u32,
                        block: j as u32,
                    };
                    (*h, at)
                }));
                last_text = content.newline_last;
                last_is_object = content.last_is_object;
                cache_control |= content.cache_control;
                lone = content.lone_text_not_plain;
            }
            let previous = m.checked_sub(1).map(|p| self.rule.rendered[p]);
            let before = previous.map_or(0, |p| p.before + usize::from(p.index.is_some()));
            let odd = cache_control || (blocks.len() == 1 && lone && role != Role::Assistant);
            let first = cursor.pos;
            let index = (!blocks.is_empty()).then_some(before);
            if let Some(index) = index {
                let known = !(context || (index == 0 && role == Role::User));
                for (j, (h, source)) in blocks.iter().enumerate() {
                    cursor.put(&mut self.blocks, *h, index, j, known, *source);
                }
                if index == 0 {
                    self.rule.first_non_empty = Some(m);
                }
            }
            self.rule.rendered.push(Rendered {
                start: first,
                end: cursor.pos,
                index,
                before,
                last_non_empty: if index.is_some() {
                    Some(m)
                } else {
                    previous.and_then(|p| p.last_non_empty)
                },
                last_is_object,
                odd: previous.map_or(0, |p| p.odd) + usize::from(odd),
            });
        }
        self.rule.list = cursor.list;
        self.rule.len = cursor.pos;
    }
}

/// The head of a body by rule: tools and system prompt unrecorded (from 2.1.x the system's
/// billing block follows the first prompt), `{thinking, tool_choice}` both `null`.
fn rule_head(billing: Option<Hash>) -> Arc<[Block]> {
    let mut system = unknown(Part::SystemWhole, Some(300));
    if let Some(h) = billing {
        system.hash = h;
    }
    let params = Block {
        part: Part::Params,
        hash: hash(
            "claude-params",
            canonical_without_cache_control(
                &serde_json::json!({"thinking": null, "tool_choice": null}),
            )
            .as_bytes(),
        ),
        known: true,
        breakpoint: None,
    };
    vec![unknown(Part::Tools, None), system, params].into()
}

/// The line whose version says which build sent `request`: its response's first line.
fn request_line(c: &Conversation, request: &Request) -> usize {
    request
        .response
        .map_or(request.at, |r| c.responses[r].lines[0])
}

/// The replay record `request`'s response names (2.1.3xx), as `replay` finds it.
fn replay_reference<'t>(
    t: &'t Transcript,
    c: &Conversation,
    request: &Request,
) -> Option<&'t LineId> {
    let r = request.response?;
    c.responses[r]
        .lines
        .iter()
        .find_map(|&i| match &t.lines[i].kind {
            LineKind::Assistant(a) => a.request_ref.as_ref(),
            _ => None,
        })
}

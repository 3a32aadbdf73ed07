//! A loaded Claude Code transcript as the stages see it: the thread its commands show, one step
//! per request of that thread (its turn, its usage, the prompt the planner built for it), and
//! the plan of fingerprints the stages compare ([`plan`]).

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::load::{LineKind, Loader, Recorder, Transcript};
use super::plan::{BlockData, Prompt, Source};
use super::steps::Growth;
use super::thread::{Conversation, RequestKind, ThreadKey};
use super::wire::{Build, Compiled, Given, compile};
use crate::core::hash::{Hash, hash};
use crate::core::parallel::Threads;
use crate::core::shared::SharedLists;
use crate::core::steps::{Step, Turn};
use crate::core::usage::Usage;
use crate::fingerprint::{AgentPlan, EntryData, Fingerprint, Plan, request_text};
use crate::providers::anthropic::{Block, Part, message_chain_start};

/// A transcript loaded a piece at a time whose steps grow from the lines recorded so far
/// while the loader's helper thread reads the next piece: the same session as
/// [`Session::new`] of the whole, made with the two threads busy.
pub struct GrowingLoad {
    loader: Loader,
    session: Session,
    /// Steps are no longer grown piece by piece but once at the end: a growth changed the steps
    /// from the first on (every step made again: the thread shown changed, a parent came after
    /// its child), which could repeat with each piece; or planning needed a content a lean load
    /// left out, and the file is to be loaded again whole.
    at_the_end: bool,
}

impl GrowingLoad {
    pub fn new(loader: Loader) -> GrowingLoad {
        let mut session =
            Session::empty(Transcript::default(), Conversation::default(), None, None);
        session.copies_at_settle();
        GrowingLoad {
            loader,
            session,
            at_the_end: false,
        }
    }

    /// Read a piece of the file (any cut), then grow the steps from the lines recorded.
    pub fn push(&mut self, bytes: &[u8]) {
        self.loader.push(bytes);
        grow_from(
            &mut self.session,
            &mut self.at_the_end,
            self.loader.transcript_mut(),
        );
    }

    /// Read `source` to its end ([`Loader::read_from`]), growing the steps from each piece's
    /// lines once they are recorded.
    pub fn read_from(&mut self, source: &mut (dyn std::io::Read + Send)) -> std::io::Result<()> {
        let (session, at_the_end) = (&mut self.session, &mut self.at_the_end);
        self.loader
            .read_from(source, |t| grow_from(session, at_the_end, t))
    }

    /// The session of the whole file. Where a lean load finds it needs the contents after all
    /// ([`Transcript::needs_content`]: its lines call for them, or planning its steps did), its
    /// steps are not the file's: load the file again whole.
    pub fn finish(mut self) -> Result<Session, super::load::LoadError> {
        let mut transcript = self.loader.finish()?;
        transcript.needs_content |= transcript.left_out_named.needed();
        if transcript.needs_content {
            return Ok(Session::empty(
                transcript,
                Conversation::default(),
                None,
                None,
            ));
        }
        if self.at_the_end {
            return Ok(Session::new(transcript));
        }
        self.session.transcript = transcript;
        self.session.grow();
        self.session.settle();
        self.session.note_contents_needed();
        Ok(self.session)
    }
}

/// Grow `session`'s steps from the lines recorded in `t` (the loader's transcript, lent).
fn grow_from(session: &mut Session, at_the_end: &mut bool, t: &mut Transcript) {
    if *at_the_end {
        return;
    }
    let before = session.steps.len();
    std::mem::swap(&mut session.transcript, t);
    let unchanged = session.grow();
    std::mem::swap(&mut session.transcript, t);
    // Planning needed a content a lean load left out: the file is loaded again whole, and
    // the steps are not grown further.
    *at_the_end = (before > 1 && unchanged == 0) || t.left_out_named.needed();
}

/// What a Claude Code step is beyond the neutral [`Step`].
#[derive(Debug, Clone)]
pub struct ClaudeStep {
    /// Index into [`Conversation::requests`].
    pub request: usize,
    pub kind: RequestKind,
    /// The model its response names.
    pub model: Option<Arc<str>>,
    pub build: Build,
    /// The Claude Code version its lines were written by.
    pub version: Option<Arc<str>>,
    /// Its prompt as the cache sees it; `None` for a compaction's own request (not recorded)
    /// and for a request of another session this file copied.
    pub prompt: Option<Prompt>,
    /// A request of another session whose lines this file copied (a fork): shown, not judged.
    pub copied: bool,
    /// Its history was sent before by requests another file records (a resume's copy).
    pub history_before: bool,
    /// 1.0.x under `claude -p` may have sent this request's last tool turn twice in the next.
    pub repeat_possible: bool,
    /// What names the request wherever a file copies it: its response's `message.id`, or a
    /// compaction's boundary line's `uuid`.
    pub key: Option<Arc<str>>,
    /// The TTL the session's writes were kept for, as the usage says, up to this request (its
    /// own writes included): an hour where they were all `ephemeral_1h`, five minutes where they
    /// were all `ephemeral_5m`; `None` before any write said.
    pub ttl: Option<i64>,
}

/// A Claude Code transcript, its conversation and the steps of the thread its commands show.
#[derive(Debug)]
pub struct Session {
    pub transcript: Transcript,
    pub conversation: Conversation,
    /// The thread shown: the main one, or in a subagent's own file its thread.
    pub thread: ThreadKey,
    pub claude_steps: Vec<ClaudeStep>,
    pub(crate) steps: Vec<Step>,
    pub(crate) turns: Vec<Turn>,
    /// What growing it keeps (the planner, responses' copies): see `steps.rs`.
    pub(crate) growth: Growth,
}

/// The neutral usage of an Anthropic response: the whole prompt as input (uncached, read and
/// written), reads as the cached part, writes apart.
pub fn neutral_usage(u: &super::load::Usage) -> Usage {
    Usage {
        input_tokens: u.prompt_tokens(),
        cached_input_tokens: u.cache_read_input_tokens,
        cache_write_input_tokens: Some(u.cache_creation_input_tokens),
        cache_write_1h_input_tokens: u.cache_creation_1h,
        output_tokens: u.output_tokens,
        reasoning_output_tokens: 0,
        total_tokens: u.prompt_tokens().saturating_add(u.output_tokens),
        no_cache_counts: !u.has_cache_fields,
    }
}

impl Session {
    /// The steps of a loaded transcript's shown thread, each request's prompt grown from the one
    /// before (time linear in the transcript).
    pub fn new(transcript: Transcript) -> Session {
        let mut session = Session::empty(transcript, Conversation::default(), None, None);
        session.copies_at_settle();
        session.grow();
        session.settle();
        session.note_contents_needed();
        session
    }

    /// A lean load's planning needed a content it left out: the steps are not the file's
    /// ([`Transcript::needs_content`]).
    fn note_contents_needed(&mut self) {
        let t = &mut self.transcript;
        t.needs_content |= t.left_out_named.needed();
    }

    /// [`Session::new`], keeping what recording its lines kept, for lines appended later.
    pub(crate) fn read(transcript: Transcript, recorder: Option<Recorder>) -> Session {
        let mut session = Session::empty(transcript, Conversation::default(), None, recorder);
        session.grow();
        session
    }

    /// The steps of one thread of a transcript (a subagent's, a 1.0.x sidechain's).
    pub fn of_thread(
        transcript: Transcript,
        conversation: Conversation,
        thread: ThreadKey,
    ) -> Session {
        let mut session = Session::empty(transcript, conversation, Some(thread), None);
        session.copies_at_settle();
        session.grow();
        session.settle();
        session.note_contents_needed();
        session
    }

    fn empty(
        transcript: Transcript,
        conversation: Conversation,
        thread: Option<ThreadKey>,
        recorder: Option<Recorder>,
    ) -> Session {
        Session {
            transcript,
            conversation,
            growth: Growth::new(thread.is_some(), recorder),
            thread: thread.unwrap_or(ThreadKey::Main),
            claude_steps: Vec::new(),
            steps: Vec::new(),
            turns: Vec::new(),
        }
    }

    /// Load a whole transcript held in memory.
    pub fn load(name: &str, bytes: &[u8]) -> Result<Session, super::load::LoadError> {
        Session::load_with_threads(name, bytes, Threads::default())
    }

    /// [`Session::load`], the lines read on a helper thread as well when `threads` allows two;
    /// lines appended later are read as this load read them (`watch`).
    pub fn load_with_threads(
        name: &str,
        bytes: &[u8],
        threads: Threads,
    ) -> Result<Session, super::load::LoadError> {
        let mut loader = super::load::Loader::with_threads(name, threads);
        loader.push(bytes);
        let (t, recorder) = loader.finish_recorded()?;
        Ok(Session::read(t, Some(recorder)))
    }

    /// Every planned prompt's message blocks.
    pub fn blocks(&self) -> &SharedLists<BlockData> {
        &self.growth.planner.blocks
    }

    /// The body of a step's request as the build sent it (`compile`), with `given`'s parts.
    pub fn compile(&self, step: usize, given: &Given) -> Compiled {
        let request = &self.conversation.requests[self.claude_steps[step].request];
        compile(&self.transcript, &self.conversation, request, given)
    }

    /// Message block `k` of a step's prompt.
    pub fn block(&self, step: usize, k: usize) -> &BlockData {
        let prompt = self.claude_steps[step]
            .prompt
            .as_ref()
            .expect("invariant: a step with entries has a prompt");
        self.blocks().get(prompt.list, k)
    }

    /// The JSON of message block `k` of a step's prompt, and its message's role.
    pub fn block_json(&self, step: usize, k: usize) -> (String, &'static str) {
        let b = self.block(step, k);
        let t = &self.transcript;
        let from_content = |content: &str, i: u32| -> Option<String> {
            match serde_json::from_str::<Value>(content).ok()? {
                Value::Array(items) => items.get(i as usize).map(Value::to_string),
                Value::String(text) if i == 0 => {
                    Some(serde_json::json!({"type": "text", "text": text}).to_string())
                }
                _ => None,
            }
        };
        let role_of = |line: usize| match &t.lines[line].kind {
            LineKind::Assistant(_) => "assistant",
            LineKind::Attachment(a) if a.rendered_role.as_deref() == Some("system") => "system",
            _ => "user",
        };
        let found = match b.source {
            Source::Line { line, block } => {
                let line = line as usize;
                let content = match &t.lines[line].kind {
                    LineKind::User(u) => Some(u.content.as_ref()),
                    LineKind::Assistant(a) => Some(a.content.as_ref()),
                    LineKind::Attachment(a) => a.rendered.as_deref(),
                    _ => None,
                };
                content
                    .and_then(|c| from_content(c, block))
                    .map(|json| (json, role_of(line)))
            }
            Source::Blob { line, block } => match &t.lines[line as usize].kind {
                LineKind::ApiRequestBlob { message, .. } => {
                    let value: Value = serde_json::from_str(message).unwrap_or(Value::Null);
                    let role = match value["role"].as_str() {
                        Some("assistant") => "assistant",
                        Some("system") => "system",
                        _ => "user",
                    };
                    from_content(&value["content"].to_string(), block).map(|json| (json, role))
                }
                _ => None,
            },
            Source::Compiled => None,
        };
        found.unwrap_or_else(|| {
            // A block of a request compiled whole: taken from its body.
            let body = self.compile(step, &Given::default()).body;
            let message = &body["messages"][b.message as usize];
            let role = match message["role"].as_str() {
                Some("assistant") => "assistant",
                Some("system") => "system",
                _ => "user",
            };
            let json = match &message["content"] {
                Value::String(text) => serde_json::json!({"type": "text", "text": text}),
                content => content[b.block as usize].clone(),
            };
            (json.to_string(), role)
        })
    }
}

/// What a Claude Code session's plan keeps beside the neutral part: `--system` and `--tools`,
/// and each step's system text, tools and params as `compile` gives them, made when first asked
/// (by `diff` and `check`, for a few steps).
#[derive(Debug, Default)]
pub struct ClaudePlan {
    pub given: Given,
    pub(crate) system: Vec<OnceLock<Option<String>>>,
    pub(crate) tools: Vec<OnceLock<Option<Vec<String>>>>,
}

/// The Claude part of a plan a Claude Code session made.
pub fn claude(plan: &Plan) -> &ClaudePlan {
    plan.agent::<ClaudePlan>()
}

/// The plan of a session's steps: each prompt's message blocks as the plan's entries (the
/// same lists, so that prompts share their prefixes), and per step the fingerprint of each
/// part, in the shared encoding (ARCHITECTURE.md, "Fingerprint encoding"): `instructions` over
/// the system blocks the build records, `tools` over the tool specs, `params` over the model
/// and the parameters that invalidate the messages' cache, `input` the chain over the message
/// blocks. `--system`/`--tools` stand for the parts a build does not record.
pub fn plan(session: &Session, given: Given, threads: Threads) -> Plan {
    let mut plan = empty_plan(given, threads);
    plan_more(session, &mut plan, 0);
    plan
}

/// The plan of no steps, which [`plan_more`] grows.
pub fn empty_plan(given: Given, threads: Threads) -> Plan {
    Plan {
        data: SharedLists::new(),
        views: Vec::new(),
        fingerprints: Vec::new(),
        instruction_tokens: Vec::new(),
        tool_tokens: 0,
        estimate_tokens: false,
        first_seen: OnceLock::new(),
        chain_start: message_chain_start(),
        threads,
        agent: AgentPlan::new(ClaudePlan {
            given,
            system: Vec::new(),
            tools: Vec::new(),
        }),
    }
}

/// Bring a plan [`plan`] made of `session` up to its steps now (it grew: `watch`): the steps
/// from `from` on are planned again (their prompt or model may have changed since), the new
/// blocks are taken on. From 0, the blocks are taken whole: a session whose steps were all
/// made again (`steps.rs`) planned them from a new planner, into new blocks.
pub fn plan_more(session: &Session, plan: &mut Plan, from: usize) {
    let entry = |b: &BlockData| EntryData {
        item_hash: b.hash,
        chain: b.chain,
        tokens: 0,
    };
    if from == 0 {
        plan.data = session.blocks().map(entry);
    } else {
        session.blocks().map_more(&mut plan.data, entry);
    }
    let from = from.min(plan.fingerprints.len());
    plan.views.truncate(from);
    plan.fingerprints.truncate(from);
    plan.instruction_tokens.truncate(from);
    plan.first_seen = OnceLock::new();
    let claude = plan.agent_mut::<ClaudePlan>();
    claude.system.truncate(from);
    claude.tools.truncate(from);
    let given_system = claude
        .given
        .system
        .as_ref()
        .map(|v| part_hash("claude-system", v));
    let given_tools = claude
        .given
        .tools
        .as_ref()
        .map(|v| part_hash("claude-tools", v));
    let mut text = String::new();
    // Most steps share their head with the step before (one `Arc`) and their model: its
    // parts' hashes are taken on, not made again (they were most of a step's plan).
    let mut last: Option<LastHead> = None;
    for s in &session.claude_steps[from..] {
        let (list, len) = s.prompt.as_ref().map_or((0, 0), |p| (p.list, p.len));
        plan.views.push((list, len));
        let model = s.model.as_deref();
        let parts = match (s.prompt.as_ref().map(|p| &p.head), &last) {
            (Some(head), Some(last)) if Arc::ptr_eq(head, last.head) && last.model == model => {
                last.parts
            }
            (head, _) => {
                let parts = HeadParts::of(head.map_or(&[], |h| h), model);
                last = head.map(|head| LastHead { head, model, parts });
                parts
            }
        };
        // A body rebuilt from replay records sends the system and tools it recorded, whatever
        // --system and --tools say (compile warns); an older build's, the ones given.
        let (instructions, tools) = if s.build >= Build::V2_1_332 {
            (
                parts.instructions.or(given_system),
                parts.tools.or(given_tools),
            )
        } else {
            (
                given_system.or(parts.instructions),
                given_tools.or(parts.tools),
            )
        };
        let params = parts.params;
        let input = match len.checked_sub(1) {
            Some(last) => plan.data.get(list, last).chain,
            None => message_chain_start(),
        };
        request_text(
            &mut text,
            [
                ("instructions", instructions.as_ref(), "unknown"),
                ("tools", tools.as_ref(), "unknown"),
                ("params", Some(&params), ""),
                ("prompt_cache_key", None, "none"),
                ("checkpoint", None, "none"),
                ("input", Some(&input), ""),
            ],
        );
        plan.fingerprints.push(Fingerprint {
            instructions,
            tools,
            tools_canonical: tools,
            params,
            prompt_cache_key: None,
            checkpoint: None,
            input,
            input_items: len,
            request: hash("claude-request", text.as_bytes()),
            cache_key_absent: true,
            input_partial: len
                .checked_sub(1)
                .is_some_and(|last| session.blocks().get(list, last).last_unknown > 0),
        });
        plan.instruction_tokens.push(0);
    }
    let steps = plan.fingerprints.len();
    let claude = plan.agent_mut::<ClaudePlan>();
    claude.system.resize_with(steps, OnceLock::new);
    claude.tools.resize_with(steps, OnceLock::new);
}

/// The hashes a step's fingerprint takes of its head: the system blocks and the tools the
/// transcript records, and the params (with the model).
#[derive(Clone, Copy)]
struct HeadParts {
    instructions: Option<Hash>,
    tools: Option<Hash>,
    params: Hash,
}

/// The head and model of the last step whose parts were hashed, and those hashes.
struct LastHead<'a> {
    head: &'a Arc<[Block]>,
    model: Option<&'a str>,
    parts: HeadParts,
}

impl HeadParts {
    fn of(head: &[Block], model: Option<&str>) -> HeadParts {
        let recorded = |wanted: fn(Part) -> bool, tag: &str| -> Option<Hash> {
            let hashes: Vec<u8> = head
                .iter()
                .filter(|b| wanted(b.part) && b.known)
                .flat_map(|b| b.hash)
                .collect();
            (!hashes.is_empty()).then(|| hash(tag, &hashes))
        };
        let params_block = head
            .iter()
            .find(|b| b.part == Part::Params)
            .map_or([0; 16], |b| b.hash);
        let mut params_bytes = model.unwrap_or("").as_bytes().to_vec();
        params_bytes.push(0);
        params_bytes.extend_from_slice(&params_block);
        HeadParts {
            instructions: recorded(Part::is_system, "claude-system"),
            tools: recorded(|p| matches!(p, Part::Tool(_) | Part::Tools), "claude-tools"),
            params: hash("claude-params", &params_bytes),
        }
    }
}

/// A part given whole (`--system`, `--tools`): the hash of each of its blocks, as the head's
/// blocks are hashed, then of them all.
fn part_hash(tag: &str, value: &Value) -> Hash {
    let items: Vec<Value> = match value {
        Value::Array(items) => items.clone(),
        Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
        other => vec![other.clone()],
    };
    let block_tag = if tag == "claude-tools" {
        "claude-tool"
    } else {
        "claude-system"
    };
    let hashes: Vec<u8> = items
        .iter()
        .flat_map(|item| {
            hash(
                block_tag,
                crate::providers::anthropic::canonical_without_cache_control(item).as_bytes(),
            )
        })
        .collect();
    hash(tag, &hashes)
}

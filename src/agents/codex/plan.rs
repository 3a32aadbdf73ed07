//! A Codex session's plan: every step's model view, the fingerprint of each of its components
//! and token estimates, in time linear in the rollout ([`crate::fingerprint`] has the encoding and
//! the plan's shape). What a Codex request is made of comes from here: the instructions (a
//! `--instructions` file, a `turn_context` override, `session_meta`), the tools (`--tools`
//! and `session_meta.dynamic_tools`), the params of each turn context, the checkpoint a
//! compaction left, and the model view of the history (`views.rs`).

use std::sync::Arc;

// Keys are call ids from the session: foldhash is several times faster than SipHash on them
// and still seeded per process.
use foldhash::HashMap;

use crate::agents::codex::compile::{InstructionsSource, ToolPlan, params_with};
use crate::agents::codex::normalize::ViewEntry;
use crate::agents::codex::session::Session;
use crate::core::shared::{SharedLists, Slice};
use crate::core::tokens;
use crate::fingerprint::{
    AgentPlan, Fingerprint, Hash, Plan, canonical_json, chain_start, hash, request_text,
};

mod digests;
mod views;

use views::ViewBuilder;
pub(crate) use views::ViewLists;

/// What a Codex session's plan keeps beside the neutral part: each step's model-view entries and
/// the texts its instructions and tools came from.
#[derive(Debug, Default)]
pub struct CodexPlan {
    /// The model-view entries, in lists of the same shape as [`Plan`]'s entry data.
    pub(crate) entries: SharedLists<ViewEntry>,
    /// Per step: the instructions used and their source.
    pub instructions: Vec<(Option<Arc<str>>, InstructionsSource)>,
    pub tools: ToolPlan,
}

/// The Codex part of a plan a Codex session made.
pub fn codex(plan: &Plan) -> &CodexPlan {
    plan.agent::<CodexPlan>()
}

fn codex_mut(plan: &mut Plan) -> &mut CodexPlan {
    plan.agent_mut::<CodexPlan>()
}

/// The model-view entries of a step's request.
pub fn view(plan: &Plan, step: usize) -> Slice<'_, ViewEntry> {
    let (list, len) = plan.views[step];
    codex(plan).entries.slice(list, ..len)
}

pub use crate::fingerprint::PlanOptions;

/// Build the plan: every step's model view, fingerprints and token estimates, sharing work
/// between steps so the total cost is linear in the rollout. A rewrite of history (a rollback, a
/// late output) keeps the unchanged prefix shared; the entries after the first one that changed
/// have other chain values, and are taken from a list that already holds them when there is one
/// (the rendering an entry had before its status flipped, an earlier branch being walked), and
/// hashed and stored again only where none does. One [`Planner::extend`] of a new planner.
pub fn plan(session: &Session, options: &PlanOptions) -> Plan {
    let mut planner = Planner::new(session, options);
    planner.extend(session, 0);
    planner.plan
}

/// A plan that grows with its session (`watch`): [`Planner::extend`] plans the steps replay
/// added since the last call, at the cost of those steps.
pub struct Planner {
    options: PlanOptions,
    plan: Plan,
    /// The session had its meta (tools, cache key, instructions come from it).
    meta: bool,
    tools_hash: Option<Hash>,
    tools_canonical: Option<Hash>,
    cache_key_hash: Option<Hash>,
    file_instructions: Option<Arc<str>>,
    meta_instructions: Option<Arc<str>>,
    /// The checkpoint of each epoch so far.
    checkpoint_of_epoch: Vec<Option<Hash>>,
    headers: HeaderMemo,
    /// From the first step on.
    views: Option<ViewBuilder>,
}

impl Planner {
    /// A plan of no steps yet.
    pub fn new(session: &Session, options: &PlanOptions) -> Planner {
        let meta = session.rollout.meta.as_ref();
        // Tools: the caller's plan plus the session's dynamic tools.
        let tools = {
            let mut list = options.tools.clone();
            if let Some(dynamic) = meta.and_then(|m| m.dynamic_tools.as_ref()) {
                list.get_or_insert_with(Vec::new)
                    .extend(dynamic.iter().cloned());
            }
            ToolPlan { tools: list }
        };
        let tools_hash = tools
            .tools
            .as_ref()
            .map(|t| hash("tools", format!("[{}]", t.join(",")).as_bytes()));
        let tools_canonical = tools.tools.as_ref().map(|t| {
            let mut canonical: Vec<String> = t.iter().map(|tool| canonical_json(tool)).collect();
            canonical.sort();
            hash("tools-canonical", canonical.join("\n").as_bytes())
        });
        let tool_tokens = match (&tools.tools, options.estimate_tokens) {
            (Some(t), true) => t.iter().map(|tool| tokens::count(tool)).sum(),
            _ => 0,
        };
        let cache_key = meta.and_then(|m| m.id.as_deref());
        Planner {
            options: options.clone(),
            plan: Plan {
                data: SharedLists::default(),
                views: Vec::new(),
                fingerprints: Vec::new(),
                instruction_tokens: Vec::new(),
                tool_tokens,
                estimate_tokens: options.estimate_tokens,
                first_seen: std::sync::OnceLock::new(),
                chain_start: chain_start(),
                threads: options.threads,
                agent: AgentPlan::new(CodexPlan {
                    entries: SharedLists::default(),
                    instructions: Vec::new(),
                    tools,
                }),
            },
            meta: meta.is_some(),
            tools_hash,
            tools_canonical,
            cache_key_hash: cache_key.map(|k| hash("prompt_cache_key", k.as_bytes())),
            file_instructions: options.instructions.as_deref().map(Arc::from),
            meta_instructions: meta
                .and_then(|m| m.base_instructions.as_deref())
                .map(Arc::from),
            checkpoint_of_epoch: Vec::new(),
            headers: HeaderMemo::default(),
            views: None,
        }
    }

    /// The plan of the steps so far.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Plan the session's steps from step `unchanged` on: the steps before it are those the
    /// plan has (the session grew since: `watch`). The last step planned is planned again, as
    /// it may have changed (the pending step); with `unchanged` 0, or when the session's meta
    /// arrived since, everything is planned again.
    ///
    /// The views are built in one pass over the steps, which cannot be split; each step's
    /// instructions and params depend on its turn context alone, and are worked out on another
    /// thread meanwhile (when `options.threads` allows one and there are enough steps). The
    /// request fingerprints, which need both, are spread over the threads afterwards.
    ///
    /// Returns how many of the first steps kept their plan (none when planned again).
    pub fn extend(&mut self, session: &Session, unchanged: usize) -> usize {
        let planned = self.views.is_some() || !self.checkpoint_of_epoch.is_empty();
        if (unchanged == 0 && planned) || session.rollout.meta.is_some() != self.meta {
            *self = Planner::new(session, &self.options);
        }
        let replay = &session.replay;
        let steps = replay.steps.len();
        let from = unchanged
            .min(self.plan.views.len().saturating_sub(1))
            .min(steps);
        let plan = &mut self.plan;
        plan.views.truncate(from);
        plan.fingerprints.truncate(from);
        codex_mut(plan).instructions.truncate(from);
        plan.instruction_tokens.truncate(from);
        plan.first_seen = std::sync::OnceLock::new();
        extend_checkpoints(session, &mut self.checkpoint_of_epoch);
        let Some(first) = replay.steps.get(from) else {
            return from;
        };
        let options = &self.options;
        // The lists are the plan's: lent to the builder for these steps.
        let arrays = ViewLists {
            entries: std::mem::take(&mut codex_mut(plan).entries),
            data: std::mem::take(&mut plan.data),
        };
        let builder = match &mut self.views {
            Some(builder) => {
                builder.arrays = arrays;
                builder
            }
            None => self
                .views
                .insert(ViewBuilder::new(session, options, first.epoch, arrays)),
        };
        let build_views = |builder: &mut ViewBuilder| {
            replay.steps[from..]
                .iter()
                .map(|step| builder.step(session, step.epoch, step.prefix_len))
                .collect::<Vec<_>>()
        };
        // A thread of its own for the headers pays off from a few hundred steps (unit tests
        // use it from two, so that their small sessions take that path;
        // tests/cli/fuzz_bodies.rs runs 256).
        const HEADER_THREAD_STEPS: usize = if cfg!(test) { 2 } else { 256 };
        let memo = &mut self.headers;
        let (views, headers) = if options.threads.count > 1 && steps - from >= HEADER_THREAD_STEPS {
            std::thread::scope(|scope| {
                let headers = scope.spawn(|| step_headers(session, options, from, memo));
                let views = build_views(builder);
                match headers.join() {
                    Ok(headers) => (views, headers),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            })
        } else {
            (
                build_views(builder),
                step_headers(session, options, from, memo),
            )
        };
        let arrays = std::mem::take(&mut builder.arrays);
        plan.data = arrays.data;
        codex_mut(plan).entries = arrays.entries;

        codex_mut(plan)
            .instructions
            .extend(headers.iter().enumerate().map(|(offset, header)| {
                let text = match header.source {
                    InstructionsSource::File => self.file_instructions.clone(),
                    InstructionsSource::TurnContext => session
                        .step_context(from + offset)
                        .and_then(|c| c.base_instructions.as_deref())
                        .map(Arc::from),
                    InstructionsSource::SessionMeta => self.meta_instructions.clone(),
                    InstructionsSource::Unknown => None,
                };
                (text, header.source)
            }));
        plan.instruction_tokens.extend(
            headers
                .iter()
                .map(|h| h.instructions.map_or(0, |(_, tokens)| tokens)),
        );

        // Blocks of steps: one step is less work than taking a task. Unit tests use short
        // blocks, so that their small sessions span several; tests/cli/fuzz_bodies.rs runs 256.
        const BLOCK: usize = if cfg!(test) { 4 } else { 256 };
        let (tools_hash, tools_canonical) = (self.tools_hash, self.tools_canonical);
        let cache_key_hash = self.cache_key_hash;
        let checkpoint_of_epoch = &self.checkpoint_of_epoch;
        let fingerprints =
            crate::core::parallel::map_blocks(views.len(), BLOCK, options.threads, |block| {
                let mut request = String::new();
                block
                    .map(|offset| {
                        let header = &headers[offset];
                        let instructions = header.instructions.map(|(hash, _)| hash);
                        let (_, input_items, input) = views[offset];
                        let checkpoint = checkpoint_of_epoch[replay.steps[from + offset].epoch];
                        request_text(
                            &mut request,
                            [
                                ("instructions", instructions.as_ref(), "unknown"),
                                ("tools", tools_hash.as_ref(), "unknown"),
                                ("params", Some(&header.params), ""),
                                ("prompt_cache_key", cache_key_hash.as_ref(), "unknown"),
                                ("checkpoint", checkpoint.as_ref(), "none"),
                                ("input", Some(&input), ""),
                            ],
                        );
                        Fingerprint {
                            instructions,
                            tools: tools_hash,
                            tools_canonical,
                            params: header.params,
                            prompt_cache_key: cache_key_hash,
                            checkpoint,
                            input,
                            input_items,
                            request: hash("request", request.as_bytes()),
                            cache_key_absent: false,
                            input_partial: false,
                        }
                    })
                    .collect::<Vec<_>>()
            });
        for block in fingerprints {
            plan.fingerprints.extend(block);
        }
        plan.views
            .extend(views.iter().map(|&(list, len, _)| (list, len)));
        from
    }
}

/// Add the checkpoint of each epoch past those in `checkpoint_of_epoch`: the hash of the
/// compacted line it started from (rollbacks inherit their epoch's).
fn extend_checkpoints(session: &Session, checkpoint_of_epoch: &mut Vec<Option<Hash>>) {
    let replay = &session.replay;
    let from = checkpoint_of_epoch.len();
    let mut current = checkpoint_of_epoch.last().copied().flatten();
    let first = replay.checkpoints.partition_point(|c| c.epoch < from);
    let mut compactions = replay.checkpoints[first..].iter().peekable();
    for epoch in from..replay.epochs.len() {
        if let Some(c) = compactions.peek().filter(|c| c.epoch == epoch) {
            current = Some(c.digest);
            compactions.next();
        }
        checkpoint_of_epoch.push(current);
    }
}

/// A step's instructions and params, which depend on its turn context alone.
#[derive(Debug, Clone, Copy)]
struct StepHeader {
    source: InstructionsSource,
    /// Hash and token estimate of the instructions, when they are known.
    instructions: Option<(Hash, usize)>,
    params: Hash,
}

/// What the step headers reuse from step to step.
#[derive(Debug, Default)]
struct HeaderMemo {
    /// `--instructions FILE`, then the session_meta instructions: hash and tokens.
    file: Option<Option<(Hash, usize)>>,
    meta: Option<(Hash, usize)>,
    /// Keyed by the turn_context record the text came from.
    overrides: HashMap<Option<usize>, (Hash, usize)>,
    params: HashMap<Option<usize>, Hash>,
    /// The last step's turn_context record and params.
    last_params: Option<(Option<usize>, Hash)>,
}

/// The header of every step from `from` on: instructions from `--instructions FILE`, else a
/// turn_context override, else session_meta; the `params` of its turn context.
fn step_headers(
    session: &Session,
    options: &PlanOptions,
    from: usize,
    memo: &mut HeaderMemo,
) -> Vec<StepHeader> {
    let digest = |text: &str| {
        let tokens = if options.estimate_tokens {
            tokens::count(text)
        } else {
            0
        };
        (hash("instructions", text.as_bytes()), tokens)
    };
    let file = *memo
        .file
        .get_or_insert_with(|| options.instructions.as_deref().map(digest));
    let meta_text = session
        .rollout
        .meta
        .as_ref()
        .and_then(|m| m.base_instructions.as_deref());
    let context_of = |record: Option<usize>| match &session.rollout.records[record?].kind {
        crate::agents::codex::model::RecordKind::TurnContext(tc) => Some(tc),
        _ => None,
    };
    let steps = &session.replay.steps;
    let mut headers = Vec::with_capacity(steps.len() - from);
    for (index, step) in steps.iter().enumerate().skip(from) {
        let context = session.step_context(index);
        let (source, instructions) =
            match (file, context.and_then(|c| c.base_instructions.as_deref())) {
                (Some(file), _) => (InstructionsSource::File, Some(file)),
                (None, Some(text)) => (
                    InstructionsSource::TurnContext,
                    Some(
                        *memo
                            .overrides
                            .entry(step.context)
                            .or_insert_with(|| digest(text)),
                    ),
                ),
                (None, None) => match meta_text {
                    Some(text) => (
                        InstructionsSource::SessionMeta,
                        Some(*memo.meta.get_or_insert_with(|| digest(text))),
                    ),
                    None => (InstructionsSource::Unknown, None),
                },
            };
        let last_params = memo.last_params;
        let params_hash = *memo.params.entry(step.context).or_insert_with(|| {
            // Era B writes a turn_context per step; within a turn it equals the one before,
            // and comparing them is cheaper than building the params JSON.
            match last_params {
                Some((last, previous)) if context_of(last).map(|c| &**c) == context => previous,
                _ => hash(
                    "params",
                    params_with(context, options.output_schema.as_deref()).as_bytes(),
                ),
            }
        });
        memo.last_params = Some((step.context, params_hash));
        headers.push(StepHeader {
            source,
            instructions,
            params: params_hash,
        });
    }
    headers
}

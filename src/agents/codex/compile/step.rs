//! The request of one step of a session: its parts gathered from the plan and the session, and
//! what the rollout leaves approximate about it.

use crate::agents::codex::model::ItemKind;
use crate::agents::codex::replay::EntryOrigin;
use crate::agents::codex::rules::request_shape;
use crate::agents::codex::session::Session;
use crate::fingerprint::Plan;

use super::{CompiledRequest, RequestParts, compile};

/// What `compile` is given beyond the plan.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// `--output-schema FILE`, compact JSON: the schema `codex exec --output-schema` sends as
    /// `text.format`, which most builds do not record.
    pub output_schema: Option<String>,
}

/// Compile the request of one step from a plan.
pub fn compile_step(
    session: &Session,
    plan: &Plan,
    step: usize,
    options: &CompileOptions,
) -> CompiledRequest {
    let view = crate::agents::codex::plan::view(plan, step);
    let texts: Vec<&str> = view.iter().map(|e| session.view_json(e)).collect();
    let (instructions, instructions_source) =
        &crate::agents::codex::plan::codex(plan).instructions[step];
    let shape = request_shape(session, step);
    let mut compiled = compile(&RequestParts {
        instructions: instructions.as_deref(),
        instructions_source: *instructions_source,
        input: &texts,
        tools: &crate::agents::codex::plan::codex(plan).tools,
        context: session.step_context(step),
        prompt_cache_key: session.rollout.meta.as_ref().and_then(|m| m.id.as_deref()),
        shape: &shape,
        output_schema: options.output_schema.as_deref(),
        compaction: session.replay.steps[step].compaction,
    });
    let rebuilt = session.replay.step_history(step).iter().any(|e| {
        matches!(
            e.origin,
            EntryOrigin::Approximate | EntryOrigin::Rebuilt | EntryOrigin::Summary
        )
    });
    if rebuilt {
        compiled.approximations.push((
            "input",
            "rebuilt from a compaction without replacement_history: Codex re-creates the \
             initial context from its config at resume time",
        ));
    }
    if session.replay.steps[step].compaction && remote_compaction(session, step) {
        compiled.approximations.push((
            "input",
            "a remote compaction (its history holds a `compaction` item): Codex sent it to \
             /responses/compact, whose body was not recorded; shown as a local compaction request",
        ));
    }
    if let Some(fork) = &session.fork
        && fork.parent.is_none()
    {
        compiled.approximations.push((
            "input",
            "a fork whose parent rollout was not found: Codex sends the parent's history first, \
             and it is missing here",
        ));
    }
    compiled
}

/// Whether the compaction a step requested left a `compaction` item (an encrypted summary from
/// the provider's compact endpoint) in the history that replaced it.
fn remote_compaction(session: &Session, step: usize) -> bool {
    let epoch = session.replay.steps[step].epoch + 1;
    epoch < session.replay.epochs.len()
        && session.replay.epoch(epoch).iter().any(|entry| {
            session.replay.item(&session.rollout, entry.item).kind == ItemKind::Compaction
        })
}

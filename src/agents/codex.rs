//! OpenAI Codex CLI: rollout files (`~/.codex/sessions/…/rollout-*.jsonl`), their history as
//! Codex's resume rebuilds it, and the Responses API request each Codex build sends.

mod agent;
pub mod compile;
pub mod content;
pub mod discover;
pub mod follow;
pub mod incremental;
pub mod invariants;
pub mod item_tokens;
pub mod model;
pub mod normalize;
pub mod parse;
pub mod plan;
pub mod render;
pub mod replay;
pub mod rules;
pub mod session;
pub mod settings;
pub mod usage;

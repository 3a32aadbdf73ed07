//! promptc: inspect coding-agent session logs (Codex rollout files, Claude Code transcripts).
//!
//! Three layers. [`core`] holds what every session reduces to (turns, steps, usage, hashes, the
//! shared lists) and nothing about an agent; [`agents`] has one folder per agent, with its
//! loader, history rules (replay, model view, plan) and wire shapes ([`agents::codex`]);
//! [`providers`] has each provider's prompt cache behind [`providers::CacheModel`] (and
//! Anthropic's list prices). The stages over them, [`fingerprint`], [`cache`], [`diff`],
//! [`check`], [`report`], [`watch`] and [`render`], ask the [`Session`] and its agent rather than
//! read an agent's lines. The library does no I/O and never reads the environment: the binary in
//! `src/bin/promptc/` reads files and decides colour and width.

#![forbid(unsafe_code)]

pub mod agents;
pub mod cache;
pub mod check;
pub mod core;
pub mod diff;
pub mod fingerprint;
pub mod pricing;
pub mod providers;
pub mod render;
pub mod report;
pub mod session;
pub mod watch;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod test_support;

pub use agents::AgentSession;
pub use agents::codex::parse::{LoadError, LoadOptions};
pub use agents::codex::session::{SelectError, TurnSelector};
/// The session the binary loads, of either agent; the stages take it, or either agent's own.
pub use session::Session;

/// Version of every JSON document promptc writes.
pub const SCHEMA_VERSION: u32 = 1;

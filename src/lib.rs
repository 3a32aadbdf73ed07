//! promptc: inspect Codex rollout files.
//!
//! The pipeline, each stage depending only on the ones before it:
//! `parse` (bytes to records) → `replay` (raw history, turns, steps) → `normalize` (model view)
//! → `render` (text and JSON). The library does no I/O and never reads the environment: the
//! binary in `src/bin/promptc/` reads files and decides colour and width.

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
pub mod watch;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod test_support;

pub use agents::codex::parse::{LoadError, LoadOptions};
pub use agents::codex::session::{SelectError, Session, TurnSelector};

/// Version of every JSON document promptc writes.
pub const SCHEMA_VERSION: u32 = 1;

//! promptc: inspect Codex rollout files.
//!
//! The pipeline, each stage depending only on the ones before it:
//! `parse` (bytes to records) → `replay` (raw history, turns, steps) → `normalize` (model view)
//! → `render` (text and JSON). The library does no I/O and never reads the environment: the
//! binary in `src/bin/promptc/` reads files and decides colour and width.

#![forbid(unsafe_code)]

pub mod cache;
pub mod check;
pub mod claude;
pub mod codex_rules;
pub mod compile;
pub mod content;
pub mod diff;
pub mod discover;
pub mod fingerprint;
pub mod hash;
pub mod model;
pub mod normalize;
pub mod parallel;
pub mod parse;
pub mod pricing;
pub mod render;
pub mod replay;
pub mod report;
pub mod sanitize;
pub mod session;
pub mod shared;
pub mod tokens;
pub mod volatile;
pub mod watch;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod test_support;

pub use parse::{LoadError, LoadOptions};
pub use session::{SelectError, Session, TurnSelector};

/// Version of every JSON document promptc writes.
pub const SCHEMA_VERSION: u32 = 1;

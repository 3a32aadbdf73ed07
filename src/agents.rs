//! One folder per coding agent: its loader (file format to records), history rules (replay, the
//! model view, the plan of its steps) and wire shapes (the request each of its builds sends).
//! The stages outside ask the session (`crate::Session`'s methods: a step's model and settings,
//! what a changed setting feeds, whether an entry is injected context, its provider's cache
//! model, …); they do not read an agent's line types.

pub mod codex;

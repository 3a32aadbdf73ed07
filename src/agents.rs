//! One folder per coding agent: its loader (file format to records), history rules (replay, the
//! model view) and wire shapes (the request each of its builds sends). The stages outside ask an
//! agent; they do not read its line types.

pub mod codex;

//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`, subagent files beside
//! them): the loader ([`load`], each content array read once by [`content`]) and the
//! conversation it records ([`thread`]): one response per `message.id`, the branch of the
//! `parentUuid` tree each request was sent with, parallel tool results gathered, sidechains
//! apart, compaction boundaries; the prompt of each request as the cache sees it, each grown
//! from the one before ([`plan`]), and `steps` on it ([`cache`]).
//!
//! What a transcript records, build by build, and what Claude Code sends are in CONFORMANCE.md
//! ("Claude Code"), from recordings of the real CLI in `tests/conformance/claude/`.

mod agent;
pub mod cache;
pub mod content;
pub mod follow;
pub mod home;
pub mod load;
pub mod plan;
pub mod record;
pub mod render;
pub mod replay;
pub mod report;
pub mod session;
mod sha256_name;
mod steps;
pub mod thread;
pub mod usage;
mod uuids;
pub mod wire;

#[cfg(test)]
mod home_tests;
#[cfg(test)]
mod tests;

pub use load::{Line, LineId, LineKind, Transcript, Usage, is_transcript, load};
pub use thread::{
    Conversation, History, Request, RequestKind, Response, Role, SentMessage, ThreadKey,
    conversation,
};

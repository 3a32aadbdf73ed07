//! What the planner reads of a line's content: its blocks, hashed by the loader (with the first
//! prompt's billing code and the last text block ended with 2.1.100's newline).

use super::super::content::Content;
use super::super::load::{LineKind, Transcript};
use crate::core::hash::Hash;

/// Line `i`'s content blocks (none for a line that is not a user or assistant message).
pub(crate) fn content(t: &Transcript, i: usize) -> &Content {
    static NONE: std::sync::LazyLock<Content> = std::sync::LazyLock::new(|| Content {
        all_objects: true,
        ..Content::default()
    });
    match &t.lines[i].kind {
        LineKind::User(u) => &u.blocks,
        LineKind::Assistant(a) => &a.blocks,
        _ => &NONE,
    }
}

/// The billing code of a first message's first prompt (as `cache::compiled_blocks` reads a
/// body's first message): the first line's whose texts hold one, else of no text.
pub(crate) fn first_prompt(t: &Transcript, lines: &[usize]) -> Hash {
    lines
        .iter()
        .find_map(|&i| content(t, i).first_prompt)
        .unwrap_or_else(|| super::super::content::billing(""))
}

//! Codex's own documents: `view` (the raw history beside the model view), `compile` (the body a
//! build sends) and the history rows of the session page, written with `render`'s helpers.

pub mod compile;
pub mod page;
pub mod view;

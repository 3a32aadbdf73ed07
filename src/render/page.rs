//! `view --format html` and `diff --format html`: one self-contained page per session (or pair),
//! every request a `<section data-turn data-step>` with its cache bar, verdict, and its
//! difference from the request before. The agents fill a [`Page`] (`page/codex.rs`,
//! `page/claude.rs`); this module writes it.
//!
//! The page stays linear in the session: a step embeds what it appended and, on a break, what
//! changed, never the whole request (each request holds the whole history, so embedding them
//! all is quadratic); whole bodies are embedded for a bounded number of steps.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::core::sanitize::escape_block;

mod build;
mod html;

pub use build::{page, shell_word};

pub use html::{write_diff_page, write_page};

/// Bytes of one item's text embedded in the page (as `compile` folds a string); the rest is
/// counted, `compile` prints it. Larger cuts made a 10 000-step page 114 MB.
pub const ITEM_BYTES: usize = 400;
/// Whole request bodies embedded: the last step's and the first breaks'.
pub const BODIES: usize = 3;
/// Bytes of text diffed character by character on a break; longer texts are diffed by lines.
const CHAR_DIFF_BYTES: usize = 8 << 10;

/// One session, as the page shows it.
#[derive(Debug, Default)]
pub struct Page {
    pub title: String,
    /// `codex` or `claude`.
    pub agent: &'static str,
    /// Label, value pairs under the title.
    pub facts: Vec<(String, String)>,
    /// The provider reports cache writes (Anthropic): bars show read / written / uncached.
    pub writes: bool,
    pub steps: Vec<PageStep>,
    /// The raw history beside the model view (of the last request).
    pub history: Vec<HistoryRow>,
    pub history_title: String,
}

/// How a verdict is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Good,
    Bad,
    Neutral,
}

impl Tone {
    fn class(self) -> &'static str {
        match self {
            Tone::Good => "good",
            Tone::Bad => "bad",
            Tone::Neutral => "neutral",
        }
    }
}

/// One request.
#[derive(Debug, Default)]
pub struct PageStep {
    pub turn: usize,
    pub step: usize,
    pub model: Option<String>,
    pub verdict: String,
    pub short: String,
    pub explanation: String,
    pub tone: Tone,
    /// Observed tokens: whole input, read from the cache, written to it, output.
    pub input: Option<u64>,
    pub read: Option<u64>,
    pub written: Option<u64>,
    pub output: Option<u64>,
    /// promptc's estimate of the input, drawn as an outline where no usage is recorded.
    pub estimated: Option<u64>,
    /// Seconds since the previous request.
    pub gap_seconds: Option<i64>,
    pub compaction: bool,
    /// Input items (messages) of the request, and how many it shares with the one before.
    pub items: usize,
    pub shared: usize,
    pub previous_items: usize,
    /// Parts before the input that differ from the previous request's.
    pub changed_parts: Vec<String>,
    pub appended: Vec<Piece>,
    /// Appended items not embedded (past the first ones): the script stands a note for each.
    pub missing: usize,
    /// On a break: the previous request's pieces from the break on, and this one's.
    pub removed: Vec<Piece>,
    /// Part texts that changed (instructions, system), previous and this.
    pub changed_texts: Vec<(String, String, String)>,
    /// The request as `compile` prints it, for a bounded number of steps.
    pub body: Option<String>,
    /// The command that prints this step's request.
    pub command: String,
}

impl PageStep {
    /// The previous request's input is not a prefix of this one's.
    pub fn is_break(&self) -> bool {
        self.shared < self.previous_items || !self.changed_parts.is_empty()
    }
}

/// An item of a request: a title (kind, a preview) and its text, cut to [`ITEM_BYTES`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Piece {
    pub title: String,
    pub text: String,
    /// Bytes left out of `text`.
    pub cut: usize,
    /// A note standing for items not embedded, not an item of the request.
    pub note: bool,
}

impl Piece {
    pub fn new(title: String, text: &str) -> Piece {
        let mut end = text.len().min(ITEM_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Piece {
            title,
            text: text[..end].to_string(),
            cut: text.len() - end,
            note: false,
        }
    }

    /// A note in place of items the page does not embed.
    pub fn note(title: String) -> Piece {
        Piece {
            title,
            note: true,
            ..Piece::default()
        }
    }
}

pub use crate::agents::HistoryRow;

/// Text from the session, safe in HTML text and attributes: controls, bidi and zero-width
/// characters become visible escapes (as on a terminal), then the five HTML specials entities.
pub fn esc(text: &str) -> String {
    let visible = escape_block(text);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text from the session inside an element (`<pre>`, `<p>`): as [`esc`], but quotes stay, as
/// they are safe outside attributes and JSON is full of them (a sixth of a page's size).
pub fn esc_text(text: &str) -> String {
    let visible = escape_block(text);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Bytes of a request body embedded: its head and tail, the middle counted. The last request
/// of a 10 000-step session is 18 MB as `compile` prints it.
pub const BODY_BYTES: usize = 256 << 10;

/// `text` with its middle left out when longer than `BODY_BYTES`.
pub fn fold_middle(text: &str) -> String {
    if text.len() <= BODY_BYTES {
        return text.to_string();
    }
    let head = floor_boundary(text, BODY_BYTES / 2);
    let mut tail = text.len() - BODY_BYTES / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n… {} bytes left out (compile prints them) …\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// `old` and `new` side by side, the characters that differ marked (`<del>`, `<ins>`). The
/// common head and tail are cut first, so a long text with a small change costs its length.
pub fn side_by_side(old: &str, new: &str) -> (String, String) {
    let head = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    let head = floor_boundary(new, head);
    let (old_rest, new_rest) = (&old[head..], &new[head..]);
    let tail = old_rest
        .chars()
        .rev()
        .zip(new_rest.chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let (old_mid, new_mid) = (
        &old_rest[..old_rest.len() - tail],
        &new_rest[..new_rest.len() - tail],
    );
    let mut left = esc_text(&old[..head]);
    let mut right = left.clone();
    if old_mid.len() + new_mid.len() <= CHAR_DIFF_BYTES {
        let diff = similar::TextDiff::configure()
            .timeout(std::time::Duration::from_millis(50))
            .diff_chars(old_mid, new_mid);
        for change in diff.iter_all_changes() {
            let text = esc_text(change.value());
            match change.tag() {
                similar::ChangeTag::Equal => {
                    left.push_str(&text);
                    right.push_str(&text);
                }
                similar::ChangeTag::Delete => {
                    let _ = write!(left, "<del>{text}</del>");
                }
                similar::ChangeTag::Insert => {
                    let _ = write!(right, "<ins>{text}</ins>");
                }
            }
        }
    } else {
        let _ = write!(left, "<del>{}</del>", esc_text(old_mid));
        let _ = write!(right, "<ins>{}</ins>", esc_text(new_mid));
    }
    let rest = esc_text(&old_rest[old_rest.len() - tail..]);
    left.push_str(&rest);
    right.push_str(&rest);
    (left, right)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Write a page to `out` from a string built in memory (one write, deterministic).
fn emit(out: &mut dyn Write, page: &str) -> io::Result<()> {
    out.write_all(page.as_bytes())
}

#[cfg(test)]
mod tests;

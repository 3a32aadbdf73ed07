//! Token estimates with the o200k tokenizer, offline: its tables are made at build time from
//! `bpe-openai`'s vocabulary (`build.rs`, `tokens/o200k.rs`). Estimates, not
//! the provider's count: the server wraps items in a template promptc does not know.

use std::cell::RefCell;

use foldhash::{HashMap, HashMapExt};

/// Texts up to this many bytes are counted exactly.
const EXACT_LIMIT: usize = 8 * 1024;

/// o200k token count of a text. Texts longer than 8 KB (large tool outputs) are estimated
/// from their first and last 4 KB, scaled by length: counting is the slowest part of
/// `steps`, and the estimate is an estimate anyway.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    if text.len() <= EXACT_LIMIT {
        return count_exact(text);
    }
    count_samples(text.len(), text, text)
}

/// [`count`] of a text of `len` bytes, more than [`EXACT_LIMIT`], from `start`, a prefix of
/// it longer than half the limit, and `end`, a suffix of at least half of it: what the
/// estimate reads of a text is all that need be at hand.
fn count_samples(len: usize, start: &str, end: &str) -> usize {
    let half = EXACT_LIMIT / 2;
    let mut head_end = half.min(start.len());
    while !start.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = end.len().saturating_sub(half);
    while !end.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let sampled = head_end + (end.len() - tail_start);
    let tokens = count_exact(&start[..head_end]) + count_exact(&end[tail_start..]);
    // Scale by bytes: tokens per byte of the samples times the whole length.
    (tokens as u128 * len as u128 / sampled.max(1) as u128) as usize
}

/// Pieces (the pre-tokenizer's words) up to this long are remembered per thread: with their
/// length in the last byte they fit a `u128`, which hashes and compares in a few instructions.
const CACHED_PIECE_BYTES: usize = 15;
/// At most this many pieces are remembered per thread (a few MB).
const CACHED_PIECES: usize = 1 << 16;

thread_local! {
    /// Token counts of short pieces already seen, by [`piece_key`]. Logs and code repeat the
    /// same words, and encoding a piece allocates; a lookup does not.
    static PIECE_TOKENS: RefCell<HashMap<u128, u8>> = RefCell::new(HashMap::new());
}

/// Call `piece` with each piece of `text` in order, split as `bpe_openai`'s `Tokenizer::split`
/// splits it.
fn for_each_piece<'t>(text: &'t str, mut piece: impl FnMut(&'t str)) {
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        let end = start + ascii::piece_end(rest).unwrap_or_else(|| pieces::piece_end(rest));
        piece(&text[start..end]);
        start = end;
    }
}

/// Exactly `o200k_base().count(text)`: the same pre-tokenizer split and per-piece encoding
/// (o200k does no normalization), with short pieces' counts remembered.
fn count_exact(text: &str) -> usize {
    let mut total = 0;
    PIECE_TOKENS.with_borrow_mut(|remembered| {
        for_each_piece(text, |piece| {
            let piece = piece.as_bytes();
            total += if let Some(key) = piece_key(piece) {
                if let Some(&tokens) = remembered.get(&key) {
                    usize::from(tokens)
                } else {
                    let tokens = o200k::count(piece);
                    if remembered.len() < CACHED_PIECES {
                        // At most one token a byte.
                        remembered.insert(key, tokens as u8);
                    }
                    tokens
                }
            } else {
                o200k::count(piece)
            };
        });
    });
    total
}

/// A piece of up to [`CACHED_PIECE_BYTES`] as one number: its bytes, then zeros, then its
/// length in the last byte, so that no two pieces share a key.
fn piece_key(piece: &[u8]) -> Option<u128> {
    if piece.len() > CACHED_PIECE_BYTES {
        return None;
    }
    let mut bytes = [0; 16];
    bytes[..piece.len()].copy_from_slice(piece);
    bytes[15] = piece.len() as u8;
    Some(u128::from_le_bytes(bytes))
}

mod ascii;
mod o200k;
mod pieces;

#[cfg(test)]
mod tests;

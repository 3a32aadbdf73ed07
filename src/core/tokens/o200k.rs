//! o200k token counts from tables made at build time (`build.rs`) and used in place: nothing is
//! loaded or decoded at run time, and only the pages a count touches are read in.
//!
//! The count is bpe 0.2.3's `BytePairEncoding::count` (its backtracking encoder), which gives
//! the token count BPE's merges give, without running the merges: take the longest token that
//! fits, and when it cannot be followed as BPE would have it (`is_valid_pair`), try its next
//! shorter prefix, backtracking where none fits.

/// A table of `build.rs`.
macro_rules! table {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/o200k/", $name))
    };
}

/// Each token's length in bytes.
static TOKEN_LEN: &[u8] = table!("token_len");
/// Each token's longest proper prefix that is a token, or [`NONE`].
static NEXT_PREFIX: &[u8] = table!("next_prefix");
/// The two tokens each token was merged from (itself twice for the 256 byte tokens).
static SPLIT: &[u8] = table!("split");
/// Merges by first token: those of token `t` are `PAIR_START[t]..PAIR_START[t + 1]` of
/// [`PAIR_SECOND`] (sorted) and [`PAIR_MERGED`].
static PAIR_START: &[u8] = table!("pair_start");
static PAIR_SECOND: &[u8] = table!("pair_second");
static PAIR_MERGED: &[u8] = table!("pair_merged");
/// The trie of tokens: node `n`'s edges are `NODE_EDGES[n]..NODE_EDGES[n + 1]` of
/// [`EDGE_BYTE`] (sorted), and edge `k` leads to node `k + 1` (nodes are numbered breadth
/// first); the root's 256 edges come first, in byte order.
static NODE_EDGES: &[u8] = table!("node_edges");
static EDGE_BYTE: &[u8] = table!("edge_byte");
/// The token a node spells, or [`NONE`].
static NODE_TOKEN: &[u8] = table!("node_token");

/// How the tables write "no token", "no node" (`build.rs`'s `write_u24s`).
const NONE: u32 = 0xFF_FFFF;

/// Entry `index` of a table of little-endian 3-byte numbers (with one byte after the last, so
/// that each reads as a `u32`).
fn at(table: &[u8], index: usize) -> u32 {
    let start = 3 * index;
    let word: [u8; 4] = table[start..start + 4]
        .try_into()
        .expect("a slice of 4 bytes");
    u32::from_le_bytes(word) & 0xFF_FFFF
}

fn token_len(token: u32) -> usize {
    usize::from(TOKEN_LEN[token as usize])
}

/// The longest token `text` starts with; `None` only for empty text (every byte is a token).
fn longest_token(text: &[u8]) -> Option<u32> {
    let (&first, rest) = text.split_first()?;
    let mut node = usize::from(first) + 1;
    let mut found = at(NODE_TOKEN, node);
    for &byte in rest {
        let edges = at(NODE_EDGES, node) as usize..at(NODE_EDGES, node + 1) as usize;
        let Ok(offset) = EDGE_BYTE[edges.clone()].binary_search(&byte) else {
            break;
        };
        node = edges.start + offset + 1;
        let token = at(NODE_TOKEN, node);
        if token != NONE {
            found = token;
        }
    }
    Some(found)
}

/// The token `first` and `second` merge into, if BPE has that merge.
fn merged(first: u32, second: u32) -> Option<u32> {
    let first = first as usize;
    // A binary search of `PAIR_SECOND[pairs]`, sorted, each second once.
    let mut pairs = at(PAIR_START, first) as usize..at(PAIR_START, first + 1) as usize;
    while !pairs.is_empty() {
        let middle = pairs.start + pairs.len() / 2;
        match at(PAIR_SECOND, middle).cmp(&second) {
            std::cmp::Ordering::Less => pairs.start = middle + 1,
            std::cmp::Ordering::Greater => pairs.end = middle,
            std::cmp::Ordering::Equal => return Some(at(PAIR_MERGED, middle)),
        }
    }
    None
}

/// Whether BPE, merging by rank, would leave `first` and `second` side by side rather than
/// merge across their boundary (bpe's `is_valid_token_pair`): undo the later of the two
/// tokens' merges step by step, checking at each step that no lower-ranked merge spans the
/// boundary.
fn is_valid_pair(mut first: u32, mut second: u32) -> bool {
    let mut limit = u32::MAX;
    loop {
        if merged(first, second).is_some_and(|combined| combined < limit) {
            return false;
        }
        if first > second {
            limit = first;
            first = at(SPLIT, 2 * first as usize + 1);
            if first == limit {
                limit = second + 1;
                second = at(SPLIT, 2 * second as usize);
                if second + 1 == limit {
                    return true;
                }
            }
        } else {
            limit = second + 1;
            second = at(SPLIT, 2 * second as usize);
            if second + 1 == limit {
                limit = first;
                first = at(SPLIT, 2 * first as usize + 1);
                if first == limit {
                    return true;
                }
            }
        }
    }
}

/// The number of o200k tokens BPE encodes `text` into (without pre-tokenization: one piece).
pub fn count(text: &[u8]) -> usize {
    let mut tokens: Vec<u32> = Vec::with_capacity(text.len() / 3);
    // Positions a token may still end at: cleared where backtracking found none fits.
    let mut open = vec![u64::MAX; (text.len() + 1).div_ceil(64)];
    let is_open = |open: &[u64], pos: usize| open[pos / 64] & (1 << (pos % 64)) != 0;
    let mut pos = 0;
    let mut next = longest_token(text);
    while let Some(mut token) = next {
        let last = tokens.last().copied();
        loop {
            let end = pos + token_len(token);
            if is_open(&open, end) && last.is_none_or(|last| is_valid_pair(last, token)) {
                tokens.push(token);
                pos = end;
                next = longest_token(&text[end..]);
                break;
            }
            let shorter = at(NEXT_PREFIX, token as usize);
            if shorter != NONE {
                token = shorter;
                continue;
            }
            open[pos / 64] &= !(1 << (pos % 64));
            tokens.pop();
            pos -= last.map_or(0, token_len);
            next = last;
            break;
        }
    }
    tokens.len()
}

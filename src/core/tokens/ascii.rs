//! o200k's pre-tokenizer on ASCII, the fast path of `pieces.rs`: logs, code and JSON are nearly
//! all ASCII, and a byte table with no backtracking to consider cuts their pieces in half the
//! instructions of the general matcher. [`piece_end`] follows the same patterns in the same
//! order, and gives up on any byte above 0x7F that it would have to classify: what a
//! non-ASCII character does there (a letter, a mark, a digit, a space) is left to
//! `pieces::piece_end`. Contractions, `ſ` among them, are `pieces::contraction`'s. The split
//! tests hold both to `bpe_openai`'s pieces.

use super::pieces::{ASCII, Class, contraction};

/// The class of `text[at]`, [`Class::End`] past the end, `None` for a non-ASCII byte.
fn class(text: &[u8], at: usize) -> Option<Class> {
    match text.get(at) {
        None => Some(Class::End),
        Some(&byte) => ASCII.get(usize::from(byte)).copied(),
    }
}

/// The end of the piece that starts `text`, or `None` where the answer depends on a
/// non-ASCII character. `text` is not empty.
pub(super) fn piece_end(text: &str) -> Option<usize> {
    let (text, whole) = (text.as_bytes(), text);
    let first = class(text, 0)?;
    // `[^\r\n\p{L}\p{N}]?` then letters: the two word patterns.
    let letters_from = match first {
        Class::Upper | Class::Lower => Some(0),
        Class::Space | Class::Other => match class(text, 1)? {
            Class::Upper | Class::Lower => Some(1),
            _ => None,
        },
        _ => None,
    };
    if let Some(start) = letters_from {
        let mut end = start;
        while class(text, end)? == Class::Upper {
            end += 1;
        }
        // `[\p{Lu}…]*[\p{Ll}…]+` and `[\p{Lu}…]+[\p{Ll}…]*`: the lower-case run either way.
        while class(text, end)? == Class::Lower {
            end += 1;
        }
        // After ASCII, so on a character boundary.
        return Some(end + contraction(&whole[end..]));
    }
    match first {
        // `\p{N}{1,3}`.
        Class::Digit => {
            let mut end = 1;
            while end < 3 && class(text, end)? == Class::Digit {
                end += 1;
            }
            Some(end)
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`.
        Class::Other => Some(punctuation_end(text, 0)?),
        Class::Space if text[0] == b' ' && class(text, 1)? == Class::Other => {
            Some(punctuation_end(text, 1)?)
        }
        _ => {
            let mut end = 0;
            let mut after_newline = None;
            loop {
                match class(text, end)? {
                    Class::Newline => after_newline = Some(end + 1),
                    Class::Space => {}
                    _ => break,
                }
                end += 1;
            }
            Some(match after_newline {
                // `\s*[\r\n]+`: white space up to its last line break.
                Some(after_newline) => after_newline,
                // `\s+$`.
                None if end == text.len() => end,
                // `\s+\s` less its look-ahead character, then `\s+`.
                None => (end - 1).max(1),
            })
        }
    }
}

/// `[^\s\p{L}\p{N}]+[\r\n/]*` from `start`, which is such a character.
fn punctuation_end(text: &[u8], start: usize) -> Option<usize> {
    let mut end = start + 1;
    while class(text, end)? == Class::Other {
        end += 1;
    }
    while matches!(text.get(end), Some(b'\r' | b'\n' | b'/')) {
        end += 1;
    }
    Some(end)
}

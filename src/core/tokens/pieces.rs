//! o200k's pre-tokenizer, by hand: the pieces `bpe_openai` cuts with its regex (`BPE_O200K_BASE`
//! in its lib.rs), which are, tried in this order at each piece's start, the first that
//! matches, as a backtracking search takes them:
//!
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` and a
//!    contraction `(?i:'s|'t|'re|'ve|'m|'ll|'d)?`;
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` and one;
//! 3. `\p{N}{1,3}`;
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`;
//! 5. `\s*[\r\n]+`;
//! 6. `\s+$`;
//! 7. `\s+\s` less its last character (a look-ahead: `\s+(?!\S)`);
//! 8. `\s+`.
//!
//! Built by hand rather than with the regex: building it took 5 ms and 2.4 MB in every process
//! that counts. Each character's class comes from a table that `build.rs` makes from the
//! Unicode tables the regex is compiled with. ASCII pieces mostly take `ascii.rs` instead. The
//! split tests hold the pieces to `bpe_openai`'s.

/// What the patterns see in a character.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Class {
    /// In none of the other classes: punctuation, symbols, controls, unassigned.
    Other,
    /// `\p{Lu}` and `\p{Lt}`: only the first word class.
    Upper,
    /// `\p{Ll}`: only the second word class.
    Lower,
    /// `\p{Lm}` and `\p{Lo}`: letters in both word classes.
    Both,
    /// `\p{M}`: in both word classes, yet not a letter, so also a prefix and punctuation.
    Mark,
    /// `\p{N}`.
    Digit,
    /// `\s` other than the line breaks.
    Space,
    /// `\r` and `\n`.
    Newline,
    /// Past the text's end.
    End,
}

impl Class {
    /// In `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
    fn upper(self) -> bool {
        matches!(self, Class::Upper | Class::Both | Class::Mark)
    }

    /// In `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
    fn lower(self) -> bool {
        matches!(self, Class::Lower | Class::Both | Class::Mark)
    }

    /// In `[^\r\n\p{L}\p{N}]`, the word patterns' prefix.
    fn prefix(self) -> bool {
        matches!(self, Class::Other | Class::Mark | Class::Space)
    }

    /// In `[^\s\p{L}\p{N}]`.
    fn punctuation(self) -> bool {
        matches!(self, Class::Other | Class::Mark)
    }

    /// In `\s`.
    fn space(self) -> bool {
        matches!(self, Class::Space | Class::Newline)
    }
}

/// The classes in the order of `build.rs`'s numbers.
const BY_NUMBER: [Class; 8] = [
    Class::Other,
    Class::Upper,
    Class::Lower,
    Class::Both,
    Class::Mark,
    Class::Digit,
    Class::Space,
    Class::Newline,
];

/// `[first, last, class]` triples of little-endian `u32`s, in order (`build.rs`).
static CATEGORIES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k/categories"));

/// The class of a character, from [`CATEGORIES`].
pub(super) fn class_of(c: char) -> Class {
    let (ranges, _) = CATEGORIES.as_chunks::<12>();
    let word = |range: &[u8; 12], k: usize| {
        u32::from_le_bytes([
            range[4 * k],
            range[4 * k + 1],
            range[4 * k + 2],
            range[4 * k + 3],
        ])
    };
    let c = u32::from(c);
    let after = ranges.partition_point(|range| word(range, 0) <= c);
    match after.checked_sub(1).map(|k| &ranges[k]) {
        Some(range) if c <= word(range, 1) => BY_NUMBER
            .get(word(range, 2) as usize)
            .copied()
            .unwrap_or(Class::Other),
        _ => Class::Other,
    }
}

/// The classes of ASCII, so that most characters take no search (and `ascii.rs` none at all).
pub(super) static ASCII: [Class; 128] = {
    let mut table = [Class::Other; 128];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = match byte as u8 {
            b'A'..=b'Z' => Class::Upper,
            b'a'..=b'z' => Class::Lower,
            b'0'..=b'9' => Class::Digit,
            b'\r' | b'\n' => Class::Newline,
            b'\t' | 0x0b | 0x0c | b' ' => Class::Space,
            _ => Class::Other,
        };
        byte += 1;
    }
    table
};

/// The class of the character at `text[at..]` and its length; [`Class::End`] past the end.
/// `at` is a character boundary.
#[inline(always)]
fn class_at(text: &str, at: usize) -> (Class, usize) {
    match text.as_bytes().get(at) {
        None => (Class::End, 0),
        Some(&byte) if byte < 0x80 => (ASCII[usize::from(byte)], 1),
        Some(_) => match text[at..].chars().next() {
            Some(c) => (class_of(c), c.len_utf8()),
            None => (Class::End, 0),
        },
    }
}

/// The end of the piece that starts `text`, which is not empty.
pub(super) fn piece_end(text: &str) -> usize {
    let (first, first_len) = class_at(text, 0);
    // Patterns 1 and 2, each with the prefix and then without it. Only a mark can start a
    // word both ways.
    let with_prefix = first.prefix().then(|| word(text, first_len));
    let without = (first.upper() || first.lower()).then(|| word(text, 0));
    let words = [with_prefix, without];
    let word_end = words
        .iter()
        .flatten()
        .find_map(|word| word.lower)
        .or_else(|| words.iter().flatten().find_map(|word| word.upper));
    if let Some(end) = word_end {
        return end + contraction(&text[end..]);
    }
    match first {
        Class::Digit => {
            let mut end = first_len;
            for _ in 0..2 {
                match class_at(text, end) {
                    (Class::Digit, len) => end += len,
                    _ => break,
                }
            }
            end
        }
        _ if first.punctuation() => punctuation_end(text, 0),
        Class::Space if text.starts_with(' ') && class_at(text, 1).0.punctuation() => {
            punctuation_end(text, 1)
        }
        _ => {
            // White space: `first` is, as every character is in some pattern.
            let (mut end, mut last_start, mut after_newline) = (0, 0, None);
            loop {
                let (class, len) = class_at(text, end);
                if !class.space() {
                    break;
                }
                if class == Class::Newline {
                    after_newline = Some(end + len);
                }
                last_start = end;
                end += len;
            }
            match after_newline {
                // `\s*[\r\n]+`: white space up to its last line break.
                Some(after_newline) => after_newline,
                // `\s+$`.
                None if end == text.len() => end,
                // `\s+\s` less its look-ahead character.
                None if last_start > 0 => last_start,
                // `\s+`; never less than one character, so that a split always moves on.
                None => end.max(first_len),
            }
        }
    }
}

/// Where the two word patterns end from one start, `None` where one does not match.
#[derive(Clone, Copy)]
struct Word {
    /// `[U]*[L]+` (U and L the two word classes).
    lower: Option<usize>,
    /// `[U]+[L]*`.
    upper: Option<usize>,
}

/// Both word patterns from `start`: the longest run of the first class, then the longest of
/// the second. When none of the second follows, `[U]*[L]+` gives back characters of the first
/// run until the last one that is also of the second.
fn word(text: &str, start: usize) -> Word {
    let mut end = start;
    let mut after_last_lower = None;
    loop {
        let (class, len) = class_at(text, end);
        if !class.upper() {
            break;
        }
        end += len;
        if class.lower() {
            after_last_lower = Some(end);
        }
    }
    let upper_end = end;
    let end = run_end(text, upper_end, Class::lower);
    Word {
        lower: if end > upper_end {
            Some(end)
        } else {
            after_last_lower
        },
        upper: (upper_end > start).then_some(end),
    }
}

/// The end of the run of characters of `text` from `start` that are `in_run`.
fn run_end(text: &str, mut end: usize, in_run: impl Fn(Class) -> bool) -> usize {
    loop {
        let (class, len) = class_at(text, end);
        if !in_run(class) {
            return end;
        }
        end += len;
    }
}

/// `[^\s\p{L}\p{N}]+[\r\n/]*` from `start`, which is such a character.
fn punctuation_end(text: &str, start: usize) -> usize {
    let end = run_end(text, start, Class::punctuation);
    end + text.as_bytes()[end..]
        .iter()
        .take_while(|&&b| matches!(b, b'\r' | b'\n' | b'/'))
        .count()
}

/// The length of `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at the start of `text`. Case folding makes
/// `ſ` (U+017F) an `s`; no other non-ASCII character folds to one of these letters.
pub(super) fn contraction(text: &str) -> usize {
    let Some(rest) = text.strip_prefix('\'') else {
        return 0;
    };
    let mut chars = rest.chars().map(|c| c.to_ascii_lowercase());
    match (chars.next(), chars.next()) {
        (Some('ſ'), _) => 3,
        (Some('s' | 't' | 'm' | 'd'), _) => 2,
        (Some('r' | 'v'), Some('e')) | (Some('l'), Some('l')) => 3,
        _ => 0,
    }
}

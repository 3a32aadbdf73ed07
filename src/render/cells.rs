//! Cells of the text tables (`steps`, `fingerprint`, `watch`), pushed piece by piece into one
//! buffer without the formatter: the tables of a 7 000-step file were most of those commands'
//! time in allocations and formatting.

use std::fmt::Write as _;

/// Rows of a text table written as one task, on the plan's threads, the tasks in order: the
/// rows of a 2 000-step `steps` table took 2.2 ms on one thread, 1.7 ms on two. Unit tests use
/// short blocks, so that their small sessions span several; tests/cli/fuzz_bodies.rs runs 512.
pub(super) const TABLE_BLOCK: usize = if cfg!(test) { 4 } else { 512 };

/// A number of a text table (`-` where there is none), padded as `{:>width$}` pads and followed
/// by one space, without the formatter: it writes padding a character at a time, and the rows
/// of a 7 000-step `steps` spent most of their time there.
pub(super) fn push_number(row: &mut String, number: Option<impl itoa::Integer>, width: usize) {
    let mut digits = itoa::Buffer::new();
    let text = number.map_or("-", |n| digits.format(n));
    push_spaces(row, width.saturating_sub(text.len()));
    row.push_str(text);
    row.push(' ');
}

/// As `{:<width$}` then one space.
pub(super) fn push_left(row: &mut String, text: &str, width: usize) {
    row.push_str(text);
    push_spaces(row, width.saturating_sub(text.chars().count()));
    row.push(' ');
}

/// `rate` as `{:>4.0}%` writes it, then a space. Rounding to an integer, ties to even, is
/// what `{:.0}` prints of a finite value that is not negative (a hit rate is a ratio of
/// counts); the float formatter cost a quarter of a row.
pub(super) fn push_percent(row: &mut String, rate: f64) {
    let percent = (rate * 100.0).round_ties_even();
    // Within u64 and exact as an integer; beyond, and for -0, the formatter writes what it
    // writes.
    if percent.is_sign_positive() && percent < 1e15 {
        let mut digits = itoa::Buffer::new();
        let text = digits.format(percent as u64);
        push_spaces(row, 4usize.saturating_sub(text.len()));
        row.push_str(text);
        row.push_str("% ");
    } else {
        let _ = write!(row, "{:>4.0}% ", rate * 100.0);
    }
}

fn push_spaces(row: &mut String, count: usize) {
    const SPACES: &str = "                ";
    let mut left = count;
    while left > 0 {
        let now = left.min(SPACES.len());
        row.push_str(&SPACES[..now]);
        left -= now;
    }
}

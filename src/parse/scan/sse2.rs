//! The string scan with SSE2, which every x86_64 processor has: the first sixteen bytes at
//! once, then blocks of sixty-four read as bit masks. Which bytes of a block are escaped comes
//! from arithmetic on its backslash mask (simdjson's escape scanner), not from stepping over
//! each escape; each escaped byte is then only checked to be one JSON allows.

use super::{escape_end, unicode_escape_len};

/// Bytes the first look at a string takes: most strings (keys, names, ids) end within it.
const WINDOW: usize = 16;

/// Bytes a block takes, one bit each in a `u64` mask.
const BLOCK: usize = 64;

/// Bit k is set when `chunk[k]` is a quote, a backslash, or a control character (which JSON
/// forbids raw in a string), in that order.
#[inline(always)]
fn window_masks(chunk: &[u8; WINDOW]) -> [u32; 3] {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
        sub_saturating_u8_m128i, zeroed_m128i,
    };
    let splat = |byte: u8| set_splat_i8_m128i(i8::from_ne_bytes([byte]));
    let v = load_unaligned_m128i(chunk);
    let quote = cmp_eq_mask_i8_m128i(v, splat(b'"'));
    let backslash = cmp_eq_mask_i8_m128i(v, splat(b'\\'));
    // Below 0x20: zero once 0x1f is taken away without wrapping.
    let control = cmp_eq_mask_i8_m128i(sub_saturating_u8_m128i(v, splat(0x1f)), zeroed_m128i());
    // One bit per byte: each mask fits in the low 16 bits.
    [quote, backslash, control].map(|mask| move_mask_i8_m128i(mask).cast_unsigned())
}

/// The three masks of a block, from its four windows.
#[inline(always)]
fn block_masks(block: &[u8; BLOCK]) -> [u64; 3] {
    from_windows(block, window_masks)
}

/// A block's masks, each from the masks `window` gives of its four windows.
#[inline(always)]
fn from_windows<const N: usize>(
    block: &[u8; BLOCK],
    window: impl Fn(&[u8; WINDOW]) -> [u32; N],
) -> [u64; N] {
    let mut masks = [0u64; N];
    for (k, chunk) in block.as_chunks::<WINDOW>().0.iter().enumerate() {
        for (mask, bits) in masks.iter_mut().zip(window(chunk)) {
            *mask |= u64::from(bits) << (k * WINDOW);
        }
    }
    masks
}

/// The masks of the block of `bytes` from `at`, padded with spaces past the end (a space is
/// none of the bytes looked for).
#[inline(always)]
fn block_at(bytes: &[u8], at: usize) -> [u64; 3] {
    with_block(bytes, at, block_masks)
}

/// `masks` of the block of `bytes` from `at`, padded with spaces past the end.
#[inline(always)]
fn with_block<const N: usize>(
    bytes: &[u8],
    at: usize,
    masks: impl Fn(&[u8; BLOCK]) -> [u64; N],
) -> [u64; N] {
    match bytes
        .get(at..at + BLOCK)
        .and_then(|block| block.try_into().ok())
    {
        Some(block) => masks(block),
        None => {
            let rest = bytes.get(at..).unwrap_or_default();
            let mut padded = [b' '; BLOCK];
            padded[..rest.len()].copy_from_slice(rest);
            masks(&padded)
        }
    }
}

/// Bit k is set when `block[k]` is a backslash, and when it is a `u`.
#[inline(always)]
fn backslash_and_u_masks(block: &[u8; BLOCK]) -> [u64; 2] {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    from_windows(block, |chunk| {
        let v = load_unaligned_m128i(chunk);
        [b'\\', b'u'].map(|byte| {
            let equal = cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(i8::from_ne_bytes([byte])));
            move_mask_i8_m128i(equal).cast_unsigned()
        })
    })
}

/// The bytes that make a two-byte escape after a backslash. A table, not a `match`: the match
/// became a jump table, an indirect jump for every escape of escape-dense tool output.
static SIMPLE_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut k = 0;
    while k < 8 {
        table[b"\"\\/bfnrt"[k] as usize] = true;
        k += 1;
    }
    table
};

/// Odd bit positions.
const ODD_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;

/// The escaped characters of a block (the byte after each backslash that starts an escape),
/// from its backslashes and whether its first byte is escaped (`carry`, updated for the next
/// block). A run of backslashes escapes every second one: a run of odd length escapes the byte
/// after it. simdjson's `json_escape_scanner::next`, ported as it is.
#[inline(always)]
fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    if backslash == 0 {
        return std::mem::take(carry);
    }
    let potential_escape = backslash & !*carry;
    let maybe_escaped = potential_escape << 1;
    // Subtracting the runs from the odd bits turns an escaping backslash's successor on and
    // the rest of an even-aligned run off; the XOR brings the odd-aligned runs in line.
    let escape_and_terminal_code =
        ((maybe_escaped | ODD_BITS).wrapping_sub(potential_escape)) ^ ODD_BITS;
    let escaped = escape_and_terminal_code ^ (backslash | *carry);
    let escape = escape_and_terminal_code & backslash;
    *carry = escape >> 63;
    escaped
}

/// `i` is just after an opening quote; returns the index after the closing quote, or `None`
/// when the string is not valid JSON (unterminated, a raw control character, a bad escape) or
/// holds a `\u` escape of a surrogate, whose pairing is left to serde_json.
///
/// Inlined: most strings (keys, names, ids) end in the first window, and as a call of its own
/// the whole scan cost them twice the instructions (its prologue saves six registers).
#[inline(always)]
pub(super) fn string_end(bytes: &[u8], i: usize) -> Option<usize> {
    // Short strings: the first special byte is within sixteen, and is the closing quote.
    let mut block = i;
    if let Some(chunk) = bytes.get(i..i + WINDOW) {
        let [quote, backslash, control] = window_masks(chunk.try_into().ok()?);
        let special = quote | backslash | control;
        if special & quote & special.wrapping_neg() != 0 {
            return Some(i + special.trailing_zeros() as usize + 1);
        }
        if special == 0 {
            block += WINDOW;
        }
    }
    string_end_in_blocks(bytes, block)
}

/// [`string_end`] from `block`, inside the string, on: sixty-four bytes at a time.
#[inline(never)]
fn string_end_in_blocks(bytes: &[u8], mut block: usize) -> Option<usize> {
    let mut carry = 0;
    loop {
        let [quote, backslash, control] = block_at(bytes, block);
        let escaped = escaped(backslash, &mut carry);
        let ends = quote & !escaped;
        // The bytes before the first unescaped quote (all of them when there is none).
        let inside = (ends & ends.wrapping_neg()).wrapping_sub(1);
        if control & inside != 0 {
            return None;
        }
        // Every escape before the end must be one JSON has: an escaped quote or backslash is
        // (the masks say so), the other common ones by their byte, `\u` and anything else as
        // the scalar reading checks them.
        let mut codes = escaped & inside & !(quote | backslash);
        while codes != 0 {
            let at = block + codes.trailing_zeros() as usize;
            // Past the end when the line ends in a backslash: unterminated.
            if !SIMPLE_ESCAPE[usize::from(*bytes.get(at)?)] {
                escape_end(bytes, at - 1)?;
            }
            codes &= codes - 1;
        }
        if ends != 0 {
            return Some(block + ends.trailing_zeros() as usize + 1);
        }
        block += BLOCK;
        if block >= bytes.len() {
            return None;
        }
    }
}

/// [`super::unescaped_len`] sixty-four bytes at a time: each block's escaped bytes come from
/// its backslash mask as in the string scan, and only `\u` escapes are read one by one.
pub(super) fn unescaped_len(content: &[u8]) -> usize {
    let mut removed = 0;
    let mut carry = 0;
    let mut block = 0;
    while block < content.len() {
        let [backslash, u] = with_block(content, block, backslash_and_u_masks);
        let escaped = escaped(backslash, &mut carry);
        // An escape leaves its backslash out; a `\u` escape its `u` and four digits too,
        // less the bytes of UTF-8 they stand for.
        removed += escaped.count_ones() as usize;
        let mut unicode = escaped & u;
        while unicode != 0 {
            let at = block + unicode.trailing_zeros() as usize;
            removed += 5 - unicode_escape_len(content.get(at + 1..at + 5));
            unicode &= unicode - 1;
        }
        block += BLOCK;
    }
    content.len().saturating_sub(removed)
}

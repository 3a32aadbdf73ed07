//! The string scan sixteen bytes at a time with SSE2, which every x86_64 processor has.

use super::escape_end;

/// Bytes the SSE2 scan looks at in one step.
const WINDOW: usize = 16;

/// Bit k is set when `chunk[k]` ends a plain run of string text: a quote, a backslash or a
/// control character (which JSON forbids raw in a string).
#[inline(always)]
fn special_bits(chunk: &[u8; WINDOW]) -> u32 {
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
    // One bit per byte: the mask fits in the low 16 bits.
    move_mask_i8_m128i(quote | backslash | control).cast_unsigned()
}

/// `i` is just after an opening quote; returns the index after the closing quote, or `None`
/// when the string is not valid JSON (unterminated, a raw control character, a bad escape).
/// Sixteen bytes at a time: every quote, backslash and control character of a window is found
/// at once, and the escapes in it are stepped over without looking at the window again, which
/// matters for tool output with a `\n` every few bytes.
pub(super) fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let window = i;
        let mut bits = match bytes.get(window..window + WINDOW) {
            Some(chunk) => special_bits(chunk.try_into().ok()?),
            None => {
                // The last bytes, padded with spaces: a space ends no run.
                let rest = bytes.get(window..)?;
                let mut padded = [b' '; WINDOW];
                padded[..rest.len()].copy_from_slice(rest);
                special_bits(&padded)
            }
        };
        i = window + WINDOW;
        while bits != 0 {
            let at = window + bits.trailing_zeros() as usize;
            match bytes[at] {
                b'"' => return Some(at + 1),
                b'\\' => {
                    let after = escape_end(bytes, at)?;
                    let done = after - window;
                    if done >= WINDOW {
                        i = after;
                        break;
                    }
                    bits &= u32::MAX << done;
                }
                _ => return None,
            }
        }
        if i >= bytes.len() {
            return None;
        }
    }
}

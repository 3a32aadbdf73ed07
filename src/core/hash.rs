//! The hash behind every fingerprint. A module of its own, below the pipeline: loading hashes
//! each item while its line is in cache (`Item::digest`), and fingerprinting hashes the rest.

use xxhash_rust::xxh3::{Xxh3Default, xxh3_128};

/// The hash function's name, as baselines record it.
pub const HASH_NAME: &str = "xxh3-128";

/// An XXH3-128 hash, canonical (big-endian) byte order.
pub type Hash = [u8; 16];

/// Hash `bytes` under a component tag: `XXH3-128(tag ‖ 0x00 ‖ bytes)`.
///
/// XXH3 rather than a cryptographic hash: hashing every item is a fifth of the CPU time of
/// fingerprinting a rollout with BLAKE3 and a twentieth with XXH3. A fingerprint tells whether
/// two requests differ; it does not prove that a session was not crafted to collide.
pub fn hash(tag: &str, bytes: &[u8]) -> Hash {
    // Most inputs are short (a chain link is two hashes): hashed at once from the stack, as
    // the streaming hasher's state is larger than they are. The same function either way.
    const SHORT: usize = 128;
    let whole = tag.len() + 1 + bytes.len();
    if whole <= SHORT {
        let mut buffer = [0u8; SHORT];
        buffer[..tag.len()].copy_from_slice(tag.as_bytes());
        buffer[tag.len() + 1..whole].copy_from_slice(bytes);
        return xxh3_128(&buffer[..whole]).to_be_bytes();
    }
    let mut hasher = Xxh3Default::new();
    hasher.update(tag.as_bytes());
    hasher.update(&[0]);
    hasher.update(bytes);
    hasher.digest128().to_be_bytes()
}

/// A 128-bit key of `parts`, each prefixed by its length (two lists of parts share a key only by
/// a collision), in two halves: what a map keys records by instead of a copy of their texts (a
/// `u128` would align each entry to 16 bytes). Not a fingerprint: never shown, nor kept.
pub fn key(parts: &[&[u8]]) -> [u64; 2] {
    // As in `hash`: a short key at once from the stack. Setting up the streaming hasher was
    // most of the cost of a response's keys (4.5 ms of the 100 MB 2.1.100 transcript's steps).
    const SHORT: usize = 256;
    let whole: usize = parts.iter().map(|p| 8 + p.len()).sum();
    let bits = if whole <= SHORT {
        let mut buffer = [0u8; SHORT];
        let mut at = 0;
        for part in parts {
            buffer[at..at + 8].copy_from_slice(&(part.len() as u64).to_le_bytes());
            buffer[at + 8..at + 8 + part.len()].copy_from_slice(part);
            at += 8 + part.len();
        }
        xxh3_128(&buffer[..whole])
    } else {
        let mut hasher = Xxh3Default::new();
        for part in parts {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        hasher.digest128()
    };
    [(bits >> 64) as u64, bits as u64]
}

/// The printed form: 32 hex digits (128 bits).
pub fn hex(hash: &Hash) -> String {
    let mut out = String::with_capacity(32);
    push_hex(&mut out, hash);
    out
}

/// Each byte's value as a lowercase hexadecimal digit, 16 for any other byte: digits read by a
/// lookup and an or of all of them checked once (`value | bad < 16`), not a branch a digit.
pub(crate) const HEX_DIGIT_VALUE: [u8; 256] = {
    let mut table = [16u8; 256];
    let mut c = 0;
    while c < 10 {
        table[b'0' as usize + c] = c as u8;
        c += 1;
    }
    let mut c = 0;
    while c < 6 {
        table[b'a' as usize + c] = 10 + c as u8;
        c += 1;
    }
    table
};

/// Append the lowercase hex digits of `bytes` to `out` (of a hash: [`hex`]`(hash)`).
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::key;

    /// A key is the XXH3-128 of its parts, each after its length, whether hashed at once (short)
    /// or streamed (long); moving a byte from one part to the next makes another key.
    #[test]
    fn a_key_is_the_hash_of_its_length_prefixed_parts() {
        let expected = |parts: &[&[u8]]| {
            let mut bytes = Vec::new();
            for part in parts {
                bytes.extend((part.len() as u64).to_le_bytes());
                bytes.extend(*part);
            }
            let bits = xxhash_rust::xxh3::xxh3_128(&bytes);
            [(bits >> 64) as u64, bits as u64]
        };
        let long = vec![b'x'; 300];
        // 8 + 232 + 8 + 8: the stack's 256 bytes exactly; one more byte is streamed.
        let (at_most, past) = (vec![b'y'; 232], vec![b'y'; 233]);
        for parts in [
            &[b"main".as_slice(), b"msg_01"][..],
            &[b"mai", b"nmsg_01"],
            &[b"", b""],
            &[],
            &[b"subagent", &long, b"msg_02"],
            &[&at_most, b"12345678"],
            &[&past, b"12345678"],
        ] {
            assert_eq!(key(parts), expected(parts), "{parts:?}");
        }
        assert_ne!(key(&[b"main", b"msg_01"]), key(&[b"mai", b"nmsg_01"]));
        assert_ne!(key(&[b"", b""]), key(&[]));
    }
}

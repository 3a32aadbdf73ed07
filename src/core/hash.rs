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

/// The printed form: 32 hex digits (128 bits).
pub fn hex(hash: &Hash) -> String {
    let mut out = String::with_capacity(32);
    push_hex(&mut out, hash);
    out
}

/// Append [`hex`]`(hash)` to `out`.
pub fn push_hex(out: &mut String, hash: &Hash) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in hash {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
}

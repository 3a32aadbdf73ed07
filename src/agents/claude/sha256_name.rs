//! The sha256 names of 2.1.3xx's replay records (a message's, a shape's) without a copy of
//! their text: the 64 lowercase hexadecimal digits Claude Code writes are kept as their 32
//! bytes, anything else as its text.

use std::fmt;

/// A sha256 a replay record names a message or a shape by (`tail`, `hash`, `shapeHash`), read
/// as written. Taken apart on the loader's threads as the line is read, so that the planner
/// keys its maps by 32 bytes, not by a 64-character text allocated for each (hashing those
/// keys, `missing`'s copies and the planner's drop were 10 % of the calling thread's samples on
/// a 100 MB 2.1.3xx file). Two names are one only when their texts are the same (made only by
/// [`Sha256Name::new`] and [`Sha256Name::of_digest`], which keep it so).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Sha256Name(Kept);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Kept {
    Digest([u8; 32]),
    Text(Box<str>),
}

impl Sha256Name {
    pub fn new(text: &str) -> Sha256Name {
        Sha256Name(match unhex(text) {
            Some(digest) => Kept::Digest(digest),
            None => Kept::Text(text.into()),
        })
    }

    /// The name of a digest (its lowercase hexadecimal digits).
    pub fn of_digest(digest: [u8; 32]) -> Sha256Name {
        Sha256Name(Kept::Digest(digest))
    }
}

impl fmt::Display for Sha256Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kept::Text(text) => f.write_str(text),
            Kept::Digest(digest) => {
                let mut hex = String::with_capacity(64);
                crate::core::hash::push_hex(&mut hex, digest);
                f.write_str(&hex)
            }
        }
    }
}

impl fmt::Debug for Sha256Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

/// 64 lowercase hexadecimal digits as their 32 bytes; `None` for any other text.
fn unhex(text: &str) -> Option<[u8; 32]> {
    use crate::core::hash::HEX_DIGIT_VALUE as DIGIT;
    let digits: &[u8; 64] = text.as_bytes().try_into().ok()?;
    let mut digest = [0u8; 32];
    let mut bad = 0u8;
    for (byte, pair) in digest.iter_mut().zip(digits.chunks_exact(2)) {
        let (high, low) = (DIGIT[usize::from(pair[0])], DIGIT[usize::from(pair[1])]);
        bad |= high | low;
        *byte = high << 4 | (low & 15);
    }
    (bad < 16).then_some(digest)
}

#[cfg(test)]
mod tests {
    use super::{Kept, Sha256Name};

    /// A name is shown, compared and keyed as the text written, however it is kept.
    #[test]
    fn a_name_is_its_text() {
        let hex = "e6464f832a9cc75667942241bc95c6d0ea5850f2bac617fe8f308ab4a302da8e";
        let texts = [
            hex.to_string(),
            "0".repeat(64),
            "f".repeat(64),
            "0123456789abcdef".repeat(4),
            hex.to_uppercase(),
            hex[..63].to_string(),
            format!("{hex}0"),
            format!("{}g", &hex[..63]),
            "u1".to_string(),
            String::new(),
        ];
        for (k, text) in texts.iter().enumerate() {
            let name = Sha256Name::new(text);
            assert_eq!(name.to_string(), *text);
            assert_eq!(format!("{name:?}"), format!("{text:?}"));
            assert_eq!(matches!(name.0, Kept::Digest(_)), k < 4, "{text}");
            for (j, other) in texts.iter().enumerate() {
                assert_eq!(name == Sha256Name::new(other), j == k, "{text} {other}");
            }
        }
        let mut digest = [0u8; 32];
        digest[0] = 0xe6;
        digest[31] = 0x8e;
        let of_digest = Sha256Name::of_digest(digest);
        assert_eq!(of_digest.to_string(), format!("e6{}8e", "0".repeat(60)));
        assert_eq!(of_digest, Sha256Name::new(&of_digest.to_string()));
    }

    /// A user line's name is boxed: its record is inline in every line's, whose size every
    /// line pays (240 bytes, as before names were kept as bytes).
    #[test]
    fn a_name_does_not_make_every_line_larger() {
        assert_eq!(std::mem::size_of::<Sha256Name>(), 40);
        assert!(std::mem::size_of::<super::super::record::Line>() <= 240);
    }
}

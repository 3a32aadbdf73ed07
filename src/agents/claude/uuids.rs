//! A line's `uuid` without a copy of its text, and lines by their `uuid`: the canonical
//! lowercase UUIDs Claude Code writes are kept as their 128 bits, anything else as its text.

use std::fmt;

use foldhash::HashMap;

/// A line's `uuid`, `parentUuid` or `logicalParentUuid`, read as written. Claude Code's
/// canonical lowercase UUIDs are kept as their bits (packed on the loader's threads, as the
/// line is read): no allocation a field, and a key for [`LinesByUuid`] without packing again.
/// Any other text is kept as it is, so that two texts are one id only when they are the same
/// (made only by [`LineId::new`], which keeps it so).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct LineId(Kept);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Kept {
    /// Two 64-bit halves, not a `u128`: an id is then 24 bytes, not 32.
    Packed([u64; 2]),
    Text(Box<str>),
}

impl LineId {
    pub fn new(text: &str) -> LineId {
        LineId(match pack(text) {
            Some(halves) => Kept::Packed(halves),
            None => Kept::Text(text.into()),
        })
    }

    /// The id as written.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.0 {
            Kept::Text(text) => std::borrow::Cow::Borrowed(text),
            Kept::Packed(_) => std::borrow::Cow::Owned(self.to_string()),
        }
    }
}

impl fmt::Display for LineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kept::Text(text) => f.write_str(text),
            Kept::Packed([high, low]) => {
                let hex = format!("{high:016x}{low:016x}");
                let (a, rest) = hex.split_at(8);
                let (b, rest) = rest.split_at(4);
                let (c, rest) = rest.split_at(4);
                let (d, e) = rest.split_at(4);
                write!(f, "{a}-{b}-{c}-{d}-{e}")
            }
        }
    }
}

impl fmt::Debug for LineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text(), f)
    }
}

/// Lines by `uuid`.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinesByUuid {
    /// Keyed by the two halves: a `u128` is 16-byte aligned, which makes an entry 32 bytes, not
    /// 24.
    packed: HashMap<[u64; 2], usize>,
    other: HashMap<Box<str>, usize>,
}

impl LinesByUuid {
    pub fn get(&self, id: &LineId) -> Option<usize> {
        match &id.0 {
            Kept::Packed(halves) => self.packed.get(halves).copied(),
            Kept::Text(text) => self.other.get(text).copied(),
        }
    }

    /// Note `line` for `id` unless one is noted: the line noted first.
    pub fn first(&mut self, id: &LineId, line: usize) -> Option<usize> {
        match &id.0 {
            Kept::Packed(halves) => first_noted(&mut self.packed, *halves, line),
            Kept::Text(text) => first_noted(&mut self.other, text.clone(), line),
        }
    }
}

/// Note `line` under `key` unless a line is noted: the line noted first.
fn first_noted<K: Eq + std::hash::Hash>(
    map: &mut HashMap<K, usize>,
    key: K,
    line: usize,
) -> Option<usize> {
    match map.entry(key) {
        std::collections::hash_map::Entry::Occupied(first) => Some(*first.get()),
        std::collections::hash_map::Entry::Vacant(slot) => {
            slot.insert(line);
            None
        }
    }
}

/// `8-4-4-4-12` lowercase hexadecimal digits as 128 bits, the high half first; `None` for any
/// other text (which is then keyed by its text: two texts get one key only when they are the
/// same).
fn pack(uuid: &str) -> Option<[u64; 2]> {
    use crate::core::hash::HEX_DIGIT_VALUE as DIGIT;
    let b: &[u8; 36] = uuid.as_bytes().try_into().ok()?;
    if b[8] != b'-' || b[13] != b'-' || b[18] != b'-' || b[23] != b'-' {
        return None;
    }
    // Two 64-bit halves: 16 digits each (the hyphens at 8, 13, 18, 23 left out).
    let half = |digits: [usize; 16]| {
        let (mut value, mut bad) = (0u64, 0u8);
        for i in digits {
            let d = DIGIT[usize::from(b[i])];
            bad |= d;
            value = value << 4 | u64::from(d & 15);
        }
        (value, bad)
    };
    let (high, bad_high) = half([0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17]);
    let (low, bad_low) = half([
        19, 20, 21, 22, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
    ]);
    (bad_high | bad_low < 16).then_some([high, low])
}

#[cfg(test)]
mod tests {
    use super::{Kept, LineId, LinesByUuid};

    #[test]
    fn a_uuid_is_found_by_its_text_whatever_its_form() {
        let mut lines = LinesByUuid::default();
        let first =
            |lines: &mut LinesByUuid, text: &str, line| lines.first(&LineId::new(text), line);
        let get = |lines: &LinesByUuid, text: &str| lines.get(&LineId::new(text));
        let canonical = "4e50eb77-540d-4192-a1ab-ce05d61101c2";
        assert_eq!(first(&mut lines, canonical, 1), None);
        assert_eq!(first(&mut lines, canonical, 2), Some(1));
        // The same digits in capitals, or without hyphens, are other texts.
        assert_eq!(get(&lines, &canonical.to_uppercase()), None);
        assert_eq!(get(&lines, &canonical.replace('-', "")), None);
        assert_eq!(
            first(&mut lines, "4E50EB77-540D-4192-A1AB-CE05D61101C2", 3),
            None
        );
        assert_eq!(first(&mut lines, "not-a-uuid", 4), None);
        assert_eq!(get(&lines, "not-a-uuid"), Some(4));
        assert_eq!(get(&lines, canonical), Some(1));
        assert_eq!(get(&lines, "4E50EB77-540D-4192-A1AB-CE05D61101C2"), Some(3));
        assert_eq!(get(&lines, "4e50eb77-540d-4192-a1ab-ce05d61101c3"), None);
    }

    /// An id is shown, compared and keyed as the text written, however it is kept.
    #[test]
    fn an_id_is_its_text() {
        let texts = [
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "4e50eb77-540d-4192-a1ab-ce05d61101c2",
            "0a0b0c0d-0e0f-1011-1213-141516171819",
            "4E50EB77-540D-4192-A1AB-CE05D61101C2",
            "4e50eb77540d4192a1abce05d61101c2",
            "4e50eb77-540d-4192-a1ab-ce05d61101c",
            "4e50eb77-540d-4192-a1ab-ce05d61101cg",
            "u1",
            "",
        ];
        for (k, text) in texts.iter().enumerate() {
            let id = LineId::new(text);
            assert_eq!(id.to_string(), *text);
            assert_eq!(id.text(), *text);
            assert_eq!(format!("{id:?}"), format!("{text:?}"));
            assert_eq!(matches!(id.0, Kept::Packed(_)), k < 4, "{text}");
            for (j, other) in texts.iter().enumerate() {
                assert_eq!(id == LineId::new(other), j == k, "{text} {other}");
            }
        }
        assert_eq!(std::mem::size_of::<Option<LineId>>(), 24);
    }
}

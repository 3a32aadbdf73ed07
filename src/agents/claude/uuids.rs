//! Lines by their `uuid`, without a copy of each: the canonical lowercase UUIDs Claude Code
//! writes are kept as 128-bit keys, anything else by its text.

use foldhash::HashMap;

/// Lines by `uuid`.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinesByUuid {
    packed: HashMap<u128, usize>,
    other: HashMap<Box<str>, usize>,
}

impl LinesByUuid {
    pub fn get(&self, uuid: &str) -> Option<usize> {
        match pack(uuid) {
            Some(key) => self.packed.get(&key).copied(),
            None => self.other.get(uuid).copied(),
        }
    }

    /// Note `line` for `uuid` unless one is noted: the line noted first.
    pub fn first(&mut self, uuid: &str, line: usize) -> Option<usize> {
        match pack(uuid) {
            Some(key) => self.packed.try_insert_first(key, line),
            None => match self.other.get(uuid) {
                Some(&first) => Some(first),
                None => {
                    self.other.insert(uuid.into(), line);
                    None
                }
            },
        }
    }
}

trait InsertFirst {
    fn try_insert_first(&mut self, key: u128, line: usize) -> Option<usize>;
}

impl InsertFirst for HashMap<u128, usize> {
    fn try_insert_first(&mut self, key: u128, line: usize) -> Option<usize> {
        match self.entry(key) {
            std::collections::hash_map::Entry::Occupied(first) => Some(*first.get()),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(line);
                None
            }
        }
    }
}

/// `8-4-4-4-12` lowercase hexadecimal digits as 128 bits; `None` for any other text (which
/// is then keyed by its text: two texts get one key only when they are the same).
fn pack(uuid: &str) -> Option<u128> {
    /// Each byte's value as a lowercase hexadecimal digit, 16 for any other byte.
    const DIGIT: [u8; 256] = {
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
    (bad_high | bad_low < 16).then_some(u128::from(high) << 64 | u128::from(low))
}

#[cfg(test)]
mod tests {
    use super::LinesByUuid;

    #[test]
    fn a_uuid_is_found_by_its_text_whatever_its_form() {
        let mut lines = LinesByUuid::default();
        let canonical = "4e50eb77-540d-4192-a1ab-ce05d61101c2";
        assert_eq!(lines.first(canonical, 1), None);
        assert_eq!(lines.first(canonical, 2), Some(1));
        // The same digits in capitals, or without hyphens, are other texts.
        assert_eq!(lines.get(&canonical.to_uppercase()), None);
        assert_eq!(lines.get(&canonical.replace('-', "")), None);
        assert_eq!(lines.first("4E50EB77-540D-4192-A1AB-CE05D61101C2", 3), None);
        assert_eq!(lines.first("not-a-uuid", 4), None);
        assert_eq!(lines.get("not-a-uuid"), Some(4));
        assert_eq!(lines.get(canonical), Some(1));
        assert_eq!(lines.get("4E50EB77-540D-4192-A1AB-CE05D61101C2"), Some(3));
        assert_eq!(lines.get("4e50eb77-540d-4192-a1ab-ce05d61101c3"), None);
    }
}

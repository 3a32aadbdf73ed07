//! When a list that grows and is cut back was last changed below a position: for work made from
//! a prefix of such a list (a history, a request's items), whether that prefix still holds.

/// The first position changed at each stamp, kept as a stack of suffix minima: `after(s)` is
/// the smallest position any stamp after `s` changed, in O(log n), and each push costs O(1)
/// amortized.
#[derive(Debug, Default)]
pub struct ChangeLog {
    /// `(stamp, position)`, stamps and positions increasing.
    minima: Vec<(usize, usize)>,
}

impl ChangeLog {
    /// At `stamp` (larger than every stamp pushed before), the list changed from `position`.
    pub fn push(&mut self, stamp: usize, position: usize) {
        while self.minima.last().is_some_and(|&(_, p)| p >= position) {
            self.minima.pop();
        }
        self.minima.push((stamp, position));
    }

    /// The first position changed by a stamp after `stamp` (`usize::MAX`: none).
    pub fn after(&self, stamp: usize) -> usize {
        let i = self.minima.partition_point(|&(s, _)| s <= stamp);
        self.minima.get(i).map_or(usize::MAX, |&(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::ChangeLog;

    /// `after` is the minimum of the positions pushed after a stamp, checked against that
    /// minimum taken directly, at every stamp of a sequence that cuts back and grows.
    #[test]
    fn after_is_the_least_position_changed_since() {
        let positions = [5, 9, 3, 3, 7, 0, 12, 4, 4, 8, 1, 6];
        let mut log = ChangeLog::default();
        for (k, &p) in positions.iter().enumerate() {
            log.push(k + 1, p);
            for stamp in 0..=k + 1 {
                let expected = positions[stamp.min(k + 1)..=k].iter().min().copied();
                assert_eq!(
                    log.after(stamp),
                    expected.unwrap_or(usize::MAX),
                    "{k} {stamp}"
                );
            }
        }
    }
}

//! Append-only lists that share prefixes.
//!
//! A rewrite of history (a rollback, an output that arrives after a synthetic one was sent) keeps
//! a prefix of a list and goes on differently. Copying that prefix would make a file of many
//! rewrites quadratic, so a list is instead a *segment* of its own items on top of a prefix of a
//! parent list: a fork costs O(log depth) whatever the prefix length. Segments form a forest;
//! skew-binary jump pointers (Myers, "An applicative random-access stack", 1983) find the segment
//! holding a position in O(log depth), so reading position `k` of a list costs O(log depth) and
//! reading a range costs O(log depth) per segment it spans. A list that is never forked is one
//! segment: reading it is a bounds check and a vector index.

use std::hash::Hash;
use std::ops::{Bound, Index, RangeBounds};

use foldhash::{HashMap, HashMapExt};

/// A list: an index into [`SharedLists`].
pub type ListId = usize;

/// A forest of append-only lists that share prefixes.
#[derive(Debug, Clone)]
pub struct SharedLists<T> {
    segments: Vec<Segment<T>>,
}

#[derive(Debug, Clone)]
struct Segment<T> {
    /// Position of `items[0]` in the list; the positions before it come from `parent`.
    start: usize,
    /// Itself for a root.
    parent: ListId,
    /// An ancestor (skew-binary jump pointer); itself for a root.
    jump: ListId,
    depth: usize,
    items: Vec<T>,
}

impl<T> Default for SharedLists<T> {
    fn default() -> Self {
        SharedLists {
            segments: Vec::new(),
        }
    }
}

impl<T> SharedLists<T> {
    /// No lists.
    pub fn new() -> Self {
        SharedLists::default()
    }

    /// The number of lists.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// No lists at all.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// A new empty list.
    pub fn new_list(&mut self) -> ListId {
        self.new_list_from(Vec::new())
    }

    /// A new list holding `items`.
    pub fn new_list_from(&mut self, items: Vec<T>) -> ListId {
        let id = self.segments.len();
        self.segments.push(Segment {
            start: 0,
            parent: id,
            jump: id,
            depth: 0,
            items,
        });
        id
    }

    /// A new list equal to the first `len` items of `list` (which goes on unchanged).
    pub fn fork(&mut self, list: ListId, len: usize) -> ListId {
        assert!(len <= self.list_len(list), "fork past the end of a list");
        if len == 0 {
            return self.new_list();
        }
        // The segment holding position len - 1 becomes the parent: every segment on a path adds
        // at least one item to it.
        let (parent, _) = self.locate(list, len, len - 1);
        let p = &self.segments[parent];
        let jump = if p.jump != parent {
            let j = &self.segments[p.jump];
            if p.depth - j.depth == j.depth - self.segments[j.jump].depth {
                j.jump
            } else {
                parent
            }
        } else {
            parent
        };
        let id = self.segments.len();
        self.segments.push(Segment {
            start: len,
            parent,
            jump,
            depth: p.depth + 1,
            items: Vec::new(),
        });
        id
    }

    /// Append an item to a list. Lists forked from it earlier do not see it.
    pub fn push(&mut self, list: ListId, item: T) {
        self.segments[list].items.push(item);
    }

    /// The length of a list.
    pub fn list_len(&self, list: ListId) -> usize {
        let s = &self.segments[list];
        s.start + s.items.len()
    }

    /// The last item of a list.
    pub fn last(&self, list: ListId) -> Option<&T> {
        let len = self.list_len(list);
        len.checked_sub(1).map(|k| self.get(list, k))
    }

    /// Item `k` of a list (`k` must be below its length).
    pub fn get(&self, list: ListId, k: usize) -> &T {
        let (segment, _) = self.locate(list, self.list_len(list), k);
        let s = &self.segments[segment];
        &s.items[k - s.start]
    }

    /// The stored place of item `k` of a list: `(segment, index in the segment's own items)`.
    /// A segment is named by the list that created it.
    pub fn locate_item(&self, list: ListId, k: usize) -> (ListId, usize) {
        let (segment, _) = self.locate(list, self.list_len(list), k);
        (segment, k - self.segments[segment].start)
    }

    /// A whole list.
    pub fn list(&self, list: ListId) -> Slice<'_, T> {
        self.slice(list, ..)
    }

    /// A range of a list.
    pub fn slice(&self, list: ListId, range: impl RangeBounds<usize>) -> Slice<'_, T> {
        let len = self.list_len(list);
        let (start, end) = bounds(range, len);
        Slice {
            lists: self,
            list,
            start,
            end,
        }
    }

    /// The same lists (the same ids, lengths and shared prefixes), each item made from this
    /// one's by `f`: a second kind of data about the same entries.
    pub fn map<U>(&self, mut f: impl FnMut(&T) -> U) -> SharedLists<U> {
        SharedLists {
            segments: self
                .segments
                .iter()
                .map(|s| Segment {
                    start: s.start,
                    parent: s.parent,
                    jump: s.jump,
                    depth: s.depth,
                    items: s.items.iter().map(&mut f).collect(),
                })
                .collect(),
        }
    }

    /// Bring `mapped`, which [`map`](SharedLists::map) made of these lists earlier, up to them:
    /// the items pushed since and the lists made since, each made by `f` (an item, once
    /// pushed, never changes). Costs the new items and a look at each list.
    pub fn map_more<U>(&self, mapped: &mut SharedLists<U>, mut f: impl FnMut(&T) -> U) {
        for (s, m) in self.segments.iter().zip(&mut mapped.segments) {
            m.items.extend(s.items[m.items.len()..].iter().map(&mut f));
        }
        for s in &self.segments[mapped.segments.len()..] {
            mapped.segments.push(Segment {
                start: s.start,
                parent: s.parent,
                jump: s.jump,
                depth: s.depth,
                items: s.items.iter().map(&mut f).collect(),
            });
        }
    }

    /// Every item of every list, each stored item once.
    pub fn stored_items(&self) -> impl Iterator<Item = &T> {
        self.segments.iter().flat_map(|s| s.items.iter())
    }

    /// Length of the longest common prefix of `a[..len_a]` and `b[..len_b]`: the positions held
    /// by the same stored item in both. O(log² depth).
    pub fn common_prefix(&self, a: ListId, len_a: usize, b: ListId, len_b: usize) -> usize {
        let max = len_a.min(len_b);
        // Same segment at position k implies the same items at every position up to k.
        let (mut low, mut high) = (0usize, max);
        while low < high {
            let mid = (low + high).div_ceil(2);
            if self.locate(a, len_a, mid - 1).0 == self.locate(b, len_b, mid - 1).0 {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        low
    }

    /// The segment holding position `k` of `list[..end]`, and the end of that segment's part
    /// of the list.
    fn locate(&self, list: ListId, end: usize, k: usize) -> (ListId, usize) {
        debug_assert!(k < end && end <= self.list_len(list));
        let mut s = list;
        let mut bound = end;
        while self.segments[s].start > k {
            let jump = self.segments[s].jump;
            if self.segments[jump].start > k {
                s = jump;
            } else {
                bound = self.segments[s].start;
                s = self.segments[s].parent;
            }
        }
        (s, bound)
    }

    /// For every stored item, the first position on its list with an item of the same key:
    /// `result[list][i]` for item `i` of `list`'s own segment. Linear in the stored items (a
    /// depth-first walk of the forest with an undo log).
    pub fn first_positions<K: Hash + Eq>(&self, key: impl Fn(&T) -> K) -> Vec<Vec<usize>> {
        let mut children: Vec<Vec<ListId>> = vec![Vec::new(); self.segments.len()];
        for (id, s) in self.segments.iter().enumerate() {
            if s.parent != id {
                children[s.parent].push(id);
            }
        }
        for list in &mut children {
            // Stable: forks at the same position keep their order (any order is correct).
            list.sort_by_key(|&c| self.segments[c].start);
        }
        let mut result: Vec<Vec<usize>> = self
            .segments
            .iter()
            .map(|s| Vec::with_capacity(s.items.len()))
            .collect();
        let mut first: HashMap<K, usize> = HashMap::new();
        // (segment, next own item, next child, keys this segment inserted)
        let mut stack: Vec<(ListId, usize, usize, Vec<K>)> = Vec::new();
        for root in (0..self.segments.len()).filter(|&id| self.segments[id].parent == id) {
            stack.push((root, 0, 0, Vec::new()));
            while let Some((segment, item, child, inserted)) = stack.last_mut() {
                let s = &self.segments[*segment];
                let position = s.start + *item;
                if let Some(&c) = children[*segment].get(*child)
                    && self.segments[c].start <= position
                {
                    *child += 1;
                    stack.push((c, 0, 0, Vec::new()));
                    continue;
                }
                if let Some(value) = s.items.get(*item) {
                    let k = key(value);
                    let at = match first.get(&k) {
                        Some(&at) => at,
                        None => {
                            first.insert(key(value), position);
                            inserted.push(k);
                            position
                        }
                    };
                    result[*segment].push(at);
                    *item += 1;
                    continue;
                }
                for k in inserted.drain(..) {
                    first.remove(&k);
                }
                stack.pop();
            }
        }
        result
    }
}

fn bounds(range: impl RangeBounds<usize>, len: usize) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e + 1,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end && end <= len,
        "range {start}..{end} out of bounds for a list of length {len}"
    );
    (start, end)
}

/// A range of a shared list: like `&[T]`, read through the forest.
pub struct Slice<'a, T> {
    lists: &'a SharedLists<T>,
    list: ListId,
    start: usize,
    end: usize,
}

impl<T> Clone for Slice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Slice<'_, T> {}

impl<'a, T> Slice<'a, T> {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub fn get(&self, index: usize) -> Option<&'a T> {
        (index < self.len()).then(|| self.lists.get(self.list, self.start + index))
    }

    pub fn first(&self) -> Option<&'a T> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&'a T> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// A sub-range, relative to this one.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Slice<'a, T> {
        let (start, end) = bounds(range, self.len());
        Slice {
            lists: self.lists,
            list: self.list,
            start: self.start + start,
            end: self.start + end,
        }
    }

    pub fn iter(&self) -> Iter<'a, T> {
        Iter {
            lists: self.lists,
            list: self.list,
            front: self.start,
            back: self.end,
            front_piece: &[],
            back_piece: &[],
        }
    }

    pub fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        self.iter().cloned().collect()
    }
}

impl<'a, T> Index<usize> for Slice<'a, T> {
    type Output = T;
    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(item) => item,
            None => panic!(
                "index {index} out of bounds for a slice of length {}",
                self.len()
            ),
        }
    }
}

impl<'a, T> IntoIterator for Slice<'a, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &Slice<'a, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Slice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for Slice<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for Slice<'_, T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: PartialEq> PartialEq<Slice<'_, T>> for Vec<T> {
    fn eq(&self, other: &Slice<'_, T>) -> bool {
        other == self
    }
}

/// Iterator over a [`Slice`], one stored segment piece at a time.
pub struct Iter<'a, T> {
    lists: &'a SharedLists<T>,
    list: ListId,
    /// The items not yet returned are positions `front..back`; the pieces cache the stored
    /// items at both ends of that range.
    front: usize,
    back: usize,
    front_piece: &'a [T],
    back_piece: &'a [T],
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { ..*self }
    }
}

impl<'a, T> Iter<'a, T> {
    /// The stored items from position `k` to the end of their segment's part of `front..back`.
    fn piece_from(&self, k: usize) -> &'a [T] {
        let (segment, bound) = self.lists.locate(self.list, self.back, k);
        let s = &self.lists.segments[segment];
        &s.items[k - s.start..bound.min(self.back) - s.start]
    }

    /// The stored items from the start of their segment's part of `front..back` to position `k`.
    fn piece_to(&self, k: usize) -> &'a [T] {
        let (segment, _) = self.lists.locate(self.list, self.back, k);
        let s = &self.lists.segments[segment];
        &s.items[s.start.max(self.front) - s.start..=k - s.start]
    }
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        if self.front >= self.back {
            return None;
        }
        if self.front_piece.is_empty() {
            self.front_piece = self.piece_from(self.front);
        }
        let (item, rest) = self.front_piece.split_first()?;
        self.front_piece = rest;
        self.front += 1;
        let back_start = self.back - self.back_piece.len();
        if back_start < self.front {
            self.back_piece = &self.back_piece[self.front - back_start..];
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.back - self.front;
        (len, Some(len))
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        if self.back_piece.is_empty() {
            self.back_piece = self.piece_to(self.back - 1);
        }
        let (item, rest) = self.back_piece.split_last()?;
        self.back_piece = rest;
        self.back -= 1;
        if self.front + self.front_piece.len() > self.back {
            self.front_piece = &self.front_piece[..self.back - self.front];
        }
        Some(item)
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<T> std::iter::FusedIterator for Iter<'_, T> {}

#[cfg(test)]
mod tests;

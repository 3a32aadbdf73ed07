//! Shared lists against plain vectors that copy on every fork.

use crate::core::shared::SharedLists;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// Random forks (often of forks, often at the end or at 0), pushes and new roots, mirrored by
/// copied vectors.
fn build(seed: u64, operations: usize) -> (SharedLists<u32>, Vec<Vec<u32>>) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut lists = SharedLists::new();
    let mut model: Vec<Vec<u32>> = Vec::new();
    lists.new_list();
    model.push(Vec::new());
    for _ in 0..operations {
        let list = match rng.below(4) {
            0 => rng.below(model.len()),
            _ => model.len() - 1,
        };
        match rng.below(10) {
            0..=5 => {
                // Few distinct values, so first occurrences are interesting.
                let value = rng.below(12) as u32;
                lists.push(list, value);
                model[list].push(value);
            }
            6..=8 => {
                let len = match rng.below(3) {
                    0 => model[list].len(),
                    _ => rng.below(model[list].len() + 1),
                };
                let id = lists.fork(list, len);
                assert_eq!(id, model.len());
                model.push(model[list][..len].to_vec());
            }
            _ => {
                lists.new_list();
                model.push(Vec::new());
            }
        }
    }
    (lists, model)
}

#[test]
fn lists_read_like_copied_vectors() {
    for seed in 0..40 {
        let (lists, model) = build(seed, 400);
        assert_eq!(lists.len(), model.len());
        for (id, expected) in model.iter().enumerate() {
            assert_eq!(lists.list_len(id), expected.len());
            let list = lists.list(id);
            assert_eq!(list.to_vec(), *expected, "seed {seed} list {id}");
            let reversed: Vec<u32> = list.iter().rev().copied().collect();
            let mut want = expected.clone();
            want.reverse();
            assert_eq!(reversed, want, "seed {seed} list {id} reversed");
            for (k, value) in expected.iter().enumerate() {
                assert_eq!(lists.get(id, k), value);
                assert_eq!(list[k], *value);
            }
            assert_eq!(lists.last(id), expected.last());
            let n = expected.len();
            for (a, b) in [(0, n), (n / 3, n), (n / 4, n / 2), (n / 2, n / 2)] {
                let slice = list.slice(a..b);
                assert_eq!(
                    slice.to_vec(),
                    expected[a..b],
                    "seed {seed} list {id} {a}..{b}"
                );
                // Both ends at once: the iterator meets in the middle exactly once.
                let mut iter = slice.iter();
                let (mut front, mut back) = (Vec::new(), Vec::new());
                while let Some(v) = iter.next() {
                    front.push(*v);
                    match iter.next_back() {
                        Some(v) => back.push(*v),
                        None => break,
                    }
                }
                back.reverse();
                front.extend(back);
                assert_eq!(
                    front,
                    expected[a..b],
                    "seed {seed} list {id} {a}..{b} both ends"
                );
            }
        }
    }
}

#[test]
fn common_prefix_is_shared_storage_not_equal_values() {
    let mut lists = SharedLists::new();
    let a = lists.new_list();
    for v in [1, 2, 3, 4] {
        lists.push(a, v);
    }
    let b = lists.fork(a, 3);
    lists.push(b, 4);
    let c = lists.fork(b, 2);
    lists.push(c, 3);
    let d = lists.new_list_from(vec![1, 2, 3, 4]);
    assert_eq!(lists.common_prefix(a, 4, b, 4), 3);
    assert_eq!(lists.common_prefix(b, 4, c, 3), 2);
    assert_eq!(lists.common_prefix(a, 4, c, 3), 2);
    assert_eq!(lists.common_prefix(a, 2, a, 4), 2);
    // Equal values in separate storage share nothing.
    assert_eq!(lists.common_prefix(a, 4, d, 4), 0);
    assert_eq!(lists.list(a), lists.list(d));
}

#[test]
fn common_prefix_and_first_positions_match_the_model() {
    for seed in 0..20 {
        let (lists, model) = build(seed, 300);
        // Ancestry in the model: the list each one was forked from, and where.
        let first = lists.first_positions(|v| *v);
        for (id, expected) in model.iter().enumerate() {
            for k in 0..expected.len() {
                let (segment, index) = lists.locate_item(id, k);
                let want = expected.iter().position(|v| *v == expected[k]);
                assert_eq!(
                    Some(first[segment][index]),
                    want,
                    "seed {seed} list {id} {k}"
                );
            }
        }
        for a in 0..model.len() {
            for b in 0..model.len() {
                let shared = lists.common_prefix(a, model[a].len(), b, model[b].len());
                // Shared storage implies equal values.
                assert_eq!(model[a][..shared], model[b][..shared]);
                // Lists forked one from the other share at least the fork point.
                if shared < model[a].len().min(model[b].len()) {
                    assert_ne!(
                        lists.locate_item(a, shared),
                        lists.locate_item(b, shared),
                        "seed {seed} {a} {b}"
                    );
                }
            }
        }
    }
}

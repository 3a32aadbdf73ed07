//! Independent tasks run on several threads, their results in task order. The plan, the cache
//! analysis, the text tables and `sessions` use it; no result depends on the thread count.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The threads a stage may use.
#[derive(Debug, Clone, Copy, Default)]
pub struct Threads {
    /// Threads that may run at once, the calling one included (0 or 1: the calling one only).
    pub count: usize,
}

impl Threads {
    /// Up to `count` threads.
    pub fn new(count: usize) -> Threads {
        Threads { count }
    }
}

/// `task(0)`, …, `task(count - 1)` on up to `threads.count` threads (the calling one included).
/// Each thread takes the next task until none is left, so a slow task does not keep the others
/// idle. The results come back in task order. A panic in a task is resumed on the calling
/// thread.
pub fn map<T: Send>(count: usize, threads: Threads, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let helpers = threads.count.clamp(1, count.max(1)) - 1;
    if helpers == 0 {
        return (0..count).map(task).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= count {
                return done;
            }
            done.push((index, task(index)));
        }
    };
    let mut done = std::thread::scope(|scope| {
        let helpers: Vec<_> = (0..helpers).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        done.extend(joined(helpers));
        done
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

/// What the helper threads made, each by its task's index; a helper's panic is resumed here.
fn joined<T>(helpers: Vec<std::thread::ScopedJoinHandle<'_, Vec<(usize, T)>>>) -> Vec<(usize, T)> {
    let mut done = Vec::new();
    for helper in helpers {
        match helper.join() {
            Ok(theirs) => done.extend(theirs),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
    done
}

/// [`map`] over blocks of `0..len`: `task(0..block)`, `task(block..2 * block)`, …, the last
/// block shorter. For work on many small items (steps, item ids), where taking a task per item
/// would cost more than the item.
pub fn map_blocks<T: Send>(
    len: usize,
    block: usize,
    threads: Threads,
    task: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    let block = block.max(1);
    map(len.div_ceil(block), threads, |k| {
        task(k * block..((k + 1) * block).min(len))
    })
}

/// `task(0)`, …, `task(len - 1)` in one list, run in blocks of `block` indices as
/// [`map_each_onto`] runs them.
pub fn map_each<T: Send>(
    len: usize,
    block: usize,
    threads: Threads,
    task: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut all = Vec::new();
    map_each_onto(&mut all, len, block, threads, task);
    all
}

/// `task(0)`, …, `task(len - 1)` added at the end of `list`, in blocks of `block` indices on up
/// to `threads.count` threads. The calling thread takes blocks from the front and makes them in
/// `list` itself; the others take them from the back into lists of their own, appended once
/// all are made. So a thread left without work takes the next block, and the calling thread's
/// part is never copied (with large results, a copy in new memory costs about as much as
/// making them).
pub fn map_each_onto<T: Send>(
    list: &mut Vec<T>,
    len: usize,
    block: usize,
    threads: Threads,
    task: impl Fn(usize) -> T + Sync,
) {
    let block = block.max(1);
    let blocks = len.div_ceil(block);
    let helpers = threads.count.clamp(1, blocks.max(1)) - 1;
    list.reserve(len);
    if helpers == 0 {
        list.extend((0..len).map(task));
        return;
    }
    let range = |k: usize| k * block..((k + 1) * block).min(len);
    let left = std::sync::Mutex::new(0..blocks);
    let take = |from_back: bool| {
        let mut left = left
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if from_back {
            left.next_back()
        } else {
            left.next()
        }
    };
    let from_back = || {
        let mut done = Vec::new();
        while let Some(k) = take(true) {
            done.push((k, range(k).map(&task).collect::<Vec<_>>()));
        }
        done
    };
    let mut theirs = std::thread::scope(|scope| {
        let helpers: Vec<_> = (0..helpers).map(|_| scope.spawn(from_back)).collect();
        while let Some(k) = take(false) {
            list.extend(range(k).map(&task));
        }
        joined(helpers)
    });
    theirs.sort_unstable_by_key(|(k, _)| *k);
    for (_, made) in theirs {
        list.extend(made);
    }
}

#[cfg(test)]
mod tests {
    use super::Threads;

    #[test]
    fn results_come_in_task_order_whatever_the_thread_count() {
        let expected: Vec<usize> = (0..200).map(|i| i * i).collect();
        for threads in [0, 1, 2, 5, 300] {
            let squares = super::map(200, Threads::new(threads), |i| {
                if i % 7 == 0 {
                    // Slow tasks finish after faster ones taken later.
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                i * i
            });
            assert_eq!(squares, expected, "{threads} threads");
        }
        assert!(super::map(0, Threads::new(4), |i| i).is_empty());
    }

    #[test]
    fn blocks_cover_the_range_in_order_whatever_the_thread_count() {
        for threads in [1, 2, 5] {
            for (len, block) in [(0, 4), (1, 4), (8, 4), (9, 4), (10, 3), (5, 0), (200, 3)] {
                let blocks = super::map_blocks(len, block, Threads::new(threads), |range| range);
                assert_eq!(
                    blocks.iter().cloned().flatten().collect::<Vec<_>>(),
                    (0..len).collect::<Vec<_>>(),
                    "{len} by {block}, {threads} threads"
                );
                assert!(
                    blocks
                        .iter()
                        .all(|r| !r.is_empty() && r.len() <= block.max(1)),
                    "{blocks:?}"
                );
                let each = super::map_each(len, block, Threads::new(threads), |i| 3 * i + 1);
                assert_eq!(each, (0..len).map(|i| 3 * i + 1).collect::<Vec<_>>());
                // After what the list holds, whichever thread made which block, slow ones too.
                let mut onto = vec![7, 8];
                super::map_each_onto(&mut onto, len, block, Threads::new(threads), |i| {
                    if i % 3 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                    3 * i + 1
                });
                let expected: Vec<usize> = [7, 8].into_iter().chain(each).collect();
                assert_eq!(onto, expected, "{len} by {block}, {threads} threads");
            }
        }
    }
}

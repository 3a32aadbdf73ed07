//! Independent tasks run on several threads, their results in task order. Loading, the plan,
//! the cache analysis and the text tables use it; no result depends on the thread count or on
//! where the threads run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::{Scope, ScopedJoinHandle};

/// The threads a stage may use: how many, and how its helper threads are placed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Threads {
    /// Threads that may run at once, the calling one included (0 or 1: the calling one only).
    pub count: usize,
    /// How a helper thread leaves the CPU of the thread that started it (`None`: it stays where
    /// the operating system put it).
    pub placement: Option<Placement>,
}

impl Threads {
    /// Up to `count` threads, placed by the operating system.
    pub fn new(count: usize) -> Threads {
        Threads {
            count,
            placement: None,
        }
    }
}

/// A way to move a new helper thread off its starter's CPU at once. The library asks no
/// operating system itself; the binary, which may, gives these two functions.
///
/// Why: a kernel may start a new thread on the CPU of the thread that started it and move it
/// to an idle CPU only once its cache has gone cold. On 2-core VMs that took 8–16 ms, during
/// which the two threads of a 10 ms parse shared one core.
#[derive(Debug, Clone, Copy)]
pub struct Placement {
    /// The CPU the calling thread runs on now, if known.
    pub current_cpu: fn() -> Option<usize>,
    /// Move the calling thread, helper `helper` (1, 2, …) of a stage, to a CPU other than
    /// `starter_cpu`, leaving it free to move again afterwards.
    pub leave_cpu: fn(starter_cpu: usize, helper: usize),
}

/// Start helper number `helper` (from 1) of a stage in `scope`, placed by `threads.placement`
/// off the CPU the calling thread runs on now.
pub fn spawn<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    threads: Threads,
    helper: usize,
    work: impl FnOnce() -> T + Send + 'scope,
) -> ScopedJoinHandle<'scope, T> {
    let starter_cpu = threads
        .placement
        .and_then(|placement| Some((placement, (placement.current_cpu)()?)));
    let handle = scope.spawn(move || {
        if let Some((placement, cpu)) = starter_cpu {
            (placement.leave_cpu)(cpu, helper);
        }
        work()
    });
    if starter_cpu.is_some() {
        // Linux queues a new thread on its starter's CPU, where it waits for the starter's time
        // slice to end even with another CPU idle: 1.3–4 ms on the 2-core VMs promptc is
        // measured on. Yielding lets it run at once (0.1 ms), and move itself off.
        std::thread::yield_now();
    }
    handle
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
        let helpers: Vec<_> = (1..=helpers)
            .map(|helper| spawn(scope, threads, helper, work))
            .collect();
        let mut done = work();
        for helper in helpers {
            match helper.join() {
                Ok(theirs) => done.extend(theirs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
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
/// [`map_blocks`] runs them.
pub fn map_each<T: Send>(
    len: usize,
    block: usize,
    threads: Threads,
    task: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    map_each_then(len, block, threads, task, |_| {})
}

/// [`map_each`], calling `done(block)` on the thread that ran each block once its tasks are
/// done: to let go of what the block read.
pub fn map_each_then<T: Send>(
    len: usize,
    block: usize,
    threads: Threads,
    task: impl Fn(usize) -> T + Sync,
    done: impl Fn(std::ops::Range<usize>) + Sync,
) -> Vec<T> {
    let blocks = map_blocks(len, block, threads, |range| {
        let block = range.clone().map(&task).collect::<Vec<_>>();
        done(range);
        block
    });
    let mut all = Vec::with_capacity(len);
    for block in blocks {
        all.extend(block);
    }
    all
}

/// `task(i, &mut values[i])` for every value, on up to `threads.count` threads (the calling one
/// included), each taking a run of consecutive values. For work that changes values in place.
pub fn for_each_mut<T: Send>(
    values: &mut [T],
    threads: Threads,
    task: impl Fn(usize, &mut T) + Sync,
) {
    let count = threads.count.clamp(1, values.len().max(1));
    let per_thread = values.len().div_ceil(count).max(1);
    let run = |first: usize, run: &mut [T]| {
        for (offset, value) in run.iter_mut().enumerate() {
            task(first + offset, value);
        }
    };
    if count == 1 {
        return run(0, values);
    }
    std::thread::scope(|scope| {
        let mut runs = values.chunks_mut(per_thread).enumerate();
        let own = runs.next();
        let helpers: Vec<_> = runs
            .map(|(k, values)| spawn(scope, threads, k, move || run(k * per_thread, values)))
            .collect();
        if let Some((_, values)) = own {
            run(0, values);
        }
        for helper in helpers {
            if let Err(panic) = helper.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{Placement, Threads};
    use std::sync::Mutex;

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
            for (len, block) in [(0, 4), (1, 4), (8, 4), (9, 4), (10, 3), (5, 0)] {
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
            }
        }
    }

    #[test]
    fn each_value_is_changed_once_with_its_index_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 7, 300] {
            for count in [0, 1, 2, 5, 9] {
                let mut values = vec![1000; count];
                super::for_each_mut(&mut values, Threads::new(threads), |index, value| {
                    *value += index
                });
                let expected: Vec<usize> = (0..count).map(|i| 1000 + i).collect();
                assert_eq!(values, expected, "{threads} threads, {count} values");
            }
        }
    }

    /// Each helper leaves the starter's CPU once, numbered from 1; the starter itself stays.
    #[test]
    fn every_helper_is_placed_once_with_its_number() {
        static CALLS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
        let placed = Threads {
            count: 3,
            placement: Some(Placement {
                current_cpu: || Some(7),
                leave_cpu: |starter_cpu, helper| CALLS.lock().unwrap().push((starter_cpu, helper)),
            }),
        };
        let calls = || std::mem::take(&mut *CALLS.lock().unwrap());

        let squares = super::map(10, placed, |i| i * i);
        assert_eq!(squares, (0..10).map(|i| i * i).collect::<Vec<_>>());
        let mut seen = calls();
        seen.sort_unstable();
        assert_eq!(seen, [(7, 1), (7, 2)]);

        let mut values = vec![0; 5];
        super::for_each_mut(&mut values, placed, |index, value| *value = index);
        assert_eq!(values, [0, 1, 2, 3, 4]);
        let mut seen = calls();
        seen.sort_unstable();
        assert_eq!(seen, [(7, 1), (7, 2)]);

        // One task: no helper, nothing placed.
        assert_eq!(super::map(1, placed, |i| i), [0]);
        assert_eq!(calls(), []);
    }
}

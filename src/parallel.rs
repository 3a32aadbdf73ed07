//! Independent tasks run on several threads, their results in task order. Loading and the plan
//! use it; no result depends on the thread count.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `task(0)`, …, `task(count - 1)` on up to `threads` threads (the calling one included; 0 or 1:
/// only the calling one). Each thread takes the next task until none is left, so a slow task
/// does not keep the others idle. The results come back in task order. A panic in a task is
/// resumed on the calling thread.
pub fn map<T: Send>(count: usize, threads: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
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
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
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

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_task_order_whatever_the_thread_count() {
        let expected: Vec<usize> = (0..200).map(|i| i * i).collect();
        for threads in [0, 1, 2, 5, 300] {
            let squares = super::map(200, threads, |i| {
                if i % 7 == 0 {
                    // Slow tasks finish after faster ones taken later.
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                i * i
            });
            assert_eq!(squares, expected, "{threads} threads");
        }
        assert!(super::map(0, 4, |i| i).is_empty());
    }
}

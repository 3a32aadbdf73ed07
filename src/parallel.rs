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

/// `task(i, &mut values[i])` for every value, on up to `threads` threads (the calling one
/// included), each taking a run of consecutive values. For work that changes values in place.
pub fn for_each_mut<T: Send>(
    values: &mut [T],
    threads: usize,
    task: impl Fn(usize, &mut T) + Sync,
) {
    let threads = threads.clamp(1, values.len().max(1));
    let per_thread = values.len().div_ceil(threads).max(1);
    let run = |first: usize, run: &mut [T]| {
        for (offset, value) in run.iter_mut().enumerate() {
            task(first + offset, value);
        }
    };
    if threads == 1 {
        return run(0, values);
    }
    std::thread::scope(|scope| {
        let mut runs = values.chunks_mut(per_thread).enumerate();
        let own = runs.next();
        let helpers: Vec<_> = runs
            .map(|(k, values)| scope.spawn(move || run(k * per_thread, values)))
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

    #[test]
    fn each_value_is_changed_once_with_its_index_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 7, 300] {
            for count in [0, 1, 2, 5, 9] {
                let mut values = vec![1000; count];
                super::for_each_mut(&mut values, threads, |index, value| *value += index);
                let expected: Vec<usize> = (0..count).map(|i| 1000 + i).collect();
                assert_eq!(values, expected, "{threads} threads, {count} values");
            }
        }
    }
}

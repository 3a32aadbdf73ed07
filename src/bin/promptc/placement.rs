//! Where the library's helper threads run. Linux may start a new thread on the CPU of the thread
//! that started it and move it to an idle CPU only once its cache has gone cold: on the 2-core
//! VMs promptc is measured on, 8–16 ms in which a parse's two threads took turns on one core,
//! longer than the whole parse of a 10 MB rollout. Each helper therefore moves itself off its
//! starter's CPU at once, then lets the kernel move it again as it likes.

use promptc::parallel::Placement;

/// How helper threads are placed here (`None`: where the operating system puts them).
pub fn placement() -> Option<Placement> {
    #[cfg(target_os = "linux")]
    return Some(Placement {
        current_cpu: linux::current_cpu,
        leave_cpu: linux::leave_cpu,
    });
    #[cfg(not(target_os = "linux"))]
    return None;
}

#[cfg(target_os = "linux")]
mod linux {
    use nix::sched::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
    use nix::unistd::Pid;

    pub fn current_cpu() -> Option<usize> {
        sched_getcpu().ok()
    }

    /// When the calling thread runs on `starter_cpu`, move it to the `helper`-th CPU it may
    /// use after that one (helpers 1, 2, … on different CPUs, counting on from the starter's,
    /// so that several promptc processes do not all pile onto CPU 0), then give it back every
    /// CPU it may use: the kernel leaves a running thread where it is, and may still move it
    /// if that CPU gets busy. A thread the kernel already put elsewhere stays there.
    pub fn leave_cpu(starter_cpu: usize, helper: usize) {
        if current_cpu() != Some(starter_cpu) {
            return;
        }
        if let Some(allowed) = move_off(starter_cpu, helper) {
            // If the allowed CPUs changed meanwhile this fails and the helper stays where it
            // is, pinned: it ends with its stage.
            let _ = sched_setaffinity(Pid::from_raw(0), &allowed);
        }
    }

    /// Pin the calling thread to the `helper`-th CPU it may use after `starter_cpu`, and
    /// return the CPUs it was allowed before. `None`, with nothing changed, where it may use
    /// only one CPU or a call fails.
    fn move_off(starter_cpu: usize, helper: usize) -> Option<CpuSet> {
        let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
        let count = CpuSet::count();
        let others: Vec<usize> = (1..count)
            .map(|step| (starter_cpu + step) % count)
            .filter(|&cpu| allowed.is_set(cpu).unwrap_or(false))
            .collect();
        if others.is_empty() {
            return None;
        }
        let mut target = CpuSet::new();
        target
            .set(others[(helper.max(1) - 1) % others.len()])
            .ok()?;
        sched_setaffinity(Pid::from_raw(0), &target).ok()?;
        Some(allowed)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Helpers land on CPUs other than their starter's, different ones while there are
        /// enough, and get every CPU they were allowed back.
        #[test]
        fn helpers_leave_the_starters_cpu_and_keep_their_mask() {
            let Some(starter) = current_cpu() else {
                eprintln!("skipped: sched_getcpu is unavailable here");
                return;
            };
            let before = sched_getaffinity(Pid::from_raw(0)).unwrap();
            if sched_setaffinity(Pid::from_raw(0), &before).is_err() {
                eprintln!("skipped: sched_setaffinity is not allowed here");
                return;
            }
            let usable = (0..CpuSet::count())
                .filter(|&cpu| before.is_set(cpu).unwrap())
                .count();
            let helpers = (1..=3).map(|helper| {
                std::thread::spawn(move || {
                    let allowed = move_off(starter, helper);
                    // Pinned, so this is where the move put the thread.
                    let landed = current_cpu();
                    if let Some(allowed) = &allowed {
                        sched_setaffinity(Pid::from_raw(0), allowed).unwrap();
                    }
                    (allowed.is_some(), landed, allowed.unwrap_or(before))
                })
            });
            let landed: Vec<_> = helpers.map(|helper| helper.join().unwrap()).collect();
            for (moved, cpu, after) in &landed {
                assert_eq!(*after, before, "the mask it had before");
                assert_eq!(*moved, usable > 1, "{usable} CPUs usable");
                if *moved {
                    assert_ne!(*cpu, Some(starter));
                }
            }
            // Helper 1 takes the first usable CPU after the starter's, counting round.
            let next = (1..CpuSet::count())
                .map(|step| (starter + step) % CpuSet::count())
                .find(|&cpu| before.is_set(cpu).unwrap());
            if usable > 1 {
                assert_eq!(landed[0].1, next, "starter on {starter}");
            }
            if usable >= 3 {
                assert_ne!(
                    landed[0].1, landed[1].1,
                    "helpers 1 and 2 on different CPUs"
                );
            }
            if usable < 2 {
                eprintln!("skipped the move: this process may use one CPU");
            }
            let after = std::thread::spawn(move || {
                leave_cpu(starter, 1);
                sched_getaffinity(Pid::from_raw(0)).unwrap()
            });
            assert_eq!(
                after.join().unwrap(),
                before,
                "leave_cpu gives the mask back"
            );
        }
    }
}

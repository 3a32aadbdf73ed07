//! `thread_rolled_back` events: Codex's `drop_last_n_user_turns`.

use super::{Rollback, State};
use crate::agents::codex::content::is_context_message;

impl State<'_> {
    /// Cut at the `num_turns`-th user turn boundary from the end (the first boundary when there
    /// are fewer), then trim contextual messages just above the cut, in a new epoch. Costs
    /// O(log) plus the entries and turns it drops: the new epoch shares the rest.
    pub(super) fn rollback(&mut self, num_turns: u64, line: usize) {
        let epoch = self.epoch();
        let len = self.epoch_len();
        self.scan_boundaries();
        let cut = self.rollback_cut(num_turns, line);
        if cut >= len {
            // Codex's drop_last_n_user_turns leaves the history as it is: nothing to reset.
            self.replay.rollbacks.push(Rollback {
                line,
                num_turns,
                dropped_turns: 0,
                epoch,
            });
            return;
        }
        let kept = self.progress.boundaries.partition_point(|&b| b < cut);
        let dropped = self.progress.boundaries.len() - kept;
        self.progress.boundaries.truncate(kept);
        self.progress.scanned = cut;
        // Mark the newest surviving turns as rolled back, newest first.
        for _ in 0..dropped {
            match self.progress.live_turns.pop() {
                Some(turn) => self.replay.turns[turn].rolled_back = true,
                None => break,
            }
        }
        self.replay.epochs.fork(epoch, cut);
        self.replay.rollbacks.push(Rollback {
            line,
            num_turns,
            dropped_turns: dropped,
            epoch: self.replay.epochs.len() - 1,
        });
        self.progress.last_was_input = cut > 0;
        self.open_slot();
    }

    /// Where a rollback of `num_turns` cuts the current epoch (its length: nothing to cut).
    fn rollback_cut(&mut self, num_turns: u64, line: usize) -> usize {
        let rollout = self.rollout;
        let epoch = self.epoch();
        let len = self.epoch_len();
        let boundaries = &self.progress.boundaries;
        let n = usize::try_from(num_turns).unwrap_or(usize::MAX);
        let mut cut = if n == 0 || boundaries.is_empty() {
            len
        } else if n >= boundaries.len() {
            boundaries[0]
        } else {
            boundaries[boundaries.len() - n]
        };
        if n > boundaries.len() && !boundaries.is_empty() {
            self.replay.approximations.push((
                line,
                format!(
                    "rollback of {num_turns} turns, but the history holds {}: cut at the first",
                    boundaries.len()
                ),
            ));
        }
        // Contextual messages just above the cut go with the turn they introduced.
        let first = self.progress.boundaries.first().copied();
        if let Some(first) = first
            && cut < len
        {
            while cut > first {
                let item = self
                    .replay
                    .item(rollout, self.replay.epochs.get(epoch, cut - 1).item);
                if !is_context_message(item, || item.json()) {
                    break;
                }
                cut -= 1;
            }
        }
        cut
    }
}

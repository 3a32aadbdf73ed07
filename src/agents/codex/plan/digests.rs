//! Each item's hash and token estimate as sent, computed once for every item that entered a
//! history, before the views are built.

use super::PlanOptions;
use crate::agents::codex::item_tokens::item_tokens;
use crate::agents::codex::replay::MADE;
use crate::agents::codex::session::Session;
use crate::core::hash::{Hash, hash};
use crate::core::parallel::Threads;

/// Item hashes and token estimates, by item id: the file's items, then replay's ([`MADE`]).
pub(super) type Digests = [Vec<Option<(Hash, usize)>>; 2];

/// The hash and token estimate (0 when not estimating) of every item that entered a history
/// (`None` for the others), computed on `options.threads` threads. The result does not depend
/// on the thread count.
pub(super) fn digest_items(session: &Session, options: &PlanOptions) -> Digests {
    let (rollout, replay) = (&session.rollout, &session.replay);
    let total = rollout.items.len() + replay.extra_items.len();
    let mut used = vec![false; total];
    for entry in replay.epochs.stored_items() {
        used[replay.dense_index(rollout, entry.item)] = true;
    }
    let id = |index: usize| match index.checked_sub(rollout.items.len()) {
        Some(made) => MADE | made,
        None => index,
    };
    let digest = |index: usize| -> Option<(Hash, usize)> {
        let item = session.item(id(index));
        used[index].then(|| digest_item(item, options.estimate_tokens))
    };
    // Tasks are blocks of ids: taking ids one at a time would cost more than hashing most items.
    const BLOCK: usize = 32;
    let threads = if total < 2 * BLOCK {
        Threads::new(1)
    } else {
        options.threads
    };
    let mut file = crate::core::parallel::map_each(total, BLOCK, threads, digest);
    let made = file.split_off(rollout.items.len());
    [file, made]
}

/// An item's hash and token estimate, as sent.
pub(super) fn digest_item(
    item: &crate::agents::codex::model::Item,
    estimate_tokens: bool,
) -> (Hash, usize) {
    let estimate = if estimate_tokens {
        // An item loaded without its JSON has an estimate only when loaded with
        // `LoadOptions::estimate_tokens`: counting its empty text would say 4 tokens.
        debug_assert!(
            item.tokens.is_some() || !item.text.is_empty(),
            "a token estimate of an item loaded with neither its JSON nor an estimate"
        );
        item.tokens
            .unwrap_or_else(|| item_tokens(item, item.wire_json()))
    } else {
        0
    };
    let digest = item
        .digest
        .unwrap_or_else(|| hash("item", item.wire_json().as_bytes()));
    (digest, estimate)
}

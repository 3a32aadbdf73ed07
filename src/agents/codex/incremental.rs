//! Whether a request could have gone out incrementally: Codex sends `previous_response_id` plus
//! only the new items when every non-input field is the same and the new input starts with the
//! previous input plus the previous response's output (codex-rollout.md section 8.4).

use crate::agents::codex::normalize::Origin;
use crate::agents::codex::session::Session;
use crate::fingerprint::Plan;

/// With the parts before the input unchanged and the previous input intact, why step `k`
/// still could not go out as `previous_response_id` plus its new items, if it could not.
pub(super) fn incremental_break(
    session: &Session,
    plan: &Plan,
    previous: usize,
    k: usize,
) -> Option<String> {
    let replay = &session.replay;
    let prev_step = &replay.steps[previous];
    let step = &replay.steps[k];
    let prev_len = plan.views[previous].1;
    let len = plan.views[k].1;
    if len <= prev_len {
        return Some("no new input".into());
    }
    // The previous response's output: model-output items right after the previous prefix.
    let history = replay.epoch(step.epoch);
    let mut expected = 0;
    for entry in history.slice(prev_step.prefix_len..step.prefix_len) {
        if session.item(entry.item).is_model_output() {
            expected += 1;
        } else {
            break;
        }
    }
    let view = crate::agents::codex::plan::view(plan, k);
    for (offset, entry) in view.slice(prev_len..).iter().take(expected).enumerate() {
        if let Origin::Synthetic { .. } = entry.origin {
            return Some(format!(
                "normalization inserted a synthetic output at input item {}",
                prev_len + offset
            ));
        }
    }
    None
}

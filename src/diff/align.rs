//! Which steps of A and B are compared: aligned turns, or a fork's first request against its
//! parent's last before the fork point.

use crate::AgentSession;

/// Align steps: by the agent's step keys where both sessions have them (Claude Code's response
/// ids: a resume's or a fork's copy of a request is the same request), else by turn id where
/// both rollouts have them, else by turn and step number.
pub fn align<S: AgentSession>(a: &S, b: &S) -> Vec<(usize, usize)> {
    if let Some(pairs) = align_by_key(a, b) {
        return pairs;
    }
    let a_turns = a.turns();
    let b_turns = b.turns();
    let by_id = !a_turns.is_empty()
        && a_turns.iter().all(|t| t.turn_id.is_some())
        && b_turns.iter().all(|t| t.turn_id.is_some());
    // The k-th turn with an id pairs with the k-th turn with that id in B, so a file that
    // repeats a turn id still aligns one to one.
    let mut b_by_id: std::collections::HashMap<&str, std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (index, turn) in b_turns.iter().enumerate() {
        if let Some(id) = turn.turn_id.as_deref() {
            b_by_id.entry(id).or_default().push_back(index);
        }
    }
    let mut pairs = Vec::new();
    for (index, turn) in a_turns.iter().enumerate() {
        let other = if by_id {
            turn.turn_id
                .as_deref()
                .and_then(|id| b_by_id.get_mut(id))
                .and_then(|queue| queue.pop_front())
                .map(|b| &b_turns[b])
        } else {
            b_turns.get(index)
        };
        if let Some(other) = other {
            pairs.extend(turn.steps.iter().copied().zip(other.steps.iter().copied()));
        }
    }
    pairs
}

/// When B is a fork of A (it names A's id as its parent): A's last step before the fork point
/// (the parent lines the fork took, or A's last step when its parent was not loaded).
pub(super) fn fork_point_step<S: AgentSession>(a: &S, b: &S) -> Option<usize> {
    let a_id = a.id()?;
    let parent = b.forked_from()?;
    // B's first request is held to A's: without one (a fork that never asked), nothing is.
    if a_id != parent || a.steps().is_empty() || b.steps().is_empty() {
        return None;
    }
    let last = a.steps().len() - 1;
    Some(match b.fork_parent_lines() {
        Some(parent_lines) => a
            .steps()
            .iter()
            .rposition(|s| s.line <= parent_lines)
            .unwrap_or(last),
        None => last,
    })
}

/// Steps paired by their keys, in A's order, when every step of both sessions has one.
fn align_by_key<S: AgentSession>(a: &S, b: &S) -> Option<Vec<(usize, usize)>> {
    fn keys<S: AgentSession>(s: &S) -> Option<Vec<&str>> {
        (0..s.steps().len()).map(|k| s.step_key(k)).collect()
    }
    let (ka, kb) = (keys(a)?, keys(b)?);
    if ka.is_empty() || kb.is_empty() {
        return None;
    }
    // The k-th step of a key in A pairs with the k-th of that key in B (a key repeated within a
    // file is another request each time).
    let mut b_by_key: std::collections::HashMap<&str, std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (index, key) in kb.iter().enumerate() {
        b_by_key.entry(key).or_default().push_back(index);
    }
    Some(
        ka.iter()
            .enumerate()
            .filter_map(|(index, key)| {
                let other = b_by_key.get_mut(key)?.pop_front()?;
                Some((index, other))
            })
            .collect(),
    )
}

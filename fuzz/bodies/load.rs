//! The body of the `load` fuzz target, also run over the fixtures as an ordinary test
//! (`tests/cli/fuzz_bodies.rs`): load and replay a rollout on `threads` threads, then normalize
//! its final history. Reading it in ranges and pieces gives what one piece on one thread gives.

use promptc::LoadOptions;
use promptc::agents::codex::session::Session;
use promptc::core::parallel::Threads;

/// The JSON of every model-view entry of the final history (`None`: the bytes do not load).
pub fn run(data: &[u8], threads: usize) -> Option<Vec<String>> {
    let options = LoadOptions {
        threads: Threads::new(threads),
        // Parts of a few lines: the split and join is fuzzed on small inputs too.
        min_part_bytes: 64,
        ..LoadOptions::default()
    };
    let whole = promptc::agents::codex::parse::load("fuzz", data, options);
    // Read in ranges side by side, in pieces of 128 bytes, is read by one thread in one piece:
    // the same rollout, or the same error.
    let one_piece = LoadOptions {
        threads: Threads::new(1),
        min_part_bytes: usize::MAX / 4,
        ..options
    };
    let reference = promptc::agents::codex::parse::load("fuzz", data, one_piece);
    assert!(
        format!("{whole:?}") == format!("{reference:?}"),
        "in ranges and in one piece"
    );
    let session = Session::new(whole.ok()?);
    let view = session.model_view(session.replay.history());
    // Every entry's JSON must be reachable.
    Some(
        view.entries
            .iter()
            .map(|entry| session.view_json(entry).to_string())
            .collect(),
    )
}

/// The threads a fuzz input is loaded on, 1 to 3, from its length: the parallel split and join
/// is fuzzed too, where an input is big enough to be split.
pub fn threads_for(data: &[u8]) -> usize {
    1 + data.len() / 7 % 3
}

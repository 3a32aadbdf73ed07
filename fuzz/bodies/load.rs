//! The body of the `load` fuzz target, also run over the fixtures as an ordinary test
//! (`tests/cli/fuzz_bodies.rs`): load and replay a rollout on `threads` threads, then normalize
//! its final history. Loading it as a file is read (`parse::load_at`) gives the same rollout.

use promptc::parallel::Threads;
use promptc::{LoadOptions, Session};

/// The JSON of every model-view entry of the final history (`None`: the bytes do not load).
pub fn run(data: &[u8], threads: usize) -> Option<Vec<String>> {
    let options = LoadOptions {
        threads: Threads::new(threads),
        // Parts of a few lines: the split and join is fuzzed on small inputs too.
        min_part_bytes: 64,
        ..LoadOptions::default()
    };
    let whole = promptc::parse::load("fuzz", data, options);
    // Read with positioned reads, as a file is (ranges side by side, pieces of 128 bytes): the
    // same rollout, or the same error.
    let read_at = |offset: u64, buffer: &mut [u8]| {
        let start = usize::try_from(offset).map_or(data.len(), |o| o.min(data.len()));
        let read = buffer.len().min(data.len() - start);
        buffer[..read].copy_from_slice(&data[start..start + read]);
        Ok(read)
    };
    let ranged = promptc::parse::load_at("fuzz", data.len() as u64, &read_at, options);
    assert_eq!(
        format!("{ranged:?}"),
        format!("{whole:?}"),
        "read in ranges"
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

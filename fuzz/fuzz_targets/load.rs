//! Throughput target: load and replay a rollout, then normalize its final history.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(session) =
        promptc::Session::load("fuzz", data.to_vec(), promptc::LoadOptions::default())
    else {
        return;
    };
    let view = session.model_view(session.replay.history());
    for entry in &view.entries {
        // Every entry's JSON must be reachable.
        let _ = session.view_json(entry);
    }
});

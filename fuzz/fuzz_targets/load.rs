//! Throughput target: load and replay a rollout, then normalize its final history (the body is
//! `fuzz/bodies/load.rs`, shared with the tests).
#![no_main]

#[path = "../bodies/load.rs"]
mod load;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = load::run(data, load::threads_for(data));
});

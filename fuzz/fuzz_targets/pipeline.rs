//! The whole pipeline on arbitrary bytes (the body, and the invariants it checks, are in
//! `fuzz/bodies/pipeline.rs`, shared with the tests), on 1 to 3 threads.
#![no_main]

#[allow(dead_code, reason = "only its thread choice")]
#[path = "../bodies/load.rs"]
mod load;
#[path = "../bodies/pipeline.rs"]
mod pipeline;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = pipeline::run(data, load::threads_for(data));
});

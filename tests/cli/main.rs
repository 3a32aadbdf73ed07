//! End-to-end tests of the `promptc` binary: one integration test binary, one module per area.

mod check;
mod claude;
mod codex_models;
mod color;
mod compile;
mod completions;
mod conformance;
mod diff;
mod errors;
mod fingerprint;
mod fork;
mod fuzz_bodies;
mod hostile;
mod install;
mod interrupted;
mod page;
mod readme;
mod real_samples;
mod report;
mod resumes;
mod sessions;
mod steps;
mod support;
mod version;
mod view;
mod watch;

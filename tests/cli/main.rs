//! End-to-end tests of the `promptc` binary: one integration test binary, one module per area.

mod completions;
mod sessions;
mod support;

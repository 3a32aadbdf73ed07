//! End-to-end tests of the `promptc` binary.

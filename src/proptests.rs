//! Tests (being written).

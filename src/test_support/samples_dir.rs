//! The one rule for every test that reads the real samples beside the repository, and what CI
//! changes in tests, shared by the library's unit tests and the CLI tests (each includes this
//! file).

use std::path::{Path, PathBuf};

/// `../shared/codex-rollout-samples` beside the repository at `root`, when present. When it is
/// absent the test skips with a message on stderr, except under CI (`CI=true`, which
/// `.ci/run`'s caller sets): there a test that needs the samples must fail, not pass having
/// checked nothing, so this panics naming the missing folder.
#[allow(clippy::print_stderr, reason = "a skipped test says why")]
pub fn samples_dir(root: &Path) -> Option<PathBuf> {
    let dir = root.join("../shared/codex-rollout-samples");
    if dir.is_dir() {
        return Some(dir);
    }
    if under_ci() {
        panic!(
            "{} is missing: under CI=true the tests that read the real samples fail without \
             ../shared/codex-rollout-samples beside the repository",
            dir.display()
        );
    }
    eprintln!(
        "skipped: {} is not present (../shared/codex-rollout-samples)",
        dir.display()
    );
    None
}

/// Whether the tests run under CI (`CI=true`): there a test fails where it would otherwise skip
/// or fix something up.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

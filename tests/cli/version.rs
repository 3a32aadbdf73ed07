//! `promptc --version` says the package version and, for a build from a git checkout, the
//! commit; `-V` says the version alone.

use crate::support::{root, run, skip};

fn stdout(args: &[&str]) -> String {
    let output = run(args);
    assert_eq!(output.status.code(), Some(0), "promptc {args:?}");
    assert!(output.stderr.is_empty(), "promptc {args:?} wrote to stderr");
    String::from_utf8(output.stdout).expect("UTF-8 version")
}

/// `git ARGS` in the package's directory; `None` without git or outside a checkout.
fn git(args: &[&str]) -> Option<String> {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(root())
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    output.status.success().then(|| text.trim_end().to_string())
}

#[test]
fn short_version_is_the_package_version() {
    assert_eq!(
        stdout(&["-V"]),
        format!("promptc {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn long_version_names_the_commit_of_a_git_checkout() {
    let version = stdout(&["--version"]);
    let plain = format!("promptc {}", env!("CARGO_PKG_VERSION"));
    let top = git(&["rev-parse", "--show-toplevel"]);
    let is_checkout = top
        .is_some_and(|top| std::fs::canonicalize(top).ok() == std::fs::canonicalize(root()).ok());
    if !is_checkout {
        assert_eq!(version, format!("{plain}\n"), "no checkout, no commit");
        skip("not built from a git checkout: --version names no commit");
        return;
    }
    let head = git(&["rev-parse", "HEAD"]).expect("a checkout has a HEAD");
    let date = git(&["show", "-s", "--date=short", "--format=%cd", "HEAD"]).expect("HEAD's date");
    let commit = version
        .strip_prefix(&format!("{plain} ("))
        .and_then(|rest| rest.strip_suffix(")\n"))
        .unwrap_or_else(|| panic!("`{plain} (<commit> <date>)`, not {version:?}"));
    let (hash, shown_date) = commit.split_once(' ').expect("a hash and a date");
    assert!(
        hash.len() >= 12 && head.starts_with(hash),
        "{hash} is not an abbreviation of HEAD {head}"
    );
    assert_eq!(shown_date, date, "HEAD's commit date");
}

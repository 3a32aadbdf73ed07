//! README.md's "Install" section. Its offline commands run: the block of `promptc` and `mkdir -p`
//! lines (the version, the completion scripts and the man page, written where the README says)
//! runs under `sh` with a fresh `$HOME`, and what it writes must be the files committed under
//! `completions/`, which the release archives ship. Not run: `cargo install` (the registry, or a
//! release build of minutes) and the archive commands (no release is published yet); for those
//! the test checks the crate name and the archive names against Cargo.toml and dist's config.

use std::path::Path;
use std::process::Command;

use crate::support::root;

fn install_section() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md exists");
    let start = readme.find("\n## Install\n").expect("an Install section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_string()
}

/// The section's ```sh blocks, each as its lines.
fn sh_blocks(section: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in section.lines() {
        match (&mut current, line) {
            (None, "```sh") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), line) => block.push(line),
            (None, _) => {}
        }
    }
    blocks
}

fn is_offline(line: &str) -> bool {
    line.starts_with('#') || line.starts_with("promptc ") || line.starts_with("mkdir -p ")
}

#[test]
fn install_section_offline_commands_write_the_committed_files() {
    let section = install_section();
    let blocks = sh_blocks(&section);
    let offline: Vec<&Vec<&str>> = blocks
        .iter()
        .filter(|b| b.iter().all(|l| is_offline(l)))
        .collect();
    assert_eq!(offline.len(), 1, "one block of offline commands");
    let script = offline[0].join("\n");

    let home = tempfile::tempdir().expect("a temporary HOME");
    let bin = Path::new(env!("CARGO_BIN_EXE_promptc"))
        .parent()
        .expect("the binary's directory");
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("a PATH");
    let output = Command::new("sh")
        .args(["-eu", "-c", &script])
        .env("HOME", home.path())
        .env("PATH", path)
        .current_dir(home.path())
        .output()
        .expect("sh runs");
    assert!(
        output.status.success(),
        "the README's install commands failed:\n{script}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let version = String::from_utf8_lossy(&output.stdout);
    assert!(
        version.starts_with(&format!("promptc {}", env!("CARGO_PKG_VERSION"))),
        "`promptc --version` runs first: {version}"
    );

    // Every `promptc … > FILE` wrote FILE, byte for byte a file of completions/.
    let committed: Vec<Vec<u8>> = std::fs::read_dir(root().join("completions"))
        .expect("completions/")
        .map(|entry| std::fs::read(entry.expect("an entry").path()).expect("readable"))
        .collect();
    let mut written = 0;
    for line in offline[0].iter().filter(|l| l.starts_with("promptc ")) {
        let Some((_, target)) = line.split_once(" > ") else {
            continue;
        };
        let file = home
            .path()
            .join(target.strip_prefix("~/").expect("a path under ~"));
        let bytes = std::fs::read(&file).unwrap_or_else(|_| panic!("`{line}` wrote no file"));
        assert!(
            committed.contains(&bytes),
            "`{line}` wrote what completions/ does not hold"
        );
        written += 1;
    }
    // bash, zsh, fish and the man page; PowerShell and elvish are lines for a profile.
    assert_eq!(written, 4, "{script}");
    for shell in ["powershell", "elvish"] {
        assert!(
            section.contains(&format!("promptc completions {shell}")),
            "the section says where {shell}'s completions go"
        );
    }
}

#[test]
fn install_section_names_the_published_crate_and_the_release_archives() {
    let section = install_section();
    assert!(
        section.contains(&format!(
            "cargo install {} --locked",
            env!("CARGO_PKG_NAME")
        )),
        "crates.io: `cargo install {} --locked`",
        env!("CARGO_PKG_NAME")
    );
    assert!(section.contains("cargo install --path . --locked"));
    // Every target dist builds is named, and the archive commands use dist's archive names.
    let dist = std::fs::read_to_string(root().join("dist-workspace.toml"));
    let Ok(dist) = dist else {
        // The crates.io package has no release config; the repository does.
        crate::support::skip("dist-workspace.toml is not here (the packaged crate)");
        return;
    };
    let targets: Vec<&str> = dist
        .split("targets = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("dist's targets")
        .split('"')
        .skip(1)
        .step_by(2)
        .collect();
    assert_eq!(targets.len(), 7, "{targets:?}");
    for target in &targets {
        assert!(section.contains(target), "the section names {target}");
    }
    for block in sh_blocks(&section) {
        for line in block.iter().filter(|l| l.contains(".tar.xz")) {
            assert!(
                targets
                    .iter()
                    .any(|t| line.contains(&format!("{}-{t}.tar.xz", env!("CARGO_PKG_NAME")))),
                "an archive name dist makes: {line}"
            );
        }
    }
}

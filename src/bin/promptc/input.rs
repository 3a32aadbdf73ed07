//! Reading a ROLLOUT argument: a path, or `-` for stdin.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, bail};

/// Read the whole input. Errors name the file.
pub fn read(argument: &str) -> anyhow::Result<Vec<u8>> {
    if argument == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
        return Ok(bytes);
    }
    let path = Path::new(argument);
    if path.is_dir() {
        bail!("{argument}: is a directory, not a rollout file");
    }
    std::fs::read(path).with_context(|| format!("{argument}: cannot read"))
}

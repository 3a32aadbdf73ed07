//! Reading a ROLLOUT argument: a path, `-` for standard input, `latest`, or a session id (or a
//! unique prefix of one) looked up under the Codex home and the Claude Code home
//! ([`crate::homes`]). Zstandard-compressed input (found by its magic bytes, whatever the name)
//! is decompressed. Also the walk of the Codex home that `promptc sessions` lists.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

use crate::env;
use promptc::LoadOptions;

use promptc::agents::codex::discover::{
    RolloutName, id_matches, is_id_query, newest_first, parse_file_name,
};

/// Zstandard frame magic number, little-endian 0xFD2FB528.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Skippable frames: magic numbers 0x184D2A50 to 0x184D2A5F.
const SKIPPABLE_MAGIC_TAIL: [u8; 3] = [0x2a, 0x4d, 0x18];

/// The ROLLOUT argument that names the newest rollout.
pub const LATEST: &str = "latest";

/// Candidates listed in an ambiguous-prefix error.
const MAX_CANDIDATES_SHOWN: usize = 10;

/// Load the ROLLOUT argument, resolved (and decompressed), named in messages by the argument
/// itself or the path it resolved to. A file is read by the library's threads with positioned
/// reads, a piece at a time, never held whole and never mapped: a file truncated or rewritten
/// while promptc reads it gives the lines read, where a map's missing pages would end the
/// process with SIGBUS. Standard input, a pipe and zstd data are read whole first.
pub fn load(
    argument: &str,
    options: LoadOptions,
) -> anyhow::Result<promptc::agents::codex::model::Rollout> {
    if argument == "-" {
        let stdin = std::io::stdin().lock();
        return load_whole(argument, stdin, options, || {
            "cannot read standard input".into()
        });
    }
    let path = resolve(argument)?;
    let name = if path.as_os_str() == argument {
        argument.to_string()
    } else {
        path.display().to_string()
    };
    if path.is_dir() {
        bail!("{name}: is a directory, not a rollout file");
    }
    let cannot_read = || format!("{name}: cannot read");
    let file = std::fs::File::open(&path).with_context(cannot_read)?;
    let metadata = file.metadata().with_context(cannot_read)?;
    let mut magic = [0; ZSTD_MAGIC.len()];
    if !metadata.is_file() || read_at(&file, 0, &mut magic).is_err() || is_zstd(&magic) {
        // No positioned reads (a pipe, a device), or data to decompress first.
        return load_whole(&name, file, options, cannot_read);
    }
    let read = |offset: u64, buffer: &mut [u8]| read_at(&file, offset, buffer);
    Ok(promptc::agents::codex::parse::load_at(
        &name,
        metadata.len(),
        &read,
        options,
    )?)
}

/// Read all of `reader`, decompress it if it is zstd data, and load it; `cannot_read` names
/// what failed to read.
fn load_whole(
    name: &str,
    mut reader: impl Read,
    options: LoadOptions,
    cannot_read: impl Fn() -> String,
) -> anyhow::Result<promptc::agents::codex::model::Rollout> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).with_context(&cannot_read)?;
    let bytes = decompress_if_zstd(bytes).with_context(&cannot_read)?;
    Ok(promptc::agents::codex::parse::load(name, &bytes, options)?)
}

/// The bytes of a ROLLOUT argument that must be read whole before its agent can be told by its
/// lines: standard input, and zstd data (decompressed); `None` for a plain file, which is read
/// in pieces.
pub fn read_whole(argument: &str) -> anyhow::Result<Option<(String, Vec<u8>)>> {
    let (name, bytes) = if argument == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
        (argument.to_string(), bytes)
    } else {
        let path = resolve(argument)?;
        let Ok(file) = std::fs::File::open(&path) else {
            return Ok(None);
        };
        let mut magic = [0; ZSTD_MAGIC.len()];
        if !file.metadata().is_ok_and(|m| m.is_file())
            || read_at(&file, 0, &mut magic).is_err()
            || !is_zstd(&magic)
        {
            return Ok(None);
        }
        let name = path.display().to_string();
        let mut bytes = Vec::new();
        (&file)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{name}: cannot read"))?;
        (name, bytes)
    };
    let bytes = decompress_if_zstd(bytes).with_context(|| format!("{name}: cannot read"))?;
    Ok(Some((name, bytes)))
}

/// Load a Codex rollout read whole already.
pub fn load_bytes(
    name: &str,
    bytes: &[u8],
    options: LoadOptions,
) -> anyhow::Result<promptc::agents::codex::model::Rollout> {
    Ok(promptc::agents::codex::parse::load(name, bytes, options)?)
}

/// One positioned read (again when interrupted): the file's offset is left alone, so threads
/// can read one file at once.
fn read_at(file: &std::fs::File, offset: u64, buffer: &mut [u8]) -> std::io::Result<usize> {
    #[cfg(unix)]
    use std::os::unix::fs::FileExt;
    #[cfg(windows)]
    use std::os::windows::fs::FileExt;
    loop {
        #[cfg(unix)]
        let result = file.read_at(buffer, offset);
        #[cfg(windows)]
        let result = file.seek_read(buffer, offset);
        match result {
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            result => return result,
        }
    }
}

/// Turn a ROLLOUT argument into a path. An existing path always wins; then `latest` (the
/// session that started last, under the Codex home or the Claude Code home), then a session id
/// or a unique prefix of one, of either agent. Anything else is returned as a path, for the read
/// to report.
pub fn resolve(argument: &str) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(argument);
    if path.exists() || (argument != LATEST && !is_id_query(argument)) {
        return Ok(path);
    }
    // Without a Claude Code home, as before there was one to look in.
    let claude = crate::homes::claude_home()
        .ok()
        .filter(|h| h.join(crate::homes::PROJECTS).is_dir());
    let Some(claude) = claude else {
        return resolve_in(argument, None);
    };
    let codex = codex_home().ok();
    resolve_in_homes(argument, codex.as_deref(), Some(&claude), true)
}

/// `latest` or a session id (or a unique prefix of one) under the homes given, of either agent;
/// any other argument as a path. `archived`: `latest` may be an archived rollout.
pub fn resolve_in_homes(
    argument: &str,
    codex: Option<&Path>,
    claude: Option<&Path>,
    archived: bool,
) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(argument);
    if path.exists() || (argument != LATEST && !is_id_query(argument)) {
        return Ok(path);
    }
    let places = match (codex, claude) {
        (Some(home), Some(claude)) => format!(
            "{} or {}",
            sessions_dirs(home),
            crate::homes::projects_dir(claude)
        ),
        (Some(home), None) => sessions_dirs(home),
        (None, Some(claude)) => crate::homes::projects_dir(claude),
        (None, None) => bail!("{argument}: no such file, and no home to look it up"),
    };
    if argument == LATEST {
        return newest_session(codex, claude, archived)?
            .ok_or_else(|| anyhow!("{argument}: no such file, and no sessions under {places}"));
    }
    let mut matches: Vec<(String, PathBuf)> = Vec::new();
    if let Some(home) = codex {
        matches.extend(find_rollouts(home)?.into_iter().filter_map(|r| {
            let id = r.name?.id;
            id_matches(argument, &id).then_some((id, r.path))
        }));
    }
    if let Some(claude) = claude {
        matches.extend(
            crate::homes::main_files(claude)?
                .into_iter()
                .filter(|s| id_matches(argument, &s.id))
                .map(|s| (s.id, s.path)),
        );
    }
    match matches.len() {
        0 => bail!("{argument}: no such file, and no session id under {places} starts with it"),
        1 => Ok(matches.remove(0).1),
        _ => Err(crate::homes::ambiguous(argument, &matches)),
    }
}

/// The session that started last under the homes given: Codex's newest rollout by its file
/// name's time (an archived one too when `archived`), or Claude Code's newest session by its
/// first line's time, made local as Codex's names are; `None` when there is none.
pub fn newest_session(
    codex: Option<&Path>,
    claude: Option<&Path>,
    archived: bool,
) -> anyhow::Result<Option<PathBuf>> {
    let codex_newest = match codex {
        Some(home) => find_rollouts(home)?
            .into_iter()
            .find(|r| archived || !r.archived)
            .map(|r| (r.name.map(|n| n.timestamp), r.path)),
        None => None,
    };
    let claude_newest = match claude {
        Some(home) => crate::homes::main_files(home)?
            .into_iter()
            .filter_map(|s| Some((crate::homes::started(&s.path)?, s.path)))
            .max(),
        None => None,
    };
    Ok(match (codex_newest, claude_newest) {
        (Some((time, path)), Some((claude_time, claude_path))) => {
            Some(if time.is_some_and(|t| t >= claude_time) {
                path
            } else {
                claude_path
            })
        }
        (Some((_, path)), None) | (None, Some((_, path))) => Some(path),
        (None, None) => None,
    })
}

/// [`resolve`] in the Codex home alone: `home` when given, else [`codex_home`].
pub fn resolve_in(argument: &str, home: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(argument);
    if path.exists() || (argument != LATEST && !is_id_query(argument)) {
        return Ok(path);
    }
    let home = match home {
        Some(home) => home.to_path_buf(),
        None => codex_home().with_context(|| {
            format!("{argument}: no such file, and no Codex home to look it up")
        })?,
    };
    let rollouts = find_rollouts(&home)?;
    if argument == LATEST {
        return rollouts.into_iter().next().map(|r| r.path).ok_or_else(|| {
            anyhow!(
                "{argument}: no such file, and no rollouts under {}",
                sessions_dirs(&home)
            )
        });
    }
    let mut matches: Vec<Rollout> = rollouts
        .into_iter()
        .filter(|r| r.name.as_ref().is_some_and(|n| id_matches(argument, &n.id)))
        .collect();
    match matches.len() {
        0 => bail!(
            "{argument}: no such file, and no session id under {} starts with it",
            sessions_dirs(&home)
        ),
        1 => Ok(matches.remove(0).path),
        n => {
            let items = matches.iter().map(|rollout| {
                let id = rollout.name.as_ref().map_or("", |n| n.id.as_str());
                format!("{id}  {}", rollout.path.display())
            });
            Err(crate::exit::Listed::capped(
                format!("{argument}: ambiguous session id: {n} rollouts match:"),
                items,
                n,
                MAX_CANDIDATES_SHOWN,
            )
            .into())
        }
    }
}

fn sessions_dirs(home: &Path) -> String {
    format!(
        "{} or {}",
        home.join(SESSIONS).display(),
        home.join(ARCHIVED).display()
    )
}

/// `$CODEX_HOME`, else `$HOME/.codex`.
pub fn codex_home() -> anyhow::Result<PathBuf> {
    crate::homes::agent_home(env::CODEX_HOME, ".codex", "Codex")
}

/// Where Codex writes rollouts, nested `YYYY/MM/DD`.
const SESSIONS: &str = "sessions";
/// Where Codex moves archived rollouts, flat.
const ARCHIVED: &str = "archived_sessions";

/// A rollout file found under the Codex home.
#[derive(Debug)]
pub struct Rollout {
    pub path: PathBuf,
    /// What its name says, when it is of Codex's form.
    pub name: Option<RolloutName>,
    /// Found in `archived_sessions`.
    pub archived: bool,
}

/// Every `rollout-*.jsonl[.zst]` under `HOME/sessions/**` and `HOME/archived_sessions/`, newest
/// first. A missing directory holds no rollouts.
pub fn find_rollouts(home: &Path) -> anyhow::Result<Vec<Rollout>> {
    let mut found = Vec::new();
    for (dir, recurse, archived) in [(SESSIONS, true, false), (ARCHIVED, false, true)] {
        crate::homes::walk_files(&home.join(dir), recurse, &mut |entry, kind| {
            let path = entry.path();
            let file_name = entry.file_name();
            let Some(file_name) = file_name.to_str() else {
                return Ok(());
            };
            if !promptc::agents::codex::discover::is_rollout_file_name(file_name)
                || (kind.is_symlink() && !path.is_file())
            {
                return Ok(());
            }
            found.push(Rollout {
                name: parse_file_name(file_name),
                path,
                archived,
            });
            Ok(())
        })?;
    }
    found.sort_by(|a, b| {
        newest_first(
            (a.name.as_ref(), a.path.as_path()),
            (b.name.as_ref(), b.path.as_path()),
        )
    });
    Ok(found)
}

/// True when the bytes start with a zstd frame.
pub fn is_zstd(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZSTD_MAGIC)
}

/// Decompress when the bytes start with a zstd frame; otherwise return them as they are.
pub fn decompress_if_zstd(bytes: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    if is_zstd(&bytes) {
        decompress(&bytes)
    } else {
        Ok(bytes)
    }
}

/// Decompress every frame of zstd data (skippable frames are skipped), checking checksums.
pub fn decompress(mut input: &[u8]) -> anyhow::Result<Vec<u8>> {
    let invalid = |e: FrameDecoderError| anyhow!("invalid zstd data: {e}");
    let mut decoder = FrameDecoder::new();
    let mut output = Vec::with_capacity(input.len().saturating_mul(4));
    while !input.is_empty() {
        if input.len() >= 8 && input[1..4] == SKIPPABLE_MAGIC_TAIL && input[0] & 0xf0 == 0x50 {
            let length = u32::from_le_bytes([input[4], input[5], input[6], input[7]]) as usize;
            input = input
                .get(8 + length..)
                .ok_or_else(|| anyhow!("invalid zstd data: truncated skippable frame"))?;
            continue;
        }
        match decoder.init(&mut input) {
            Ok(()) => {}
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => {
                input = input
                    .get(length as usize..)
                    .ok_or_else(|| anyhow!("invalid zstd data: truncated skippable frame"))?;
                continue;
            }
            Err(e) => return Err(invalid(e)),
        }
        while !decoder.is_finished() {
            let before = input.len();
            decoder
                .decode_blocks(&mut input, BlockDecodingStrategy::UptoBytes(1 << 20))
                .map_err(invalid)?;
            decoder
                .collect_to_writer(&mut output)
                .context("invalid zstd data")?;
            if input.len() == before && !decoder.is_finished() {
                bail!("invalid zstd data: truncated frame");
            }
        }
        decoder
            .collect_to_writer(&mut output)
            .context("invalid zstd data")?;
        if let (Some(stored), Some(computed)) = (
            decoder.get_checksum_from_data(),
            decoder.get_calculated_checksum(),
        ) && stored != computed
        {
            bail!("invalid zstd data: checksum mismatch");
        }
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};

    fn compress(bytes: &[u8]) -> Vec<u8> {
        compress_to_vec(bytes, CompressionLevel::Fastest)
    }

    #[test]
    fn decompresses_frames_and_skips_skippable_ones() {
        let text = b"{\"a\":1}\n".repeat(1000);
        let mut data = compress(&text);
        assert_eq!(&*decompress_if_zstd(data.clone()).unwrap(), text);
        // A skippable frame, then a second frame: the outputs concatenate.
        data.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
        data.extend(compress(b"tail\n"));
        let mut expected = text.clone();
        expected.extend_from_slice(b"tail\n");
        assert_eq!(decompress(&data).unwrap(), expected);
    }

    #[test]
    fn plain_bytes_pass_through() {
        assert_eq!(&*decompress_if_zstd(b"{}\n".to_vec()).unwrap(), b"{}\n");
    }

    #[test]
    fn truncated_or_corrupt_data_is_an_error() {
        let data = compress(&b"{\"a\":1}\n".repeat(1000));
        for cut in [4, 6, data.len() / 2, data.len() - 1] {
            let error = decompress(&data[..cut]).unwrap_err();
            assert!(error.to_string().contains("zstd"), "{cut}: {error}");
        }
        let mut header_only = ZSTD_MAGIC.to_vec();
        header_only.extend_from_slice(&[0xff; 3]);
        assert!(decompress(&header_only).is_err());
    }
}

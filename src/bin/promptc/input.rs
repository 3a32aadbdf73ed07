//! Reading a ROLLOUT argument: a path, `-` for standard input, `latest`, or a session id (or a
//! unique prefix of one) looked up under the Codex home. Zstandard-compressed input (found by
//! its magic bytes, whatever the name) is decompressed. Also the walk of the Codex home that
//! `promptc sessions` lists.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

use crate::env;
use promptc::Bytes;
use promptc::discover::{RolloutName, id_matches, is_id_query, newest_first, parse_file_name};

/// Zstandard frame magic number, little-endian 0xFD2FB528.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Skippable frames: magic numbers 0x184D2A50 to 0x184D2A5F.
const SKIPPABLE_MAGIC_TAIL: [u8; 3] = [0x2a, 0x4d, 0x18];

/// The ROLLOUT argument that names the newest rollout.
pub const LATEST: &str = "latest";

/// Candidates listed in an ambiguous-prefix error.
const MAX_CANDIDATES_SHOWN: usize = 10;

/// A read input: how to name it in messages, and its (decompressed) bytes.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    pub bytes: Bytes,
}

/// Read the whole input, resolved and decompressed, with the name to use in messages: the
/// argument itself, or the path it resolved to.
pub fn read(argument: &str) -> anyhow::Result<Input> {
    if argument == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
        let bytes = decompress_if_zstd(bytes.into()).context("cannot read standard input")?;
        return Ok(Input {
            name: argument.to_string(),
            bytes,
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
    let bytes = read_file(&path).with_context(|| format!("{name}: cannot read"))?;
    let bytes = decompress_if_zstd(bytes.into()).with_context(|| format!("{name}: cannot read"))?;
    Ok(Input { name, bytes })
}

/// Files at least this big are read by one thread per core: copying a file out of the page
/// cache into fresh memory is mostly the kernel zeroing and mapping the new pages (a third of
/// `fingerprint`'s time on a 100 MB rollout, on one thread), and that work splits.
const BIG_FILE_BYTES: u64 = 8 << 20;

/// Read a whole file into memory. Never mapped: a file truncated or rewritten while promptc
/// reads it gives the bytes read (or an error), where a map's missing pages would end the
/// process with SIGBUS. The buffer is sized from the file's length, so the file is held once.
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    #[cfg(unix)]
    if let Some(bytes) = read_big_file_in_parts(path)? {
        return Ok(bytes);
    }
    std::fs::read(path)
}

/// A regular file of [`BIG_FILE_BYTES`] or more, read with one thread per core, then anything
/// appended meanwhile. `None` for other files, one core, or a file that shrank while it was
/// read (the caller reads it again as it is now).
#[cfg(unix)]
fn read_big_file_in_parts(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let mut file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    let threads = crate::commands::threads().count;
    if !metadata.is_file() || metadata.len() < BIG_FILE_BYTES || threads < 2 {
        return Ok(None);
    }
    let len =
        usize::try_from(metadata.len()).map_err(|_| std::io::Error::other("file too large"))?;
    match read_in_parts(&file, len, threads) {
        Ok(mut bytes) => {
            // A live session may have grown since its length was taken. (Positioned reads
            // leave the file's offset where it was.)
            use std::io::{Seek, SeekFrom};
            file.seek(SeekFrom::Start(bytes.len() as u64))?;
            file.read_to_end(&mut bytes)?;
            Ok(Some(bytes))
        }
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(err) => Err(err),
    }
}

/// The first `len` bytes of `file`, in `threads` parts each read by its own thread.
#[cfg(unix)]
fn read_in_parts(file: &std::fs::File, len: usize, threads: usize) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    // A size the memory cannot hold is an error to report, not the abort of `vec!`. The
    // zeroed buffer's pages are mapped when the reads first touch them, on the reading threads.
    Vec::<u8>::new().try_reserve_exact(len)?;
    let mut bytes = vec![0u8; len];
    let part_len = len.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let reads: Vec<_> = bytes
            .chunks_mut(part_len)
            .enumerate()
            .map(|(k, part)| scope.spawn(move || file.read_exact_at(part, (k * part_len) as u64)))
            .collect();
        reads.into_iter().try_for_each(|read| {
            read.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    })?;
    Ok(bytes)
}

/// Turn a ROLLOUT argument into a path. An existing path always wins; then `latest` (the newest
/// rollout under the Codex home), then a session id or a unique prefix of one. Anything else is
/// returned as a path, for the read to report.
pub fn resolve(argument: &str) -> anyhow::Result<PathBuf> {
    resolve_in(argument, None)
}

/// [`resolve`] in `home` when given, else in [`codex_home`].
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
            let mut message = format!("{argument}: ambiguous session id: {n} rollouts match:");
            for rollout in matches.iter().take(MAX_CANDIDATES_SHOWN) {
                let id = rollout.name.as_ref().map_or("", |n| n.id.as_str());
                message.push_str(&format!("\n  {id}  {}", rollout.path.display()));
            }
            if n > MAX_CANDIDATES_SHOWN {
                message.push_str(&format!("\n  … and {} more", n - MAX_CANDIDATES_SHOWN));
            }
            Err(anyhow!(message))
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
    if let Some(home) = env::var(env::CODEX_HOME).filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    match env::var(env::HOME).filter(|h| !h.is_empty()) {
        Some(home) => Ok(Path::new(&home).join(".codex")),
        None => bail!(
            "cannot find the Codex home: set {} (or {})",
            env::CODEX_HOME,
            env::HOME
        ),
    }
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
    walk(&home.join(SESSIONS), true, false, &mut found)?;
    walk(&home.join(ARCHIVED), false, true, &mut found)?;
    found.sort_by(|a, b| {
        newest_first(
            (a.name.as_ref(), a.path.as_path()),
            (b.name.as_ref(), b.path.as_path()),
        )
    });
    Ok(found)
}

fn walk(dir: &Path, recurse: bool, archived: bool, found: &mut Vec<Rollout>) -> anyhow::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot list", dir.display())),
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("{}: cannot list", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("{}: cannot stat", path.display()))?;
        // Symbolic links to directories are not followed (no cycles); links to files are.
        if kind.is_dir() {
            if recurse {
                walk(&path, recurse, archived, found)?;
            }
            continue;
        }
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if !promptc::discover::is_rollout_file_name(file_name) {
            continue;
        }
        if kind.is_symlink() && !path.is_file() {
            continue;
        }
        found.push(Rollout {
            name: parse_file_name(file_name),
            path,
            archived,
        });
    }
    Ok(())
}

/// True when the bytes start with a zstd frame.
pub fn is_zstd(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZSTD_MAGIC)
}

/// Decompress when the bytes start with a zstd frame; otherwise return them as they are.
pub fn decompress_if_zstd(bytes: Bytes) -> anyhow::Result<Bytes> {
    if is_zstd(&bytes) {
        decompress(&bytes).map(Bytes::from)
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
        assert_eq!(&*decompress_if_zstd(data.clone().into()).unwrap(), text);
        // A skippable frame, then a second frame: the outputs concatenate.
        data.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
        data.extend(compress(b"tail\n"));
        let mut expected = text.clone();
        expected.extend_from_slice(b"tail\n");
        assert_eq!(decompress(&data).unwrap(), expected);
    }

    /// A file read in parts is read whole, on any number of threads; one shorter than the
    /// length asked for is reported, for the caller to read it again.
    #[cfg(unix)]
    #[test]
    fn a_file_read_in_parts_is_read_whole_and_a_shrunk_one_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        let text: Vec<u8> = (0..100_003u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &text).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        for threads in [1, 2, 3, 7] {
            assert_eq!(
                read_in_parts(&file, text.len(), threads).unwrap(),
                text,
                "{threads}"
            );
            let error = read_in_parts(&file, text.len() + 10, threads).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::UnexpectedEof, "{threads}");
        }
        assert!(read_in_parts(&file, 0, 2).unwrap().is_empty());
    }

    #[test]
    fn a_big_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let text = b"{\"a\":1}\n".repeat(BIG_FILE_BYTES as usize / 8 + 3);
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read_file(&path).unwrap(), text);
    }

    #[test]
    fn plain_bytes_pass_through() {
        assert_eq!(
            &*decompress_if_zstd(b"{}\n".to_vec().into()).unwrap(),
            b"{}\n"
        );
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

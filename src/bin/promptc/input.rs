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
/// argument itself, or the path it resolved to. `map`: map big files instead of reading them.
pub fn read(argument: &str, map: bool) -> anyhow::Result<Input> {
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
    let bytes = read_file(&path, map).with_context(|| format!("{name}: cannot read"))?;
    let bytes = decompress_if_zstd(bytes).with_context(|| format!("{name}: cannot read"))?;
    Ok(Input { name, bytes })
}

/// Files at least this big are mapped, or else read by several threads at once: on a 2-core
/// machine, copying 100 MB out of the page cache into fresh memory takes about 60 ms on one
/// thread, most of it the kernel giving the process zeroed pages.
const BIG_FILE_BYTES: u64 = 8 << 20;

/// Read a whole file, or map it when it is big and `map` allows.
fn read_file(path: &Path, map: bool) -> std::io::Result<Bytes> {
    let mut file = std::fs::File::open(path)?;
    if map && let Some(mapped) = map_big_file(&file)? {
        return Ok(mapped);
    }
    #[cfg(unix)]
    if let Some(bytes) = read_big_file_in_parts(&mut file)? {
        return Ok(bytes.into());
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes.into())
}

/// A memory map of a regular file of [`BIG_FILE_BYTES`] or more: its pages are the page
/// cache's, so nothing is copied or zeroed. `None` for other files or when mapping fails (the
/// caller reads the file instead).
fn map_big_file(file: &std::fs::File) -> std::io::Result<Option<Bytes>> {
    let metadata = file.metadata()?;
    if !metadata.is_file() || metadata.len() < BIG_FILE_BYTES {
        return Ok(None);
    }
    // SAFETY: sound only while no process rewrites the mapped bytes `[0, len)`: the library
    // holds them as `&[u8]` and `&str`, which Rust assumes immutable. Codex only appends to a
    // rollout, past the mapped length. A file truncated while mapped, or an I/O error behind
    // the map (a network filesystem, a failing disk), ends promptc with SIGBUS, as with
    // ripgrep's maps; the README says so, and `--no-mmap` reads instead.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(file) };
    Ok(map.ok().map(releasable))
}

/// The bytes of a map, which give back the pages the library has read.
#[cfg(unix)]
fn releasable(map: memmap2::Mmap) -> Bytes {
    let map = std::sync::Arc::new(map);
    let page = page_size();
    Bytes::with_release(SharedMap(map.clone()), move |range| {
        release_pages(&map, range, page)
    })
}

#[cfg(not(unix))]
fn releasable(map: memmap2::Mmap) -> Bytes {
    Bytes::new(map)
}

/// The system's page size; where it cannot be asked, 16 KiB (Apple's arm64 pages; rounding
/// to more than the real size only keeps a little more of the map).
#[cfg(unix)]
fn page_size() -> usize {
    #[cfg(target_os = "linux")]
    if let Ok(Some(size)) = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE) {
        return usize::try_from(size).unwrap_or(16 << 10).max(1);
    }
    16 << 10
}

/// A map shared between the bytes and their release.
#[cfg(unix)]
struct SharedMap(std::sync::Arc<memmap2::Mmap>);

#[cfg(unix)]
impl AsRef<[u8]> for SharedMap {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Give the whole pages (of `page` bytes) of `range` back to the page cache once the library
/// has read them: a mapped page counts in the process's memory until then, and the parse
/// touches every page once. Whatever reads the bytes again (printing an item, counting its
/// tokens) maps them again from the page cache. Only pages wholly inside `range` and the
/// map (which starts on a page): memmap2 rounds a range's start down to a page but does not
/// check where it ends.
#[cfg(unix)]
fn release_pages(map: &memmap2::Mmap, range: std::ops::Range<usize>, page: usize) {
    let start = range.start.next_multiple_of(page);
    let end = range.end.min(map.len()) / page * page;
    if start < end {
        // A release that fails keeps the pages: more memory, the same bytes.
        // SAFETY: MADV_DONTNEED on a read-only shared file map drops the process's mapping of
        // those pages, not their content: the next read maps the same page-cache pages (or
        // reads them from the file) again, so every `&[u8]` into the map reads the same.
        #[allow(unsafe_code)]
        let _ = unsafe {
            map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
        };
    }
}

/// A regular file of [`BIG_FILE_BYTES`] or more, read with one thread per core, then
/// anything appended meanwhile. `None` for other files, one core, or a file that shrank while
/// it was read (the caller reads it again as it is now).
#[cfg(unix)]
fn read_big_file_in_parts(file: &mut std::fs::File) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::{Seek, SeekFrom};
    let metadata = file.metadata()?;
    let threads = crate::commands::threads();
    if !metadata.is_file() || metadata.len() < BIG_FILE_BYTES || threads.count < 2 {
        return Ok(None);
    }
    match read_in_parts(file, metadata.len(), threads) {
        Ok(mut bytes) => {
            // A live session may have grown since its size was taken.
            file.seek(SeekFrom::Start(bytes.len() as u64))?;
            file.read_to_end(&mut bytes)?;
            Ok(Some(bytes))
        }
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(err) => Err(err),
    }
}

/// The first `len` bytes of `file`, each of `threads.count` parts read by its own thread.
#[cfg(unix)]
fn read_in_parts(
    file: &std::fs::File,
    len: u64,
    threads: promptc::parallel::Threads,
) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let len = usize::try_from(len).map_err(|_| std::io::Error::other("file too large"))?;
    // A size the memory cannot hold is an error to report, not the abort of `vec!`. The
    // reservation is then given back: `vec![0; len]` gets pages the kernel zeroes when the reads
    // first touch them, on the reading threads, where filling a reservation with zeros would
    // touch every page on this one first.
    Vec::<u8>::new().try_reserve_exact(len)?;
    let mut bytes = vec![0u8; len];
    let part_len = len.div_ceil(threads.count.max(1)).max(1);
    std::thread::scope(|scope| {
        let mut parts = bytes.chunks_mut(part_len).enumerate();
        let Some((_, first)) = parts.next() else {
            return Ok(());
        };
        let others: Vec<_> = parts
            .map(|(k, part)| {
                promptc::parallel::spawn(scope, threads, k, move || {
                    file.read_exact_at(part, (k * part_len) as u64)
                })
            })
            .collect();
        file.read_exact_at(first, 0)?;
        for handle in others {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        }
        Ok::<(), std::io::Error>(())
    })?;
    Ok(bytes)
}

/// Turn a ROLLOUT argument into a path. An existing path always wins; then `latest` (the newest
/// rollout under the Codex home), then a session id or a unique prefix of one. Anything else is
/// returned as a path, for the read to report.
pub fn resolve(argument: &str) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(argument);
    if path.exists() || (argument != LATEST && !is_id_query(argument)) {
        return Ok(path);
    }
    let home = codex_home()
        .with_context(|| format!("{argument}: no such file, and no Codex home to look it up"))?;
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

    #[cfg(unix)]
    #[test]
    fn a_file_read_in_parts_is_read_whole_and_a_shrunk_one_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        let text: Vec<u8> = (0..100_003u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &text).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // Helpers placed as promptc places them, so the placement is part of what is checked.
        let threads = |count| promptc::parallel::Threads {
            count,
            placement: crate::placement::placement(),
        };
        for count in [1, 2, 3, 7] {
            let len = text.len() as u64;
            assert_eq!(
                read_in_parts(&file, len, threads(count)).unwrap(),
                text,
                "{count}"
            );
            // The file is shorter than its size said: the read says so.
            let error = read_in_parts(&file, len + 10, threads(count)).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::UnexpectedEof, "{count}");
        }
        assert!(read_in_parts(&file, 0, threads(2)).unwrap().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_big_file_is_read_whole_with_what_was_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let text = b"{\"a\":1}\n".repeat(BIG_FILE_BYTES as usize / 8 + 3);
        std::fs::write(&path, &text).unwrap();
        for map in [false, true] {
            assert_eq!(&*read_file(&path, map).unwrap(), text, "map: {map}");
        }
    }

    /// The pages a release gives back read the same afterwards: the map is of the file, so
    /// they come back from the page cache, not as zeros. A range that holds no whole page
    /// releases nothing, and one past the map's end stops at it. On Linux, the map's resident
    /// size shows what was given back.
    #[cfg(unix)]
    #[test]
    fn released_pages_of_a_map_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let text: Vec<u8> = (0..BIG_FILE_BYTES as usize + 5_000)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&path, &text).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the test's own file, which nothing else writes.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        let page = page_size();
        let resident = || resident_kib(map.as_ptr());
        assert_eq!(&map[..], text);
        let whole = resident();
        #[cfg(target_os = "linux")]
        assert!(whole.is_some(), "the map is in /proc/self/smaps");
        // Less than a page, then a page's worth that straddles two pages: nothing to give back.
        release_pages(&map, 10..page - 10, page);
        release_pages(&map, page + 1..2 * page + 1, page);
        assert_eq!(resident(), whole);
        assert!(map[..] == text[..]);
        // Past the end: everything but the last, partial page.
        release_pages(&map, 100..text.len() + (1 << 20), page);
        if let (Some(before), Some(after)) = (whole, resident()) {
            assert!(before >= 8 << 10, "{before} KiB resident");
            assert!(after <= 2 * page as u64 / 1024, "{after} KiB resident");
        }
        assert!(map[..] == text[..], "the released pages read the same");
        assert_eq!(&*read_file(&path, true).unwrap(), text);
    }

    /// Resident KiB of the mapping that starts at `start`, where `/proc/self/smaps` says.
    #[cfg(unix)]
    fn resident_kib(start: *const u8) -> Option<u64> {
        let smaps = format!("\n{}", std::fs::read_to_string("/proc/self/smaps").ok()?);
        let header = format!("\n{:x}-", start as usize);
        let block = smaps.split_once(&header)?.1;
        block
            .lines()
            .find_map(|line| line.strip_prefix("Rss:"))?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
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

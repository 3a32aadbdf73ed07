//! Writes the o200k tables that `src/core/tokens/o200k.rs` counts with, in a form the binary uses in
//! place: loading `bpe_openai`'s own tables at run time cost ~50 ms and ~70 MB per process.
//!
//! The vocabulary comes from `bpe_openai` (a build dependency); what is derived from it (the
//! longest-prefix trie, each token's next shorter prefix, the merge table) is derived as
//! `bpe::BytePairEncoding::from_dictionary` (bpe 0.2.3) derives it, so counts stay equal to
//! `bpe_openai::o200k_base().count`. The tests in `src/core/tokens/tests.rs` hold them equal.
//!
//! It also writes the character classes that `src/core/tokens/pieces.rs` cuts text into pieces by
//! (`categories`), from regex-syntax's Unicode tables.
//!
//! Every table is a flat array of little-endian integers, one file each, in `$OUT_DIR/o200k/`:
//! 3-byte ones (`write_u24s`) but for the character classes.
//!
//! Apart from the tables, `long_version` (at the end, on its own) sets the text of
//! `promptc --version`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// No token, no node.
const NONE: u32 = u32::MAX;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    long_version();
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("o200k");
    std::fs::create_dir_all(&out).expect("can create $OUT_DIR/o200k");

    let bpe = &bpe_openai::o200k_base().bpe;
    let tokens: Vec<&[u8]> = (0..bpe.num_tokens() as u32)
        .map(|id| bpe.token_bytes(id))
        .collect();
    let trie = Trie::new(&tokens);

    // A token's longest proper prefix that is a token (bpe's `next_prefix_match`).
    let next_prefix: Vec<u32> = tokens
        .iter()
        .map(|t| trie.longest_prefix(&t[..t.len() - 1]).unwrap_or(NONE))
        .collect();

    // The pair each token was merged from, and the reverse (bpe's `split_table` and
    // `pair_lookup`), in the order and with the checks `from_dictionary` uses.
    let by_bytes: HashMap<&[u8], u32> = tokens
        .iter()
        .enumerate()
        .map(|(id, t)| (*t, id as u32))
        .collect();
    let mut split: Vec<(u32, u32)> = Vec::with_capacity(tokens.len());
    let mut merged: HashMap<(u32, u32), u32> = HashMap::new();
    for (id, token) in tokens.iter().enumerate() {
        let id = id as u32;
        let mut first = next_prefix[id as usize];
        while first != NONE {
            let rest = &token[tokens[first as usize].len()..];
            if let Some(&second) = by_bytes.get(rest)
                && first < id
                && second < id
                && is_valid_token_pair(&merged, &split, first, second)
            {
                merged.insert((first, second), id);
                split.push((first, second));
                break;
            }
            first = next_prefix[first as usize];
        }
        if first == NONE {
            split.push((id, id));
        }
    }

    // Merges by first token, then second: `pair_start[t]..pair_start[t + 1]` are `t`'s.
    let mut pairs: Vec<((u32, u32), u32)> = merged.into_iter().collect();
    pairs.sort_unstable();
    let mut pair_start = Vec::with_capacity(tokens.len() + 1);
    let mut next = 0;
    for first in 0..=tokens.len() as u32 {
        while next < pairs.len() && pairs[next].0.0 < first {
            next += 1;
        }
        pair_start.push(next as u32);
    }

    let token_len: Vec<u8> = tokens
        .iter()
        .map(|t| u8::try_from(t.len()).expect("o200k tokens are at most 255 bytes"))
        .collect();
    write(&out, "token_len", &token_len);
    write_u24s(&out, "next_prefix", next_prefix.iter().copied());
    write_u24s(&out, "split", split.iter().flat_map(|&(a, b)| [a, b]));
    write_u24s(&out, "pair_start", pair_start.iter().copied());
    write_u24s(&out, "pair_second", pairs.iter().map(|p| p.0.1));
    write_u24s(&out, "pair_merged", pairs.iter().map(|p| p.1));
    write_u24s(&out, "node_edges", trie.edge_start.iter().copied());
    write(&out, "edge_byte", &trie.edge_byte);
    write_u24s(&out, "node_token", trie.token.iter().copied());
    write_u32s(&out, "categories", categories().into_iter().flatten());
}

/// What o200k's pre-tokenizer patterns tell apart in a character, as ranges `[first, last,
/// class]` in order, from the Unicode tables of regex-syntax, which its regex is compiled
/// with. The class numbers are `src/core/tokens/pieces.rs`'s `Class`; a character in no range is
/// `Other`.
fn categories() -> Vec<[u32; 3]> {
    use regex_syntax::hir::{Class, HirKind};
    let classes = [
        (r"\p{Lu}", 1),
        (r"\p{Lt}", 1),
        (r"\p{Ll}", 2),
        (r"\p{Lm}", 3),
        (r"\p{Lo}", 3),
        (r"\p{M}", 4),
        (r"\p{N}", 5),
        (r"\s", 6),
        (r"[\r\n]", 7),
    ];
    let mut class_of: BTreeMap<u32, u32> = BTreeMap::new();
    for (pattern, class) in classes {
        let hir = regex_syntax::parse(pattern).expect("the class parses");
        let HirKind::Class(Class::Unicode(ranges)) = hir.kind() else {
            panic!("{pattern} is a Unicode class");
        };
        for range in ranges.ranges() {
            for c in u32::from(range.start())..=u32::from(range.end()) {
                // `\s` holds `\r` and `\n`: the line breaks' own class comes last and wins.
                let earlier = class_of.insert(c, class);
                assert!(
                    earlier.is_none() || (class == 7 && earlier == Some(6)),
                    "{pattern} overlaps another class at U+{c:04X}"
                );
            }
        }
    }
    let mut ranges: Vec<[u32; 3]> = Vec::new();
    for (c, class) in class_of {
        match ranges.last_mut() {
            Some(last) if last[1] + 1 == c && last[2] == class => last[1] = c,
            _ => ranges.push([c, c, class]),
        }
    }
    ranges
}

/// bpe's `is_valid_token_pair`: `true` when BPE, merging by rank, leaves `first` and `second`
/// side by side; `false` when it would merge across their boundary into a lower-ranked token.
fn is_valid_token_pair(
    merged: &HashMap<(u32, u32), u32>,
    split: &[(u32, u32)],
    mut first: u32,
    mut second: u32,
) -> bool {
    let mut limit = u32::MAX;
    loop {
        if let Some(&combined) = merged.get(&(first, second))
            && combined < limit
        {
            return false;
        }
        if first > second {
            limit = first;
            first = split[first as usize].1;
            if first == limit {
                limit = second + 1;
                second = split[second as usize].0;
                if second + 1 == limit {
                    return true;
                }
            }
        } else {
            limit = second + 1;
            second = split[second as usize].0;
            if second + 1 == limit {
                limit = first;
                first = split[first as usize].1;
                if first == limit {
                    return true;
                }
            }
        }
    }
}

/// A byte trie of the tokens, flattened: node `n`'s edges are
/// `edge_start[n]..edge_start[n + 1]`, sorted by byte. Nodes are numbered breadth first, the
/// root 0, so edge `k` leads to node `k + 1` (every node but the root is reached by one edge,
/// and breadth first they are met in the order of their edges): no table of edge targets.
/// The root's 256 edges, one per byte, come first, so byte `b` from the root is node `b + 1`.
struct Trie {
    edge_start: Vec<u32>,
    edge_byte: Vec<u8>,
    token: Vec<u32>,
}

impl Trie {
    fn new(tokens: &[&[u8]]) -> Trie {
        let mut children: Vec<BTreeMap<u8, u32>> = vec![BTreeMap::new()];
        let mut token = vec![NONE];
        for (id, bytes) in tokens.iter().enumerate() {
            let mut node = 0usize;
            for &byte in *bytes {
                let fresh = children.len() as u32;
                let child = *children[node].entry(byte).or_insert(fresh);
                if child == fresh {
                    children.push(BTreeMap::new());
                    token.push(NONE);
                }
                node = child as usize;
            }
            assert_eq!(token[node], NONE, "token {id} appears twice");
            token[node] = id as u32;
        }
        assert_eq!(children[0].len(), 256, "every byte is a token");
        // Breadth-first order of the nodes as they were made.
        let mut order = vec![0u32];
        let mut next = 0;
        while next < order.len() {
            order.extend(children[order[next] as usize].values());
            next += 1;
        }
        let mut trie = Trie {
            edge_start: Vec::with_capacity(children.len() + 1),
            edge_byte: Vec::new(),
            token: order.iter().map(|&node| token[node as usize]).collect(),
        };
        for &node in &order {
            trie.edge_start.push(trie.edge_byte.len() as u32);
            trie.edge_byte.extend(children[node as usize].keys());
        }
        trie.edge_start.push(trie.edge_byte.len() as u32);
        trie
    }

    /// The longest token that `text` starts with (bpe's leftmost-longest `next_match`).
    fn longest_prefix(&self, text: &[u8]) -> Option<u32> {
        let mut node = 0usize;
        let mut found = None;
        for &byte in text {
            let edges = self.edge_start[node] as usize..self.edge_start[node + 1] as usize;
            let Ok(at) = self.edge_byte[edges.clone()].binary_search(&byte) else {
                break;
            };
            node = edges.start + at + 1;
            if self.token[node] != NONE {
                found = Some(self.token[node]);
            }
        }
        found
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).expect("can write a table to $OUT_DIR");
}

/// Three bytes an entry, [`NONE`] as `0xFF_FFFF`, then one byte more so that the last entry
/// can be read as a `u32`: every token, node and edge number is below 2^24 (o200k has 200 000
/// tokens, its trie 421 661 nodes), and a quarter less table is a quarter fewer pages read.
fn write_u24s(dir: &Path, name: &str, values: impl Iterator<Item = u32>) {
    let mut bytes: Vec<u8> = values
        .flat_map(|value| {
            assert!(
                value == NONE || value < 0xFF_FFFF,
                "{name}: {value} needs more than 3 bytes"
            );
            let value = if value == NONE { 0xFF_FFFF } else { value };
            let [a, b, c, _] = value.to_le_bytes();
            [a, b, c]
        })
        .collect();
    bytes.push(0);
    write(dir, name, &bytes);
}

fn write_u32s(dir: &Path, name: &str, values: impl Iterator<Item = u32>) {
    let bytes: Vec<u8> = values.flat_map(u32::to_le_bytes).collect();
    write(dir, name, &bytes);
}

// ---- `promptc --version`: the package version and, from a git checkout, the commit ----------

/// Sets `PROMPTC_LONG_VERSION`, what `promptc --version` prints after the name: the package
/// version, and for a build from a git checkout of this package the commit and its date, as
/// rustc and cargo print theirs (`0.1.0 (8ba7137abcd1 2026-12-02)`). Just the version when git or
/// the checkout is absent (the crates.io package), or when the package is not the checkout's top
/// level (a crate vendored into another repository, `cargo package`'s copy under `target/`).
fn long_version() {
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let long = match git_commit() {
        Some(commit) => format!("{version} ({commit})"),
        None => version,
    };
    println!("cargo::rustc-env=PROMPTC_LONG_VERSION={long}");
}

/// `<12 hex digits> <commit date>` of HEAD, and the files whose change means HEAD moved.
fn git_commit() -> Option<String> {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let git = |args: &[&str]| -> Option<String> {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(&dir)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8(output.stdout).ok()?;
        output.status.success().then(|| text.trim_end().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(top).ok()? != std::fs::canonicalize(&dir).ok()? {
        return None;
    }
    // HEAD (a checkout), its reflog (every commit, reset or checkout appends to it), the branch
    // HEAD names and packed refs. Only files that exist: cargo reruns on every build for a
    // missing one. This worktree's own files, so other worktrees' commits rebuild nothing.
    let mut watched = vec![
        "HEAD".to_string(),
        "logs/HEAD".to_string(),
        "packed-refs".to_string(),
    ];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo::rerun-if-changed={path}");
        }
    }
    git(&["log", "-1", "--abbrev=12", "--format=%h %cs"])
}

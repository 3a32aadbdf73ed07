//! 2.1.3xx's replay records read once: each `api-request`'s messages are its `base` request's
//! first `keep` (a fork of that request's list) and its `tail`, each message an
//! `api-request-blob` line or a message of the history (by the sha256 `replay` names it by).
//! A record's list is kept and taken on by the records that extend it, so a session costs its
//! records' tails, not each request's whole chain of records.
//!
//! `replay` resolves a tail's message against the request's own history; a list resolved
//! against an earlier request's history holds as long as the history messages it used are
//! unchanged, else the records from there on are resolved again.

use std::borrow::Cow;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde_json::Value;

use super::super::content::billing;
use super::super::load::{ApiRequest, LineId, LineKind, Sha256Name, Transcript};
use super::super::thread::Role;
use super::history::Builder;
use super::history_hashes::HistoryHashes;
use super::lines::{content, first_prompt};
use super::replayed::{Blob, ContentKind, head_blocks};
use super::{BlockData, Cursor, Source, cache_control};
use crate::core::hash::{Hash, hash, hex};
use crate::core::shared::{ListId, SharedLists};
use crate::providers::anthropic::Block;

mod params;

/// Why a request's replay records give no prompt of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoReplay {
    /// A record it names is not in this file (`ReplayError::MissingRecord`): a fork's copy.
    RecordElsewhere,
    /// The records cannot be followed (a missing message or shape, a malformed record): the
    /// build's rules give the messages.
    ByRule,
    /// The records hold what the planner does not take apart (a breakpoint path of another
    /// shape, a message no build writes): compiled whole.
    Compile,
}

/// Where a message of a record comes from.
#[derive(Debug, Clone)]
enum MessageSource {
    /// The message of an `api-request-blob` line.
    Blob(usize),
    /// A message of the history: its role and its lines, `history_lines[start..start + len]`.
    History(Role, usize, usize),
}

/// One message of a record's list.
#[derive(Debug, Clone)]
struct Entry {
    source: MessageSource,
    /// Its first block's position in the list's blocks, and how many it has.
    first_block: usize,
    kind: ContentKind,
    all_objects: bool,
    /// Messages of the list up to this one that the planner does not take apart.
    odd: usize,
}

/// A record's messages and their blocks, and what resolving them relied on.
#[derive(Debug, Clone, Copy)]
struct RecordList {
    messages: ListId,
    message_len: usize,
    blocks: ListId,
    block_len: usize,
    /// The replayed request that resolved it, and the last history message it took.
    stamp: usize,
    history_used: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chain {
    /// Every `base` is in the file and the links end.
    Whole,
    Missing,
    Loops,
}

/// The replay records of a transcript.
pub(crate) struct Records {
    /// Record id, blob hash, shape hash → its line (the last of a repeated record or blob, as
    /// `replay`; a shape's line of the text last written under its hash).
    by_id: HashMap<LineId, usize>,
    blobs: HashMap<Sha256Name, usize>,
    shapes: HashMap<Sha256Name, usize>,
    /// Lines read into the three.
    read: usize,
    /// Record ids and hashes a request looked for before they were read.
    awaited_ids: HashSet<LineId>,
    awaited_hashes: HashSet<Sha256Name>,
    stale: bool,
    chains: HashMap<usize, Chain>,
    lists: HashMap<usize, RecordList>,
    /// A record whose list could not be made → the message hash it did not find.
    failed: HashMap<usize, Sha256Name>,
    messages: SharedLists<Entry>,
    /// The lines of the history messages the lists took, one after another (one list, not one
    /// allocation a message).
    history_lines: Vec<usize>,
    blob_content: HashMap<usize, Blob>,
    history: HistoryHashes,
    /// Each `params` text met: its `thinking` and `tool_choice` (`None`: not an object).
    params: HashMap<Arc<str>, Option<ParamsRead>>,
    /// The last params read, as the loader shares them from one record to the next.
    last_params: Option<(Arc<str>, Option<ParamsRead>)>,
    /// Heads by shape line and what of the record they depend on, before and after the billing
    /// block's code.
    heads: HashMap<(usize, Hash), Option<Arc<[Block]>>>,
    billed_heads: HashMap<(usize, Hash, Hash), Arc<[Block]>>,
    shapes_parsed: HashMap<usize, Value>,
}

/// What of a record's params the prompt depends on, and its hash.
type ParamsRead = Arc<(Hash, Value)>;

/// Two shape lines of the same text.
fn same_shape(a: &LineKind, b: &LineKind) -> bool {
    matches!((a, b), (
        LineKind::ApiRequestShape { shape: a, .. },
        LineKind::ApiRequestShape { shape: b, .. },
    ) if a == b)
}

fn record(t: &Transcript, line: usize) -> &ApiRequest {
    match &t.lines[line].kind {
        LineKind::ApiRequest(r) => r,
        _ => unreachable!("a record's line"),
    }
}

impl Records {
    pub fn new() -> Records {
        Records {
            by_id: HashMap::new(),
            blobs: HashMap::new(),
            shapes: HashMap::new(),
            read: 0,
            awaited_ids: HashSet::new(),
            awaited_hashes: HashSet::new(),
            stale: false,
            chains: HashMap::new(),
            lists: HashMap::new(),
            failed: HashMap::new(),
            messages: SharedLists::new(),
            history_lines: Vec::new(),
            blob_content: HashMap::new(),
            history: HistoryHashes::default(),
            params: HashMap::new(),
            last_params: None,
            heads: HashMap::new(),
            billed_heads: HashMap::new(),
            shapes_parsed: HashMap::new(),
        }
    }

    /// Read the record lines of `t` appended since the last call. A record or blob read twice
    /// (`replay` takes the last), or a record, blob or shape a request looked for before it was
    /// read, makes what was planned [`stale`](Records::stale).
    pub fn read(&mut self, t: &Transcript) {
        let planned = self.history.stamp() > 0;
        for (i, line) in t.lines.iter().enumerate().skip(self.read) {
            // A shape is named by the hash of its content: another line of it is the same head
            // (2.1.3xx writes it again after a compaction). A blob's line is where its blocks
            // are shown from.
            let (awaited, again) = match &line.kind {
                LineKind::ApiRequest(r) => (
                    self.awaited_ids.contains(&r.id),
                    self.by_id.insert(r.id.clone(), i).is_some(),
                ),
                LineKind::ApiRequestBlob { hash, .. } => (
                    self.awaited_hashes.contains(hash),
                    self.blobs.insert(hash.clone(), i).is_some(),
                ),
                LineKind::ApiRequestShape { hash, .. } => {
                    // A shape written again as it was keeps the line noted for it: its head (by
                    // line) is made once. Another text under the hash replaces it, as `replay`
                    // takes the last.
                    let awaited = self.awaited_hashes.contains(hash);
                    let again = match self.shapes.get(hash).copied() {
                        Some(first) if same_shape(&t.lines[first].kind, &line.kind) => false,
                        noted => {
                            self.shapes.insert(hash.clone(), i);
                            noted.is_some()
                        }
                    };
                    (awaited, again)
                }
                _ => continue,
            };
            self.stale |= planned && (awaited || again);
        }
        self.read = t.lines.len();
    }

    /// Whether a line read since a request was planned changes what it would have read.
    pub fn stale(&self) -> bool {
        self.stale
    }

    /// Note that a request looked for record `id` and the transcript did not have it.
    fn missing_record(&mut self, id: &LineId) {
        // An id is its bits: no text copied to look first.
        self.awaited_ids.insert(id.clone());
    }

    /// Note that a request looked for a blob or shape `hash` and the transcript did not have
    /// it.
    fn missing_hash(&mut self, hash: &Sha256Name) {
        // Most are new (every history message a record names): one lookup, not two.
        self.awaited_hashes.insert(hash.clone());
    }

    /// The prompt of the request whose response names record `reference`, its history being
    /// `history`'s: the head blocks, its message blocks (a list of `blocks`) and breakpoints.
    #[allow(clippy::type_complexity)]
    pub fn prompt(
        &mut self,
        t: &Transcript,
        history: &mut Builder,
        blocks: &mut SharedLists<BlockData>,
        reference: &LineId,
    ) -> Result<(Arc<[Block]>, ListId, usize, Vec<(usize, i64)>), NoReplay> {
        self.history.update(t, history);
        let Some(&line) = self.by_id.get(reference) else {
            self.missing_record(reference);
            return Err(NoReplay::RecordElsewhere);
        };
        match self.chain(t, line) {
            Chain::Whole => {}
            Chain::Missing => return Err(NoReplay::RecordElsewhere),
            Chain::Loops => return Err(NoReplay::ByRule),
        }
        let list = self.list(t, history, blocks, line)?;
        if let Some(last) = list.message_len.checked_sub(1)
            && self.messages.get(list.messages, last).odd > 0
        {
            return Err(NoReplay::Compile);
        }
        let r = record(t, line);
        let params = self.params(&r.params).ok_or(NoReplay::ByRule)?;
        let shape = r.shape_hash.as_ref().ok_or(NoReplay::ByRule)?;
        let Some(&shape_line) = self.shapes.get(shape) else {
            self.missing_hash(shape);
            return Err(NoReplay::ByRule);
        };
        // Breakpoints on message blocks; the entries on system blocks and tools make the head.
        let cache_control::CacheControl { marks, head } =
            cache_control::read(&r.cache_control, |i, content, j| {
                self.message_block(&list, i, content, j)
            })?;
        let key = (
            shape_line,
            hash(
                "claude-record-head",
                format!("[{}]\n{}", head.join(","), hex(&params.0)).as_bytes(),
            ),
        );
        let head = self.head(t, key, &head, &params.1)?;
        let head = self.billed(t, &list, head, key);
        let mut breakpoints: Vec<(usize, i64)> = head
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.breakpoint.map(|ttl| (i, ttl)))
            .collect();
        // A later entry on the same block sets its TTL again.
        let mut message_marks: Vec<(usize, i64)> = Vec::new();
        for (position, ttl) in marks {
            match message_marks.iter_mut().find(|(p, _)| *p == position) {
                Some(m) => m.1 = ttl,
                None => message_marks.push((position, ttl)),
            }
        }
        message_marks.sort_unstable();
        breakpoints.extend(message_marks.iter().map(|&(p, ttl)| (head.len() + p, ttl)));
        Ok((head, list.blocks, list.block_len, breakpoints))
    }

    /// Whether the `base` links of record `line` end within the file.
    fn chain(&mut self, t: &Transcript, line: usize) -> Chain {
        let mut path: Vec<usize> = Vec::new();
        let mut r = line;
        let status = loop {
            if let Some(&status) = self.chains.get(&r) {
                break status;
            }
            if path.contains(&r) {
                break Chain::Loops;
            }
            path.push(r);
            match &record(t, r).base {
                None => break Chain::Whole,
                Some(base) => {
                    let found = self.by_id.get(base).copied();
                    match found {
                        Some(b) => r = b,
                        None => {
                            self.missing_record(base);
                            break Chain::Missing;
                        }
                    }
                }
            }
        };
        for r in path {
            self.chains.insert(r, status);
        }
        status
    }

    /// A list made at `stamp` that relied on history messages up to `used` still holds.
    fn holds(&self, list: &RecordList) -> bool {
        list.history_used
            .is_none_or(|used| self.history.changed_after(list.stamp) > used)
    }

    /// The messages of record `line` (whose chain is whole), resolved again from the first
    /// record of its chain whose list no longer holds.
    fn list(
        &mut self,
        t: &Transcript,
        history: &Builder,
        blocks: &mut SharedLists<BlockData>,
        line: usize,
    ) -> Result<RecordList, NoReplay> {
        let mut stale = Vec::new();
        let mut r = line;
        let mut base = loop {
            if let Some(list) = self.lists.get(&r)
                && self.holds(list)
            {
                break Some(*list);
            }
            // A record that could not find a message cannot while the message is still
            // nowhere, nor can the records after it: without this, each request of a chain
            // that fails would walk the whole chain again.
            if let Some(h) = self.failed.get(&r) {
                if !self.blobs.contains_key(h) && self.history.first(h).is_none() {
                    let h = h.clone();
                    for r in stale {
                        self.failed.insert(r, h.clone());
                    }
                    return Err(NoReplay::ByRule);
                }
                self.failed.remove(&r);
            }
            stale.push(r);
            match &record(t, r).base {
                None => break None,
                Some(b) => r = self.by_id[b],
            }
        };
        for r in stale.into_iter().rev() {
            let list = self.extend(t, history, blocks, base, r)?;
            self.lists.insert(r, list);
            base = Some(list);
        }
        Ok(base.expect("a record was resolved"))
    }

    /// Record `line`'s list: `base`'s first `keep` messages and its tail.
    fn extend(
        &mut self,
        t: &Transcript,
        history: &Builder,
        blocks: &mut SharedLists<BlockData>,
        base: Option<RecordList>,
        line: usize,
    ) -> Result<RecordList, NoReplay> {
        let r = record(t, line);
        let (messages, message_len, block_cursor, mut used) = match base {
            None => (
                self.messages.new_list(),
                0,
                Cursor::new(blocks.new_list(), 0),
                None,
            ),
            Some(b) => {
                let keep = r.keep.min(b.message_len);
                let block_len = if keep < b.message_len {
                    self.messages.get(b.messages, keep).first_block
                } else {
                    b.block_len
                };
                let messages = if keep < self.messages.list_len(b.messages) {
                    self.messages.fork(b.messages, keep)
                } else {
                    b.messages
                };
                (
                    messages,
                    keep,
                    Cursor::new(b.blocks, block_len),
                    b.history_used,
                )
            }
        };
        let mut list = RecordList {
            messages,
            message_len,
            blocks: block_cursor.list,
            block_len: block_cursor.pos,
            stamp: self.history.stamp(),
            history_used: None,
        };
        let mut cursor = block_cursor;
        for h in &r.tail {
            let blob = self.blobs.get(h).copied();
            if blob.is_none() {
                // A blob read later would be taken before the history's message.
                self.missing_hash(h);
            }
            let source = if let Some(blob) = blob {
                MessageSource::Blob(blob)
            } else if let Some(m) = self.history.first(h) {
                used = used.max(Some(m));
                let start = self.history_lines.len();
                self.history_lines
                    .extend_from_slice(history.message_lines(m));
                let len = self.history_lines.len() - start;
                MessageSource::History(history.messages[m].role, start, len)
            } else {
                self.failed.insert(line, h.clone());
                return Err(NoReplay::ByRule);
            };
            let odd_before = match list.message_len.checked_sub(1) {
                Some(last) => self.messages.get(list.messages, last).odd,
                None => 0,
            };
            let entry = self.render(t, blocks, &mut cursor, source, list.message_len, odd_before);
            if list.message_len < self.messages.list_len(list.messages) {
                list.messages = self.messages.fork(list.messages, list.message_len);
            }
            self.messages.push(list.messages, entry);
            list.message_len += 1;
        }
        list.blocks = cursor.list;
        list.block_len = cursor.pos;
        list.history_used = used;
        Ok(list)
    }

    /// Put message `index`'s blocks at the cursor: as `replay` sends them, less a lone text
    /// block sent as a string (the same block, read back).
    #[allow(clippy::too_many_arguments)]
    fn render(
        &mut self,
        t: &Transcript,
        blocks: &mut SharedLists<BlockData>,
        cursor: &mut Cursor,
        source: MessageSource,
        index: usize,
        odd_before: usize,
    ) -> Entry {
        let first_block = cursor.pos;
        let (kind, all_objects, odd) = match &source {
            MessageSource::Blob(line) => {
                let blob = self.blob(t, *line);
                for (j, h) in blob.content.hashes.iter().enumerate() {
                    let at = Source::Blob {
                        line: *line as u32,
                        block: j as u32,
                    };
                    cursor.put(blocks, *h, index, j, true, at);
                }
                (blob.kind, blob.content.all_objects, blob.odd)
            }
            &MessageSource::History(role, start, len) => {
                let mut count = 0;
                let (mut all_objects, mut cache_control, mut lone) = (true, false, false);
                for &i in &self.history_lines[start..start + len] {
                    let content = content(t, i);
                    for (j, h) in content.hashes.iter().enumerate() {
                        let at = Source::Line {
                            line: i as u32,
                            block: j as u32,
                        };
                        cursor.put(blocks, *h, index, count, true, at);
                        count += 1;
                    }
                    all_objects &= content.all_objects;
                    cache_control |= content.cache_control;
                    if !content.hashes.is_empty() {
                        lone = content.lone_text_not_plain;
                    }
                }
                let odd = cache_control || (count == 1 && lone && role != Role::Assistant);
                (ContentKind::Blocks(count), all_objects, odd)
            }
        };
        Entry {
            source,
            first_block,
            kind,
            all_objects,
            odd: odd_before + usize::from(odd),
        }
    }

    /// An `api-request-blob` line's message.
    fn blob(&mut self, t: &Transcript, line: usize) -> &Blob {
        self.blob_content.entry(line).or_insert_with(|| {
            let LineKind::ApiRequestBlob { message, .. } = &t.lines[line].kind else {
                unreachable!("a blob's line")
            };
            Blob::read(message)
        })
    }

    /// The position among the list's blocks of the block a `cacheControl` path names
    /// (`["messages", i, "content", j]`), as `replay` finds it.
    fn message_block(
        &self,
        list: &RecordList,
        i: u64,
        content: &str,
        j: u64,
    ) -> Result<usize, NoReplay> {
        let (i, j) = (i as usize, j as usize);
        if content != "content" || i >= list.message_len {
            return Err(if content == "content" {
                NoReplay::ByRule
            } else {
                NoReplay::Compile
            });
        }
        let entry = self.messages.get(list.messages, i);
        let found = match entry.kind {
            ContentKind::Text => j == 0,
            ContentKind::Blocks(n) => j < n && entry.all_objects,
            ContentKind::Other => false,
        };
        if !found {
            return Err(match entry.kind {
                ContentKind::Blocks(n) if j < n => NoReplay::Compile,
                _ => NoReplay::ByRule,
            });
        }
        Ok(entry.first_block + j)
    }

    /// The blocks before the messages: the shape's tools and system blocks (the billing block
    /// first, not recorded), with the record's breakpoints on them, and the params block.
    fn head(
        &mut self,
        t: &Transcript,
        key: (usize, Hash),
        entries: &[Cow<'_, str>],
        params: &Value,
    ) -> Result<Arc<[Block]>, NoReplay> {
        if let Some(head) = self.heads.get(&key) {
            return head.clone().ok_or(NoReplay::ByRule);
        }
        let shape_line = key.0;
        let shape = self.shapes_parsed.entry(shape_line).or_insert_with(|| {
            let LineKind::ApiRequestShape { shape, .. } = &t.lines[shape_line].kind else {
                unreachable!("a shape's line")
            };
            serde_json::from_str(shape).unwrap_or(Value::Null)
        });
        let entries: Vec<Value> = entries
            .iter()
            .map(|e| serde_json::from_str(e))
            .collect::<Result<_, _>>()
            .map_err(|_| NoReplay::ByRule)?;
        let head = head_blocks(shape, &entries.iter().collect::<Vec<_>>(), params);
        self.heads.insert(key, head.clone());
        head.ok_or(NoReplay::ByRule)
    }

    /// `head` with its unrecorded system blocks standing for the billing block, whose code
    /// follows the first message's first prompt.
    fn billed(
        &mut self,
        t: &Transcript,
        list: &RecordList,
        head: Arc<[Block]>,
        key: (usize, Hash),
    ) -> Arc<[Block]> {
        if !head.iter().any(|b| b.part.is_system() && !b.known) {
            return head;
        }
        let billing = match list.message_len {
            0 => billing(""),
            _ => match &self.messages.get(list.messages, 0).source {
                MessageSource::Blob(line) => {
                    let line = *line;
                    self.blob(t, line)
                        .content
                        .first_prompt
                        .unwrap_or_else(|| billing(""))
                }
                &MessageSource::History(_, start, len) => {
                    first_prompt(t, &self.history_lines[start..start + len])
                }
            },
        };
        self.billed_heads
            .entry((key.0, key.1, billing))
            .or_insert_with(|| {
                head.iter()
                    .map(|b| {
                        let mut b = b.clone();
                        if b.part.is_system() && !b.known {
                            b.hash = billing;
                        }
                        b
                    })
                    .collect()
            })
            .clone()
    }
}

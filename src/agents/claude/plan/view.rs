//! A planned prompt read through the lists that hold it ([`View`]), and the cursor that puts a
//! prompt's message blocks into them ([`Cursor`]).

use super::{BlockData, Prompt, Source};
use crate::core::hash::Hash;
use crate::core::shared::{ListId, SharedLists};
use crate::providers::anthropic::{
    Block, Part, PromptView, message_chain_next, message_chain_start,
};

/// A prompt read through the lists that hold it.
#[derive(Clone, Copy)]
pub struct View<'p> {
    pub prompt: &'p Prompt,
    pub blocks: &'p SharedLists<BlockData>,
}

impl PromptView for View<'_> {
    fn head(&self) -> &[Block] {
        &self.prompt.head
    }
    fn message_blocks(&self) -> usize {
        self.prompt.len
    }
    fn message_chain(&self, k: usize) -> Hash {
        self.blocks.get(self.prompt.list, k).chain
    }
    fn breakpoints(&self) -> &[(usize, i64)] {
        &self.prompt.breakpoints
    }
}

impl View<'_> {
    /// Blocks in the whole prompt.
    pub fn len(&self) -> usize {
        self.prompt.head.len() + self.prompt.len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every block of the prompt, as `cache::compiled_blocks` gives a compiled body's (costs the
    /// prompt's length).
    pub fn blocks(&self) -> Vec<Block> {
        let mut out = self.prompt.head.to_vec();
        for b in self.blocks.slice(self.prompt.list, ..self.prompt.len) {
            out.push(Block {
                part: Part::Message(b.message as usize, b.block as usize),
                hash: b.hash,
                known: b.known,
                breakpoint: None,
            });
        }
        for &(p, ttl) in &self.prompt.breakpoints {
            out[p].breakpoint = Some(ttl);
        }
        out
    }

    /// The hash of block `p` of the whole prompt.
    pub fn hash(&self, p: usize) -> Hash {
        match p.checked_sub(self.prompt.head.len()) {
            None => self.prompt.head[p].hash,
            Some(k) => self.blocks.get(self.prompt.list, k).hash,
        }
    }

    /// Where block `p` is in the body.
    pub fn part(&self, p: usize) -> Part {
        match p.checked_sub(self.prompt.head.len()) {
            None => self.prompt.head[p].part,
            Some(k) => {
                let b = self.blocks.get(self.prompt.list, k);
                Part::Message(b.message as usize, b.block as usize)
            }
        }
    }

    /// How many blocks two prompts share from their start: the head compared block by block,
    /// the messages by their chains (one look when one starts with the whole other, else a
    /// binary search).
    pub fn shared_with(&self, other: &View<'_>) -> usize {
        let (a, b) = (&self.prompt.head, &other.prompt.head);
        let head = a
            .iter()
            .zip(b.iter())
            .take_while(|(x, y)| x.hash == y.hash)
            .count();
        // A message block never equals a head block (they are hashed under other tags).
        if head < a.len() || a.len() != b.len() {
            return head;
        }
        let max = self.prompt.len.min(other.prompt.len);
        let same = |k: usize| self.message_chain(k - 1) == other.message_chain(k - 1);
        if max == 0 || same(max) {
            return head + max;
        }
        let (mut low, mut high) = (0usize, max - 1);
        while low < high {
            let mid = (low + high).div_ceil(2);
            if same(mid) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        head + low
    }

    /// The parts the build does not record among blocks `0..=upto`, one name per part
    /// (`messages[3].content` for the blocks of an injected context), in order.
    pub fn unknown_parts(&self, upto: usize) -> Vec<String> {
        let head = &self.prompt.head;
        let mut parts: Vec<String> = Vec::new();
        for b in head.iter().take(upto + 1).filter(|b| !b.known) {
            let name = b.part.name();
            if !parts.contains(&name) {
                parts.push(name);
            }
        }
        let mut messages: Vec<u32> = Vec::new();
        if let Some(k) = upto.checked_sub(head.len())
            && k < self.prompt.len
        {
            let mut at = self.blocks.get(self.prompt.list, k);
            {
                while at.last_unknown > 0 {
                    let p = at.last_unknown as usize - 1;
                    let b = self.blocks.get(self.prompt.list, p);
                    messages.push(b.message);
                    // Before the message's first block.
                    let Some(before) = (p - b.block as usize).checked_sub(1) else {
                        break;
                    };
                    at = self.blocks.get(self.prompt.list, before);
                }
            }
        }
        for m in messages.into_iter().rev() {
            let name = format!("messages[{m}].content");
            if !parts.contains(&name) {
                parts.push(name);
            }
        }
        parts
    }
}

/// Where rendering a prompt's message blocks has got to: position `pos` of `list`, with the
/// chain and last unknown block there when known.
pub(crate) struct Cursor {
    pub list: ListId,
    pub pos: usize,
    tail: Option<(Hash, u32)>,
}

impl Cursor {
    pub fn new(list: ListId, pos: usize) -> Cursor {
        Cursor {
            list,
            pos,
            tail: None,
        }
    }

    /// Put a block at the cursor: kept where the list already holds it there, else the list is
    /// forked at the cursor (when it goes on) and the block pushed.
    pub fn put(
        &mut self,
        blocks: &mut SharedLists<BlockData>,
        hash: Hash,
        message: usize,
        block: usize,
        known: bool,
        source: Source,
    ) {
        let (message, block) = (message as u32, block as u32);
        if self.pos < blocks.list_len(self.list) {
            let held = blocks.get(self.list, self.pos);
            if (held.hash, held.message, held.block, held.known, held.source)
                == (hash, message, block, known, source)
            {
                self.tail = Some((held.chain, held.last_unknown));
                self.pos += 1;
                return;
            }
            self.list = blocks.fork(self.list, self.pos);
        }
        let (link, last_unknown) = self.tail.unwrap_or_else(|| match self.pos.checked_sub(1) {
            Some(p) => {
                let b = blocks.get(self.list, p);
                (b.chain, b.last_unknown)
            }
            None => (message_chain_start(), 0),
        });
        let data = BlockData {
            hash,
            chain: message_chain_next(&link, &hash),
            message,
            block,
            known,
            source,
            last_unknown: if known {
                last_unknown
            } else {
                self.pos as u32 + 1
            },
        };
        blocks.push(self.list, data);
        self.tail = Some((data.chain, data.last_unknown));
        self.pos += 1;
    }
}

//! One module per model provider: how its prompt cache treats a request's prefix (and, where
//! promptc prices its requests from its own list, what it charges: `anthropic::prices`). `cache` asks
//! the [`CacheModel`] the session's agent names, and knows no provider's numbers itself.

pub mod anthropic;
pub mod openai;

use crate::core::hash::Hash;
use crate::core::usage::Usage;

/// A provider's prompt cache, as far as the analysis needs it: how much of a prefix the provider
/// keeps, for how long, and, for a cache keyed on explicit breakpoints, what each request finds.
pub trait CacheModel: Sync {
    /// Of a prefix of `tokens` tokens that a request shares with the one before it, how many
    /// the provider serves from its cache (its minimum length and granularity applied).
    fn cacheable(&self, tokens: usize) -> usize;

    /// Idle seconds after which a cached prefix may be gone: a longer gap explains a miss.
    fn retention_seconds(&self) -> i64;

    /// The provider reports what a request wrote to the cache apart from what it read
    /// (Anthropic's `cache_creation_input_tokens`).
    fn reports_writes(&self) -> bool;

    /// What a request left in the cache for the next one to read, by its usage.
    fn left_cached(&self, usage: &Usage) -> u64;

    /// The cache is keyed on explicit breakpoints: what a request reads is simulated, not
    /// estimated ([`CacheModel::breakpoint_cache`]).
    fn keyed_on_breakpoints(&self) -> bool {
        false
    }

    /// A fresh simulation of the cache for one session's requests, for a provider whose cache
    /// is keyed on explicit breakpoints (what a request reads is then exact, and so is its
    /// TTL); `None` for an automatic prefix cache, which the analysis predicts from token
    /// estimates alone.
    fn breakpoint_cache(&self) -> Option<Box<dyn BreakpointCache>> {
        None
    }
}

/// A provider's cache as a session's requests fill it, request after request.
pub trait BreakpointCache: Send {
    /// Look `prompt` up at `now` (Unix seconds), then write the entries of its breakpoints;
    /// `prompt_tokens`, the whole prompt's size where the provider reported it, says whether it
    /// was long enough to be cached at all.
    fn request(
        &mut self,
        model: &str,
        prompt: &dyn PromptView,
        now: i64,
        prompt_tokens: Option<u64>,
    ) -> Lookup;

    /// Room for an entry per request of `requests` more (a request's other breakpoints mostly
    /// write the entries of the requests before it again), so that a long session's entries are
    /// not moved again and again as they grow.
    fn reserve(&mut self, _requests: usize) {}
}

/// What the cache held for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lookup {
    /// The last block (position in the whole prompt) of the longest prefix found, if any.
    pub read_block: Option<usize>,
    /// An entry for a longer prefix existed but had expired, and none was read.
    pub expired: bool,
}

/// A request's prompt as a breakpoint cache sees it, without its blocks copied out of the plan
/// that holds them: the blocks before the messages, a chain over the message blocks (two
/// prompts share their first `k` message blocks exactly when their chains agree at `k`), the
/// breakpoints.
pub trait PromptView {
    /// Every block before the messages (tools, system blocks, parameters).
    fn head(&self) -> &[anthropic::Block];
    /// How many message blocks follow the head.
    fn message_blocks(&self) -> usize;
    /// The chain over message blocks `0..=k`.
    fn message_chain(&self, k: usize) -> Hash;
    /// Each breakpoint: its block's position in the whole prompt (head first) and its TTL in
    /// seconds, in increasing position.
    fn breakpoints(&self) -> &[(usize, i64)];
}

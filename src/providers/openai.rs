//! OpenAI's automatic prompt cache (Responses API): a request's longest prefix seen before is
//! reused without any marker in the request (caching-and-drift.md sections 4 and 5).

use super::CacheModel;

/// The provider's minimum cacheable prefix, in tokens.
pub const MIN_CACHEABLE: usize = 1024;
/// Cache hits come in steps of this many tokens.
pub const CACHE_GRANULE: usize = 128;
/// A gap longer than this exceeds in-memory retention ("typically 5 to 10 minutes").
pub const IDLE_GAP_SECONDS: i64 = 10 * 60;

/// The automatic prefix cache: every request is eligible, nothing in it asks for caching.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutomaticPrefixCache;

impl CacheModel for AutomaticPrefixCache {
    /// Round down to the provider's granule; nothing below the minimum.
    fn cacheable(&self, tokens: usize) -> usize {
        if tokens < MIN_CACHEABLE {
            0
        } else {
            tokens / CACHE_GRANULE * CACHE_GRANULE
        }
    }

    fn retention_seconds(&self) -> i64 {
        IDLE_GAP_SECONDS
    }

    /// A few newer models report writes (`cache_write_input_tokens`), as part of the input;
    /// the page draws what was read and what was not.
    fn reports_writes(&self) -> bool {
        false
    }

    /// Its whole input, as far as the cache keeps it.
    fn left_cached(&self, usage: &crate::core::usage::Usage) -> u64 {
        self.cacheable(usage.input_tokens as usize) as u64
    }
}

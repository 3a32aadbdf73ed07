//! One module per model provider: how its prompt cache treats a request's prefix. `cache` asks
//! the [`CacheModel`] the session's agent names, and knows no provider's numbers itself.

pub mod anthropic;
pub mod openai;

/// A provider's prompt cache, as far as the analysis needs it: how much of a prefix the provider
/// keeps, and for how long.
pub trait CacheModel: Sync {
    /// Of a prefix of `tokens` tokens that a request shares with the one before it, how many
    /// the provider serves from its cache (its minimum length and granularity applied).
    fn cacheable(&self, tokens: usize) -> usize;

    /// Idle seconds after which a cached prefix may be gone: a longer gap explains a miss.
    fn retention_seconds(&self) -> i64;

    /// The provider reports what a request wrote to the cache apart from what it read
    /// (Anthropic's `cache_creation_input_tokens`).
    fn reports_writes(&self) -> bool;
}

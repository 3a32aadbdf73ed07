//! What a provider reports a request used, in one shape for every provider: the input it read,
//! the part of it served from the cache and the part written to it, and the output.

/// One usage snapshot. OpenAI semantics: `cached_input_tokens` is a subset of `input_tokens`.
/// Codex's loader reads it as `token_count` writes it, a missing count as 0 (the field names
/// are Codex's). A provider that counts cache reads and writes apart from the input (Anthropic's
/// `input_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`) is added up into
/// this shape by its agent's loader.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Every input token the request was billed for, cached or not.
    pub input_tokens: u64,
    /// Of those, the tokens read from the prompt cache.
    pub cached_input_tokens: u64,
    /// Of those, the tokens written to the prompt cache, when the provider says.
    pub cache_write_input_tokens: Option<u64>,
    /// Of the tokens written, those kept an hour rather than five minutes (Anthropic's
    /// `ephemeral_1h_input_tokens`, priced apart), when the provider says. Codex records none.
    pub cache_write_1h_input_tokens: Option<u64>,
    pub output_tokens: u64,
    /// The provider (a backend behind a compatible API) reports no cache counts at all: the
    /// cache counts above are not zeros but unknown.
    #[serde(skip)]
    pub no_cache_counts: bool,
    pub reasoning_output_tokens: u64,
    pub total_tokens: u64,
}

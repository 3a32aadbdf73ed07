//! What tokens cost: an offline price table per model (USD per million input, cached input and
//! output tokens), embedded with its date and source, which a file of the same shape replaces
//! or extends (`promptc report --pricing FILE`). A model without a price is never guessed: it
//! has no cost, and the report names it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The table promptc ships with (`src/pricing.json`).
const BUILTIN: &str = include_str!("pricing.json");

/// The prices of one model, in USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens the cache did not serve.
    pub input: f64,
    /// Input tokens served from the prompt cache.
    pub cached_input: f64,
    /// Output tokens (reasoning tokens are output tokens: they are billed as such).
    pub output: f64,
    /// Where the numbers were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A price table: `{"as_of": "...", "source": "...", "replace": false, "models": {NAME: Price}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    /// The day the prices were read.
    #[serde(default)]
    pub as_of: Option<String>,
    /// Where they were read.
    #[serde(default)]
    pub source: Option<String>,
    /// In a `--pricing` file: drop the built-in table instead of extending it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace: bool,
    /// Model name (as Codex writes it in `turn_context.model`) to prices.
    pub models: BTreeMap<String, Price>,
}

/// Why a price table could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    #[error("not a price table: {0}")]
    Json(#[from] serde_json::Error),
    #[error("model {model:?}: {field} is {value}, not a price (a finite number, 0 or more)")]
    Invalid {
        model: String,
        field: &'static str,
        value: f64,
    },
}

impl PriceTable {
    /// The table promptc ships with.
    pub fn builtin() -> PriceTable {
        PriceTable::parse(BUILTIN).expect("invariant: src/pricing.json is a valid price table")
    }

    /// Read a table from JSON text.
    pub fn parse(text: &str) -> Result<PriceTable, PriceError> {
        let table: PriceTable = serde_json::from_str(text)?;
        for (model, price) in &table.models {
            for (field, value) in [
                ("input", price.input),
                ("cached_input", price.cached_input),
                ("output", price.output),
            ] {
                if !value.is_finite() || value < 0.0 {
                    return Err(PriceError::Invalid {
                        model: model.clone(),
                        field,
                        value,
                    });
                }
            }
        }
        Ok(table)
    }

    /// This table with `other` applied: `other` replaces it when it says `replace`, else its
    /// models are added, and replace the prices of models of the same name.
    pub fn with(mut self, other: PriceTable) -> PriceTable {
        if other.replace {
            return PriceTable {
                replace: false,
                ..other
            };
        }
        self.models.extend(other.models);
        let join = |a: Option<String>, b: Option<String>| match (a, b) {
            (Some(a), Some(b)) => Some(format!("{a}; extended: {b}")),
            (a, b) => a.or(b),
        };
        self.as_of = join(self.as_of, other.as_of);
        self.source = join(self.source, other.source);
        self
    }

    /// The price of a model: its exact name (case-insensitive), else the name without a
    /// trailing snapshot date (`gpt-5-2025-08-07` is `gpt-5`). Nothing else: no family guesses.
    pub fn lookup(&self, model: &str) -> Option<&Price> {
        let find = |name: &str| {
            self.models
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, price)| price)
        };
        find(model).or_else(|| find(strip_snapshot_date(model)?))
    }
}

/// `NAME-YYYY-MM-DD` to `NAME`.
fn strip_snapshot_date(model: &str) -> Option<&str> {
    let split = model.len().checked_sub(11)?;
    let (name, date) = model.split_at_checked(split)?;
    let digits = date.bytes().enumerate().all(|(i, b)| match i {
        0 | 5 | 8 => b == b'-',
        _ => b.is_ascii_digit(),
    });
    (digits && !name.is_empty()).then_some(name)
}

/// Token counts priced together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Billed {
    /// Input tokens, cached ones included.
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

impl Price {
    /// USD for these tokens: uncached input at the input price, cached input at the cached
    /// price, output at the output price.
    pub fn cost(&self, tokens: Billed) -> f64 {
        let uncached = tokens.input.saturating_sub(tokens.cached);
        (uncached as f64 * self.input
            + tokens.cached as f64 * self.cached_input
            + tokens.output as f64 * self.output)
            / 1e6
    }

    /// USD that `tokens` input tokens cost more uncached than cached.
    pub fn miss_cost(&self, tokens: u64) -> f64 {
        tokens as f64 * (self.input - self.cached_input).max(0.0) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_has_a_date_a_source_and_sane_prices() {
        let table = PriceTable::builtin();
        assert!(table.as_of.is_some() && table.source.is_some());
        assert!(table.models.len() >= 10);
        for (model, price) in &table.models {
            assert!(price.cached_input <= price.input, "{model}");
            assert!(price.input <= price.output, "{model}");
            assert!(price.source.is_some(), "{model}");
        }
    }

    #[test]
    fn costs_uncached_cached_and_output_apart() {
        let price = Price {
            input: 2.0,
            cached_input: 0.5,
            output: 8.0,
            source: None,
        };
        // 600k uncached × $2 + 400k cached × $0.5 + 100k output × $8 = 1.2 + 0.2 + 0.8.
        let cost = price.cost(Billed {
            input: 1_000_000,
            cached: 400_000,
            output: 100_000,
        });
        assert!((cost - 2.2).abs() < 1e-9, "{cost}");
        assert!((price.miss_cost(1_000_000) - 1.5).abs() < 1e-9);
    }

    #[test]
    fn lookup_is_exact_or_without_a_snapshot_date() {
        let table = PriceTable::builtin();
        assert!(table.lookup("gpt-5.2-codex").is_some());
        assert!(table.lookup("GPT-5.2-Codex").is_some());
        assert!(table.lookup("gpt-5-mini-2025-08-07").is_some());
        assert!(table.lookup("gpt-5.2-codex-turbo").is_none());
        assert!(table.lookup("gpt-5.2-cod").is_none());
        assert!(table.lookup("2025-08-07").is_none());
        assert!(table.lookup("").is_none());
    }

    #[test]
    fn a_file_extends_or_replaces_the_table() {
        let extra = PriceTable::parse(
            r#"{"as_of":"2030-01-01","models":{"house-model":{"input":1,"cached_input":0.1,"output":2}}}"#,
        )
        .unwrap();
        let extended = PriceTable::builtin().with(extra.clone());
        assert!(extended.lookup("house-model").is_some());
        assert!(extended.lookup("gpt-5.2").is_some());
        assert!(extended.as_of.unwrap().contains("2030-01-01"));
        let replaced = PriceTable::builtin().with(PriceTable {
            replace: true,
            ..extra
        });
        assert!(replaced.lookup("gpt-5.2").is_none());
        assert!(replaced.lookup("house-model").is_some());
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(PriceTable::parse("{}").is_err());
        assert!(PriceTable::parse(r#"{"models":{"m":{"input":1,"output":2}}}"#).is_err());
        let negative =
            PriceTable::parse(r#"{"models":{"m":{"input":-1,"cached_input":0,"output":2}}}"#);
        assert!(negative.unwrap_err().to_string().contains("input is -1"));
        assert!(PriceTable::parse(r#"{"models":{},"extra":1}"#).is_err());
    }
}

//! What tokens cost: an offline price table per model (USD per million input, cached input and
//! output tokens), embedded with its date and source, which a file of the same shape replaces
//! or extends (`promptc report --pricing FILE`). A price can carry the earlier prices of its
//! model with the day each took effect, and a request is priced at the price of its (UTC) day.
//! A model without a price is never guessed: it has no cost, and the report names it.

use std::collections::BTreeMap;

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
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
    /// Uncached input tokens written to the cache (GPT-5.6 and later: 1.25 times `input`);
    /// none: they cost `input`, as on earlier models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// Where the numbers were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The day (`YYYY-MM-DD`, UTC) this price took effect; none: always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Date>,
    /// The model's earlier prices, each with its `from`: a request dated before this price's
    /// `from` is priced at the latest of them that had taken effect (the oldest for a request
    /// dated before them all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Price>,
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
    /// Models deliberately left without a price, and why (no API price, a local model...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unpriced: BTreeMap<String, String>,
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
    #[error("model {model:?}: {problem}")]
    Dates { model: String, problem: String },
}

impl PriceTable {
    /// The table promptc ships with.
    pub fn builtin() -> PriceTable {
        PriceTable::parse(BUILTIN).expect("invariant: src/pricing.json is a valid price table")
    }

    /// Read a table from JSON text.
    pub fn parse(text: &str) -> Result<PriceTable, PriceError> {
        let mut table: PriceTable = serde_json::from_str(text)?;
        for (model, price) in &mut table.models {
            price.check(model)?;
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
        self.unpriced.extend(other.unpriced);
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
        by_model_name(&self.models, model)
    }

    /// Why the table leaves a model unpriced on purpose, the model found as [`Self::lookup`]
    /// finds it.
    pub fn unpriced_reason(&self, model: &str) -> Option<&str> {
        by_model_name(&self.unpriced, model).map(String::as_str)
    }
}

/// The entry for a model: its exact name (case-insensitive), else without a snapshot date.
fn by_model_name<'a, T>(entries: &'a BTreeMap<String, T>, model: &str) -> Option<&'a T> {
    let find = |name: &str| {
        entries
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, entry)| entry)
    };
    find(model).or_else(|| find(strip_snapshot_date(model)?))
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
    /// Input tokens, cached ones and cache writes included.
    pub input: u64,
    pub cached: u64,
    /// Uncached input tokens written to the cache.
    pub cache_write: u64,
    pub output: u64,
}

impl Price {
    /// A price of these numbers, from always, without a source.
    pub fn new(input: f64, cached_input: f64, output: f64) -> Price {
        Price {
            input,
            cached_input,
            output,
            cache_write: None,
            source: None,
            from: None,
            history: Vec::new(),
        }
    }

    /// Numbers that are prices, days that are dates, and a history of earlier prices each
    /// with its own `from` (none twice, all before this price's), kept oldest first.
    fn check(&mut self, model: &str) -> Result<(), PriceError> {
        let dates = |problem: String| PriceError::Dates {
            model: model.to_string(),
            problem,
        };
        self.check_one(model)?;
        for price in &self.history {
            price.check_one(model)?;
        }
        if self.history.is_empty() {
            return Ok(());
        }
        let Some(current) = self.from else {
            return Err(dates(
                "a price with a history needs its own \"from\"".into(),
            ));
        };
        self.history.sort_by_key(|price| price.from);
        let mut previous = None;
        for price in &self.history {
            let day = price
                .from
                .ok_or_else(|| dates("each earlier price needs a \"from\"".into()))?;
            if !price.history.is_empty() {
                return Err(dates(
                    "an earlier price cannot have a history of its own".into(),
                ));
            }
            if day >= current || previous == Some(day) {
                return Err(dates(format!(
                    "earlier price from {day} is not before the next one"
                )));
            }
            previous = Some(day);
        }
        Ok(())
    }

    /// Numbers that are prices.
    fn check_one(&self, model: &str) -> Result<(), PriceError> {
        for (field, value) in [
            ("input", self.input),
            ("cached_input", self.cached_input),
            ("output", self.output),
            ("cache_write", self.cache_write.unwrap_or(0.0)),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(PriceError::Invalid {
                    model: model.to_string(),
                    field,
                    value,
                });
            }
        }
        Ok(())
    }

    /// The price in effect on the UTC day of `unix_seconds` (the current one when undated).
    pub fn at(&self, unix_seconds: Option<i64>) -> &Price {
        let (Some(current), Some(seconds)) = (self.from, unix_seconds) else {
            return self;
        };
        if self.history.is_empty() {
            return self;
        }
        let Ok(time) = Timestamp::from_second(seconds) else {
            return self;
        };
        let day = TimeZone::UTC.to_datetime(time).date();
        if day >= current {
            return self;
        }
        self.history
            .iter()
            .rev()
            .find(|price| price.from.is_some_and(|from| from <= day))
            .or_else(|| self.history.first())
            .unwrap_or(self)
    }

    /// USD for these tokens: each at one price, uncached input at the input price (the part
    /// written to the cache at the cache-write price, when the model has one), cached input at
    /// the cached price, output at the output price.
    pub fn cost(&self, tokens: Billed) -> f64 {
        let uncached = tokens.input.saturating_sub(tokens.cached);
        let written = match self.cache_write {
            Some(price) => tokens.cache_write.min(uncached) as f64 * (price - self.input),
            None => 0.0,
        };
        (uncached as f64 * self.input
            + written
            + tokens.cached as f64 * self.cached_input
            + tokens.output as f64 * self.output)
            / 1e6
    }

    /// USD that `tokens` input tokens cost more uncached than cached: sent again, they are
    /// written to the cache again where the model charges for that (`cache_write`).
    pub fn miss_cost(&self, tokens: u64) -> f64 {
        let uncached = self.cache_write.unwrap_or(self.input);
        tokens as f64 * (uncached - self.cached_input).max(0.0) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every model Codex shipped with (its default, its model picker, its bundled catalog),
    /// and the first release read that has it; PRICING.md has the list by release.
    const SHIPPED: &[(&str, &str)] = &[
        (
            "o4-mini",
            "0.1.2504172351 (TypeScript) dist/cli.js: the default",
        ),
        ("o3", "0.1.2504172351 dist/cli.js: recommended with o4-mini"),
        (
            "gpt-4.1",
            "0.1.2504172351 dist/cli.js: the full-context model",
        ),
        (
            "codex-mini-latest",
            "0.1.2505291658 dist/cli.js: the default",
        ),
        (
            "gpt-oss-20b",
            "0.20.0 binary (--oss); 0.116.0 bundled models.json",
        ),
        (
            "gpt-oss-120b",
            "0.20.0 binary (--oss); 0.116.0 bundled models.json",
        ),
        ("gpt-5", "0.40.0; codex-rs/common/src/model_presets.rs"),
        (
            "gpt-5-codex",
            "0.40.0; codex-rs/common/src/model_presets.rs",
        ),
        (
            "gpt-5-codex-mini",
            "0.58.0; codex-rs/common/src/model_presets.rs",
        ),
        ("gpt-5.1", "0.58.0 binary"),
        ("gpt-5.1-codex", "0.58.0 binary"),
        ("gpt-5.1-codex-mini", "0.58.0 binary"),
        ("gpt-5.1-codex-max", "0.77.0 bundled models.json"),
        ("gpt-5.2", "0.77.0 bundled models.json"),
        ("bengalfox", "0.77.0 bundled models.json (hidden)"),
        ("boomslang", "0.77.0 bundled models.json (hidden)"),
        (
            "gpt-5.2-codex",
            "0.77.0 (upgrade target); 0.87.0 bundled models.json",
        ),
        ("gpt-5.3-codex", "0.104.0 bundled models.json"),
        (
            "gpt-5.3-codex-spark",
            "Codex's remote catalog (ChatGPT Pro), never bundled",
        ),
        ("gpt-5.4", "0.116.0 bundled models.json"),
        ("gpt-5.4-mini", "0.133.0 debug models --bundled"),
        ("gpt-5.5", "0.133.0 debug models --bundled"),
        (
            "codex-auto-review",
            "0.133.0 debug models --bundled (hidden)",
        ),
        (
            "gpt-5.6-sol",
            "0.148.0 debug models --bundled; the 0.171 conformance cases",
        ),
        ("gpt-5.6-terra", "0.148.0 debug models --bundled"),
        ("gpt-5.6-luna", "0.148.0 debug models --bundled"),
        (
            "gpt-daybreak-blue-latest",
            "0.152.1 debug models --bundled (hidden)",
        ),
        (
            "gpt-daybreak-red-latest",
            "0.152.1 debug models --bundled (hidden)",
        ),
        ("gpt-6-astra", "0.157.1 debug models --bundled"),
        ("gpt-6-sol", "0.157.1 debug models --bundled"),
        ("gpt-6-luna", "0.157.1 debug models --bundled"),
        ("gpt-6.1-sol", "0.162.1 debug models --bundled"),
        ("gpt-6.1-terra", "0.167.2 debug models --bundled"),
        ("gpt-6.2-sol", "0.171.0 debug models --bundled"),
        ("gpt-6.2-astra", "0.171.0 debug models --bundled"),
    ];

    #[test]
    fn every_shipped_model_is_priced_or_named_unpriced_with_a_reason() {
        let table = PriceTable::builtin();
        for (model, shipped) in SHIPPED {
            let priced = table.lookup(model).is_some();
            let reason = table.unpriced.get(*model).filter(|r| !r.is_empty());
            assert!(
                priced != reason.is_some(),
                "{model} ({shipped}): priced {priced}, unpriced reason {reason:?}"
            );
        }
        // Nothing is left unpriced that is not a shipped model, and nothing is both.
        for model in table.unpriced.keys() {
            assert!(SHIPPED.iter().any(|(m, _)| m == model), "{model}");
            assert!(!table.models.contains_key(model), "{model}");
        }
    }

    #[test]
    fn a_dated_price_is_picked_by_the_requests_utc_day() {
        let table = PriceTable::builtin();
        let sol = table.lookup("gpt-5.6-sol").unwrap();
        let at = |time: &str| {
            let seconds = time.parse::<Timestamp>().unwrap().as_second();
            let price = sol.at(Some(seconds));
            (price.input, price.cached_input, price.output)
        };
        // Launch price to the last second of 2026-08-20 (UTC), the promotion from the 21st.
        assert_eq!(at("2026-07-09T00:00:00Z"), (5.0, 0.5, 30.0));
        assert_eq!(at("2026-08-20T23:59:59Z"), (5.0, 0.5, 30.0));
        assert_eq!(at("2026-08-21T00:00:00Z"), (4.0, 0.4, 20.0));
        assert_eq!(at("2026-12-01T12:00:00Z"), (4.0, 0.4, 20.0));
        // Before its oldest price (a clock set wrong): the oldest. Undated: the current one.
        assert_eq!(at("2026-01-01T00:00:00Z"), (5.0, 0.5, 30.0));
        assert_eq!(sol.at(None).input, 4.0);
        // A model without a history has one price at every date.
        let max = table.lookup("gpt-5.1-codex-max").unwrap();
        assert_eq!(max.at(Some(0)).input, 1.25);
    }

    #[test]
    fn a_history_is_kept_oldest_first_whatever_its_order_in_the_file() {
        let table = PriceTable::parse(
            r#"{"models":{"m":{"input":3,"cached_input":0.3,"output":30,"from":"2030-03-01",
                "history":[{"input":2,"cached_input":0.2,"output":20,"from":"2030-02-01"},
                           {"input":1,"cached_input":0.1,"output":10,"from":"2030-01-01"}]}}}"#,
        )
        .unwrap();
        let m = table.lookup("m").unwrap();
        let day = |d: &str| {
            let seconds = format!("{d}T12:00:00Z").parse::<Timestamp>().unwrap();
            m.at(Some(seconds.as_second())).input
        };
        assert_eq!(day("2030-01-15"), 1.0);
        assert_eq!(day("2030-02-01"), 2.0);
        assert_eq!(day("2030-02-28"), 2.0);
        assert_eq!(day("2030-03-01"), 3.0);
    }

    #[test]
    fn bad_dates_are_refused() {
        let refused = |models: &str| {
            PriceTable::parse(&format!(r#"{{"models":{{"m":{models}}}}}"#))
                .unwrap_err()
                .to_string()
        };
        let p = r#""input":1,"cached_input":0.1,"output":2"#;
        // jiff's words, with where in the file.
        let message = refused(&format!(r#"{{{p},"from":"2030-1-5"}}"#));
        assert!(
            message.contains("month") && message.contains("column"),
            "{message}"
        );
        let message = refused(&format!(r#"{{{p},"from":"2030-02-30"}}"#));
        assert!(
            message.contains("day") && message.contains("2030-02"),
            "{message}"
        );
        // A history needs the current price's day, and a day on each earlier price before it.
        let earlier = |from: &str| format!(r#"{{{p},"from":"{from}"}}"#);
        assert!(
            refused(&format!(r#"{{{p},"history":[{}]}}"#, earlier("2030-01-01")))
                .contains("needs its own")
        );
        assert!(
            refused(&format!(
                r#"{{{p},"from":"2030-02-01","history":[{{{p}}}]}}"#
            ))
            .contains("needs a \"from\"")
        );
        assert!(
            refused(&format!(
                r#"{{{p},"from":"2030-02-01","history":[{}]}}"#,
                earlier("2030-02-01")
            ))
            .contains("not before")
        );
        assert!(
            refused(&format!(
                r#"{{{p},"from":"2030-03-01","history":[{},{}]}}"#,
                earlier("2030-01-01"),
                earlier("2030-01-01")
            ))
            .contains("not before")
        );
        let nested = format!(
            r#"{{{p},"from":"2030-03-01","history":[{{{p},"from":"2030-02-01","history":[{}]}}]}}"#,
            earlier("2030-01-01")
        );
        assert!(refused(&nested).contains("cannot have a history"));
        let negative = format!(
            r#"{{{p},"from":"2030-03-01","history":[{{"input":1,"cached_input":-1,"output":2,"from":"2030-01-01"}}]}}"#
        );
        assert!(refused(&negative).contains("cached_input is -1"));
    }

    #[test]
    fn builtin_table_has_a_date_a_source_and_sane_prices() {
        let table = PriceTable::builtin();
        assert!(table.as_of.is_some() && table.source.is_some());
        assert!(table.models.len() >= 10);
        for (model, current) in &table.models {
            for price in std::iter::once(current).chain(&current.history) {
                assert!(price.cached_input <= price.input, "{model}");
                assert!(price.input <= price.output, "{model}");
                assert!(price.source.is_some(), "{model}");
                // OpenAI's pages: cache writes cost 1.25 times the input price from GPT-5.6 on,
                // and nothing more than input before.
                let family = model.starts_with("gpt-5.6") || model.starts_with("gpt-6");
                let writes = price
                    .cache_write
                    .map(|w| (w - 1.25 * price.input).abs() < 1e-9);
                assert_eq!(writes, family.then_some(true), "{model}");
            }
        }
    }

    #[test]
    fn costs_uncached_cached_and_output_apart() {
        let price = Price::new(2.0, 0.5, 8.0);
        // 600k uncached × $2 + 400k cached × $0.5 + 100k output × $8 = 1.2 + 0.2 + 0.8.
        let tokens = Billed {
            input: 1_000_000,
            cached: 400_000,
            cache_write: 200_000,
            output: 100_000,
        };
        let cost = price.cost(tokens);
        assert!((cost - 2.2).abs() < 1e-9, "{cost}");
        // With a cache-write price of $2.50, 200k of the 600k uncached cost $0.50 more each.
        let writes = Price {
            cache_write: Some(2.5),
            ..price.clone()
        };
        let cost = writes.cost(tokens);
        assert!((cost - 2.3).abs() < 1e-9, "{cost}");
        // Writes are never more than the uncached input.
        let cost = writes.cost(Billed {
            cache_write: 900_000,
            ..tokens
        });
        assert!((cost - 2.5).abs() < 1e-9, "{cost}");
        assert!((price.miss_cost(1_000_000) - 1.5).abs() < 1e-9);
        // Where writes cost $2.50, a lost million costs $2.50 - $0.50.
        assert!((writes.miss_cost(1_000_000) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn an_unpriced_reason_is_found_as_a_price_is() {
        let table = PriceTable::builtin();
        assert!(table.unpriced_reason("gpt-oss-120b").is_some());
        assert_eq!(
            table.unpriced_reason("GPT-OSS-120B"),
            table.unpriced_reason("gpt-oss-120b")
        );
        assert!(table.unpriced_reason("gpt-5.2-codex").is_none());
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
        assert!(extended.unpriced.contains_key("gpt-oss-20b"));
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

//! Anthropic list prices for the models Claude Code transcripts name
//! (`src/providers/anthropic/prices.json`: each price with the page it was read from), and what
//! one response costs at them.
//!
//! A model is looked up by its exact id, else without a trailing snapshot date
//! (`claude-sonnet-4-20250514` is `claude-sonnet-4`) or a `[1m]` context tag; nothing else: a
//! model the table does not know is unpriced, never guessed from its family.

use std::collections::BTreeMap;

use serde::Deserialize;

const BUILTIN: &str = include_str!("prices.json");

/// USD per million tokens.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicPrice {
    pub input: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
    pub output: f64,
    pub source: String,
    /// The day (`YYYY-MM-DD`, UTC) this price took effect; none: always.
    #[serde(default)]
    pub from: Option<String>,
    /// Earlier prices: a request dated before `from` is priced at the newest of them.
    #[serde(default)]
    pub history: Vec<AnthropicPrice>,
    /// The tier of a request whose whole prompt (uncached, written and read input) is longer.
    #[serde(default)]
    pub long_context: Option<Box<LongContext>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongContext {
    pub above_prompt_tokens: u64,
    pub input: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
    pub output: f64,
    pub source: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicPrices {
    pub as_of: String,
    pub source: String,
    pub models: BTreeMap<String, AnthropicPrice>,
    /// Models left unpriced on purpose, and why.
    pub unpriced: BTreeMap<String, String>,
}

/// What [`AnthropicPrices::price`] found for a model.
#[derive(Debug, Clone, PartialEq)]
pub enum Priced<'a> {
    Price(&'a AnthropicPrice),
    /// Named unpriced in the table, with the reason.
    Unpriced(&'a str),
    /// Not in the table at all.
    Unknown,
}

impl AnthropicPrices {
    /// The table promptc ships with.
    pub fn builtin() -> AnthropicPrices {
        serde_json::from_str(BUILTIN)
            .expect("invariant: src/providers/anthropic/prices.json is a price table")
    }

    /// The price of `model` in force on `day` (`YYYY-MM-DD`; none: the newest).
    pub fn price(&self, model: &str, day: Option<&str>) -> Priced<'_> {
        match self.entry(model) {
            Priced::Price(p) => Priced::Price(p.at(day)),
            other => other,
        }
    }

    /// The entry of `model`, its earlier prices in it ([`AnthropicPrice::at`] picks a day's).
    pub fn entry(&self, model: &str) -> Priced<'_> {
        if let Some(p) = find(&self.models, model) {
            return Priced::Price(p);
        }
        match find(&self.unpriced, model) {
            Some(reason) => Priced::Unpriced(reason),
            None => Priced::Unknown,
        }
    }

    /// The cost in USD of one response's usage, `None` when the model has no price.
    pub fn cost(&self, model: &str, day: Option<&str>, tokens: &Tokens) -> Option<f64> {
        match self.price(model, day) {
            Priced::Price(p) => Some(p.cost(tokens)),
            _ => None,
        }
    }
}

impl AnthropicPrice {
    /// The price in force on `day` (`YYYY-MM-DD`, UTC; none: this, the newest).
    pub fn at(&self, day: Option<&str>) -> &AnthropicPrice {
        let Some(day) = day else { return self };
        if self.from.as_deref().is_none_or(|from| day >= from) {
            return self;
        }
        // The newest earlier price that had taken effect, else the oldest.
        let mut best: Option<&AnthropicPrice> = None;
        for h in &self.history {
            if h.from.as_deref().is_none_or(|from| day >= from)
                && best.is_none_or(|b| h.from > b.from)
            {
                best = Some(h);
            }
        }
        best.or_else(|| self.history.iter().min_by(|a, b| a.from.cmp(&b.from)))
            .unwrap_or(self)
    }

    /// USD for `tokens` at this price (the long-context tier when the prompt is over its limit).
    pub fn cost(&self, t: &Tokens) -> f64 {
        let (i, w5, w1, r, o) = self.rates(t);
        (t.input as f64 * i
            + t.cache_write_5m as f64 * w5
            + t.cache_write_1h as f64 * w1
            + t.cache_read as f64 * r
            + t.output as f64 * o)
            / 1e6
    }

    /// USD that `lost` input tokens of the response `t` cost more than had they been read from
    /// the cache: sent again, they were written again, at the TTL the response wrote most with
    /// (uncached input where it wrote nothing), in its tier.
    pub fn miss_cost(&self, t: &Tokens, lost: u64) -> f64 {
        let (i, w5, w1, r, _) = self.rates(t);
        let paid = if t.cache_write_1h > t.cache_write_5m {
            w1
        } else if t.cache_write_5m > 0 {
            w5
        } else {
            i
        };
        lost as f64 * (paid - r).max(0.0) / 1e6
    }

    /// Input, 5-minute and 1-hour writes, reads and output per million, in the tier of `t`.
    fn rates(&self, t: &Tokens) -> (f64, f64, f64, f64, f64) {
        let prompt = t.input + t.cache_write_5m + t.cache_write_1h + t.cache_read;
        match &self.long_context {
            Some(l) if prompt > l.above_prompt_tokens => (
                l.input,
                l.cache_write_5m,
                l.cache_write_1h,
                l.cache_read,
                l.output,
            ),
            _ => (
                self.input,
                self.cache_write_5m,
                self.cache_write_1h,
                self.cache_read,
                self.output,
            ),
        }
    }
}

/// One response's tokens in Anthropic's billing terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tokens {
    /// Input after the last breakpoint (`input_tokens`).
    pub input: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    pub cache_read: u64,
    pub output: u64,
}

impl Tokens {
    pub fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.cache_write_5m += o.cache_write_5m;
        self.cache_write_1h += o.cache_write_1h;
        self.cache_read += o.cache_read;
        self.output += o.output;
    }
}

fn find<'a, T>(entries: &'a BTreeMap<String, T>, model: &str) -> Option<&'a T> {
    let get = |name: &str| {
        entries
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    };
    let bare = model.strip_suffix("[1m]").unwrap_or(model);
    get(model)
        .or_else(|| get(bare))
        .or_else(|| get(strip_date(bare)?))
}

/// `name-YYYYMMDD` without its date.
fn strip_date(model: &str) -> Option<&str> {
    let (stem, date) = model.rsplit_once('-')?;
    (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

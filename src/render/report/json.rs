//! `promptc report --format json`: the document, its keys in a fixed order.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::super::write_json;
use super::{Layout, zone_name};
use crate::report::{Fork, Group, Notes, Report};

/// Round a dollar amount to a millionth, so JSON does not carry float noise.
fn usd(value: f64) -> f64 {
    // `+ 0.0` turns -0.0 into 0.0.
    (value * 1e6).round() / 1e6 + 0.0
}

#[derive(Serialize)]
struct CauseDocument {
    requests: u64,
    tokens: u64,
    cost_usd: f64,
}

#[derive(Serialize)]
struct GroupDocument<'a> {
    key: &'a str,
    requests: u64,
    input_tokens: u64,
    cached_input_tokens: u64,
    uncached_input_tokens: u64,
    /// Of the uncached, written to the cache (GPT-5.6 and later; 0 where rollouts do not say).
    cache_write_input_tokens: u64,
    output_tokens: u64,
    reasoning_output_tokens: u64,
    cache_hit_rate: Option<f64>,
    /// Input the cache could have served, every cause but cold starts.
    lost_input_tokens: u64,
    /// Uncached input by cause, `cold_start` included (not a loss).
    by_cause: BTreeMap<String, CauseDocument>,
    cost_usd: f64,
    /// Paid more than had every lost token been cached.
    miss_cost_usd: f64,
    unpriced_requests: u64,
    /// With Claude Code sessions: the uncached input written for 5 minutes (OpenAI's writes
    /// too), for an hour, and neither read nor written (Anthropic's `input_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_write_5m_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_write_1h_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unwritten_input_tokens: Option<u64>,
}

/// A model without a price, and the price table's reason when it leaves it unpriced on purpose.
#[derive(Serialize)]
struct UnpricedDocument<'a> {
    #[serde(flatten)]
    sums: GroupDocument<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

impl<'a> GroupDocument<'a> {
    fn new(group: &'a Group, layout: Layout) -> GroupDocument<'a> {
        let claude = |n: u64| layout.claude.then_some(n);
        GroupDocument {
            key: &group.key,
            requests: group.requests,
            input_tokens: group.tokens.input,
            cached_input_tokens: group.tokens.cached,
            uncached_input_tokens: group.tokens.uncached(),
            cache_write_input_tokens: group.tokens.cache_write,
            output_tokens: group.tokens.output,
            reasoning_output_tokens: group.tokens.reasoning,
            cache_hit_rate: group.tokens.hit_rate(),
            lost_input_tokens: group.lost(),
            by_cause: group
                .causes
                .iter()
                .map(|(cause, sum)| {
                    (
                        cause.name(),
                        CauseDocument {
                            requests: sum.requests,
                            tokens: sum.tokens,
                            cost_usd: usd(sum.cost),
                        },
                    )
                })
                .collect(),
            cost_usd: usd(group.cost),
            miss_cost_usd: usd(group.miss_cost()),
            unpriced_requests: group.unpriced_requests,
            cache_write_5m_input_tokens: claude(group.tokens.cache_write_5m()),
            cache_write_1h_input_tokens: claude(group.tokens.cache_write_1h),
            unwritten_input_tokens: claude(group.tokens.unwritten()),
        }
    }
}

#[derive(Serialize)]
struct ForkDocument<'a> {
    parent: &'a str,
    /// `subtracted`: the parent's counters were not counted again (`copied_requests` of them
    /// repeated in the file, when the parent was read); `unknown`: the file copies the lines of
    /// a parent that was not read, and is counted whole.
    parent_counters: &'static str,
    copied_requests: Option<usize>,
}

#[derive(Serialize)]
struct SessionDocument<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'static str>,
    id: Option<&'a str>,
    path: &'a str,
    date: Option<String>,
    top_cause: Option<String>,
    command: String,
    fork: Option<ForkDocument<'a>>,
    #[serde(flatten)]
    sums: GroupDocument<'a>,
}

#[derive(Serialize)]
struct PricingDocument<'a> {
    as_of: Option<&'a str>,
    source: Option<&'a str>,
}

#[derive(Serialize)]
struct ReportDocument<'a> {
    schema_version: u32,
    time_zone: String,
    since: Option<String>,
    until: Option<String>,
    by: &'static str,
    pricing: PricingDocument<'a>,
    /// With Claude Code sessions: the agents whose sessions were read, and Anthropic's prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    agents: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    claude_pricing: Option<PricingDocument<'a>>,
    files: usize,
    sessions: usize,
    first_day: Option<String>,
    last_day: Option<String>,
    total: GroupDocument<'a>,
    groups: Vec<GroupDocument<'a>>,
    top_sessions: Vec<SessionDocument<'a>>,
    /// Models without a price: their tokens are counted, their cost is not.
    unpriced_models: Vec<UnpricedDocument<'a>>,
    /// With Claude Code sessions: the side requests among the counted ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    side_requests: Option<GroupDocument<'a>>,
    notes: &'a Notes,
}

fn fork_document(fork: &Fork) -> Option<ForkDocument<'_>> {
    match fork {
        Fork::None => None,
        Fork::Subtracted { parent, requests } => Some(ForkDocument {
            parent,
            parent_counters: "subtracted",
            copied_requests: Some(*requests),
        }),
        Fork::Seeded { parent } => Some(ForkDocument {
            parent,
            parent_counters: "subtracted",
            copied_requests: None,
        }),
        Fork::Unknown { parent } => Some(ForkDocument {
            parent,
            parent_counters: "unknown",
            copied_requests: None,
        }),
    }
}

/// `report --format json`.
pub fn write_report_json(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let prices = &report.options.prices;
    let layout = Layout::of(report);
    let claude_prices = &report.options.claude_prices;
    let document = ReportDocument {
        schema_version: crate::SCHEMA_VERSION,
        time_zone: zone_name(report),
        since: report.options.since.map(|d| d.to_string()),
        until: report.options.until.map(|d| d.to_string()),
        by: report.options.by.name(),
        pricing: PricingDocument {
            as_of: prices.as_of.as_deref(),
            source: prices.source.as_deref(),
        },
        agents: layout
            .claude
            .then(|| report.agents.iter().map(|a| a.name()).collect()),
        claude_pricing: layout.claude.then_some(PricingDocument {
            as_of: Some(&claude_prices.as_of),
            source: Some(&claude_prices.source),
        }),
        files: report.files,
        sessions: report.sessions,
        first_day: report.first_day.map(|d| d.to_string()),
        last_day: report.last_day.map(|d| d.to_string()),
        total: GroupDocument::new(&report.total, layout),
        groups: report
            .groups
            .iter()
            .map(|g| GroupDocument::new(g, layout))
            .collect(),
        top_sessions: report
            .top
            .iter()
            .map(|row| SessionDocument {
                agent: layout.claude.then_some(row.agent.name()),
                id: row.id.as_deref(),
                path: &row.path,
                date: row.date.map(|d| d.to_string()),
                top_cause: row.sums.top_cause().map(|c| c.name()),
                command: row.command(),
                fork: fork_document(&row.fork),
                sums: GroupDocument::new(&row.sums, layout),
            })
            .collect(),
        unpriced_models: report
            .unpriced
            .iter()
            .map(|group| UnpricedDocument {
                sums: GroupDocument::new(group, layout),
                reason: report.options.unpriced_reason(&group.key),
            })
            .collect(),
        side_requests: layout
            .claude
            .then(|| GroupDocument::new(&report.side, layout)),
        notes: &report.notes,
    };
    write_json(out, &document)
}

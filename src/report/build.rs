//! The sums of a report: requests filtered by date, grouped, priced.

use std::collections::BTreeMap;

use jiff::civil::Date;

use super::{
    Agent, Cause, Fork, GroupBy, NO_DATE, Notes, ReportOptions, Request, SessionUsage, Tokens,
    UNKNOWN, group_key, local_date,
};
use crate::pricing::{Billed, Price};
use crate::providers::anthropic::prices::{Priced, Tokens as AnthropicTokens};

/// The tokens, losses and cost of one cause in a group.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CauseSum {
    pub requests: u64,
    pub tokens: u64,
    /// What these tokens cost more than they would have cached (priced requests only).
    pub cost: f64,
}

/// Sums over a set of requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    pub key: String,
    pub requests: u64,
    pub tokens: Tokens,
    /// Uncached input by cause, cold starts included.
    pub causes: BTreeMap<Cause, CauseSum>,
    /// USD paid (priced requests only).
    pub cost: f64,
    /// Requests whose model has no price: in the token sums, not in the costs.
    pub unpriced_requests: u64,
}

impl Group {
    fn new(key: String) -> Group {
        Group {
            key,
            ..Group::default()
        }
    }

    fn add(&mut self, request: &Request, cost: Option<Cost>) {
        self.requests += 1;
        self.tokens.add(request.tokens);
        match cost {
            Some(cost) => self.cost += cost.paid,
            None => self.unpriced_requests += 1,
        }
        if let Some(cause) = request.cause
            && request.lost > 0
        {
            let sum = self.causes.entry(cause).or_default();
            sum.requests += 1;
            sum.tokens += request.lost;
            sum.cost += cost.map_or(0.0, |c| c.miss);
        }
    }

    fn merge(&mut self, other: &Group) {
        self.requests += other.requests;
        self.tokens.add(other.tokens);
        self.cost += other.cost;
        self.unpriced_requests += other.unpriced_requests;
        for (cause, sum) in &other.causes {
            let mine = self.causes.entry(*cause).or_default();
            mine.requests += sum.requests;
            mine.tokens += sum.tokens;
            mine.cost += sum.cost;
        }
    }

    /// Input tokens lost to every cause but a cold start.
    pub fn lost(&self) -> u64 {
        self.losses().map(|(_, s)| s.tokens).sum()
    }

    /// What the lost tokens cost more than cached: the difference between what was paid and
    /// what the same requests would have cost had every lost token been cached.
    pub fn miss_cost(&self) -> f64 {
        // From 0.0: an empty float sum is -0.0.
        self.losses().fold(0.0, |sum, (_, s)| sum + s.cost)
    }

    fn losses(&self) -> impl Iterator<Item = (&Cause, &CauseSum)> {
        self.causes.iter().filter(|(c, _)| **c != Cause::ColdStart)
    }

    /// The cause that lost the most tokens (cold starts aside).
    pub fn top_cause(&self) -> Option<Cause> {
        self.losses()
            .filter(|(_, s)| s.tokens > 0)
            .max_by(|a, b| a.1.tokens.cmp(&b.1.tokens).then(b.0.cmp(a.0)))
            .map(|(c, _)| *c)
    }
}

/// What a priced request cost.
#[derive(Debug, Clone, Copy)]
struct Cost {
    /// USD paid.
    paid: f64,
    /// USD its lost input cost more than had it been read from the cache.
    miss: f64,
}

/// Prices each request at its agent's prices, each model looked up once (the price of the
/// request's day is then picked from the model's entry).
struct Pricer<'o, 's> {
    options: &'o ReportOptions,
    codex: BTreeMap<Option<&'s str>, Option<&'o Price>>,
    /// A price given for the model, else Anthropic's entry.
    claude: BTreeMap<Option<&'s str>, (Option<&'o Price>, Priced<'o>)>,
}

impl<'o, 's> Pricer<'o, 's> {
    fn new(options: &'o ReportOptions) -> Pricer<'o, 's> {
        Pricer {
            options,
            codex: BTreeMap::new(),
            claude: BTreeMap::new(),
        }
    }

    fn cost(&mut self, agent: Agent, request: &'s Request) -> Option<Cost> {
        let model = request.model.as_deref();
        let options = self.options;
        let priced = |price: &Price| Cost {
            paid: price.cost(Billed {
                input: request.tokens.input,
                cached: request.tokens.cached,
                cache_write: request.tokens.cache_write,
                output: request.tokens.output,
            }),
            miss: price.miss_cost(request.lost),
        };
        match agent {
            Agent::Codex => self
                .codex
                .entry(model)
                .or_insert_with(|| model.and_then(|m| options.prices.lookup(m)))
                .map(|price| priced(price.at(request.unix_seconds))),
            Agent::Claude => {
                // A price given for the model (`--pricing`) first, then Anthropic's list.
                let (given, listed) = self.claude.entry(model).or_insert_with(|| {
                    let given = options
                        .claude_overrides
                        .as_ref()
                        .and_then(|o| model.and_then(|m| o.lookup(m)));
                    let listed = model.map_or(Priced::Unknown, |m| options.claude_prices.entry(m));
                    (given, listed)
                });
                if let Some(price) = given {
                    return Some(priced(price.at(request.unix_seconds)));
                }
                let Priced::Price(price) = listed else {
                    return None;
                };
                // Anthropic's prices change by the UTC day.
                let day = request
                    .unix_seconds
                    .and_then(|s| local_date(s, &jiff::tz::TimeZone::UTC))
                    .map(|d| d.to_string());
                let price = price.at(day.as_deref());
                let tokens = anthropic(&request.tokens);
                Some(Cost {
                    paid: price.cost(&tokens),
                    miss: price.miss_cost(&tokens, request.lost),
                })
            }
        }
    }
}

/// A request's tokens in Anthropic's terms.
fn anthropic(t: &Tokens) -> AnthropicTokens {
    AnthropicTokens {
        input: t.unwritten(),
        cache_write_5m: t.cache_write_5m(),
        cache_write_1h: t.cache_write_1h,
        cache_read: t.cached,
        output: t.output,
    }
}

/// One session in the table of those that lost the most.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub agent: Agent,
    pub id: Option<String>,
    pub path: String,
    /// Day of its first counted request.
    pub date: Option<Date>,
    pub sums: Group,
    pub fork: Fork,
    /// Each counted request's time and cache hit rate.
    pub hit_rates: Vec<(i64, f64)>,
}

impl SessionRow {
    /// The command that shows, step by step, why it missed.
    pub fn command(&self) -> String {
        format!("promptc steps {}", self.id.as_deref().unwrap_or(&self.path))
    }
}

/// A whole report.
#[derive(Debug, Clone)]
pub struct Report {
    pub options: ReportOptions,
    /// Rollout files read (or that could not be).
    pub files: usize,
    /// Sessions with at least one request in the dates asked.
    pub sessions: usize,
    pub total: Group,
    /// By `options.by`.
    pub groups: Vec<Group>,
    /// By day, whatever `options.by` is (the HTML page's chart).
    pub days: Vec<Group>,
    /// By model, for models without a price.
    pub unpriced: Vec<Group>,
    /// The side requests among the counted ones (Claude Code's warmups): in every sum, and
    /// shown apart.
    pub side: Group,
    /// Agents whose sessions were given (whether or not a request of theirs was in the dates).
    pub agents: Vec<Agent>,
    /// By agent, whatever `options.by` is (the HTML page's table of agents).
    pub by_agent: Vec<Group>,
    /// The `options.top` sessions that lost the most tokens.
    pub top: Vec<SessionRow>,
    /// First and last day with a counted request.
    pub first_day: Option<Date>,
    pub last_day: Option<Date>,
    pub notes: Notes,
}

/// Filter, group and price the requests of `sessions` (after [`super::resolve`]).
pub fn build(
    sessions: &[SessionUsage],
    files: usize,
    notes: Notes,
    options: ReportOptions,
) -> Report {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut days: BTreeMap<String, Group> = BTreeMap::new();
    let mut unpriced: BTreeMap<String, Group> = BTreeMap::new();
    let mut rows = Vec::new();
    let (mut first_day, mut last_day) = (None, None);
    let dated = options.since.is_some() || options.until.is_some();
    // Price lookups by model name, once per name (the price of each request's day is picked
    // from the model's entry).
    let mut pricer: Pricer<'_, '_> = Pricer::new(&options);
    let mut side = Group::new("side".into());
    let mut by_agent: BTreeMap<Agent, Group> = BTreeMap::new();
    let mut agents: Vec<Agent> = sessions.iter().map(|s| s.agent).collect();
    agents.sort();
    agents.dedup();
    for session in sessions {
        let mut row = SessionRow {
            agent: session.agent,
            id: session.id.clone(),
            path: session.path.clone(),
            date: None,
            sums: Group::new(session.id.clone().unwrap_or_else(|| session.path.clone())),
            fork: session.fork.clone(),
            hit_rates: Vec::new(),
        };
        for request in session.requests.iter().filter(|r| !r.inherited) {
            let date = request
                .unix_seconds
                .and_then(|s| local_date(s, &options.time_zone));
            let inside = match date {
                None => !dated,
                Some(d) => {
                    options.since.is_none_or(|s| d >= s) && options.until.is_none_or(|u| d <= u)
                }
            };
            if !inside {
                continue;
            }
            let model = request.model.as_deref();
            let cost = pricer.cost(session.agent, request);
            let key = group_key(options.by, date, session, request);
            groups
                .entry(key.clone())
                .or_insert_with(|| Group::new(key))
                .add(request, cost);
            let day = date.map_or_else(|| NO_DATE.to_string(), |d| d.to_string());
            days.entry(day.clone())
                .or_insert_with(|| Group::new(day))
                .add(request, cost);
            if cost.is_none() {
                let name = model.unwrap_or(UNKNOWN).to_string();
                unpriced
                    .entry(name.clone())
                    .or_insert_with(|| Group::new(name))
                    .add(request, None);
            }
            if request.side {
                side.add(request, cost);
            }
            by_agent
                .entry(session.agent)
                .or_insert_with(|| Group::new(session.agent.name().into()))
                .add(request, cost);
            row.sums.add(request, cost);
            if let (Some(time), Some(rate)) = (request.unix_seconds, request.tokens.hit_rate()) {
                row.hit_rates.push((time, rate));
            }
            if let Some(date) = date {
                row.date = Some(row.date.map_or(date, |d: Date| d.min(date)));
                first_day = Some(first_day.map_or(date, |d: Date| d.min(date)));
                last_day = Some(last_day.map_or(date, |d: Date| d.max(date)));
            }
        }
        if row.sums.requests > 0 {
            rows.push(row);
        }
    }
    let mut total = Group::new("total".into());
    for group in groups.values() {
        total.merge(group);
    }
    let session_count = rows.len();
    // The sessions that lost the most first; ties by id, for output that does not move.
    rows.sort_by(|a, b| {
        b.sums
            .lost()
            .cmp(&a.sums.lost())
            .then_with(|| a.sums.key.cmp(&b.sums.key))
    });
    rows.truncate(options.top);
    let mut groups: Vec<Group> = groups.into_values().collect();
    order(&mut groups, options.by);
    let mut days: Vec<Group> = days.into_values().collect();
    order(&mut days, GroupBy::Day);
    let mut unpriced: Vec<Group> = unpriced.into_values().collect();
    order(&mut unpriced, GroupBy::Model);
    Report {
        options,
        files,
        sessions: session_count,
        total,
        groups,
        days,
        unpriced,
        side,
        agents,
        by_agent: by_agent.into_values().collect(),
        top: rows,
        first_day,
        last_day,
        notes,
    }
}

/// Dates in order, the undated last; other keys by cost, then input, then key.
fn order(groups: &mut [Group], by: GroupBy) {
    match by {
        GroupBy::Day | GroupBy::Week | GroupBy::Month => {
            groups.sort_by(|a, b| (a.key == NO_DATE, &a.key).cmp(&(b.key == NO_DATE, &b.key)));
        }
        _ => groups.sort_by(|a, b| {
            b.cost
                .total_cmp(&a.cost)
                .then(b.tokens.input.cmp(&a.tokens.input))
                .then_with(|| a.key.cmp(&b.key))
        }),
    }
}

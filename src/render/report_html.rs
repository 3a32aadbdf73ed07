//! `promptc report --format html`: one self-contained page. Charts are inline SVG drawn here;
//! no script, font, style sheet or image is fetched (a Content-Security-Policy says so to the
//! browser), so the file opens offline and anywhere.

use std::fmt::Write as _;
use std::io::{self, Write};

// Session text (models, paths, ids) escaped as on every page: controls, bidi and zero-width
// characters shown as escapes, then HTML's five.
use super::page::esc;
use super::report::{Layout, dollars, group_cells, percent, tokens, zone_name};
use crate::report::{Group, Report, SessionRow};

mod charts;
use charts::{cause_chart, day_chart, hit_rate_chart};

/// Chart sizes, in SVG user units (the page scales them to its width).
pub const CHART_WIDTH: f64 = 1000.0;
pub const CHART_HEIGHT: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 36.0;
/// The plot area of the day and hit-rate charts.
pub const PLOT_WIDTH: f64 = CHART_WIDTH - LEFT - RIGHT;
pub const PLOT_HEIGHT: f64 = CHART_HEIGHT - TOP - BOTTOM;
/// The longest bar of the cause chart.
pub const CAUSE_BAR_MAX: f64 = 560.0;
const CAUSE_LABEL: f64 = 190.0;
const CAUSE_ROW: f64 = 30.0;

const CACHED: &str = "#2a9d8f";
const UNCACHED: &str = "#e76f51";
const WRITTEN: &str = "#f4a261";
const PALETTE: [&str; 10] = [
    "#264653", "#e76f51", "#2a9d8f", "#8e5ea2", "#f4a261", "#3a86ff", "#d62828", "#6a994e",
    "#b5838d", "#457b9d",
];

/// The shortest prefix of each top session's key that tells them apart (at least 8).
fn labels(top: &[SessionRow]) -> Vec<String> {
    let len = crate::core::ids::unique_prefix_len(top.iter().map(|r| r.sums.key.as_str()), 8);
    top.iter()
        .map(|r| r.sums.key.chars().take(len).collect())
        .collect()
}

/// A coordinate, two decimals (deterministic, short).
fn n(value: f64) -> String {
    format!("{:.2}", value + 0.0)
}

const STYLE: &str = r#"
:root { color-scheme: light; --ink: #1d2433; --muted: #5c667a; --line: #e3e7ee; --card: #ffffff; --bg: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1060px; margin: 0 auto; padding: 28px 24px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 17px; margin: 0 0 12px; }
p.sub { color: var(--muted); margin: 0 0 22px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin-bottom: 22px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
.card .value { font-size: 22px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .note { color: var(--muted); font-size: 12px; }
.card.alert .value { color: #c2410c; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 18px 18px 14px; margin-bottom: 18px; }
svg { display: block; width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
svg .grid { stroke: var(--line); stroke-width: 1; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; font-size: 13px; color: var(--muted); margin-top: 8px; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; background: var(--swatch); vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 7px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: 0.03em; }
th:first-child, td:first-child, td.left, th.left { text-align: left; }
tr.total td { font-weight: 650; border-top: 2px solid var(--line); }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f0f2f6; padding: 2px 5px; border-radius: 4px; }
.scroll { overflow-x: auto; }
td.why { white-space: normal; min-width: 220px; }
td.why code { overflow-wrap: anywhere; }
ul.notes { margin: 0; padding-left: 18px; color: var(--muted); font-size: 13.5px; }
footer { color: var(--muted); font-size: 12.5px; margin-top: 8px; }
"#;

/// `report --format html`.
pub fn write_report_html(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut page = String::new();
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n",
    );
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    page.push_str("<title>promptc report: where the prompt-cache money goes</title>\n<style>");
    page.push_str(STYLE);
    page.push_str("</style>\n</head>\n<body>\n<main>\n");
    let layout = Layout::of(report);
    header(&mut page, report);
    cards(&mut page, &report.total);
    if layout.claude {
        page.push_str(
            "<section>\n<h2>Input per day: read from the cache, written to it, neither</h2>\n",
        );
        day_chart(&mut page, &report.days, layout);
        let _ = writeln!(
            page,
            "<div class=\"legend\"><span style=\"--swatch:{CACHED}\">read (cached input)</span>\
             <span style=\"--swatch:{WRITTEN}\">written to the cache</span>\
             <span style=\"--swatch:{UNCACHED}\">uncached, not written</span></div>\n</section>"
        );
        page.push_str("<section>\n<h2>By agent</h2>\n");
        groups_table(
            &mut page,
            "agents",
            "agent",
            &report.by_agent,
            &report.total,
            layout,
        );
        page.push_str("</section>\n");
    } else {
        page.push_str("<section>\n<h2>Input per day: cached and uncached</h2>\n");
        day_chart(&mut page, &report.days, layout);
        let _ = writeln!(
            page,
            "<div class=\"legend\"><span style=\"--swatch:{CACHED}\">cached input</span>\
             <span style=\"--swatch:{UNCACHED}\">uncached input</span></div>\n</section>"
        );
    }
    page.push_str("<section>\n<h2>Uncached input by cause</h2>\n");
    cause_chart(&mut page, &report.total);
    page.push_str("</section>\n");
    if !report.top.is_empty() {
        page.push_str("<section>\n<h2>Cache hit rate per request over each session, sessions that lost the most</h2>\n");
        hit_rate_chart(&mut page, &report.top);
        page.push_str("</section>\n<section>\n<h2>Sessions that lost the most</h2>\n");
        top_table(&mut page, &report.top, layout);
        page.push_str("</section>\n");
    }
    let _ = writeln!(
        page,
        "<section>\n<h2>By {}</h2>",
        esc(report.options.by.name())
    );
    groups_table(
        &mut page,
        "groups",
        report.options.by.name(),
        &report.groups,
        &report.total,
        layout,
    );
    page.push_str("</section>\n");
    notes(&mut page, report);
    let prices = &report.options.prices;
    let claude = &report.options.claude_prices;
    let claude_prices = if layout.claude {
        format!(
            "; Claude Code's requests at Anthropic's, as of {}: {}",
            esc(&claude.as_of),
            esc(&claude.source)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        page,
        "<footer>Prices in USD per million tokens as of {}: {}{claude_prices}. Cold starts are the \
         first request of each session: nothing to reuse, not a loss. Written by promptc report.</footer>",
        esc(prices.as_of.as_deref().unwrap_or("an unknown date")),
        esc(prices.source.as_deref().unwrap_or("no source given"))
    );
    page.push_str("</main>\n</body>\n</html>\n");
    out.write_all(page.as_bytes())
}

fn header(page: &mut String, report: &Report) {
    let span = match (report.first_day, report.last_day) {
        (Some(first), Some(last)) if first == last => format!("{first}"),
        (Some(first), Some(last)) => format!("{first} to {last}"),
        _ => "no dated requests".into(),
    };
    let _ = writeln!(
        page,
        "<h1>Where the prompt-cache money goes</h1>\n<p class=\"sub\">{} sessions with usage \
         ({} rollout files), {}, time zone {}.</p>",
        report.sessions,
        report.files,
        esc(&span),
        esc(&zone_name(report))
    );
}

fn cards(page: &mut String, total: &Group) {
    let priced = total.requests > total.unpriced_requests;
    let card = |page: &mut String, class: &str, label: &str, value: String, note: String| {
        let _ = writeln!(
            page,
            "<div class=\"card {class}\"><div class=\"label\">{}</div><div class=\"value\">{}\
             </div><div class=\"note\">{}</div></div>",
            esc(label),
            esc(&value),
            esc(&note)
        );
    };
    page.push_str("<div class=\"cards\">\n");
    card(
        page,
        "",
        "Paid",
        dollars(total.cost, priced),
        format!("{} requests", total.requests),
    );
    card(
        page,
        "alert",
        "Cost of misses",
        dollars(total.miss_cost(), priced),
        "more than had lost input been cached".into(),
    );
    card(
        page,
        "",
        "Cache hit rate",
        percent(total.tokens.hit_rate()),
        format!(
            "{} of {} input",
            tokens(total.tokens.cached),
            tokens(total.tokens.input)
        ),
    );
    card(
        page,
        "alert",
        "Input lost",
        tokens(total.lost()),
        "the cache could have served it".into(),
    );
    card(
        page,
        "",
        "Output",
        tokens(total.tokens.output),
        format!("{} reasoning", tokens(total.tokens.reasoning)),
    );
    page.push_str("</div>\n");
}

fn top_table(page: &mut String, top: &[SessionRow], layout: Layout) {
    let agent_header = if layout.claude { "<th>Agent</th>" } else { "" };
    let _ = writeln!(
        page,
        "<div class=\"scroll\"><table id=\"top-sessions\">\n<tr><th>Session</th>{agent_header}\
         <th>Date</th><th>Requests</th><th>Input</th><th>Hit</th><th>Lost</th><th>Misses</th>\
         <th class=\"left\">Top cause</th><th class=\"left\">Why</th></tr>"
    );
    for (row, id) in top.iter().zip(labels(top)) {
        let priced = row.sums.unpriced_requests < row.sums.requests;
        let agent = if layout.claude {
            format!("<td>{}</td>", row.agent.name())
        } else {
            String::new()
        };
        let _ = writeln!(
            page,
            "<tr><td title=\"{}\">{}</td>{agent}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td class=\"left\">{}</td><td class=\"left why\"><code>{}</code></td></tr>",
            esc(&row.path),
            esc(&id),
            row.date.map_or("-".into(), |d| d.to_string()),
            row.sums.requests,
            tokens(row.sums.tokens.input),
            percent(row.sums.tokens.hit_rate()),
            tokens(row.sums.lost()),
            dollars(row.sums.miss_cost(), priced),
            esc(&row.sums.top_cause().map_or("-".into(), |c| c.label())),
            esc(&row.command())
        );
    }
    page.push_str("</table></div>\n");
}

/// A table of groups and their total, its columns the text report's.
fn groups_table(
    page: &mut String,
    id: &str,
    by: &str,
    groups: &[Group],
    total: &Group,
    layout: Layout,
) {
    let _ = write!(
        page,
        "<div class=\"scroll\"><table id=\"{id}\">\n<tr><th>{}</th><th>Requests</th>",
        esc(by)
    );
    for header in layout.token_headers() {
        let mut title = header.to_ascii_lowercase();
        title[..1].make_ascii_uppercase();
        let _ = write!(page, "<th>{}</th>", esc(&title));
    }
    page.push_str("<th>Hit</th><th>Lost</th><th>Cost</th><th>Misses</th></tr>\n");
    let row = |page: &mut String, group: &Group, class: &str, key: &str| {
        let _ = write!(page, "<tr class=\"{class}\">");
        for cell in group_cells(group, key.to_string(), layout) {
            let _ = write!(page, "<td>{}</td>", esc(&cell));
        }
        page.push_str("</tr>\n");
    };
    for group in groups {
        row(page, group, "", &group.key);
    }
    row(page, total, "total", "Total");
    page.push_str("</table></div>\n");
}

fn notes(page: &mut String, report: &Report) {
    let notes = &report.notes;
    let mut items = Vec::new();
    for group in &report.unpriced {
        items.push(format!(
            "<b>{}</b> has no price: {} requests, {} input tokens counted, not priced (add it \
             with <code>--pricing FILE</code>).",
            esc(&group.key),
            group.requests,
            tokens(group.tokens.input)
        ));
    }
    for skipped in &notes.skipped {
        items.push(format!(
            "Skipped <code>{}</code>: {}",
            esc(&skipped.path),
            esc(&skipped.reason)
        ));
    }
    for partly in &notes.partly_read {
        items.push(format!(
            "<code>{}</code>: {} lines could not be read; counted from the others.",
            esc(&partly.path),
            partly.skipped_lines
        ));
    }
    for fork in &notes.forks_unknown_parent {
        items.push(format!(
            "<code>{}</code> is a fork that copies the lines of a parent that was not read: \
             counted whole, its parent's history may be in it.",
            esc(fork)
        ));
    }
    for duplicate in &notes.duplicates {
        items.push(format!(
            "<code>{}</code> is the same session as <code>{}</code>: counted once.",
            esc(&duplicate.path),
            esc(&duplicate.counted)
        ));
    }
    if !notes.forks_subtracted.is_empty() {
        items.push(format!(
            "{} fork(s) counted without the counters carried over from the parent.",
            notes.forks_subtracted.len()
        ));
    }
    if !notes.no_usage.is_empty() {
        items.push(format!(
            "{} rollouts without usage counters.",
            notes.no_usage.len()
        ));
    }
    if report.side.requests > 0 {
        items.push(format!(
            "Side requests (Claude Code 2.0.x's subagent warmups), in the sums: {} requests, {} \
             input, {}.",
            report.side.requests,
            tokens(report.side.tokens.input),
            dollars(
                report.side.cost,
                report.side.unpriced_requests < report.side.requests
            )
        ));
    }
    if let Some(claude) = &notes.claude {
        items.push(format!(
            "Claude Code: {} requests counted once per response ({} lines repeating a \
             response's usage not counted again, {} without a <code>requestId</code>, {} with a \
             reused id); {} copied responses and {} <code>progress</code> lines left out; {} \
             compactions made requests no line records.",
            claude.requests,
            claude.repeated_usage_lines,
            claude.without_request_id,
            claude.reused_message_id,
            claude.copies,
            claude.progress_lines,
            claude.compactions
        ));
        for path in &claude.ignored_files {
            items.push(format!(
                "Ignored <code>{}</code>: not a transcript of a session in Claude Code's layout.",
                esc(path)
            ));
        }
    }
    if items.is_empty() {
        return;
    }
    page.push_str("<section>\n<h2>Notes</h2>\n<ul class=\"notes\">\n");
    for item in items {
        let _ = writeln!(page, "<li>{item}</li>");
    }
    page.push_str("</ul>\n</section>\n");
}

//! `promptc report` as text and JSON (the HTML page is [`super::report_html`]).

use std::io::{self, Write};

use super::{RenderOptions, Tone, paint, write_painted};
use crate::core::sanitize::{escape_line, truncate};
use crate::report::{Agent, Cause, Group, Report, SessionRow};

mod json;
pub use json::write_report_json;

/// Which columns a report's tables have: Codex's alone as they always were, or, when a Claude
/// Code session was read, the prompt split as Anthropic bills it (README, "report").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Anthropic's columns: uncached, written for 5 minutes and for an hour, read.
    pub claude: bool,
    /// The reasoning column (Codex rollouts report reasoning tokens).
    pub reasoning: bool,
}

impl Layout {
    pub(crate) fn of(report: &Report) -> Layout {
        let claude = report.agents.contains(&Agent::Claude);
        Layout {
            claude,
            reasoning: !claude || report.agents.contains(&Agent::Codex),
        }
    }

    /// The headers of the token columns, after the key and REQUESTS.
    pub(crate) fn token_headers(self) -> Vec<&'static str> {
        let mut headers = if self.claude {
            vec!["UNCACHED", "WRITE 5M", "WRITE 1H", "READ", "OUTPUT"]
        } else {
            vec!["INPUT", "CACHED", "UNCACHED", "OUTPUT"]
        };
        if self.reasoning {
            headers.push("REASONING");
        }
        headers
    }
}

/// The zone's IANA name, else how it was given.
pub fn zone_name(report: &Report) -> String {
    let zone = &report.options.time_zone;
    zone.iana_name().map_or_else(
        || {
            if zone == &jiff::tz::TimeZone::UTC {
                "UTC".into()
            } else {
                "local".into()
            }
        },
        str::to_string,
    )
}

/// Tokens in a few characters: `950`, `12.3k`, `4.56M`, `1.40B`.
pub fn tokens(n: u64) -> String {
    let n = n as f64;
    if n < 1e3 {
        format!("{n}")
    } else if n < 1e6 {
        format!("{:.1}k", n / 1e3)
    } else if n < 1e9 {
        format!("{:.2}M", n / 1e6)
    } else {
        format!("{:.2}B", n / 1e9)
    }
}

/// Dollars: cents from $1 on, four decimals below (a session often costs cents); `-` when
/// nothing was priced.
pub fn dollars(value: f64, priced: bool) -> String {
    if !priced {
        "-".into()
    } else if value.abs() >= 1.0 {
        format!("${value:.2}")
    } else {
        format!("${:.4}", value + 0.0)
    }
}

pub fn percent(rate: Option<f64>) -> String {
    rate.map_or("-".into(), |r| format!("{:.1}%", r * 100.0))
}

/// A table: a header and rows of cells, the first column left-aligned, the others right-aligned
/// but for `left` columns.
fn write_table(
    out: &mut dyn Write,
    header: &[&str],
    rows: &[Vec<String>],
    left: &[usize],
    options: &RenderOptions,
) -> io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut line = String::new();
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = width.saturating_sub(cell.chars().count());
            let last = i + 1 == cells.len();
            if i == 0 || left.contains(&i) {
                line.push_str(cell);
                if !last {
                    line.push_str(&" ".repeat(pad));
                }
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        line
    };
    write_painted(out, options, Tone::Heading, &line(header.to_vec()))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

/// The cells of a group's row, text and HTML alike: key, requests, the token columns of
/// `layout`, hit rate, lost, cost, misses.
pub(crate) fn group_cells(group: &Group, key: String, layout: Layout) -> Vec<String> {
    let priced = group.unpriced_requests < group.requests;
    let t = &group.tokens;
    let mut cells = vec![key, group.requests.to_string()];
    if layout.claude {
        cells.extend([
            tokens(t.unwritten()),
            tokens(t.cache_write_5m()),
            tokens(t.cache_write_1h),
            tokens(t.cached),
            tokens(t.output),
        ]);
    } else {
        cells.extend([
            tokens(t.input),
            tokens(t.cached),
            tokens(t.uncached()),
            tokens(t.output),
        ]);
    }
    if layout.reasoning {
        cells.push(tokens(t.reasoning));
    }
    cells.extend([
        percent(t.hit_rate()),
        tokens(group.lost()),
        dollars(group.cost, priced),
        dollars(group.miss_cost(), priced),
    ]);
    cells
}

/// `report` as text.
pub fn write_report_text(
    out: &mut dyn Write,
    report: &Report,
    options: &RenderOptions,
) -> io::Result<()> {
    let span = match (report.first_day, report.last_day) {
        (Some(first), Some(last)) => format!(", {first} to {last}"),
        _ => String::new(),
    };
    write_painted(
        out,
        options,
        Tone::Heading,
        &format!(
            "promptc report: {} sessions with usage ({} files){span}, time zone {}",
            report.sessions,
            report.files,
            zone_name(report)
        ),
    )?;
    let prices = &report.options.prices;
    let layout = Layout::of(report);
    if layout.reasoning {
        writeln!(
            out,
            "Prices: USD per million tokens as of {}, {}",
            prices.as_of.as_deref().unwrap_or("an unknown date"),
            escape_line(prices.source.as_deref().unwrap_or("no source given"))
        )?;
    }
    if layout.claude {
        let claude = &report.options.claude_prices;
        writeln!(
            out,
            "Prices of Claude Code's requests: as of {}, {}",
            escape_line(&claude.as_of),
            escape_line(&claude.source)
        )?;
    }
    writeln!(out)?;
    let by = report.options.by.name().to_ascii_uppercase();
    let mut header = vec![by.as_str(), "REQUESTS"];
    header.extend(layout.token_headers());
    header.extend(["HIT", "LOST", "COST", "MISSES"]);
    let mut rows: Vec<Vec<String>> = report
        .groups
        .iter()
        .map(|g| group_cells(g, truncate(&escape_line(&g.key), 40).into_owned(), layout))
        .collect();
    rows.push(group_cells(&report.total, "TOTAL".into(), layout));
    write_table(out, &header, &rows, &[], options)?;
    writeln!(out)?;
    write_causes(out, &report.total, options)?;
    let side = &report.side;
    if side.requests > 0 {
        writeln!(
            out,
            "\nSide requests (Claude Code 2.0.x's subagent warmups), in the sums above: {} \
             requests, {} input, {} output, {}.",
            side.requests,
            tokens(side.tokens.input),
            tokens(side.tokens.output),
            dollars(side.cost, side.unpriced_requests < side.requests)
        )?;
    }
    let total = &report.total;
    if total.requests > total.unpriced_requests {
        writeln!(
            out,
            "\nMisses cost {} of the {} paid: the same requests would have cost that much less \
             had every lost token been cached.",
            dollars(total.miss_cost(), true),
            dollars(total.cost, true)
        )?;
    }
    writeln!(out)?;
    write_top(out, &report.top, options)?;
    write_notes(out, report, options)
}

fn write_causes(out: &mut dyn Write, total: &Group, options: &RenderOptions) -> io::Result<()> {
    if total.requests == 0 {
        return writeln!(out, "No request was counted.");
    }
    if total.causes.is_empty() {
        return writeln!(
            out,
            "No input was lost: every request was cached as predicted."
        );
    }
    let mut causes: Vec<(&Cause, _)> = total.causes.iter().collect();
    // Losses first, the largest first; cold starts (not a loss) last.
    causes.sort_by(|a, b| {
        (*a.0 == Cause::ColdStart, b.1.tokens, a.0).cmp(&(
            *b.0 == Cause::ColdStart,
            a.1.tokens,
            b.0,
        ))
    });
    let rows: Vec<Vec<String>> = causes
        .iter()
        .map(|(cause, sum)| {
            vec![
                cause.label(),
                tokens(sum.tokens),
                sum.requests.to_string(),
                dollars(sum.cost, true),
            ]
        })
        .collect();
    write_table(
        out,
        &["UNCACHED INPUT BY CAUSE", "TOKENS", "REQUESTS", "MISSES"],
        &rows,
        &[],
        options,
    )
}

fn write_top(out: &mut dyn Write, top: &[SessionRow], options: &RenderOptions) -> io::Result<()> {
    if top.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = top.iter().filter_map(|r| r.id.as_deref()).collect();
    let id_len = crate::core::ids::unique_prefix_len(ids, 8);
    let rows: Vec<Vec<String>> = top
        .iter()
        .map(|row| {
            let priced = row.sums.unpriced_requests < row.sums.requests;
            let session = row.id.as_deref().map_or_else(
                || truncate(&escape_line(&row.path), 40).into_owned(),
                |id| escape_line(&id.chars().take(id_len).collect::<String>()).into_owned(),
            );
            vec![
                session,
                row.date.map_or("-".into(), |d| d.to_string()),
                row.sums.requests.to_string(),
                tokens(row.sums.tokens.input),
                percent(row.sums.tokens.hit_rate()),
                tokens(row.sums.lost()),
                dollars(row.sums.miss_cost(), priced),
                row.sums.top_cause().map_or("-".into(), |c| c.label()),
                escape_line(&row.command()).into_owned(),
            ]
        })
        .collect();
    write_table(
        out,
        &[
            "SESSIONS THAT LOST THE MOST",
            "DATE",
            "REQUESTS",
            "INPUT",
            "HIT",
            "LOST",
            "MISSES",
            "TOP CAUSE",
            "WHY",
        ],
        &rows,
        &[1, 7, 8],
        options,
    )
}

fn write_notes(out: &mut dyn Write, report: &Report, options: &RenderOptions) -> io::Result<()> {
    let notes = &report.notes;
    let warn = |label: &str| paint(options, Tone::Warning, label);
    let mut first = true;
    let mut gap = |out: &mut dyn Write| {
        if std::mem::take(&mut first) {
            writeln!(out)
        } else {
            Ok(())
        }
    };
    for group in &report.unpriced {
        gap(out)?;
        // The table's reason for leaving a model unpriced, when it names the model.
        let why = report
            .options
            .unpriced_reason(&group.key)
            .map_or(String::new(), |reason| format!(": {}", escape_line(reason)));
        writeln!(
            out,
            "{}: {}: {} requests, {} input, {} output tokens counted, not priced{why} (add it \
             with --pricing FILE)",
            warn("unpriced"),
            escape_line(&group.key),
            group.requests,
            tokens(group.tokens.input),
            tokens(group.tokens.output)
        )?;
    }
    for skipped in &notes.skipped {
        gap(out)?;
        writeln!(
            out,
            "{}: {}: {}",
            warn("skipped"),
            escape_line(&skipped.path),
            escape_line(&skipped.reason)
        )?;
    }
    for fork in &notes.forks_unknown_parent {
        gap(out)?;
        writeln!(
            out,
            "{}: {}: a fork that copies the lines of a parent that was not read: counted whole, \
             its parent's history may be in it",
            warn("fork"),
            escape_line(fork)
        )?;
    }
    for duplicate in &notes.duplicates {
        gap(out)?;
        writeln!(
            out,
            "duplicate: {}: the same session as {}, counted once",
            escape_line(&duplicate.path),
            escape_line(&duplicate.counted)
        )?;
    }
    for partly in &notes.partly_read {
        gap(out)?;
        writeln!(
            out,
            "{}: {}: {} line{} could not be read; counted from the others",
            warn("partly read"),
            escape_line(&partly.path),
            partly.skipped_lines,
            if partly.skipped_lines == 1 { "" } else { "s" }
        )?;
    }
    for path in &notes.counter_restarts {
        gap(out)?;
        writeln!(
            out,
            "restarted counters: {}: each run counted to its last counters",
            escape_line(path)
        )?;
    }
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    if !notes.forks_subtracted.is_empty() {
        gap(out)?;
        writeln!(
            out,
            "{} counted without the counters carried over from the parent",
            count(notes.forks_subtracted.len(), "fork")
        )?;
    }
    if !notes.no_usage.is_empty() {
        gap(out)?;
        writeln!(
            out,
            "{} without usage counters",
            count(notes.no_usage.len(), "rollout")
        )?;
    }
    if let Some(claude) = &notes.claude {
        for path in &claude.ignored_files {
            gap(out)?;
            writeln!(
                out,
                "ignored: {}: not a transcript of a session in Claude Code's layout",
                escape_line(path)
            )?;
        }
        gap(out)?;
        writeln!(
            out,
            "Claude Code: {} counted once per response ({} lines repeating a response's usage \
             not counted again; {} without a requestId, named by message.id; {} with a reused \
             id), {} left out ({} progress lines of subagents counted from their own files)",
            count(claude.requests, "request"),
            claude.repeated_usage_lines,
            claude.without_request_id,
            claude.reused_message_id,
            count(claude.copies, "copied response"),
            claude.progress_lines,
        )?;
        if claude.compactions > 0 {
            writeln!(
                out,
                "{} made a request no line records: not counted",
                count(claude.compactions, "compaction")
            )?;
        }
    }
    Ok(())
}

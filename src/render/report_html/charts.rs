//! The report page's charts, inline SVG: input per day, uncached input by cause, the hit rate
//! over each top session.

use std::fmt::Write as _;

use super::super::report::{Layout, dollars, tokens};
use super::{
    CACHED, CAUSE_BAR_MAX, CAUSE_LABEL, CAUSE_ROW, CHART_HEIGHT, CHART_WIDTH, LEFT, PALETTE,
    PLOT_HEIGHT, PLOT_WIDTH, TOP, UNCACHED, WRITTEN, esc, labels, n,
};
use crate::report::{Cause, Group, SessionRow};

/// Round a maximum up to a tick scale: 1, 2 or 5 times a power of ten.
fn nice_max(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|&v| v >= max)
        .unwrap_or(10.0 * power)
}

/// Stacked bars, one per day: cached input below, uncached above (with Claude Code's columns:
/// read, written, then neither). A bar's height is its tokens over the scale's top (`data-max`)
/// times the plot's height.
pub(super) fn day_chart(page: &mut String, days: &[Group], layout: Layout) {
    let max = nice_max(days.iter().map(|d| d.tokens.input).max().unwrap_or(0) as f64);
    let _ = writeln!(
        page,
        "<svg id=\"chart-days\" viewBox=\"0 0 {} {}\" data-max=\"{}\" data-plot-height=\"{}\" \
         role=\"img\" aria-label=\"Cached and uncached input per day\">",
        n(CHART_WIDTH),
        n(CHART_HEIGHT),
        max,
        n(PLOT_HEIGHT)
    );
    for tick in 0..=4 {
        let value = max * f64::from(tick) / 4.0;
        let y = TOP + PLOT_HEIGHT - PLOT_HEIGHT * f64::from(tick) / 4.0;
        let _ = writeln!(
            page,
            "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{y:.2}\" y2=\"{y:.2}\"/><text x=\"{}\" \
             y=\"{:.2}\" text-anchor=\"end\">{}</text>",
            n(LEFT),
            n(LEFT + PLOT_WIDTH),
            n(LEFT - 8.0),
            y + 4.0,
            tokens(value as u64)
        );
    }
    let slot = PLOT_WIDTH / days.len().max(1) as f64;
    let width = (slot * 0.72).max(1.0);
    // At most about 12 day labels.
    let every = days.len().div_ceil(12).max(1);
    for (i, day) in days.iter().enumerate() {
        let x = LEFT + slot * i as f64 + (slot - width) / 2.0;
        let segments: Vec<(&str, &str, u64)> = if layout.claude {
            vec![
                ("cached", CACHED, day.tokens.cached),
                ("written", WRITTEN, day.tokens.cache_write),
                ("uncached", UNCACHED, day.tokens.unwritten()),
            ]
        } else {
            vec![
                ("cached", CACHED, day.tokens.cached),
                ("uncached", UNCACHED, day.tokens.uncached()),
            ]
        };
        let mut y = TOP + PLOT_HEIGHT;
        for (class, color, value) in segments {
            let height = PLOT_HEIGHT * value as f64 / max;
            y -= height;
            let _ = writeln!(
                page,
                "<rect class=\"{class}\" data-day=\"{}\" data-tokens=\"{value}\" x=\"{}\" \
                 y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>{}: {} {class} \
                 input</title></rect>",
                esc(&day.key),
                n(x),
                n(y),
                n(width),
                n(height),
                esc(&day.key),
                tokens(value)
            );
        }
        if i % every == 0 {
            let label = day.key.get(5..).unwrap_or(&day.key);
            let _ = writeln!(
                page,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                n(x + width / 2.0),
                n(TOP + PLOT_HEIGHT + 18.0),
                esc(label)
            );
        }
    }
    page.push_str("</svg>\n");
}

/// One horizontal bar per cause, the longest for the cause with the most tokens.
pub(super) fn cause_chart(page: &mut String, total: &Group) {
    let mut causes: Vec<_> = total.causes.iter().collect();
    causes.sort_by(|a, b| {
        (*a.0 == Cause::ColdStart, b.1.tokens, a.0).cmp(&(
            *b.0 == Cause::ColdStart,
            a.1.tokens,
            b.0,
        ))
    });
    if total.requests == 0 {
        page.push_str("<p>No request was counted.</p>\n");
        return;
    }
    if causes.is_empty() {
        page.push_str("<p>No input was lost: every request was cached as predicted.</p>\n");
        return;
    }
    let max = causes.iter().map(|c| c.1.tokens).max().unwrap_or(1).max(1) as f64;
    let height = CAUSE_ROW * causes.len() as f64 + 8.0;
    let priced = total.requests > total.unpriced_requests;
    let _ = writeln!(
        page,
        "<svg id=\"chart-causes\" viewBox=\"0 0 {} {}\" data-max=\"{max}\" data-bar-max=\"{}\" \
         role=\"img\" aria-label=\"Uncached input by cause\">",
        n(CHART_WIDTH),
        n(height),
        n(CAUSE_BAR_MAX)
    );
    for (i, (cause, sum)) in causes.iter().enumerate() {
        let y = 4.0 + CAUSE_ROW * i as f64;
        let width = CAUSE_BAR_MAX * sum.tokens as f64 / max;
        let color = if **cause == Cause::ColdStart {
            "#9aa3b2"
        } else {
            UNCACHED
        };
        let _ = writeln!(
            page,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" style=\"fill:#1d2433;font-size:12.5px\">\
             {}</text><rect class=\"cause\" data-cause=\"{}\" data-tokens=\"{}\" x=\"{}\" y=\"{}\" \
             width=\"{}\" height=\"{}\" rx=\"3\" fill=\"{color}\"><title>{}: {} tokens, {} \
             requests</title></rect><text x=\"{}\" y=\"{}\">{} · {} · {} request{}</text>",
            n(CAUSE_LABEL - 10.0),
            n(y + 17.0),
            esc(&cause.label()),
            esc(&cause.name()),
            sum.tokens,
            n(CAUSE_LABEL),
            n(y + 4.0),
            n(width.max(1.0)),
            n(CAUSE_ROW - 10.0),
            esc(&cause.label()),
            sum.tokens,
            sum.requests,
            n(CAUSE_LABEL + width.max(1.0) + 8.0),
            n(y + 17.0),
            tokens(sum.tokens),
            dollars(sum.cost, priced),
            sum.requests,
            if sum.requests == 1 { "" } else { "s" }
        );
    }
    page.push_str("</svg>\n");
}

/// Each top session's requests by request number across (one session can span a day with
/// hours idle: on a time axis the rest squeezed into a sliver and a line crossed the gap), hit
/// rate up.
pub(super) fn hit_rate_chart(page: &mut String, top: &[SessionRow]) {
    // The n-th request of a session (from 0) and its hit rate.
    fn numbered(row: &SessionRow) -> impl Iterator<Item = (usize, f64)> + '_ {
        row.hit_rates.iter().map(|p| p.1).enumerate()
    }
    let longest = top.iter().map(|row| row.hit_rates.len()).max().unwrap_or(0);
    // Requests across: a round span whose quarters are round too.
    let span = [
        4usize, 8, 20, 40, 100, 200, 400, 1000, 2000, 4000, 10_000, 20_000, 40_000,
    ]
    .into_iter()
    .find(|&m| m >= longest)
    .unwrap_or_else(|| longest.div_ceil(100_000) * 100_000);
    let x = |k: usize| LEFT + PLOT_WIDTH * (k + 1) as f64 / span as f64;
    let y = |rate: f64| TOP + PLOT_HEIGHT * (1.0 - rate.clamp(0.0, 1.0));
    let _ = writeln!(
        page,
        "<svg id=\"chart-hit-rate\" viewBox=\"0 0 {} {}\" data-requests=\"{span}\" role=\"img\" \
         aria-label=\"Cache hit rate per request, by request number in the session\">",
        n(CHART_WIDTH),
        n(CHART_HEIGHT)
    );
    for tick in 0..=4 {
        let rate = f64::from(tick) / 4.0;
        let _ = writeln!(
            page,
            "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" \
             text-anchor=\"end\">{}%</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            n(LEFT),
            n(LEFT + PLOT_WIDTH),
            n(y(rate)),
            n(y(rate)),
            n(LEFT - 8.0),
            n(y(rate) + 4.0),
            tick * 25,
            n(LEFT + PLOT_WIDTH * rate),
            n(TOP + PLOT_HEIGHT + 18.0),
            if tick == 0 {
                "request".to_string()
            } else {
                (span * tick as usize / 4).to_string()
            }
        );
    }
    for (k, row) in top.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let points: Vec<String> = numbered(row)
            .map(|(k, r)| format!("{},{}", n(x(k)), n(y(r))))
            .collect();
        let _ = writeln!(
            page,
            "<polyline class=\"session\" data-session=\"{}\" data-points=\"{}\" fill=\"none\" \
             stroke=\"{color}\" stroke-width=\"1.2\" stroke-opacity=\"0.7\" points=\"{}\"/>",
            esc(&row.sums.key),
            points.len(),
            points.join(" ")
        );
        for point in &points {
            let (px, py) = point.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(
                page,
                "<circle cx=\"{px}\" cy=\"{py}\" r=\"1.8\" fill=\"{color}\"/>"
            );
        }
        page.push('\n');
    }
    page.push_str("</svg>\n<div class=\"legend\">");
    for (k, label) in labels(top).iter().enumerate() {
        let _ = write!(
            page,
            "<span style=\"--swatch:{}\">{}</span>",
            PALETTE[k % PALETTE.len()],
            esc(label)
        );
    }
    page.push_str("</div>\n");
}

//! The page's HTML: inline CSS, an SVG timeline, one section per step, a little script for
//! keyboard moves (the page reads without it: folds are `<details>`).

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{
    HistoryRow, Page, PageStep, Piece, Tone, emit, esc, esc_text, fold_middle, side_by_side,
};

const STYLE: &str = r#"
:root{--good:#2f7d4f;--bad:#c0392b;--neutral:#7a7f87;--line:#d9dce1;--bg:#fff;--fg:#1d2127;--dim:#6b7280}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;color:var(--fg);background:var(--bg)}
header,main{max-width:1400px;margin:0 auto;padding:12px 20px}
h1{font-size:20px;margin:4px 0}
h2{font-size:16px;margin:18px 0 6px}
dl.facts{display:flex;flex-wrap:wrap;gap:4px 18px;margin:4px 0;color:var(--dim)}
dl.facts dt{font-weight:600}dl.facts dd{margin:0 0 0 4px}
.timeline{overflow-x:auto;border:1px solid var(--line);border-radius:4px;padding:4px}
.legend span{margin-right:14px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
section.step{border:1px solid var(--line);border-left:5px solid var(--neutral);border-radius:4px;margin:8px 0;padding:6px 10px;content-visibility:auto;contain-intrinsic-size:auto 90px}
section.step.good{border-left-color:var(--good)}section.step.bad{border-left-color:var(--bad)}
section.step:target,section.step.current{outline:2px solid #3b82f6}
section.first-break{background:#fff5f4}
.head{display:flex;flex-wrap:wrap;gap:4px 14px;align-items:baseline}
.head b a{color:inherit;text-decoration:none}
.verdict.good{color:var(--good)}.verdict.bad{color:var(--bad);font-weight:600}.verdict.neutral{color:var(--neutral)}
.num{font-variant-numeric:tabular-nums;color:var(--dim)}
.bar{display:inline-flex;width:240px;height:10px;background:#f1f2f4;vertical-align:middle}
.bar i{display:block;height:100%}
.r{background:var(--good)}.w{background:#e0a526}.u{background:#d4574a}.o{background:#6b7280}
.explain{margin:2px 0;color:var(--dim)}
section.step p{margin:2px 0}section.step details{margin:2px 0}
.mark{display:inline-block;font-size:12px;padding:0 6px;border-radius:8px;background:#eef0f3}
.mark.gap{background:#fdf0d5}.mark.compaction{background:#e8defa}.mark.break{background:#fbe0dc}
details>summary{cursor:pointer;color:var(--dim)}
details.item>summary{color:var(--fg)}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:6px;background:#f7f8fa;border-radius:3px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:480px;overflow:auto}
.sbs{display:grid;grid-template-columns:1fr 1fr;gap:8px}
.sbs h4{margin:4px 0;font-size:12px;color:var(--dim)}
del{background:#ffd7d2;text-decoration:none}ins{background:#cdf3d7;text-decoration:none}
table.history{border-collapse:collapse;width:100%;font:12px/1.35 ui-monospace,monospace}
table.history td,table.history th{border-bottom:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top;width:45%}
table.history td.m{width:10%;color:var(--bad)}
tr.repair{background:#fff8e6}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.pair>div>section.step{margin:4px 0}
.missing{color:var(--dim);font-style:italic;padding:6px}
"#;

/// Keyboard moves: j/k (or arrows with Alt) to the next/previous step, e to expand all.
const SCRIPT: &str = r#"
(function(){
var steps=[].slice.call(document.querySelectorAll('section.step'));var at=-1;
function go(i){if(!steps.length)return;at=Math.max(0,Math.min(steps.length-1,i));
steps.forEach(function(s){s.classList.remove('current')});var s=steps[at];s.classList.add('current');
s.scrollIntoView({block:'start'});history.replaceState(null,'','#'+s.id)}
document.addEventListener('keydown',function(e){if(e.target.tagName==='INPUT')return;
if(e.key==='j')go(at+1);else if(e.key==='k')go(at-1);
else if(e.key==='e'){var open=!document.querySelector('details[open]');
document.querySelectorAll('details').forEach(function(d){d.open=open})}});
function req(sec){return sec.querySelector('details.request')}
function own(sec){var r=req(sec),out=[].slice.call(sec.querySelectorAll('pre[data-item]')).map(function(p){return p.textContent});
for(var i=+r.dataset.missing;i>0;i--)out.push('\u2026 an item the page does not embed (compile prints it)');return out}
function items(sec){var chain=[];for(var s=sec;s&&req(s);){chain.push(s);var r=req(s);
if(!+r.dataset.keep||!r.dataset.base)break;s=document.getElementById(r.dataset.base)}
var out=[];chain.reverse().forEach(function(s){out=out.slice(0,+req(s).dataset.keep).concat(own(s))});return out}
function assemble(sec){var r=sec.querySelector('details.request');if(!r)return;var box=r.querySelector('.assembled');
box.textContent='';items(sec).forEach(function(t){var p=document.createElement('pre');p.textContent=t;box.appendChild(p)});
box.hidden=false;r.open=true}
document.addEventListener('click',function(e){if(e.target.classList.contains('assemble'))assemble(e.target.closest('section.step'))});
var m=/^#input-(.+)$/.exec(location.hash);if(m){var sec=document.getElementById(m[1]);if(sec){assemble(sec);sec.scrollIntoView()}}
})();
"#;

fn start(page: &mut String, title: &str) {
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">");
    page.push_str("<meta name=\"generator\" content=\"promptc\">");
    let _ = write!(
        page,
        "<title>{}</title><style>{STYLE}</style></head><body>",
        esc(title)
    );
}

fn finish(page: &mut String) {
    let _ = writeln!(page, "<script>{SCRIPT}</script></body></html>");
}

fn facts(page: &mut String, p: &Page) {
    page.push_str("<dl class=\"facts\">");
    for (label, value) in &p.facts {
        let _ = write!(
            page,
            "<div><dt>{}</dt><dd>{}</dd></div>",
            esc(label),
            esc(value)
        );
    }
    page.push_str("</dl>");
}

/// A step's id: unique in a page, `prefix` telling the sides of a diff apart.
fn step_id(prefix: &str, s: &PageStep) -> String {
    format!("{prefix}s-{}-{}", s.turn, s.step)
}

/// The timeline: a bar per step (input up, output down), coloured by part and verdict; idle
/// gaps and compactions are vertical marks. Heights share one scale (the largest input).
fn timeline(page: &mut String, p: &Page, prefix: &str) {
    let width_each = if p.steps.len() > 600 { 2 } else { 6 };
    let step_w = width_each + 1;
    let (up, down) = (120usize, 30usize);
    let max_in = p
        .steps
        .iter()
        .filter_map(|s| s.input.or(s.estimated))
        .max()
        .unwrap_or(1)
        .max(1);
    let max_out = p
        .steps
        .iter()
        .filter_map(|s| s.output)
        .max()
        .unwrap_or(1)
        .max(1);
    let width = p.steps.len() * step_w + 2;
    let height = up + down + 4;
    let _ = write!(
        page,
        "<div class=\"timeline\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"requests\">"
    );
    let _ = write!(
        page,
        "<line x1=\"0\" y1=\"{up}\" x2=\"{width}\" y2=\"{up}\" stroke=\"#ccc\"/>"
    );
    let scale = |v: u64, max: u64, h: usize| -> usize {
        ((v as f64 / max as f64) * h as f64).round() as usize
    };
    for (i, s) in p.steps.iter().enumerate() {
        let x = 1 + i * step_w;
        if s.gap_seconds.is_some_and(|g| g >= 300) || s.compaction {
            let colour = if s.compaction { "#8b5cf6" } else { "#e0a526" };
            let _ = write!(
                page,
                "<line x1=\"{x}\" y1=\"0\" x2=\"{x}\" y2=\"{height}\" stroke=\"{colour}\" stroke-dasharray=\"3 2\"/>"
            );
        }
        let _ = write!(page, "<a href=\"#{}\"><g>", step_id(prefix, s));
        let _ = write!(
            page,
            "<title>turn {} step {}: {}</title>",
            s.turn,
            s.step,
            esc(&s.short)
        );
        let mut y = up;
        if let Some(input) = s.input {
            let read = s.read.unwrap_or(0).min(input);
            let written = s.written.unwrap_or(0).min(input - read);
            let uncached = input - read - written;
            let verdict_colour = match s.tone {
                Tone::Good => "#2f7d4f",
                Tone::Bad => "#c0392b",
                Tone::Neutral => "#7a7f87",
            };
            for (value, fill, opacity) in [
                (read, verdict_colour, "1"),
                (written, "#e0a526", "1"),
                (uncached, verdict_colour, "0.35"),
            ] {
                let h = scale(value, max_in, up);
                if h == 0 {
                    continue;
                }
                y -= h;
                let _ = write!(
                    page,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{width_each}\" height=\"{h}\" fill=\"{fill}\" fill-opacity=\"{opacity}\"/>"
                );
            }
        }
        if let (None, Some(estimate)) = (s.input, s.estimated) {
            let h = scale(estimate, max_in, up);
            if h > 0 {
                let _ = write!(
                    page,
                    "<rect x=\"{x}\" y=\"{}\" width=\"{width_each}\" height=\"{h}\" fill=\"none\" stroke=\"#7a7f87\" stroke-width=\"0.8\"/>",
                    up - h
                );
            }
        }
        if let Some(output) = s.output {
            let h = scale(output, max_out, down);
            if h > 0 {
                let _ = write!(
                    page,
                    "<rect x=\"{x}\" y=\"{}\" width=\"{width_each}\" height=\"{h}\" fill=\"#6b7280\"/>",
                    up + 1
                );
            }
        }
        page.push_str("</g></a>");
    }
    page.push_str("</svg></div>");
    page.push_str("<p class=\"legend\">");
    if p.writes {
        page.push_str("<span><i class=\"r\"></i>read</span><span><i class=\"w\"></i>written</span><span><i class=\"u\"></i>uncached (in the timeline: the verdict's colour, pale)</span>");
    } else {
        page.push_str(
            "<span><i class=\"r\"></i>cached</span><span><i class=\"u\"></i>uncached (timeline: the verdict's colour, pale)</span>",
        );
    }
    page.push_str("<span><i class=\"o\"></i>output (below)</span><span>colour: verdict (green hit, red miss, grey neither)</span><span>outline: estimated input, no usage recorded</span><span>dashed: idle ≥ 5 min (amber), compaction (violet)</span><span>keys: j / k next / previous step, e expand all</span></p>");
}

fn bar(page: &mut String, s: &PageStep, max_in: u64) {
    let Some(input) = s.input else {
        return;
    };
    let read = s.read.unwrap_or(0).min(input);
    let written = s.written.unwrap_or(0).min(input - read);
    let uncached = input - read - written;
    page.push_str("<span class=\"bar\">");
    for (value, class) in [(read, "r"), (written, "w"), (uncached, "u")] {
        if value > 0 {
            let pct = value as f64 * 100.0 / max_in.max(1) as f64;
            let _ = write!(page, "<i class=\"{class}\" style=\"width:{pct:.2}%\"></i>");
        }
    }
    page.push_str("</span>");
}

fn piece(page: &mut String, p: &Piece, open: bool) {
    let _ = write!(
        page,
        "<details class=\"item\"{}><summary>{}</summary><pre{}>{}",
        if open { " open" } else { "" },
        esc_text(&p.title),
        if p.note { "" } else { " data-item" },
        esc_text(&p.text)
    );
    if p.cut > 0 {
        let _ = write!(
            page,
            "\n… {} more bytes (the command above prints them)",
            p.cut
        );
    }
    page.push_str("</pre></details>");
}

/// `previous`: the request before this one in its session (its section holds the items this
/// one shares with it).
fn step(
    page: &mut String,
    s: &PageStep,
    previous: Option<&PageStep>,
    prefix: &str,
    max_in: u64,
    first_break: bool,
) {
    let id = step_id(prefix, s);
    let _ = write!(
        page,
        "<section class=\"step {}{}\" id=\"{id}\" data-turn=\"{}\" data-step=\"{}\" data-verdict=\"{}\">",
        s.tone.class(),
        if first_break { " first-break" } else { "" },
        s.turn,
        s.step,
        esc(&s.verdict)
    );
    let _ = write!(
        page,
        "<div class=\"head\"><b><a href=\"#{id}\">turn {} step {}</a></b>",
        s.turn, s.step
    );
    if let Some(model) = &s.model {
        let _ = write!(page, "<span class=\"num\">{}</span>", esc(model));
    }
    let _ = write!(
        page,
        "<span class=\"verdict {}\">{}</span>",
        s.tone.class(),
        esc(&s.short)
    );
    bar(page, s, max_in);
    let number = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let _ = write!(
        page,
        "<span class=\"num\">in {} · {} {}",
        number(s.input),
        if s.written.is_some() {
            "read"
        } else {
            "cached"
        },
        number(s.read)
    );
    if s.written.is_some() {
        let _ = write!(page, " · written {}", number(s.written));
    }
    let _ = write!(page, " · out {}</span>", number(s.output));
    if let Some(gap) = s.gap_seconds.filter(|&g| g >= 60) {
        let _ = write!(
            page,
            "<span class=\"mark gap\">idle {}m {}s</span>",
            gap / 60,
            gap % 60
        );
    }
    if s.compaction {
        page.push_str("<span class=\"mark compaction\">compaction</span>");
    }
    if s.is_break() && s.previous_items > 0 {
        page.push_str("<span class=\"mark break\">prefix break</span>");
    }
    if first_break {
        page.push_str("<span class=\"mark break\">first break</span>");
    }
    page.push_str("</div>");
    let _ = write!(page, "<p class=\"explain\">{}</p>", esc(&s.explanation));
    // The difference from the previous request.
    let _ = write!(
        page,
        "<p class=\"prefix\" data-items=\"{}\" data-shared=\"{}\" data-appended=\"{}\">{} item{}: {} shared with the previous request",
        s.items,
        s.shared,
        s.items - s.shared.min(s.items),
        s.items,
        if s.items == 1 { "" } else { "s" },
        s.shared
    );
    if s.shared < s.previous_items {
        let _ = write!(
            page,
            " (of its {}: the prefix ends at item {})",
            s.previous_items, s.shared
        );
    }
    let _ = write!(page, ", {} appended", s.items - s.shared.min(s.items));
    if !s.changed_parts.is_empty() {
        let _ = write!(page, "; changed: {}", esc(&s.changed_parts.join(", ")));
    }
    page.push_str("</p>");
    for (part, old, new) in &s.changed_texts {
        let (left, right) = side_by_side(old, new);
        let _ = write!(
            page,
            "<details class=\"change\" open><summary>{} changed</summary><div class=\"sbs\"><div><h4>previous</h4><pre class=\"old\">{left}</pre></div><div><h4>this request</h4><pre class=\"new\">{right}</pre></div></div></details>",
            esc(part)
        );
    }
    if !s.removed.is_empty() || (s.shared < s.previous_items && !s.appended.is_empty()) {
        // A break: the previous request's items from the break on beside this one's, pair by
        // pair, the differing characters marked.
        page.push_str("<div class=\"break\">");
        let pairs = s.removed.len().max(s.appended.len()).min(8);
        for k in 0..pairs {
            let old = s.removed.get(k);
            let new = s.appended.get(k);
            let (left, right) = side_by_side(
                old.map_or("", |p| p.text.as_str()),
                new.map_or("", |p| p.text.as_str()),
            );
            let _ = write!(
                page,
                "<details class=\"change\"{}><summary>item {}: {} → {}</summary><div class=\"sbs\"><div><h4>previous</h4><pre class=\"old\">{left}</pre></div><div><h4>this request</h4><pre class=\"new\"{}>{right}</pre></div></div></details>",
                if k == 0 { " open" } else { "" },
                s.shared + k,
                esc(old.map_or("(none)", |p| p.title.as_str())),
                esc(new.map_or("(none)", |p| p.title.as_str())),
                if new.is_some_and(|p| !p.note) {
                    " data-item"
                } else {
                    ""
                },
            );
        }
        page.push_str("</div>");
        for p in s.appended.iter().skip(pairs) {
            piece(page, p, false);
        }
    } else if !s.appended.is_empty() {
        let _ = write!(
            page,
            "<details class=\"appended\"><summary>appended: {} item{}</summary>",
            s.appended.len(),
            if s.appended.len() == 1 { "" } else { "s" }
        );
        for p in &s.appended {
            piece(page, p, false);
        }
        page.push_str("</details>");
    }
    request(page, s, previous, prefix);
    let _ = write!(
        page,
        "<p class=\"num\"><code>{}</code></p>",
        esc(&s.command)
    );
    if let Some(body) = &s.body {
        let _ = write!(
            page,
            "<details class=\"body\"><summary>the request (as <code>compile</code> prints it)</summary><pre>{}</pre></details>",
            esc_text(&fold_middle(body))
        );
    }
    page.push_str("</section>");
}

/// The request, part by part, without copying what an earlier request holds (each request holds
/// the whole history: copying it at every step would make the page quadratic): the parts before
/// the input as in the previous request or changed (above), its first items those of the
/// previous request (a link to it), then what it appended (above). `data-base` and `data-keep`
/// let the script assemble the whole input from the chain.
fn request(page: &mut String, s: &PageStep, previous: Option<&PageStep>, prefix: &str) {
    let appended = s.items - s.shared.min(s.items);
    let _ = write!(
        page,
        "<details class=\"request\" data-keep=\"{}\" data-missing=\"{}\"",
        s.shared.min(s.items),
        s.missing
    );
    if let Some(p) = previous {
        let _ = write!(page, " data-base=\"{}\"", step_id(prefix, p));
    }
    page.push_str("><summary>the request, part by part</summary><ul>");
    match previous {
        None => page.push_str(
            "<li>instructions, tools and parameters: as <code>compile</code> prints them</li>",
        ),
        Some(p) if s.changed_parts.is_empty() => {
            let _ = write!(
                page,
                "<li>instructions, tools and parameters: as in <a href=\"#{}\">turn {} step {}</a></li>",
                step_id(prefix, p),
                p.turn,
                p.step
            );
        }
        Some(p) => {
            let _ = write!(
                page,
                "<li>changed from <a href=\"#{}\">turn {} step {}</a>: {} (above); the other parts as there</li>",
                step_id(prefix, p),
                p.turn,
                p.step,
                esc(&s.changed_parts.join(", "))
            );
        }
    }
    if let Some(p) = previous.filter(|_| s.shared > 0) {
        let _ = write!(
            page,
            "<li>input items 0 to {}: those of <a href=\"#{}\">turn {} step {}</a>'s request</li>",
            s.shared.min(s.items) - 1,
            step_id(prefix, p),
            p.turn,
            p.step
        );
    }
    if appended > 0 {
        let _ = write!(
            page,
            "<li>input items {} to {}: appended (above)</li>",
            s.shared.min(s.items),
            s.items - 1
        );
    }
    page.push_str("</ul><button type=\"button\" class=\"assemble\">assemble the input</button><div class=\"assembled\" hidden></div></details>");
}

fn history(page: &mut String, p: &Page) {
    if p.history.is_empty() {
        return;
    }
    let _ = write!(
        page,
        "<details class=\"history\"><summary><h2 style=\"display:inline\">{}</h2></summary><table class=\"history\"><tr><th>raw history</th><th>repair</th><th>model view</th></tr>",
        esc(&p.history_title)
    );
    for HistoryRow { raw, view, mark } in &p.history {
        let _ = write!(
            page,
            "<tr{}><td>{}</td><td class=\"m\">{}</td><td>{}</td></tr>",
            if mark.is_some() {
                " class=\"repair\""
            } else {
                ""
            },
            esc(raw.as_deref().unwrap_or("")),
            esc(mark.as_deref().unwrap_or("")),
            esc(view.as_deref().unwrap_or("")),
        );
    }
    page.push_str("</table></details>");
}

fn max_input(p: &Page) -> u64 {
    p.steps.iter().filter_map(|s| s.input).max().unwrap_or(1)
}

/// `view --format html`.
pub fn write_page(out: &mut dyn Write, p: &Page) -> io::Result<()> {
    let mut page = String::new();
    start(&mut page, &p.title);
    let _ = write!(page, "<header><h1>{}</h1>", esc(&p.title));
    facts(&mut page, p);
    page.push_str("</header><main>");
    let _ = write!(page, "<h2>Requests ({})</h2>", p.steps.len());
    timeline(&mut page, p, "");
    history(&mut page, p);
    let max_in = max_input(p);
    let _ = write!(page, "<div class=\"steps\" data-agent=\"{}\">", p.agent);
    let mut previous = None;
    for s in &p.steps {
        step(&mut page, s, previous, "", max_in, false);
        previous = Some(s);
    }
    page.push_str("</div></main>");
    finish(&mut page);
    emit(out, &page)
}

/// `diff --format html`: the two sessions' steps side by side, aligned by `pairs` (indices into
/// each page's steps), the first pair whose requests differ (`first_break`) highlighted.
pub fn write_diff_page(
    out: &mut dyn Write,
    a: &Page,
    b: &Page,
    pairs: &[(Option<usize>, Option<usize>)],
    first_break: Option<usize>,
    summary: &[String],
    evidence: &[(String, String, String)],
) -> io::Result<()> {
    let mut page = String::new();
    let title = format!("{} ↔ {}", a.title, b.title);
    start(&mut page, &title);
    let _ = write!(page, "<header><h1>{}</h1>", esc(&title));
    for line in summary {
        let _ = write!(page, "<p class=\"explain\">{}</p>", esc(line));
    }
    for (what, old, new) in evidence {
        let (left, right) = side_by_side(old, new);
        let _ = write!(
            page,
            "<details class=\"change drift\" open><summary>{}</summary><div class=\"sbs\"><div><h4>A</h4><pre class=\"old\">{left}</pre></div><div><h4>B</h4><pre class=\"new\">{right}</pre></div></div></details>",
            esc(what)
        );
    }
    page.push_str("</header><main><div class=\"pair\"><div>");
    let _ = write!(page, "<h2>A: {}</h2>", esc(&a.title));
    facts(&mut page, a);
    timeline(&mut page, a, "a-");
    page.push_str("</div><div>");
    let _ = write!(page, "<h2>B: {}</h2>", esc(&b.title));
    facts(&mut page, b);
    timeline(&mut page, b, "b-");
    page.push_str("</div></div>");
    if let Some(k) = first_break {
        let _ = write!(
            page,
            "<p><a href=\"#pair-{k}\">first break: aligned pair {}</a></p>",
            k + 1
        );
    }
    let (max_a, max_b) = (max_input(a), max_input(b));
    page.push_str("<div class=\"pairs\">");
    for (k, (ia, ib)) in pairs.iter().enumerate() {
        let is_first = first_break == Some(k);
        let _ = write!(
            page,
            "<div class=\"pair\" id=\"pair-{k}\"{}><div data-side=\"a\">",
            if is_first {
                " data-first-break=\"true\""
            } else {
                ""
            }
        );
        match ia {
            Some(i) => step(
                &mut page,
                &a.steps[*i],
                i.checked_sub(1).map(|p| &a.steps[p]),
                "a-",
                max_a,
                is_first,
            ),
            None => page.push_str("<p class=\"missing\">no step in A</p>"),
        }
        page.push_str("</div><div data-side=\"b\">");
        match ib {
            Some(i) => step(
                &mut page,
                &b.steps[*i],
                i.checked_sub(1).map(|p| &b.steps[p]),
                "b-",
                max_b,
                is_first,
            ),
            None => page.push_str("<p class=\"missing\">no step in B</p>"),
        }
        page.push_str("</div></div>");
    }
    page.push_str("</div></main>");
    finish(&mut page);
    emit(out, &page)
}

//! Totals of a Claude Code home per day and per session, as JSON: what `promptc report` will
//! print for Claude Code once the binary is wired to `promptc::agents::claude::home` (BENCHMARKS.md
//! compares it with `ccusage daily --json` / `ccusage session --json`).
//!
//! `cargo run --release --example claude_totals -- DIR [--verdicts]`, DIR holding `projects/`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use promptc::agents::claude::home::HomeBuilder;
use promptc::agents::claude::prices::AnthropicPrices;
use promptc::agents::claude::usage::Totals;
use serde_json::{Value, json};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: DIR"))?);
    let verdicts = args.any(|a| a == "--verdicts");
    let projects = dir.join("projects");
    let mut paths = Vec::new();
    walk(&projects, &mut paths)?;
    paths.sort();
    let mut builder = HomeBuilder::new(verdicts);
    for path in &paths {
        let rel = path
            .strip_prefix(&projects)?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        // One file in memory at a time.
        let bytes = std::fs::read(path)?;
        if let Err(e) = builder.add_bytes(&rel, &bytes) {
            writeln!(
                std::io::stderr(),
                "{}",
                promptc::core::sanitize::escape_line(&e.to_string())
            )?;
        }
    }
    let home = builder.finish();
    let prices = AnthropicPrices::builtin();
    let mut daily: BTreeMap<String, Totals> = BTreeMap::new();
    let mut sessions: BTreeMap<String, Totals> = BTreeMap::new();
    let mut all = Totals::default();
    let mut unpriced: BTreeMap<String, usize> = BTreeMap::new();
    for r in &home.requests {
        let day = r.request.day().unwrap_or("unknown").to_string();
        daily.entry(day).or_default().add(&r.request, &prices);
        sessions
            .entry(r.session.clone())
            .or_default()
            .add(&r.request, &prices);
        all.add(&r.request, &prices);
        if let Some(m) = &r.request.model
            && r.request.tokens != Default::default()
            && prices.cost(m, r.request.day(), &r.request.tokens).is_none()
        {
            *unpriced.entry(m.clone()).or_default() += 1;
        }
    }
    let row = |t: &Totals| {
        json!({
            "requests": t.requests,
            "input": t.tokens.input,
            "cache_write_5m": t.tokens.cache_write_5m,
            "cache_write_1h": t.tokens.cache_write_1h,
            "cache_read": t.tokens.cache_read,
            "output": t.tokens.output,
            "cost_usd": (t.cost * 1e6).round() / 1e6,
            "unpriced_requests": t.unpriced_requests,
        })
    };
    let with = |key: &str, k: &str, t: &Totals| {
        let mut v = row(t);
        v[key] = Value::from(k);
        v
    };
    let out = json!({
        "files": paths.len(),
        "sessions": home.sessions.len(),
        "copies_left_out": home.copies,
        "empty_files": home.empty.len(),
        "ignored_files": home.ignored.len(),
        "unpriced_models": unpriced,
        "totals": row(&all),
        "daily": daily.iter().map(|(d, t)| with("date", d, t)).collect::<Vec<_>>(),
        "session": sessions.iter().map(|(s, t)| with("session", s, t)).collect::<Vec<_>>(),
    });
    writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&out)?)?;
    Ok(())
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

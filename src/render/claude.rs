//! Claude Code output: `steps` and `compile` of a transcript, text and JSON.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use super::{RenderOptions, Tone, paint, write_json};
use crate::agents::claude::cache::{Step, Verdict};
use crate::agents::claude::load::Transcript;
use crate::agents::claude::load::Usage;
use crate::agents::claude::thread::{Conversation, RequestKind, ThreadKey};
use crate::agents::claude::wire::Compiled;
use crate::core::sanitize::escape_line;

/// What the file is, in the header lines every text output starts with.
pub fn write_header(
    out: &mut dyn Write,
    t: &Transcript,
    c: &Conversation,
    options: &RenderOptions,
) -> io::Result<()> {
    let label = |name: &str| paint(options, Tone::Dim, &format!("{name:<9}"));
    writeln!(
        out,
        "{} {} (Claude Code transcript)",
        label("file"),
        escape_line(&t.name)
    )?;
    let session = t
        .lines
        .iter()
        .find_map(|l| l.session_id.as_deref())
        .unwrap_or("-");
    let mut versions: Vec<&str> = Vec::new();
    for v in t.lines.iter().filter_map(|l| l.version.as_deref()) {
        if !versions.contains(&v) {
            versions.push(v);
        }
    }
    writeln!(
        out,
        "{} {}  claude-code {}",
        label("session"),
        escape_line(session),
        escape_line(&if versions.is_empty() {
            "-".to_string()
        } else {
            versions.join(", ")
        })
    )?;
    let mut models: Vec<&str> = Vec::new();
    for m in c
        .responses
        .iter()
        .filter(|r| !r.synthetic)
        .filter_map(|r| r.model.as_deref())
    {
        if !models.contains(&m) {
            models.push(m);
        }
    }
    writeln!(
        out,
        "{} {}",
        label("models"),
        escape_line(&models.join(", "))
    )?;
    let shown = c.shown_thread();
    let main = c.thread(&shown).count();
    let compactions = c
        .thread(&shown)
        .filter(|r| r.kind == RequestKind::Compaction)
        .count();
    let side = c.requests.len() - main;
    if let ThreadKey::Subagent(agent) = &shown {
        writeln!(
            out,
            "{} subagent {} (its own file)",
            label("thread"),
            escape_line(agent)
        )?;
    } else if matches!(shown, ThreadKey::Sidechain(_)) {
        writeln!(out, "{} sidechain (a subagent's lines)", label("thread"))?;
    }
    let others = if shown == ThreadKey::Main {
        "in subagents"
    } else {
        "in other threads"
    };
    writeln!(
        out,
        "{} {main} requests ({compactions} compaction), {side} {others}, {} lines read, {} skipped",
        label("history"),
        t.non_blank_lines,
        t.skipped.len()
    )?;
    for note in &t.notes {
        writeln!(out, "{} {}", label("note"), escape_line(note))?;
    }
    Ok(())
}

#[derive(Serialize)]
struct StepsDocument<'a> {
    schema_version: u32,
    file: &'a str,
    agent: &'static str,
    steps: Vec<StepDocument>,
    summary: Summary,
}

#[derive(Serialize)]
struct StepDocument {
    turn: usize,
    step: usize,
    compaction: bool,
    copied: bool,
    model: Option<String>,
    version: Option<String>,
    timestamp: Option<String>,
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_creation_5m_input_tokens: Option<u64>,
    cache_creation_1h_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// Read over the whole prompt (input, written and read).
    hit_rate: Option<f64>,
    breakpoints: usize,
    predicted_read_tokens: Option<u64>,
    predicted_read_block: Option<usize>,
    verdict: Option<&'static str>,
    explanation: Option<String>,
    /// The part where the prefix broke, or the parts not recorded that explain a drop.
    cause: Option<Value>,
}

#[derive(Serialize)]
struct Summary {
    requests: usize,
    prompt_tokens: u64,
    cache_read_input_tokens: u64,
    cache_creation_input_tokens: u64,
    hit_rate: Option<f64>,
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn cause(verdict: &Verdict) -> Option<Value> {
    match verdict {
        Verdict::PrefixBroken { part } => Some(Value::String(part.clone())),
        Verdict::UnrecordedChange { parts } => Some(Value::from(parts.clone())),
        Verdict::ModelSwitch { from, to } => Some(serde_json::json!({"from": from, "to": to})),
        Verdict::TtlExpired {
            gap_seconds,
            ttl_seconds,
        } => Some(serde_json::json!({"gap_seconds": gap_seconds, "ttl_seconds": ttl_seconds})),
        _ => None,
    }
}

fn summary(steps: &[Step]) -> Summary {
    let used: Vec<_> = steps
        .iter()
        .filter(|s| !s.copied)
        .filter_map(|s| s.usage)
        .collect();
    let total = |f: fn(&Usage) -> u64| used.iter().map(f).fold(0u64, u64::saturating_add);
    let prompt = total(Usage::prompt_tokens);
    let read = total(|u| u.cache_read_input_tokens);
    Summary {
        requests: steps.iter().filter(|s| !s.copied).count(),
        prompt_tokens: prompt,
        cache_read_input_tokens: read,
        cache_creation_input_tokens: total(|u| u.cache_creation_input_tokens),
        hit_rate: (prompt > 0).then(|| round3(read as f64 / prompt as f64)),
    }
}

/// `steps` of a Claude Code transcript's main thread.
pub fn write_steps(
    out: &mut dyn Write,
    t: &Transcript,
    c: &Conversation,
    steps: &[Step],
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    if json {
        let document = StepsDocument {
            schema_version: crate::SCHEMA_VERSION,
            file: &t.name,
            agent: "claude",
            steps: steps.iter().map(step_document).collect(),
            summary: summary(steps),
        };
        return write_json(out, &document);
    }
    write_header(out, t, c, options)?;
    writeln!(out)?;
    let heading = format!(
        "{:>4} {:>4} {:<24} {:>8} {:>8} {:>8} {:>9} {:>5} {:>9}  {}",
        "turn", "step", "model", "input", "write5m", "write1h", "read", "hit", "predict", "verdict"
    );
    writeln!(out, "{}", paint(options, Tone::Heading, &heading))?;
    for s in steps {
        let number = |v: Option<u64>| v.map_or("-".to_string(), |n| n.to_string());
        let u = s.usage;
        let (write5m, write1h) = match u {
            // Before 1.0.x's split every write is a 5-minute one.
            Some(u) => (
                Some(u.cache_creation_5m.unwrap_or(u.cache_creation_input_tokens)),
                Some(u.cache_creation_1h.unwrap_or(0)),
            ),
            None => (None, None),
        };
        let hit = u
            .filter(|u| u.prompt_tokens() > 0)
            .map_or("-".to_string(), |u| {
                format!(
                    "{:.0}%",
                    100.0 * u.cache_read_input_tokens as f64 / u.prompt_tokens() as f64
                )
            });
        let verdict = if s.copied {
            "a copy of a request sent before (a fork's, or rewritten into this file)".to_string()
        } else if s.kind == RequestKind::Compaction {
            "compaction request (no usage recorded)".to_string()
        } else {
            s.verdict.as_ref().map_or("-".to_string(), Verdict::short)
        };
        let line = format!(
            "{:>4} {:>4} {:<24} {:>8} {:>8} {:>8} {:>9} {:>5} {:>9}  {}",
            s.turn,
            s.step,
            escape_line(s.model.as_deref().unwrap_or("-")),
            number(u.map(|u| u.input_tokens)),
            number(write5m),
            number(write1h),
            number(u.map(|u| u.cache_read_input_tokens)),
            hit,
            number(s.predicted_read),
            escape_line(&verdict),
        );
        let tone = match &s.verdict {
            Some(Verdict::Hit) => Tone::Good,
            Some(Verdict::ColdStart) | None => Tone::Dim,
            Some(_) => Tone::Warning,
        };
        writeln!(out, "{}", paint(options, tone, &line))?;
    }
    let sum = summary(steps);
    writeln!(out)?;
    writeln!(
        out,
        "{} {} requests, prompt {} tokens, read {}, written {}, hit rate {}",
        paint(options, Tone::Heading, "summary"),
        sum.requests,
        sum.prompt_tokens,
        sum.cache_read_input_tokens,
        sum.cache_creation_input_tokens,
        sum.hit_rate
            .map_or("-".to_string(), |h| format!("{:.1}%", h * 100.0))
    )
}

fn step_document(s: &Step) -> StepDocument {
    let u = s.usage;
    StepDocument {
        turn: s.turn,
        step: s.step,
        compaction: s.kind == RequestKind::Compaction,
        copied: s.copied,
        model: s.model.clone(),
        version: s.version.clone(),
        timestamp: s.timestamp.clone(),
        input_tokens: u.map(|u| u.input_tokens),
        cache_creation_input_tokens: u.map(|u| u.cache_creation_input_tokens),
        cache_creation_5m_input_tokens: u.and_then(|u| u.cache_creation_5m),
        cache_creation_1h_input_tokens: u.and_then(|u| u.cache_creation_1h),
        cache_read_input_tokens: u.map(|u| u.cache_read_input_tokens),
        output_tokens: u.map(|u| u.output_tokens),
        hit_rate: u
            .filter(|u| u.prompt_tokens() > 0)
            .map(|u| round3(u.cache_read_input_tokens as f64 / u.prompt_tokens() as f64)),
        breakpoints: s.breakpoints,
        predicted_read_tokens: s.predicted_read,
        predicted_read_block: s.predicted_block,
        verdict: s.verdict.as_ref().map(Verdict::name),
        explanation: s.verdict.as_ref().map(Verdict::explain),
        cause: s.verdict.as_ref().and_then(cause),
    }
}

#[derive(Serialize)]
struct CompileDocument<'a> {
    schema_version: u32,
    file: &'a str,
    agent: &'static str,
    turn: usize,
    step: usize,
    version: Option<&'a str>,
    /// 2.1.3xx: the rebuild's digest is the `requestDigest` the build recorded.
    verified: Option<bool>,
    request: &'a Value,
    approximations: Vec<Value>,
    rules: Vec<Value>,
}

/// `compile`: the body of one request, with what it could not know and the rules it applied.
pub fn write_compile(
    out: &mut dyn Write,
    t: &Transcript,
    step: &Step,
    compiled: &Compiled,
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    let approximations: Vec<Value> = compiled
        .unknown
        .iter()
        .map(|u| serde_json::json!({"part": u.part, "reason": u.reason}))
        .collect();
    let rules: Vec<Value> = compiled
        .rules
        .iter()
        .map(|r| serde_json::json!({"part": r.part, "rule": r.rule, "case": r.case}))
        .collect();
    if json {
        return write_json(
            out,
            &CompileDocument {
                schema_version: crate::SCHEMA_VERSION,
                file: &t.name,
                agent: "claude",
                turn: step.turn,
                step: step.step,
                version: compiled.version.as_deref(),
                verified: compiled.verified,
                request: &compiled.body,
                approximations,
                rules,
            },
        );
    }
    let label = |name: &str| paint(options, Tone::Dim, &format!("{name:<9}"));
    writeln!(
        out,
        "{} {} (Claude Code transcript)",
        label("file"),
        escape_line(&t.name)
    )?;
    writeln!(
        out,
        "{} turn {} step {}, claude-code {}",
        label("request"),
        step.turn,
        step.step,
        escape_line(compiled.version.as_deref().unwrap_or("-"))
    )?;
    match compiled.verified {
        Some(true) => writeln!(
            out,
            "{} verified: the digest equals the recorded requestDigest",
            label("digest")
        )?,
        Some(false) => writeln!(
            out,
            "{} {}",
            label("digest"),
            paint(
                options,
                Tone::Warning,
                "differs from the recorded requestDigest: the rebuild is not what was sent"
            )
        )?,
        None => {}
    }
    for a in &compiled.unknown {
        writeln!(
            out,
            "{} {}: {}",
            label("unknown"),
            escape_line(&a.part),
            escape_line(&a.reason)
        )?;
    }
    for r in &compiled.rules {
        writeln!(
            out,
            "{} {}: {} ({})",
            label("rule"),
            escape_line(&r.part),
            escape_line(&r.rule),
            r.case
        )?;
    }
    writeln!(out)?;
    let body = serde_json::to_string_pretty(&compiled.body).map_err(io::Error::from)?;
    let body = crate::core::sanitize::escape_block(&body);
    writeln!(out, "{body}")
}

#[derive(Serialize)]
struct FingerprintsDocument<'a> {
    schema_version: u32,
    file: &'a str,
    agent: &'static str,
    steps: Vec<FingerprintRow<'a>>,
}

#[derive(Serialize)]
struct FingerprintRow<'a> {
    turn: usize,
    step: usize,
    compaction: bool,
    copied: bool,
    fingerprint: Option<FingerprintDoc<'a>>,
}

#[derive(Serialize)]
struct FingerprintDoc<'a> {
    request: &'a str,
    model: Option<&'a str>,
    tools: Option<&'a str>,
    system: Option<&'a str>,
    params: &'a str,
    messages: &'a str,
    blocks: usize,
    unknown: &'a [String],
}

/// `fingerprint`: each request's component hashes (`None` for a compaction, whose body the
/// transcript does not hold, and a copied request).
pub fn write_fingerprints(
    out: &mut dyn Write,
    t: &Transcript,
    rows: &[(
        &Step,
        Option<crate::agents::claude::fingerprint::Fingerprint>,
    )],
    json: bool,
) -> io::Result<()> {
    if json {
        let steps = rows
            .iter()
            .map(|(s, fp)| FingerprintRow {
                turn: s.turn,
                step: s.step,
                compaction: s.kind == RequestKind::Compaction,
                copied: s.copied,
                fingerprint: fp.as_ref().map(|f| FingerprintDoc {
                    request: &f.request,
                    model: f.model.as_deref(),
                    tools: f.tools.as_deref(),
                    system: f.system.as_deref(),
                    params: &f.params,
                    messages: &f.messages,
                    blocks: f.blocks,
                    unknown: &f.unknown,
                }),
            })
            .collect();
        return write_json(
            out,
            &FingerprintsDocument {
                schema_version: crate::SCHEMA_VERSION,
                file: &t.name,
                agent: "claude",
                steps,
            },
        );
    }
    writeln!(
        out,
        "{:>4} {:>4} {:<32} {:<32} {:>6}  unknown",
        "turn", "step", "request", "messages", "blocks"
    )?;
    for (s, fp) in rows {
        match fp {
            Some(f) => writeln!(
                out,
                "{:>4} {:>4} {:<32} {:<32} {:>6}  {}",
                s.turn,
                s.step,
                f.request,
                f.messages,
                f.blocks,
                if f.unknown.is_empty() {
                    "-".to_string()
                } else {
                    f.unknown.join(",")
                }
            )?,
            None => writeln!(
                out,
                "{:>4} {:>4} {:<32} {:<32} {:>6}  {}",
                s.turn,
                s.step,
                "-",
                "-",
                "-",
                if s.copied {
                    "a copy of a request sent before (a fork's, or rewritten into this file)"
                } else {
                    "compaction request: not recorded"
                }
            )?,
        }
    }
    Ok(())
}

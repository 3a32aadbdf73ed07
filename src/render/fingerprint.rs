//! `fingerprint` output, and the fingerprint block and document other outputs embed.

use std::io::{self, Write};

use serde::Serialize;

use super::cells::{TABLE_BLOCK, push_number};
use super::{RenderOptions, Tone, write_json, write_painted};
use crate::AgentSession;
use crate::core::hash::push_hex;
use crate::fingerprint::{Fingerprint, Plan, hex};

/// One entry of a request's input in `compile`'s JSON: its hash, the chain of the entries up to
/// it (the last is the fingerprint's `input`), and the hash of its canonical JSON.
#[derive(Serialize)]
pub struct InputItemDocument {
    index: usize,
    /// `raw`, or `synthetic` for an entry the agent's repair of the history made.
    origin: &'static str,
    hash: String,
    chain: String,
    canonical: String,
}

/// The input entries of step `step`'s request, in order.
pub fn input_items<S: AgentSession>(
    session: &S,
    plan: &Plan,
    step: usize,
) -> Vec<InputItemDocument> {
    (0..plan.views[step].1)
        .map(|index| {
            let entry = session.entry(plan, step, index);
            InputItemDocument {
                index,
                origin: if entry.synthetic { "synthetic" } else { "raw" },
                hash: hex(plan.item_hash(step, index)),
                chain: hex(plan.chain(step, index + 1)),
                canonical: hex(&crate::fingerprint::canonical_item_hash(&entry.json)),
            }
        })
        .collect()
}

/// A fingerprint in JSON: hex strings, `null` for unknown components.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FingerprintDocument {
    pub request: String,
    pub instructions: Option<String>,
    pub tools: Option<String>,
    pub tools_canonical: Option<String>,
    pub params: String,
    pub prompt_cache_key: Option<String>,
    pub checkpoint: Option<String>,
    pub input: String,
    pub input_items: usize,
    /// Components that are not known: the request fingerprint is partial when this is not empty.
    #[serde(default)]
    pub unknown: Vec<String>,
}

impl FingerprintDocument {
    /// From a fingerprint.
    pub fn new(fingerprint: &Fingerprint) -> FingerprintDocument {
        FingerprintDocument {
            request: hex(&fingerprint.request),
            instructions: fingerprint.instructions.as_ref().map(hex),
            tools: fingerprint.tools.as_ref().map(hex),
            tools_canonical: fingerprint.tools_canonical.as_ref().map(hex),
            params: hex(&fingerprint.params),
            prompt_cache_key: fingerprint.prompt_cache_key.as_ref().map(hex),
            checkpoint: fingerprint.checkpoint.as_ref().map(hex),
            input: hex(&fingerprint.input),
            input_items: fingerprint.input_items,
            unknown: fingerprint
                .unknown()
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }
}

/// The fingerprint of one request, part by part, as text.
pub fn write_fingerprint_block(
    out: &mut dyn Write,
    fp: &Fingerprint,
    options: &RenderOptions,
) -> io::Result<()> {
    let unknown = fp.unknown();
    let partial = if unknown.is_empty() {
        String::new()
    } else {
        format!(" (partial: {} unknown)", unknown.join(", "))
    };
    let or_unknown =
        |h: &Option<crate::fingerprint::Hash>| h.as_ref().map_or("unknown".to_string(), hex);
    write_painted(out, options, Tone::Heading, "FINGERPRINT")?;
    writeln!(out, "  request           {}{partial}", hex(&fp.request))?;
    writeln!(out, "  instructions      {}", or_unknown(&fp.instructions))?;
    writeln!(out, "  tools             {}", or_unknown(&fp.tools))?;
    writeln!(out, "  params            {}", hex(&fp.params))?;
    writeln!(
        out,
        "  prompt_cache_key  {}",
        or_unknown(&fp.prompt_cache_key)
    )?;
    writeln!(
        out,
        "  checkpoint        {}",
        fp.checkpoint.as_ref().map_or("none".to_string(), hex)
    )?;
    writeln!(
        out,
        "  input             {} ({} items)",
        hex(&fp.input),
        fp.input_items
    )?;
    Ok(())
}

#[derive(Serialize)]
struct FingerprintStepDocument<'a> {
    turn: usize,
    step: usize,
    turn_id: Option<&'a str>,
    pending: bool,
    fingerprint: FingerprintDocument,
}

#[derive(Serialize)]
struct FingerprintListDocument<'a> {
    schema_version: u32,
    file: &'a str,
    steps: Vec<FingerprintStepDocument<'a>>,
}

/// `fingerprint` for the given steps.
pub fn write_fingerprints<S: AgentSession>(
    out: &mut dyn Write,
    session: &S,
    plan: &Plan,
    steps: &[usize],
    json: bool,
) -> io::Result<()> {
    if json {
        let document = FingerprintListDocument {
            schema_version: crate::SCHEMA_VERSION,
            file: session.name(),
            steps: steps
                .iter()
                .map(|&k| {
                    let s = &session.steps()[k];
                    let turn = &session.turns()[s.turn];
                    FingerprintStepDocument {
                        turn: turn.number,
                        step: s.number,
                        turn_id: turn.turn_id.as_deref(),
                        pending: s.pending,
                        fingerprint: FingerprintDocument::new(&plan.fingerprints[k]),
                    }
                })
                .collect(),
        };
        return write_json(out, &document);
    }
    writeln!(
        out,
        "turn step request                          input                            items  unknown"
    )?;
    for block in
        crate::core::parallel::map_blocks(steps.len(), TABLE_BLOCK, plan.threads, |range| {
            fingerprint_lines(session, plan, &steps[range])
        })
    {
        out.write_all(block.as_bytes())?;
    }
    Ok(())
}

/// The `fingerprint` table's lines of `steps`, pushed piece by piece into one buffer: a line
/// of a 7 000-step file cost three allocations and a formatted write of each piece, 3-4 ms of
/// `fingerprint` at 100 MB.
fn fingerprint_lines<S: AgentSession>(session: &S, plan: &Plan, steps: &[usize]) -> String {
    let mut lines = String::new();
    for &k in steps {
        let s = &session.steps()[k];
        let turn = &session.turns()[s.turn];
        let fp = &plan.fingerprints[k];
        push_number(&mut lines, Some(turn.number), 4);
        push_number(&mut lines, Some(s.number), 4);
        push_hex(&mut lines, &fp.request);
        lines.push(' ');
        push_hex(&mut lines, &fp.input);
        lines.push(' ');
        push_number(&mut lines, Some(fp.input_items), 6);
        lines.push(' ');
        let unknown = fp.unknown();
        if unknown.is_empty() {
            lines.push('-');
        } else {
            lines.push_str(&unknown.join(","));
        }
        lines.push('\n');
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::{fingerprint_lines, write_fingerprints};
    use crate::AgentSession;
    use crate::agents::codex::plan::plan;
    use crate::core::parallel::Threads;
    use crate::fingerprint::PlanOptions;
    use crate::render::RenderOptions;
    use crate::render::cells::push_percent;
    use crate::render::steps::{step_rows, write_steps};

    /// The tables are written in blocks of steps (four long in tests, so that samples span
    /// many) on the plan's threads: on any thread count they are the one-block tables, and the
    /// analysis is each step's own.
    #[test]
    fn tables_do_not_depend_on_blocks_or_threads() {
        let mut sessions = crate::test_support::all_fixtures();
        sessions.extend(crate::test_support::real_samples());
        // Wide enough that verdicts with their reasons fit whole.
        let options = RenderOptions {
            width: 200,
            ..RenderOptions::default()
        };
        for (name, session) in &sessions {
            let steps: Vec<usize> = (0..session.steps().len()).collect();
            let mut outputs = Vec::new();
            for threads in [1, 2, 3] {
                let plan = plan(
                    session,
                    &PlanOptions {
                        threads: Threads::new(threads),
                        ..PlanOptions::default()
                    },
                );
                let rows = crate::cache::analyze(session, &plan);
                let each_step: Vec<_> = steps
                    .iter()
                    .map(|&k| crate::cache::analyze_step(session, &plan, k, None))
                    .collect();
                assert_eq!(format!("{rows:?}"), format!("{each_step:?}"), "{name}");
                let mut text = Vec::new();
                write_steps(&mut text, session, &plan, &rows, false, &options).unwrap();
                let text = String::from_utf8(text).unwrap();
                let whole = step_rows(session, &plan, &rows, &options);
                assert!(
                    text.contains(&whole),
                    "{name}, {threads} threads: steps rows"
                );
                let mut fingerprints = Vec::new();
                write_fingerprints(&mut fingerprints, session, &plan, &steps, false).unwrap();
                let fingerprints = String::from_utf8(fingerprints).unwrap();
                let whole = fingerprint_lines(session, &plan, &steps);
                assert!(fingerprints.ends_with(&whole), "{name}: fingerprint lines");
                outputs.push((text, fingerprints));
            }
            assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{name}");
        }
    }

    /// Hit rates are written as the formatter writes them: ties to even, past 100 %, huge.
    #[test]
    fn percentages_are_what_the_formatter_writes() {
        let mut rates: Vec<f64> = vec![
            -0.0,
            -0.004,
            f64::NAN,
            f64::INFINITY,
            99.995,
            0.0,
            0.005,
            0.015,
            0.025,
            0.125,
            0.5,
            0.995,
            1.0,
            7.5,
            1e13,
            1e30,
        ];
        for input in 1u64..400 {
            for cached in 0..=input + 3 {
                rates.push(cached as f64 / input as f64);
            }
        }
        for rate in rates {
            let mut ours = String::new();
            push_percent(&mut ours, rate);
            assert_eq!(ours, format!("{:>4.0}% ", rate * 100.0), "{rate}");
        }
    }
}

//! `watch` output: one line of text, or one JSON object (JSON Lines), per event.

use std::io::{self, Write};

use serde::Serialize;

use super::steps::{step_row_document, step_rows, steps_heading};
use super::{RenderOptions, Tone, paint, write_painted};
use crate::core::sanitize::escape_line;
use crate::watch::{Event, Growing, Watch, drift};

/// Why the watch started over on a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// The file is shorter than what was read.
    Truncated,
    /// Another file now has the name (or its first bytes changed).
    Replaced,
    /// An agent began a newer session (`--next`).
    NewSession,
}

impl Restart {
    pub fn name(self) -> &'static str {
        match self {
            Restart::Truncated => "truncated",
            Restart::Replaced => "replaced",
            Restart::NewSession => "new_session",
        }
    }
}

#[derive(Serialize)]
struct EventDocument<'a, T: Serialize> {
    schema_version: u32,
    event: &'static str,
    #[serde(flatten)]
    body: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    row: Option<super::steps::StepRowDocument<'a>>,
}

fn json_line<T: Serialize>(
    out: &mut dyn Write,
    event: &'static str,
    body: T,
    row: Option<super::steps::StepRowDocument<'_>>,
) -> io::Result<()> {
    let document = EventDocument {
        schema_version: crate::SCHEMA_VERSION,
        event,
        body,
        row,
    };
    let mut escaped = crate::core::sanitize::JsonEscaper::new(&mut *out);
    serde_json::to_writer(&mut escaped, &document).map_err(io::Error::from)?;
    escaped.finish()?;
    out.write_all(b"\n")
}

/// The line `watch` writes when it starts following a file (in text, then the table heading),
/// or when it starts over on one, and why.
/// `writes`: the session's provider reports cache writes (the table's columns are Anthropic's);
/// `None` while the file's agent is not known (an empty file): the heading comes later
/// ([`write_heading`]).
pub fn write_following(
    out: &mut dyn Write,
    file: &str,
    restart: Option<Restart>,
    json: bool,
    writes: Option<bool>,
    options: &RenderOptions,
) -> io::Result<()> {
    if json {
        #[derive(Serialize)]
        struct Body<'a> {
            file: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<&'static str>,
        }
        let reason = restart.map(Restart::name);
        let event = if restart.is_some() {
            "restart"
        } else {
            "watching"
        };
        return json_line(out, event, Body { file, reason }, None);
    }
    let Some(why) = restart else {
        let text = format!("watching {}", escape_line(file));
        write_painted(out, options, Tone::Dim, &text)?;
        return match writes {
            Some(writes) => write_heading(out, json, writes, options),
            None => Ok(()),
        };
    };
    let what = match why {
        Restart::Truncated => "was truncated",
        Restart::Replaced => "was replaced",
        Restart::NewSession => "is the newest session",
    };
    let text = format!("-- {} {what}: starting over", escape_line(file));
    write_painted(out, options, Tone::Warning, &text)
}

/// The table heading of `watch` in text (nothing in JSON): Anthropic's columns when `writes`.
pub fn write_heading(
    out: &mut dyn Write,
    json: bool,
    writes: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    if json {
        return Ok(());
    }
    write_painted(out, options, Tone::Heading, &steps_heading(writes))
}

/// One event of `watch`. `Skipped` writes nothing here: it is a warning, for stderr.
pub fn write_event<S: Growing>(
    out: &mut dyn Write,
    watch: &Watch<S>,
    event: &Event,
    json: bool,
    options: &RenderOptions,
) -> io::Result<()> {
    let Some((session, plan, rows)) = watch.current() else {
        return Ok(());
    };
    let (turns, steps) = (session.turns(), session.steps());
    #[derive(Serialize)]
    struct Line {
        line: usize,
    }
    #[derive(Serialize)]
    struct Turn<'a> {
        line: usize,
        turn: usize,
        turn_id: Option<&'a str>,
    }
    #[derive(Serialize)]
    struct Ended {
        line: usize,
        aborted: bool,
    }
    #[derive(Serialize)]
    struct Rollback {
        line: usize,
        dropped_turns: usize,
    }
    #[derive(Serialize)]
    struct Drift {
        line: usize,
        turn: usize,
        step: usize,
        verdict: &'static str,
        explanation: String,
        expected: bool,
    }
    let rule = |text: String| paint(options, Tone::Dim, &format!("-- {text}"));
    match *event {
        Event::TurnStarted { turn, line } => {
            let t = &turns[turn];
            let body = Turn {
                line,
                turn: t.number,
                turn_id: t.turn_id.as_deref(),
            };
            if json {
                return json_line(out, "turn_started", body, None);
            }
            let id = body
                .turn_id
                .map(|id| format!(" ({})", escape_line(id)))
                .unwrap_or_default();
            let text = format!("turn {} started at line {line}{id}", body.turn);
            writeln!(out, "{}", rule(text))
        }
        Event::TurnEnded { line, aborted } => {
            if json {
                return json_line(out, "turn_ended", Ended { line, aborted }, None);
            }
            let how = if aborted { "aborted" } else { "ended" };
            writeln!(out, "{}", rule(format!("turn {how} at line {line}")))
        }
        Event::Compaction { line } => {
            if json {
                return json_line(out, "compaction", Line { line }, None);
            }
            writeln!(out, "{}", rule(format!("compaction at line {line}")))
        }
        Event::Rollback { line, turns } => {
            if json {
                let body = Rollback {
                    line,
                    dropped_turns: turns,
                };
                return json_line(out, "rollback", body, None);
            }
            writeln!(
                out,
                "{}",
                rule(format!("rollback at line {line}: {turns} turns dropped"))
            )
        }
        Event::Step { step, line } => {
            let row = &rows[step];
            if json {
                let document = step_row_document(session, plan, row);
                return json_line(out, "step", Line { line }, Some(document));
            }
            out.write_all(step_rows(session, plan, std::slice::from_ref(row), options).as_bytes())
        }
        Event::Drift { step, line } => {
            let row = &rows[step];
            let s = &steps[step];
            let expected = drift(&row.verdict).unwrap_or(true);
            let body = Drift {
                line,
                turn: turns[s.turn].number,
                step: s.number,
                verdict: row.verdict.name(),
                explanation: row.explain(),
                expected,
            };
            if json {
                return json_line(out, "drift", body, None);
            }
            let (tone, what) = if expected {
                (Tone::Dim, "expected drift")
            } else {
                (Tone::Removed, "UNEXPECTED DRIFT")
            };
            let text = format!(
                "-- {what} at turn {} step {}: {}",
                body.turn, body.step, body.explanation
            );
            write_painted(out, options, tone, &text)
        }
        Event::Skipped { .. } => Ok(()),
        Event::Revised { step } => {
            // The first row reported again, by the numbers it has now (none: the steps
            // shrank below it, and every row from there on follows again).
            #[derive(Serialize)]
            struct Revised {
                turn: Option<usize>,
                step: Option<usize>,
            }
            let at = steps.get(step).map(|s| (turns[s.turn].number, s.number));
            if json {
                let body = Revised {
                    turn: at.map(|a| a.0),
                    step: at.map(|a| a.1),
                };
                return json_line(out, "revised", body, None);
            }
            let from = match at {
                Some((turn, step)) => format!("turn {turn} step {step}"),
                None => format!("step {}", step + 1),
            };
            let text = format!(
                "lines read since changed the rows from {from} on (a line written before the \
                 one it follows, the thread shown changing): they follow again"
            );
            write_painted(out, options, Tone::Warning, &format!("-- {text}"))
        }
    }
}

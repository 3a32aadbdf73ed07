//! What the commands do differently for a Claude Code transcript: find it by its content (no
//! flag needed), load it, read `--system`/`--tools`, and write its own documents (`compile`,
//! `view`). Every other stage takes it as it takes a Codex rollout.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use promptc::AgentSession;
use promptc::agents::claude::session::{GrowingLoad, Session};
use promptc::agents::claude::wire::Given;

use crate::cli::{CompileArgs, Format, PlanArgs, ViewArgs};
use crate::commands::{Context, with_stdout};
use crate::exit::ExitStatus;

/// Bytes of a file's head read to tell which agent wrote it.
const HEAD: u64 = 64 << 10;
/// How far a first line is read when it is longer than the head.
const LONGEST_FIRST_LINE: u64 = 256 << 20;

/// The path of `argument` when it is a Claude Code transcript (by its first lines).
pub fn detect(argument: &str) -> anyhow::Result<Option<PathBuf>> {
    if argument == "-" {
        return Ok(None);
    }
    let path = crate::input::resolve(argument)?;
    let Ok(file) = std::fs::File::open(&path) else {
        return Ok(None);
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let mut head = Vec::new();
    let mut reader = std::io::BufReader::new(file);
    (&mut reader).take(HEAD).read_to_end(&mut head).ok();
    // A first line longer than the head (a long pasted prompt): read on to its end, bounded.
    if !head.contains(&b'\n') && head.len() as u64 == HEAD {
        let mut rest = Vec::new();
        std::io::BufRead::read_until(
            &mut (&mut reader).take(LONGEST_FIRST_LINE),
            b'\n',
            &mut rest,
        )
        .ok();
        head.extend(rest);
    }
    Ok((promptc::agents::claude::is_transcript(&head) == Some(true)).then_some(path))
}

/// Load a transcript a piece at a time (the file is never held whole: only what its lines
/// say), a warning on stderr for every skipped line.
pub fn load_file(path: &Path) -> anyhow::Result<Session> {
    load(path, false)?.context("a transcript read whole asked to be read again")
}

/// Load a transcript for the commands that read no message's text (`steps`, `fingerprint`):
/// lean (`Loader::lean`), and again whole where its lines or planning its steps call for the
/// texts after all.
pub fn load_lean(path: &Path) -> anyhow::Result<Session> {
    match load(path, true)? {
        None => load_file(path),
        Some(session) => Ok(session),
    }
}

/// Load a transcript read whole already (standard input, decompressed zstd data).
pub fn load_bytes(name: &str, bytes: &[u8]) -> anyhow::Result<Session> {
    let mut loader =
        promptc::agents::claude::load::Loader::with_threads(name, crate::commands::threads());
    loader.push(bytes);
    let session = Session::new(loader.finish()?);
    finish(session).context("a transcript read whole asked to be read again")
}

fn load(path: &Path, lean: bool) -> anyhow::Result<Option<Session>> {
    let name = path.display().to_string();
    let cannot_read = || format!("{name}: cannot read");
    let mut file = std::fs::File::open(path).with_context(cannot_read)?;
    let threads = crate::commands::threads();
    let loader = if lean {
        promptc::agents::claude::load::Loader::lean(&name, threads)
    } else {
        promptc::agents::claude::load::Loader::with_threads(&name, threads)
    };
    // The steps grow from each piece's lines while the next piece is read.
    let mut load = GrowingLoad::new(loader);
    load.read_from(&mut file).with_context(cannot_read)?;
    Ok(finish(load.finish()?))
}

/// The session, or `None` when a lean load found it needs the messages' texts (read again
/// whole). Its skipped lines are the caller's to report (`commands::load`).
fn finish(session: Session) -> Option<Session> {
    (!session.transcript.needs_content).then_some(session)
}

/// `--system` and `--tools`: a JSON value, or a captured request holding it (the body itself,
/// or a record with the body under `body`, as the conformance mock writes them). A value of the
/// wrong kind is an error naming the file: taken as given, it would be fingerprinted as known.
pub fn given(args: &PlanArgs) -> anyhow::Result<Given> {
    Ok(Given {
        system: given_part(args.system.as_deref(), "system")?,
        tools: given_part(args.tools.as_deref(), "tools")?,
    })
}

fn given_part(path: Option<&Path>, key: &str) -> anyhow::Result<Option<serde_json::Value>> {
    use serde_json::Value;
    let Some(path) = path else {
        return Ok(None);
    };
    let name = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read"))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{name}: not JSON"))?;
    let request = match &value {
        Value::Object(record)
            if record
                .get("body")
                .is_some_and(|b| b.get("messages").is_some()) =>
        {
            record.get("body")
        }
        Value::Object(body) if body.contains_key("messages") => Some(&value),
        _ => None,
    };
    let part = match request {
        Some(body) => body
            .get(key)
            .cloned()
            .with_context(|| format!("{name}: a captured request without `{key}`"))?,
        None => value,
    };
    // A system block has a `type`, a tool a `name`: a tool list given as --system is refused.
    let items_have = |field: &str| {
        part.as_array()
            .is_some_and(|items| items.iter().all(|item| item.get(field).is_some()))
    };
    // (Anthropic's server tools have a `type` too, and a `name`.)
    let tool_like = part.as_array().is_some_and(|items| {
        items
            .iter()
            .any(|item| item.get("name").is_some() || item.get("input_schema").is_some())
    });
    let fits = match key {
        "system" => part.is_string() || (items_have("type") && !tool_like),
        _ => items_have("name"),
    };
    if !fits {
        let wanted = match key {
            "system" => "a JSON string or array of blocks (each with a `type`)",
            _ => "a JSON array of tool definitions (each with a `name`)",
        };
        anyhow::bail!(
            "{name}: not a `{key}` for --{key}: {wanted}, or a captured request holding one, was expected; this is {}",
            what_json(&part)
        );
    }
    Ok(Some(part))
}

/// What a JSON value is, for an error: its kind, and an object's first keys.
fn what_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().take(4).map(String::as_str).collect();
            let more = if map.len() > keys.len() { ", …" } else { "" };
            format!("an object with keys {}{more}", keys.join(", "))
        }
        Value::Array(items) => format!("an array of {} item(s) of another kind", items.len()),
        Value::String(_) => "a string".to_string(),
        Value::Number(_) => "a number".to_string(),
        Value::Bool(_) => "a boolean".to_string(),
        Value::Null => "null".to_string(),
    }
}

/// The step `--turn N [--step S]` names; without them, the last request with a body.
fn select(session: &Session, args: &crate::cli::SelectArgs) -> anyhow::Result<usize> {
    if args.turn.is_none() {
        return (0..session.steps().len())
            .rev()
            .find(|&k| session.claude_steps[k].prompt.is_some())
            .with_context(|| {
                format!(
                    "{}: the transcript records no request",
                    session.transcript.name
                )
            });
    }
    session
        .select_step(args.turn.as_ref(), args.step)
        .map_err(|e| anyhow::anyhow!("{}: {e}", session.transcript.name))
}

pub fn run_compile(
    session: &Session,
    args: &CompileArgs,
    context: &Context,
) -> anyhow::Result<ExitStatus> {
    let step = select(session, &args.select)?;
    let given = given(&args.plan)?;
    let compiled = session.compile(step, &given);
    // The fingerprint printed beside the body: `fingerprint`'s, with the same --system/--tools.
    let plan = promptc::agents::claude::session::plan(session, given, crate::commands::threads());
    // A body rebuilt from replay records has the system and tools it was sent with.
    if compiled.verified.is_some() && (args.plan.system.is_some() || args.plan.tools.is_some()) {
        crate::commands::warn(
            &format!(
                "--system and --tools are not used for this request: {} records the ones it sent (replay records)",
                session.transcript.name
            ),
            context,
        );
    }
    let options = promptc::render::RenderOptions {
        full: args.full,
        ..context.stdout
    };
    let json = args.format.format() == Format::Json;
    with_stdout(|out| {
        promptc::agents::claude::render::write_compile(
            out,
            (session, &plan, step),
            &compiled,
            json,
            &options,
        )
    })?;
    Ok(ExitStatus::Success)
}

pub fn run_view(
    session: &Session,
    args: &ViewArgs,
    context: &Context,
) -> anyhow::Result<ExitStatus> {
    // A transcript without a request to show (only bookkeeping and system lines) still shows
    // its lines.
    let step = match select(session, &args.select) {
        Ok(step) => Some(step),
        Err(_) if args.select.turn.is_none() => None,
        Err(error) => return Err(error),
    };
    let compiled = step.map(|step| (step, session.compile(step, &Given::default())));
    let json = args.format.format() == Format::Json;
    with_stdout(|out| {
        promptc::agents::claude::render::view::write_view(
            out,
            session,
            compiled.as_ref().map(|(step, c)| (*step, c)),
            json,
            &context.stdout,
        )
    })?;
    Ok(ExitStatus::Success)
}

//! One module per subcommand, each with `run(args, &Context) -> Result<ExitStatus>`.

mod check;
pub mod claude;
mod compile;
mod completions;
mod diff;
mod fingerprint;
mod page;
mod report;
mod sessions;
mod steps;
mod view;
mod watch;

use std::io::{BufWriter, Write};

use anyhow::Context as _;

use crate::cli::{Cli, Command, InputArgs};
use crate::exit::ExitStatus;
use crate::term::{self, Stream};
use promptc::Session;
use promptc::agents::codex::session::Session as CodexSession;
use promptc::core::parallel::Threads;
use promptc::render::RenderOptions;

/// What every command gets: rendering decisions for stdout and stderr.
pub struct Context {
    pub stdout: RenderOptions,
    pub stderr_color: bool,
}

pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    let context = Context {
        stdout: RenderOptions {
            color: term::use_color(cli.color, Stream::Stdout),
            width: term::width(cli.width),
            full: false,
        },
        stderr_color: term::use_color(cli.color, Stream::Stderr),
    };
    let _ = STDERR_COLOR.set(context.stderr_color);
    match cli.command {
        Command::View(args) => view::run(args, &context),
        Command::Compile(args) => compile::run(args, &context),
        Command::Fingerprint(args) => fingerprint::run(args, &context),
        Command::Steps(args) => steps::run(args, &context),
        Command::Diff(args) => diff::run(args, &context),
        Command::Check(args) => check::run(args, &context),
        Command::Sessions(args) => sessions::run(args, &context),
        Command::Report(args) => report::run(args, &context),
        Command::Watch(args) => watch::run(args, &context),
        Command::Completions(args) => completions::run(args),
        Command::Man => completions::run_man(),
    }
}

/// Threads the library may use: one per core. Asked once: std reads the cgroup's CPU quota
/// from three files at every call.
pub fn threads() -> Threads {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    Threads::new(
        *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from)),
    )
}

/// Leave what a command built (sessions, plans) to the operating system, which takes it back
/// at exit at once, instead of freeing it piece by piece: 10 ms of a 100 MB rollout's 110.
/// For values the process holds until it ends, once the output is written.
pub fn keep_until_exit<T>(value: T) {
    std::mem::forget(value);
}

/// What a command reads of the items beyond their hashes and kinds.
pub enum Items {
    /// Their JSON (the command shows it, or estimates tokens from it later).
    Json,
    /// Nothing: only messages keep their JSON (`LoadOptions::keep_item_json` off).
    Counts,
    /// Their token estimates, made while reading; only messages keep their JSON.
    Tokens,
}

/// Load a session of either agent (a Claude Code transcript is told by its first lines),
/// printing a warning on stderr for every skipped line.
pub fn load(input: &InputArgs, context: &Context, items: Items) -> anyhow::Result<Session> {
    // Standard input and compressed files are read whole first, then told by their lines.
    if let Some((name, bytes)) = crate::input::read_whole(&input.rollout)? {
        let head = &bytes[..bytes.len().min(64 << 10)];
        if promptc::agents::claude::is_transcript(head) == Some(true) {
            return claude_loaded(claude::load_bytes(&name, &bytes)?, input, context);
        }
        let options = load_options(input, items);
        let rollout = crate::input::load_bytes(&name, &bytes, options).map_err(neither_agent)?;
        let session = crate::fork::session(rollout, options);
        warn_skipped(&session, 0..session.rollout.skipped.len(), context);
        return Ok(Session::Codex(session));
    }
    if let Some(path) = claude::detect(&input.rollout)? {
        let session = match items {
            Items::Json => claude::load_file(&path)?,
            // No item's text is shown: a lean load.
            Items::Counts | Items::Tokens => claude::load_lean(&path)?,
        };
        return claude_loaded(session, input, context);
    }
    Ok(Session::Codex(
        load_codex(input, context, items).map_err(neither_agent)?,
    ))
}

/// A Claude Code transcript loaded: under `--strict` an error naming its first skipped line
/// (as a Codex rollout's), otherwise a warning on stderr for each.
fn claude_loaded(
    session: promptc::agents::claude::session::Session,
    input: &InputArgs,
    context: &Context,
) -> anyhow::Result<Session> {
    let t = &session.transcript;
    if input.strict
        && let Some(first) = t.skipped.first()
    {
        let column = first.column.map(|c| format!(":{c}")).unwrap_or_default();
        // The reporter escapes the message.
        anyhow::bail!(
            "{}:{}{column}: {} (--strict)",
            t.name,
            first.line,
            first.reason
        );
    }
    warn_skipped_lines(&t.name, &t.skipped, context);
    Ok(Session::Claude(session))
}

/// A file neither agent's lines were found in is named as such, not only as no Codex rollout:
/// the file may have been meant as a Claude Code transcript.
fn neither_agent(error: anyhow::Error) -> anyhow::Error {
    use promptc::agents::codex::parse::LoadError;
    match error.downcast_ref::<LoadError>() {
        Some(LoadError::Empty { name }) => anyhow::anyhow!(
            "{name}: empty file: neither a Codex rollout nor a Claude Code transcript"
        ),
        Some(LoadError::NotARollout { name, line, reason }) => anyhow::anyhow!(
            "{name}: neither a Codex rollout nor a Claude Code transcript: no line is a JSON object (line {line}: {reason})"
        ),
        _ => error,
    }
}

/// Load a Codex rollout (a fork with its parent), printing a warning on stderr for every
/// skipped line.
pub fn load_codex(
    input: &InputArgs,
    context: &Context,
    items: Items,
) -> anyhow::Result<CodexSession> {
    let options = load_options(input, items);
    let session = crate::fork::session(crate::input::load(&input.rollout, options)?, options);
    warn_skipped(&session, 0..session.rollout.skipped.len(), context);
    Ok(session)
}

/// The file `-o` names; `None` for none or `-`, which is standard output as for input.
pub fn output_file(output: Option<&std::path::Path>) -> Option<&std::path::Path> {
    output.filter(|path| path.as_os_str() != "-")
}

/// How a Codex rollout is read for a command that shows `items`.
fn load_options(input: &InputArgs, items: Items) -> promptc::LoadOptions {
    promptc::LoadOptions {
        strict: input.strict,
        threads: threads(),
        keep_item_json: matches!(items, Items::Json),
        estimate_tokens: matches!(items, Items::Tokens),
        ..promptc::LoadOptions::default()
    }
}

/// A warning on stderr for each skipped line of `session` in `which` (indices of skipped lines).
pub fn warn_skipped(session: &CodexSession, which: std::ops::Range<usize>, context: &Context) {
    let rollout = &session.rollout;
    warn_skipped_lines(&rollout.name, &rollout.skipped[which], context);
}

/// "warning", coloured when stderr is.
fn warning_label(context: &Context) -> String {
    if context.stderr_color {
        promptc::render::paint(
            &RenderOptions {
                color: true,
                ..RenderOptions::default()
            },
            promptc::render::Tone::Warning,
            "warning",
        )
    } else {
        "warning".to_string()
    }
}

/// Whether stderr is coloured, for warnings from where no [`Context`] is passed (the walks of
/// the homes, which `latest` and session ids use too).
static STDERR_COLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// A folder under a home that cannot be listed: its sessions are left out, with a warning once
/// per folder (`watch --next` lists the homes again and again), and the command goes on.
pub fn warn_unlisted(dir: &std::path::Path, error: &std::io::Error) {
    static WARNED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if warned.iter().any(|d| d == dir) {
        return;
    }
    warned.push(dir.to_path_buf());
    let context = Context {
        stdout: RenderOptions::default(),
        stderr_color: STDERR_COLOR.get().copied().unwrap_or(false),
    };
    warn(
        &format!(
            "{}: cannot list ({error}): the sessions under it are left out",
            dir.display()
        ),
        &context,
    );
}

/// A warning on stderr (`text` is escaped here).
pub fn warn(text: &str, context: &Context) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}: {}",
        warning_label(context),
        promptc::core::sanitize::escape_line(text)
    );
}

/// A warning on stderr for each of `skipped`, lines of the file `name`.
pub fn warn_skipped_lines(
    name: &str,
    skipped: &[promptc::core::lines::SkippedLine],
    context: &Context,
) {
    let mut stderr = std::io::stderr().lock();
    let label = warning_label(context);
    for skipped in skipped {
        let column = skipped.column.map(|c| format!(":{c}")).unwrap_or_default();
        let _ = writeln!(
            stderr,
            "{label}: {}:{}{}: skipped: {} (near: {})",
            promptc::core::sanitize::escape_line(name),
            skipped.line,
            column,
            promptc::core::sanitize::escape_line(&skipped.reason),
            promptc::core::sanitize::escape_line(&skipped.excerpt),
        );
    }
}

/// Build the plan (model views, fingerprints, token estimates) of every step: Codex's from
/// `--instructions` and `--tools`, Claude Code's from `--system` and `--tools`.
pub fn plan(
    session: &Session,
    args: &crate::cli::PlanArgs,
    estimate_tokens: bool,
    context: &Context,
) -> anyhow::Result<promptc::fingerprint::Plan> {
    plan_with_output_schema(session, args, estimate_tokens, None, context)
}

/// [`plan`], a Codex rollout's requests sending `output_schema` (`compile --output-schema`).
pub fn plan_with_output_schema(
    session: &Session,
    args: &crate::cli::PlanArgs,
    estimate_tokens: bool,
    output_schema: Option<String>,
    context: &Context,
) -> anyhow::Result<promptc::fingerprint::Plan> {
    Ok(match session {
        Session::Codex(s) => {
            warn_other_agents_flags(&s.rollout.name, false, args, None, context);
            let options = promptc::fingerprint::PlanOptions {
                output_schema,
                ..plan_options(args, estimate_tokens)?
            };
            session.plan(&options, &Default::default())
        }
        Session::Claude(s) => {
            warn_other_agents_flags(&s.transcript.name, true, args, None, context);
            session.plan(
                &promptc::fingerprint::PlanOptions {
                    threads: threads(),
                    ..Default::default()
                },
                &claude::given(args)?,
            )
        }
    })
}

/// A warning for each flag given that is the other agent's, and so not used for the session
/// `name` (`claude`: a Claude Code transcript, else a Codex rollout): not an error, as `check`
/// and `diff` take sessions of both agents.
pub fn warn_other_agents_flags(
    name: &str,
    claude: bool,
    args: &crate::cli::PlanArgs,
    output_schema: Option<&std::path::Path>,
    context: &Context,
) {
    let flags = other_agents_flags(claude, args, output_schema.is_some());
    warn_unused_flags(name, claude, &flags, context);
}

/// The flags given that are the other agent's, for a session of Claude Code (`claude`) or Codex.
pub fn other_agents_flags(
    claude: bool,
    args: &crate::cli::PlanArgs,
    output_schema: bool,
) -> Vec<&'static str> {
    let flags = if claude {
        vec![
            ("--instructions", args.instructions.is_some()),
            ("--output-schema", output_schema),
        ]
    } else {
        vec![("--system", args.system.is_some())]
    };
    flags
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
}

/// Say that each of `flags`, the other agent's, is not used for session `name`.
pub fn warn_unused_flags(name: &str, claude: bool, flags: &[&str], context: &Context) {
    let (kind, theirs) = if claude {
        ("a Claude Code transcript", "Codex rollouts")
    } else {
        ("a Codex rollout", "Claude Code transcripts")
    };
    for flag in flags {
        warn(
            &format!("{flag} is for {theirs}, and {name} is {kind}: not used for it"),
            context,
        );
    }
}

/// The options of a plan: `--tools` and `--instructions` read.
pub fn plan_options(
    args: &crate::cli::PlanArgs,
    estimate_tokens: bool,
) -> anyhow::Result<promptc::fingerprint::PlanOptions> {
    let tools = match &args.tools {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read", path.display()))?;
            Some(
                promptc::agents::codex::compile::parse_tools(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
            )
        }
    };
    let instructions = match &args.instructions {
        None => None,
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read", path.display()))?,
        ),
    };
    Ok(promptc::fingerprint::PlanOptions {
        instructions,
        tools,
        output_schema: None,
        estimate_tokens,
        threads: threads(),
    })
}

/// Run `write` against a buffered stdout and flush it, with context on failure.
pub fn with_stdout(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    write(&mut out).context("cannot write to standard output")?;
    out.flush().context("cannot write to standard output")?;
    Ok(())
}

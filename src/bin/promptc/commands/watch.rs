//! `promptc watch`: follow a session while its agent writes it: a Codex rollout or a Claude
//! Code transcript, told by the file's first lines (an empty file waits for its first line).
//!
//! Polling, every `--interval` ms (250 by default): one `stat` of the path and, when the file
//! grew, one read of the appended bytes from the kept offset. Polling works the same on every
//! filesystem (network mounts and containers' bind mounts, where inotify is silent), and a
//! quarter of a second is well below the seconds a model request takes; a notification crate
//! would save at most that delay.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;

use crate::cli::{AgentChoice, Format, WatchArgs};
use crate::commands::{Context, plan_options, threads, warn_skipped, warn_skipped_lines};
use crate::exit::ExitStatus;
use crate::input::LATEST;
use promptc::agents::claude::session::Session as ClaudeSession;
use promptc::agents::codex::session::Session as CodexSession;
use promptc::render::watch::{Restart, write_event, write_following, write_heading};
use promptc::watch::{Event, Growing, Loader, Watch, drift};

/// Bytes at the start of the file compared at each poll: another file written at the same path
/// (an editor's save, a copy) is seen even when it reuses the inode.
const HEAD: usize = 64;

pub fn run(args: WatchArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("cannot handle Ctrl-C")?;
    // The homes are read for `latest`, a session id and --next only.
    let given = PathBuf::from(&args.rollout);
    let looked_up = args.next
        || (!given.exists()
            && (args.rollout == LATEST
                || promptc::agents::codex::discover::is_id_query(&args.rollout)));
    let homes = if looked_up {
        crate::homes::choose(
            args.agent,
            args.codex_home.as_deref(),
            args.claude_home.as_deref(),
        )?
    } else {
        crate::homes::Homes::default()
    };
    let (codex, claude) = (homes.codex.as_deref(), homes.claude.as_deref());
    let newest = || {
        crate::input::newest_session(codex, claude, false)
            .ok()
            .flatten()
    };
    // With --next, `latest` may not exist yet: wait for an agent to write it.
    let mut path = match crate::input::resolve_in_homes(&args.rollout, codex, claude, true) {
        Err(_) if args.next && args.rollout == LATEST => loop {
            if let Some(first) = newest() {
                break first;
            }
            if stop.load(Ordering::SeqCst) {
                return Ok(ExitStatus::Success);
            }
            sleep(Duration::from_millis(args.interval), &stop);
        },
        resolved => resolved?,
    };
    // The newest session when the watch began: --next switches to one newer than it.
    let mut known = if args.next { newest() } else { None };
    let mut polls: u64 = 0;
    if path.extension().is_some_and(|e| e == "zst") {
        anyhow::bail!(
            "{}: compressed rollouts are finished sessions: use `promptc steps`",
            path.display()
        );
    }
    let json = args.rows.format.format() == Format::Json;
    let setup = Setup {
        options: plan_options(&args.rows.plan, !args.rows.no_tokens)?,
        // Read when a Claude Code transcript is followed: a Codex --tools list is not one.
        given: crate::commands::claude::given(&args.rows.plan).map_err(|e| format!("{e:#}")),
        agent: args.agent,
        unused: [false, true]
            .map(|claude| crate::commands::other_agents_flags(claude, &args.rows.plan, false)),
    };
    // A mistyped path would otherwise wait in silence (said once the arguments are read).
    if path.try_exists().is_ok_and(|exists| !exists) {
        crate::commands::warn(
            &format!(
                "{} does not exist yet: waiting for it to be written (Ctrl-C to stop)",
                path.display()
            ),
            context,
        );
    }
    let interval = Duration::from_millis(args.interval);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut followed = Followed::new(&path, &setup);
    // The columns of the last table heading written.
    let mut heading = followed.watch.writes();
    write_following(
        &mut out,
        &followed.name,
        None,
        json,
        heading,
        &context.stdout,
    )?;
    out.flush()?;
    loop {
        if stop.load(Ordering::SeqCst) {
            // What was written up to Ctrl-C is read, then the rows held back are written.
            if let Poll::Bytes(bytes) = followed.poll()? {
                let events = followed.watch.push(&bytes, &followed.name)?;
                followed.write(&mut out, &events, json, false, &mut heading, context)?;
            }
            let events = followed.watch.finish(&followed.name)?;
            followed.write(&mut out, &events, json, false, &mut heading, context)?;
            out.flush()?;
            return Ok(ExitStatus::Success);
        }
        match followed.poll()? {
            Poll::Bytes(bytes) => {
                let events = followed.watch.push(&bytes, &followed.name)?;
                let stop_at_drift = args.exit_on_drift;
                let unexpected = followed.write(
                    &mut out,
                    &events,
                    json,
                    stop_at_drift,
                    &mut heading,
                    context,
                )?;
                out.flush()?;
                if unexpected && args.exit_on_drift {
                    return Ok(ExitStatus::Differences);
                }
            }
            Poll::Restart(why) => {
                followed = Followed::new(&path, &setup);
                let name = &followed.name;
                write_following(&mut out, name, Some(why), json, None, &context.stdout)?;
                out.flush()?;
            }
            Poll::Nothing => {}
        }
        // Listing the homes is a walk of their folders: every 8th poll (2 s by default).
        polls += 1;
        if args.next
            && polls.is_multiple_of(8)
            && let Some(newer) = newest()
            && known.as_ref() != Some(&newer)
            && newer != path
        {
            known = Some(newer.clone());
            let events = followed.watch.finish(&followed.name)?;
            followed.write(&mut out, &events, json, false, &mut heading, context)?;
            path = newer;
            followed = Followed::new(&path, &setup);
            let why = Some(Restart::NewSession);
            write_following(&mut out, &followed.name, why, json, None, &context.stdout)?;
            out.flush()?;
        }
        sleep(interval, &stop);
    }
}

/// What every followed file's watch is made with.
struct Setup {
    /// Codex's plan: `--instructions`, `--tools`, token estimates.
    options: promptc::fingerprint::PlanOptions,
    /// Claude Code's `--system` and `--tools`, or why they are not Claude Code's.
    given: Result<promptc::agents::claude::wire::Given, String>,
    /// `--agent`: the agent a file must be (and an empty one is taken to be).
    agent: Option<AgentChoice>,
    /// The flags given that are Claude Code's (not used for a rollout) and Codex's (not used for
    /// a transcript), said once the file's agent is known.
    unused: [Vec<&'static str>; 2],
}

impl Clone for Setup {
    fn clone(&self) -> Setup {
        Setup {
            options: self.options.clone(),
            given: self.given.clone(),
            agent: self.agent,
            unused: self.unused.clone(),
        }
    }
}

/// Sleep `interval`, waking early on Ctrl-C.
fn sleep(interval: Duration, stop: &AtomicBool) {
    let slice = Duration::from_millis(50);
    let mut left = interval;
    while !left.is_zero() && !stop.load(Ordering::SeqCst) {
        let now = left.min(slice);
        std::thread::sleep(now);
        left -= now;
    }
}

enum Poll {
    Bytes(Vec<u8>),
    Restart(Restart),
    Nothing,
}

/// One followed file: what was read of it, and the watch its bytes go to.
struct Followed {
    path: PathBuf,
    name: String,
    file: Option<File>,
    /// Bytes read so far.
    offset: u64,
    /// Its first bytes, as read.
    head: Vec<u8>,
    watch: Watcher,
    /// The other agent's flags given (see [`Setup::unused`]), until they are named: once the
    /// file's agent is known.
    unused: Option<[Vec<&'static str>; 2]>,
}

/// Lines whose first lines tell no agent are held this far before they are taken as Codex's.
const UNTOLD_LINES: usize = 64;

/// The watch of a session of either agent.
enum Watcher {
    /// The file's first line has not come yet (an empty file): the bytes so far, and what the
    /// watch will be made with (`--agent`: the agent the file must be, an empty one is taken to
    /// be).
    Undecided(Vec<u8>, Box<Setup>),
    /// Boxed: a watch holds its session's growth, a few kilobytes either way.
    Codex(Box<Watch<CodexSession>>),
    Claude(Box<Watch<ClaudeSession>>),
}

impl Watcher {
    fn new(setup: &Setup) -> Watcher {
        Watcher::Undecided(Vec::new(), Box::new(setup.clone()))
    }

    /// A watch of `agent`'s session.
    fn of(agent: AgentChoice, name: &str, setup: &Setup) -> anyhow::Result<Watcher> {
        Ok(match agent {
            AgentChoice::Codex => {
                let plan_options = setup.options.clone();
                let loader = Loader {
                    load: Box::new(|name: &str, bytes: &[u8]| {
                        let options = promptc::LoadOptions {
                            strict: false,
                            threads: threads(),
                            ..promptc::LoadOptions::default()
                        };
                        let rollout = promptc::agents::codex::parse::load(name, bytes, options)
                            .map_err(|e| e.to_string())?;
                        Ok(crate::fork::session(rollout, options))
                    }),
                    planner: Box::new(move |session: &CodexSession| {
                        promptc::agents::codex::plan::Planner::new(session, &plan_options)
                    }),
                };
                Watcher::Codex(Box::new(Watch::new(name, loader)))
            }
            AgentChoice::Claude => {
                let given = setup.given.clone().map_err(anyhow::Error::msg)?;
                let loader = Loader {
                    load: Box::new(|name: &str, bytes: &[u8]| {
                        ClaudeSession::load_with_threads(name, bytes, threads())
                            .map_err(|e| e.to_string())
                    }),
                    planner: Box::new(move |_: &ClaudeSession| {
                        promptc::agents::claude::follow::Planner::new(given.clone(), threads())
                    }),
                };
                Watcher::Claude(Box::new(Watch::new(name, loader)))
            }
        })
    }

    /// Bytes appended: the events of the lines they complete. While no agent is known, the
    /// bytes wait for a first line that tells it.
    fn push(&mut self, bytes: &[u8], name: &str) -> anyhow::Result<Vec<Event>> {
        let events = match self {
            Watcher::Codex(w) => w.push(bytes),
            Watcher::Claude(w) => w.push(bytes),
            Watcher::Undecided(head, setup) => {
                head.extend_from_slice(bytes);
                let told = promptc::agents::claude::is_transcript(head);
                let lines = memchr::memchr_iter(b'\n', head).count();
                let agent = match told {
                    Some(true) => AgentChoice::Claude,
                    Some(false) => AgentChoice::Codex,
                    None if lines >= UNTOLD_LINES => setup.agent.unwrap_or(AgentChoice::Codex),
                    None => return Ok(Vec::new()),
                };
                if told.is_some()
                    && let Some(forced) = setup.agent
                    && forced != agent
                {
                    let flag = match forced {
                        AgentChoice::Codex => "codex",
                        AgentChoice::Claude => "claude",
                    };
                    anyhow::bail!("{name}: {} (--agent {flag})", what(agent));
                }
                let head = std::mem::take(head);
                *self = Watcher::of(agent, name, setup)?;
                return self.push(&head, name);
            }
        };
        events.map_err(anyhow::Error::msg)
    }

    /// The watch ends: the events held back. Bytes whose first lines told no agent are read
    /// as `--agent`'s, else as Codex's.
    fn finish(&mut self, name: &str) -> anyhow::Result<Vec<Event>> {
        if let Watcher::Undecided(head, setup) = self {
            if head.is_empty() {
                return Ok(Vec::new());
            }
            let head = std::mem::take(head);
            *self = Watcher::of(setup.agent.unwrap_or(AgentChoice::Codex), name, setup)?;
            let mut events = self.push(&head, name)?;
            events.extend(self.finish(name)?);
            return Ok(events);
        }
        match self {
            Watcher::Codex(w) => w.finish(),
            Watcher::Claude(w) => w.finish(),
            Watcher::Undecided(..) => Ok(Vec::new()),
        }
        .map_err(anyhow::Error::msg)
    }

    /// Whether the file is Claude Code's; `None` while its agent is not known.
    fn agent_is_claude(&self) -> Option<bool> {
        match self {
            Watcher::Codex(_) => Some(false),
            Watcher::Claude(_) => Some(true),
            Watcher::Undecided(..) => None,
        }
    }

    /// The provider reports cache writes (the table's columns are Anthropic's); `None` while
    /// the agent is not known.
    fn writes(&self) -> Option<bool> {
        match self {
            Watcher::Codex(_) => Some(false),
            Watcher::Claude(_) => Some(true),
            Watcher::Undecided(_, setup) => setup.agent.map(|a| a == AgentChoice::Claude),
        }
    }

    /// Write one event: a skipped line as a warning on stderr (in line order with the rows),
    /// anything else on `out`. Returns whether it was an unexpected drift.
    fn write(
        &self,
        out: &mut dyn Write,
        event: &Event,
        json: bool,
        context: &Context,
    ) -> anyhow::Result<bool> {
        match self {
            Watcher::Codex(w) => write_one(w, out, event, json, context, |session, index| {
                warn_skipped(session, index..index + 1, context)
            }),
            Watcher::Claude(w) => write_one(w, out, event, json, context, |session, index| {
                let t = &session.transcript;
                warn_skipped_lines(&t.name, &t.skipped[index..index + 1], context)
            }),
            Watcher::Undecided(..) => Ok(false),
        }
    }
}

/// What a file of `agent`'s is, in an error.
fn what(agent: AgentChoice) -> &'static str {
    match agent {
        AgentChoice::Codex => "a Codex rollout, not a Claude Code transcript",
        AgentChoice::Claude => "a Claude Code transcript, not a Codex rollout",
    }
}

/// One event of `watch`, and whether it was an unexpected drift.
fn write_one<S: Growing>(
    watch: &Watch<S>,
    out: &mut dyn Write,
    event: &Event,
    json: bool,
    context: &Context,
    warn: impl Fn(&S, usize),
) -> anyhow::Result<bool> {
    let mut unexpected = false;
    match event {
        Event::Skipped { index } => {
            if let Some((session, _, _)) = watch.current() {
                out.flush()?;
                warn(session, *index);
            }
        }
        Event::Drift { step, .. } => {
            if let Some((_, _, rows)) = watch.current() {
                unexpected = drift(&rows[*step].verdict) == Some(false);
            }
        }
        _ => {}
    }
    write_event(out, watch, event, json, &context.stdout)?;
    Ok(unexpected)
}

impl Followed {
    fn new(path: &Path, setup: &Setup) -> Self {
        let name = path.display().to_string();
        Followed {
            path: path.to_path_buf(),
            watch: Watcher::new(setup),
            name,
            file: None,
            offset: 0,
            head: Vec::new(),
            unused: Some(setup.unused.clone()),
        }
    }

    /// Look at the file once: the bytes appended since the last look, or why to start over.
    fn poll(&mut self) -> anyhow::Result<Poll> {
        // Not there (yet, or between a removal and a new file): wait for it.
        let Ok(current) = std::fs::metadata(&self.path) else {
            return Ok(Poll::Nothing);
        };
        let Some(file) = &mut self.file else {
            self.file = Some(
                File::open(&self.path)
                    .with_context(|| format!("{}: cannot open", self.path.display()))?,
            );
            return self.poll();
        };
        if replaced(&file.metadata()?, &current) {
            return Ok(Poll::Restart(Restart::Replaced));
        }
        let len = current.len();
        if len < self.offset {
            return Ok(Poll::Restart(Restart::Truncated));
        }
        if self.offset > 0 {
            let mut head = vec![0; self.head.len()];
            file.seek(SeekFrom::Start(0))?;
            file.read_exact(&mut head)?;
            if head != self.head {
                return Ok(Poll::Restart(Restart::Replaced));
            }
        }
        if len == self.offset {
            return Ok(Poll::Nothing);
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::with_capacity((len - self.offset) as usize);
        file.take(len - self.offset)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{}: cannot read", self.path.display()))?;
        // The head is the file's first bytes: read while the offset is still inside it.
        if self.head.len() < HEAD {
            let take = (HEAD - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        self.offset += bytes.len() as u64;
        Ok(Poll::Bytes(bytes))
    }

    /// Write the events, after the table heading when the agent's columns are not the last
    /// heading's (`heading`); true when one was an unexpected drift, the last written when
    /// `stop_at_drift`.
    fn write(
        &mut self,
        out: &mut dyn Write,
        events: &[Event],
        json: bool,
        stop_at_drift: bool,
        heading: &mut Option<bool>,
        context: &Context,
    ) -> anyhow::Result<bool> {
        if let Some(claude) = self.watch.agent_is_claude()
            && let Some(unused) = self.unused.take()
        {
            let flags = &unused[usize::from(claude)];
            crate::commands::warn_unused_flags(&self.name, claude, flags, context);
        }
        if let Some(writes) = self.watch.writes()
            && *heading != Some(writes)
        {
            write_heading(out, json, writes, &context.stdout)?;
            *heading = Some(writes);
        }
        let mut unexpected = false;
        for event in events {
            unexpected |= self.watch.write(out, event, json, context)?;
            if unexpected && stop_at_drift {
                break;
            }
        }
        Ok(unexpected)
    }
}

/// Another file now has the path: another inode (or, off Unix, another creation time).
fn replaced(open: &std::fs::Metadata, at_path: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        (open.dev(), open.ino()) != (at_path.dev(), at_path.ino())
    }
    #[cfg(not(unix))]
    {
        open.created().ok() != at_path.created().ok()
    }
}

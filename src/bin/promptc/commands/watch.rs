//! `promptc watch`: follow a rollout while Codex writes it.
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

use crate::cli::{Format, WatchArgs};
use crate::commands::{Context, plan_options, threads, warn_skipped};
use crate::exit::ExitStatus;
use promptc::agents::codex::session::Session as CodexSession;
use promptc::render::watch::{Restart, write_event, write_following};
use promptc::watch::{Event, Growing, Loader, Watch, drift};

/// Bytes at the start of the file compared at each poll: another file written at the same path
/// (an editor's save, a copy) is seen even when it reuses the inode.
const HEAD: usize = 64;

pub fn run(args: WatchArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .context("cannot handle Ctrl-C")?;
    let home = match (&args.codex_home, args.next) {
        (Some(home), _) => Some(home.clone()),
        (None, true) => Some(crate::input::codex_home()?),
        (None, false) => None,
    };
    // With --next, `latest` may not exist yet: wait for Codex to write it.
    let mut path = match (
        crate::input::resolve_in(&args.rollout, home.as_deref()),
        &home,
    ) {
        (Err(_), Some(home)) if args.next && args.rollout == crate::input::LATEST => loop {
            if let Some(first) = newest(home) {
                break first;
            }
            if stop.load(Ordering::SeqCst) {
                return Ok(ExitStatus::Success);
            }
            sleep(Duration::from_millis(args.interval), &stop);
        },
        (resolved, _) => resolved?,
    };
    // The newest rollout when the watch began: --next switches to one newer than it.
    let mut known = home.as_deref().filter(|_| args.next).and_then(newest);
    let mut polls: u64 = 0;
    if path.extension().is_some_and(|e| e == "zst") {
        anyhow::bail!(
            "{}: compressed rollouts are finished sessions: use `promptc steps`",
            path.display()
        );
    }
    let json = args.rows.format.format() == Format::Json;
    let options = plan_options(&args.rows.plan, !args.rows.no_tokens)?;
    let interval = Duration::from_millis(args.interval);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut followed = Followed::new(&path, &options);
    write_following(
        &mut out,
        &followed.name,
        None,
        json,
        followed.watch.writes(),
        &context.stdout,
    )?;
    out.flush()?;
    loop {
        if stop.load(Ordering::SeqCst) {
            // What was written up to Ctrl-C is read, then the rows held back are written.
            if let Poll::Bytes(bytes) = followed.poll()? {
                let events = followed.watch.push(&bytes).map_err(anyhow::Error::msg)?;
                followed.write(&mut out, &events, json, false, context)?;
            }
            let events = followed.watch.finish().map_err(anyhow::Error::msg)?;
            followed.write(&mut out, &events, json, false, context)?;
            out.flush()?;
            return Ok(ExitStatus::Success);
        }
        match followed.poll()? {
            Poll::Bytes(bytes) => {
                let events = followed.watch.push(&bytes).map_err(anyhow::Error::msg)?;
                let unexpected =
                    followed.write(&mut out, &events, json, args.exit_on_drift, context)?;
                out.flush()?;
                if unexpected && args.exit_on_drift {
                    return Ok(ExitStatus::Differences);
                }
            }
            Poll::Restart(why) => {
                followed = Followed::new(&path, &options);
                write_following(
                    &mut out,
                    &followed.name,
                    Some(why),
                    json,
                    followed.watch.writes(),
                    &context.stdout,
                )?;
                out.flush()?;
            }
            Poll::Nothing => {}
        }
        // Listing the Codex home is a walk of its folders: every 8th poll (2 s by default).
        polls += 1;
        if let Some(home) = home
            .as_deref()
            .filter(|_| args.next && polls.is_multiple_of(8))
            && let Some(newer) = newest(home)
            && known.as_ref() != Some(&newer)
            && newer != path
        {
            known = Some(newer.clone());
            let events = followed.watch.finish().map_err(anyhow::Error::msg)?;
            followed.write(&mut out, &events, json, false, context)?;
            path = newer;
            followed = Followed::new(&path, &options);
            write_following(
                &mut out,
                &followed.name,
                Some(Restart::NewSession),
                json,
                followed.watch.writes(),
                &context.stdout,
            )?;
            out.flush()?;
        }
        sleep(interval, &stop);
    }
}

/// The newest rollout under the Codex home, if any.
fn newest(home: &Path) -> Option<PathBuf> {
    crate::input::find_rollouts(home)
        .ok()?
        .into_iter()
        .find(|r| !r.archived)
        .map(|r| r.path)
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
}

/// The watch of a session of either agent.
enum Watcher {
    Codex(Watch<CodexSession>),
}

impl Watcher {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, String> {
        match self {
            Watcher::Codex(w) => w.push(bytes),
        }
    }

    fn finish(&mut self) -> Result<Vec<Event>, String> {
        match self {
            Watcher::Codex(w) => w.finish(),
        }
    }

    /// The provider reports cache writes (the table's columns are Anthropic's).
    fn writes(&self) -> bool {
        match self {
            Watcher::Codex(_) => false,
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
        }
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
    fn new(path: &Path, options: &promptc::fingerprint::PlanOptions) -> Self {
        let name = path.display().to_string();
        let plan_options = options.clone();
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
        Followed {
            path: path.to_path_buf(),
            watch: Watcher::Codex(Watch::new(&name, loader)),
            name,
            file: None,
            offset: 0,
            head: Vec::new(),
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

    /// Write the events; true when one was an unexpected drift, the last written when
    /// `stop_at_drift`.
    fn write(
        &self,
        out: &mut dyn Write,
        events: &[Event],
        json: bool,
        stop_at_drift: bool,
        context: &Context,
    ) -> anyhow::Result<bool> {
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

//! Following a session while its agent writes it (`promptc watch`): appended bytes in, events
//! out.
//!
//! The caller (the binary) owns the file and the clock: it hands [`Watch::push`] the bytes
//! appended since its last read, in chunks cut anywhere (inside a line, inside a UTF-8
//! sequence). The watch keeps the partial last line until its newline arrives (or the watch
//! ends), so only complete lines are parsed while it runs, and answers with the events those
//! lines brought: a turn started or ended, a compaction, a rollback, a step whose usage arrived
//! (its `steps` row) and, after such a row, a drift.
//!
//! What costs what: the new lines, not the file. Appending a line costs a copy and a scan for
//! the few line types that can bring an event ([`Growing::may_bring_event`]). A line that can
//! bring one, at most once per [`Watch::push`], runs the pipeline on the lines new since the
//! last load: the agent reads them into its session ([`Growing::load_appended`]: Codex's
//! `load_more` and `replay_more`, Claude Code's conversation and steps grown), its planner
//! plans the steps they added, and the analysis ([`crate::cache::Analysis`], a breakpoint
//! cache's simulation kept) goes on from where it stopped, redoing only the steps the agent
//! says may have changed. `steps` runs the same functions from nothing, so the rows are
//! `steps`' by construction. The first load is the binary's loader (a fork's parent is read
//! then, once).

use crate::AgentSession;
use crate::cache::{Analysis, StepCache, Verdict};
use crate::core::lines::SkippedLine;
use crate::fingerprint::Plan;

/// What `watch` asks of a session that grows while its agent writes it: the agent's own reading
/// of appended lines, and the planner that goes on with the steps they add.
pub trait Growing: AgentSession + Sized {
    /// The agent's plan, growing with the session.
    type Planner;

    /// What a line that can bring an event holds (its type, as bytes): until appended lines
    /// hold one of these, nothing is loaded.
    const TRIGGERS: &'static [&'static [u8]];

    /// Whether appended complete lines hold a line that can bring an event.
    fn may_bring_event(added: &[u8]) -> bool {
        Self::TRIGGERS
            .iter()
            .any(|t| memchr::memmem::find(added, t).is_some())
    }

    /// Read `bytes`, the complete lines after the `lines` lines read, into the session. Returns
    /// the lines read in all and how many of the first steps stayed as they were.
    fn load_appended(&mut self, bytes: &[u8], lines: usize) -> (usize, usize);

    /// The events of the records from record `from` on (compactions, rollbacks, turns that
    /// ended), each with its line, in record order.
    fn record_events(&self, from: usize) -> Vec<(usize, Event)>;

    /// Records read so far.
    fn records(&self) -> usize;

    /// The lines skipped so far, in line order.
    fn skipped_lines(&self) -> &[SkippedLine];

    /// Plan the steps from step `unchanged` on (those before it kept their plan). Returns how
    /// many of the first steps kept their plan.
    fn extend_plan(planner: &mut Self::Planner, session: &Self, unchanged: usize) -> usize;

    /// The plan of the steps so far.
    fn plan(planner: &Self::Planner) -> &Plan;

    /// How many of the first steps have their row final (those analysed): every step by
    /// default; `finished`, the watch ended.
    fn settled(&self, finished: bool) -> usize {
        let _ = finished;
        self.steps().len()
    }

    /// The line that made step `k`'s row final, if it is: by default its usage's, or the next
    /// request's when that one's came without it, or its own when the watch ended (a pending
    /// step, one a resume would send next, has none yet: it proves nothing).
    fn final_row(&self, k: usize, finished: bool) -> Option<usize> {
        let steps = self.steps();
        match (&steps[k].usage, steps.get(k + 1)) {
            (Some(usage), _) => Some(usage.line),
            (None, Some(next)) if !next.pending => Some(next.line),
            (None, _) if finished => Some(steps[k].line),
            (None, _) => None,
        }
    }
}

/// Loads a file's complete lines into a session (its name, its bytes).
pub type Load<S> = Box<dyn FnMut(&str, &[u8]) -> Result<S, String>>;

/// Makes a session's planner.
pub type MakePlanner<S> = Box<dyn Fn(&S) -> <S as Growing>::Planner>;

/// Loads complete lines into a session (the binary's loader: it finds a fork's parent), and
/// makes the session's planner.
pub struct Loader<S: Growing> {
    pub load: Load<S>,
    pub planner: MakePlanner<S>,
}

/// Something that happened in the rollout, in line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A turn started (index into the session's turns).
    TurnStarted { turn: usize, line: usize },
    /// A turn ended (`task_complete`, or `turn_aborted` when `aborted`).
    TurnEnded { line: usize, aborted: bool },
    /// A compaction replaced the history.
    Compaction { line: usize },
    /// A rollback dropped turns.
    Rollback { line: usize, turns: usize },
    /// A step's row is final: its usage arrived, or the next request's output came without
    /// it, or the watch ended. Index into the session's steps and into the rows of
    /// [`Watch::current`].
    Step { step: usize, line: usize },
    /// The step just reported changed what the cache could reuse.
    Drift { step: usize, line: usize },
    /// A line was skipped (index into [`Growing::skipped_lines`]).
    Skipped { index: usize },
    /// Lines read since changed what rows already reported say, from step `step` on (a parent
    /// written after its child, the thread shown changing): those rows are reported again,
    /// as `steps` would now give them.
    Revised { step: usize },
}

/// Whether a verdict is a drift, and if so whether it is expected: `Some(true)` for a reset
/// Codex means to make (compaction, rollback, the compaction request), `Some(false)` for a
/// prefix that broke, `None` for no drift (a hit, a cold start, an idle gap, a provider miss).
pub fn drift(verdict: &Verdict) -> Option<bool> {
    match verdict {
        Verdict::Compaction
        | Verdict::Rollback
        | Verdict::CompactionRequest
        | Verdict::ModelSwitch { .. } => Some(true),
        Verdict::ComponentChanged(_)
        | Verdict::HistoryRewritten(_)
        | Verdict::ContextChanged { .. }
        | Verdict::LookbackExceeded
        | Verdict::UnrecordedChange(_)
        | Verdict::KnownRewrite { .. } => Some(false),
        Verdict::First
        | Verdict::WarmStart
        | Verdict::NoBreakpoint
        | Verdict::EarlierFile
        | Verdict::Copied
        | Verdict::IdleGap(_)
        | Verdict::TtlExpired { .. }
        | Verdict::ProviderMiss
        | Verdict::Hit
        | Verdict::NoUsage
        | Verdict::NoCacheFields => None,
    }
}

/// The state of one followed session.
pub struct Watch<S: Growing> {
    name: String,
    loader: Loader<S>,
    /// Complete lines not yet loaded.
    fresh: Vec<u8>,
    /// The last line, until its newline arrives.
    partial: Vec<u8>,
    /// Complete lines not yet loaded hold a line type that can bring an event.
    dirty: bool,
    current: Option<(S, S::Planner, Analysis)>,
    /// Lines loaded.
    lines: usize,
    records_seen: usize,
    turns_seen: usize,
    steps_reported: usize,
    /// The rows reported, as they were: a row is reported again only when it changed.
    reported: Vec<StepCache>,
    skipped_seen: usize,
}

impl<S: Growing> Watch<S> {
    pub fn new(name: &str, loader: Loader<S>) -> Watch<S> {
        Watch {
            name: name.to_string(),
            loader,
            fresh: Vec::new(),
            partial: Vec::new(),
            dirty: false,
            current: None,
            lines: 0,
            records_seen: 0,
            turns_seen: 0,
            steps_reported: 0,
            reported: Vec::new(),
            skipped_seen: 0,
        }
    }

    /// Bytes appended to the file: the events of the lines they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, String> {
        let Some(last_newline) = memchr::memrchr(b'\n', bytes) else {
            self.partial.extend_from_slice(bytes);
            return Ok(Vec::new());
        };
        let start = self.fresh.len();
        self.fresh.append(&mut self.partial);
        self.fresh.extend_from_slice(&bytes[..=last_newline]);
        self.partial.extend_from_slice(&bytes[last_newline + 1..]);
        let added = &self.fresh[start..];
        if !self.dirty {
            self.dirty = S::may_bring_event(added);
        }
        if !self.dirty {
            return Ok(Vec::new());
        }
        self.update(false)
    }

    /// The watch ends: the events still held back (lines not yet loaded, the rows of steps
    /// whose usage never arrived). A last line without its newline is read now, as `steps`
    /// reads it (skipped with a warning when it is cut short).
    pub fn finish(&mut self) -> Result<Vec<Event>, String> {
        if !self.partial.is_empty() {
            self.fresh.append(&mut self.partial);
            self.fresh.push(b'\n');
            self.dirty = true;
        }
        self.update(true)
    }

    /// Bytes waiting for their newline.
    pub fn partial_len(&self) -> usize {
        self.partial.len()
    }

    /// The session, plan and rows of the last load, which the events index into.
    pub fn current(&self) -> Option<(&S, &Plan, &[StepCache])> {
        self.current
            .as_ref()
            .map(|(s, p, a)| (s, S::plan(p), a.rows()))
    }

    fn update(&mut self, finished: bool) -> Result<Vec<Event>, String> {
        if self.current.is_none() && self.fresh.is_empty() {
            return Ok(Vec::new());
        }
        let mut revised = None;
        if self.dirty || finished {
            match &mut self.current {
                Some((session, planner, analysis)) => {
                    let fresh = &self.fresh;
                    let (lines, unchanged) =
                        grow(session, planner, analysis, fresh, self.lines, finished);
                    self.lines = lines;
                    self.fresh.clear();
                    revised = Some(unchanged);
                }
                None => {
                    let session = (self.loader.load)(&self.name, &self.fresh)?;
                    self.lines = memchr::memchr_iter(b'\n', &self.fresh).count();
                    self.fresh.clear();
                    let mut planner = (self.loader.planner)(&session);
                    S::extend_plan(&mut planner, &session, 0);
                    let mut analysis = Analysis::default();
                    let settled = session.settled(finished);
                    analysis.update(&session, S::plan(&planner), 0, settled);
                    self.current = Some((session, planner, analysis));
                }
            }
            self.dirty = false;
        }
        let Some((session, _, analysis)) = &self.current else {
            return Ok(Vec::new());
        };
        let rows = analysis.rows();
        let mut events = Vec::new();
        // Rows reported that changed go out again, and the turns from the first one's on. The
        // steps from `unchanged` on were analysed again; most come out as they were.
        let changed = revised.and_then(|unchanged| {
            (unchanged..self.steps_reported).find(|&k| rows.get(k) != self.reported.get(k))
        });
        if let Some(step) = changed {
            events.push((0, Event::Revised { step }));
            self.steps_reported = step;
            self.reported.truncate(step);
            let turn = session.steps().get(step).map_or(usize::MAX, |s| s.turn);
            self.turns_seen = self.turns_seen.min(turn).min(session.turns().len());
        }
        let skipped = session.skipped_lines();
        for (index, s) in skipped.iter().enumerate().skip(self.skipped_seen) {
            events.push((s.line, Event::Skipped { index }));
        }
        self.skipped_seen = skipped.len();
        for (turn, t) in session.turns().iter().enumerate().skip(self.turns_seen) {
            events.push((t.line, Event::TurnStarted { turn, line: t.line }));
        }
        self.turns_seen = session.turns().len();
        events.extend(session.record_events(self.records_seen));
        self.records_seen = session.records();
        let steps = session.steps();
        // Rows go out in step order: a row made final by a later step's output can come after
        // that step's own row line (its usage was carried from an earlier line, a retry's).
        let mut row_key = 0;
        while self.steps_reported < steps.len() {
            let k = self.steps_reported;
            let Some(line) = session.final_row(k, finished).filter(|_| k < rows.len()) else {
                break;
            };
            row_key = row_key.max(line);
            events.push((row_key, Event::Step { step: k, line }));
            if drift(&rows[k].verdict).is_some() {
                events.push((row_key, Event::Drift { step: k, line }));
            }
            self.reported.push(rows[k].clone());
            self.steps_reported += 1;
        }
        // Stable: a step's drift stays right after its row.
        events.sort_by_key(|(line, _)| *line);
        Ok(events.into_iter().map(|(_, e)| e).collect())
    }
}

/// Read `bytes`, the complete lines after the `lines` lines read, into the session, its plan
/// and its analysis: the same as loading, planning and analysing the whole file, at the cost
/// of the new lines. Returns the lines read in all.
fn grow<S: Growing>(
    session: &mut S,
    planner: &mut S::Planner,
    analysis: &mut Analysis,
    bytes: &[u8],
    lines: usize,
    finished: bool,
) -> (usize, usize) {
    let (lines, unchanged) = session.load_appended(bytes, lines);
    // Every step is planned again when the agent says so (Codex: the session's meta arrived
    // since): its rows too.
    let kept = S::extend_plan(planner, session, unchanged);
    let settled = session.settled(finished);
    let unchanged = kept.min(unchanged);
    analysis.update(session, S::plan(planner), unchanged, settled);
    (lines, unchanged)
}

#[cfg(test)]
mod tests {
    use super::{Event, Loader, Watch};
    use crate::LoadOptions;
    use crate::agents::codex::plan::{Planner, plan};
    use crate::agents::codex::session::Session;
    use crate::cache::{Analysis, StepCache};
    use crate::fingerprint::{Plan, PlanOptions};

    fn loader() -> Loader<Session> {
        Loader {
            load: Box::new(|name: &str, bytes: &[u8]| {
                Session::load(name, bytes, LoadOptions::default()).map_err(|e| e.to_string())
            }),
            planner: Box::new(|s: &Session| Planner::new(s, &PlanOptions::default())),
        }
    }

    /// Every step of `session` analysed.
    fn analysed(session: &Session, plan: &Plan) -> Analysis {
        let mut analysis = Analysis::default();
        analysis.update(session, plan, 0, session.replay.steps.len());
        analysis
    }

    /// The step rows a watch reports, fed `bytes` in chunks of `size` (the last may be
    /// shorter), then finished: their debug form, in order, each once.
    fn watched_rows(name: &str, bytes: &[u8], size: usize) -> Vec<String> {
        let mut watch = Watch::new(name, loader());
        let mut rows = Vec::new();
        let mut take = |watch: &Watch<Session>, events: Vec<Event>| {
            let (_, _, current) = watch.current().expect("loaded");
            for event in events {
                if let Event::Step { step, .. } = event {
                    rows.push(format!("{:?}", current[step]));
                }
            }
        };
        for chunk in bytes.chunks(size) {
            let events = watch.push(chunk).expect("loads");
            if !events.is_empty() {
                take(&watch, events);
            }
        }
        let events = watch.finish().expect("loads");
        if watch.current().is_some() {
            take(&watch, events);
        }
        rows
    }

    /// Rows that become final in one read go out in step order, even when a later step's usage
    /// line comes before the line that makes an earlier row final (usage carried from a retry
    /// or after a `compacted` line): lines 1-20, then 21-50, then the rest.
    #[test]
    fn rows_final_together_go_out_in_step_order() {
        let bytes = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/watch/rows_final_together.jsonl"),
        )
        .expect("fixture");
        let cut = |n: usize| {
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(n - 1)
                .map_or(bytes.len(), |(i, _)| i + 1)
        };
        let mut watch = Watch::new("rows_final_together", loader());
        let mut order = Vec::new();
        for (from, to) in [(0, cut(20)), (cut(20), cut(50)), (cut(50), bytes.len())] {
            for event in watch.push(&bytes[from..to]).expect("loads") {
                if let Event::Step { step, .. } = event {
                    order.push(step);
                }
            }
        }
        for event in watch.finish().expect("loads") {
            if let Event::Step { step, .. } = event {
                order.push(step);
            }
        }
        let steps = watch.current().expect("loaded").0.replay.steps.len();
        assert_eq!(order, (0..steps).collect::<Vec<_>>());
    }

    /// Whatever the chunks (1 byte: cut inside every line and every UTF-8 sequence), the rows
    /// are the whole file's analysis, each reported once, in order.
    #[test]
    fn rows_are_the_whole_files_rows_whatever_the_chunks() {
        for (name, bytes) in crate::test_support::fixture_bytes() {
            // Its first `task_started` comes after plain user messages: rows that went out
            // before it keep the turn numbers of then (README, `watch`). Its rows' order is
            // `rows_final_together_go_out_in_step_order`'s.
            if name.ends_with("rows_final_together.jsonl") {
                continue;
            }
            let Ok(session) = Session::load(&name, bytes.clone(), LoadOptions::default()) else {
                continue;
            };
            let plan = plan(&session, &PlanOptions::default());
            let whole: Vec<String> = crate::cache::analyze(&session, &plan)
                .iter()
                .map(|r| format!("{r:?}"))
                .collect();
            for size in [1, 7, 64, 4096] {
                assert_eq!(
                    watched_rows(&name, &bytes, size),
                    whole,
                    "{name}, chunks of {size}"
                );
            }
        }
    }

    /// Loading a file's lines a few at a time with `load_more` gives `load`'s rollout of the
    /// whole, whatever the cut (line numbers, item ids, skipped lines, notes, generation, meta).
    #[test]
    fn load_more_is_load_of_the_whole() {
        for (name, bytes) in crate::test_support::fixture_bytes() {
            let Ok(whole) =
                crate::agents::codex::parse::load(&name, bytes.clone(), LoadOptions::default())
            else {
                continue;
            };
            let ends: Vec<usize> = memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1).collect();
            for step in [1, 2, 5] {
                let mut cuts = ends.iter().copied().step_by(step);
                let mut first = None;
                for cut in cuts.by_ref() {
                    if let Ok(r) = crate::agents::codex::parse::load(
                        &name,
                        &bytes[..cut],
                        LoadOptions::default(),
                    ) {
                        first = Some((r, cut));
                        break;
                    }
                }
                let Some((mut rollout, mut from)) = first else {
                    continue;
                };
                let mut lines = bytes[..from].iter().filter(|&&b| b == b'\n').count();
                for cut in cuts.chain([bytes.len()]) {
                    if cut <= from {
                        continue;
                    }
                    lines = crate::agents::codex::parse::load_more(
                        &mut rollout,
                        &bytes[from..cut],
                        lines,
                    );
                    from = cut;
                }
                assert_eq!(
                    format!("{rollout:?}"),
                    format!("{whole:?}"),
                    "{name}, every {step} lines"
                );
            }
        }
    }

    /// What a session, its plan and rows hold, as text: the replay (with where it stopped),
    /// each step's view entries, their hashes, chain values and token totals, and the plan's
    /// other per-step values, then the rows.
    fn outputs(session: &Session, plan: &Plan, rows: &[StepCache]) -> String {
        let mut text = format!("{:?}\n", session.replay);
        for step in 0..plan.views.len() {
            let view = crate::agents::codex::plan::view(plan, step);
            let data: Vec<_> = (0..view.len())
                .map(|k| {
                    (
                        plan.item_hash(step, k),
                        plan.chain(step, k + 1),
                        plan.input_tokens(step, k + 1),
                        plan.first_occurrence(step, k),
                    )
                })
                .collect();
            text += &format!(
                "{step}: {view:?} {data:?} {:?} {:?} {} {}\n",
                plan.fingerprints[step],
                crate::agents::codex::plan::codex(plan).instructions[step],
                plan.instruction_tokens[step],
                plan.request_tokens(step),
            );
        }
        text + &format!(
            "{:?} {} {rows:?}",
            crate::agents::codex::plan::codex(plan).tools,
            plan.tool_tokens
        )
    }

    /// Going on from a session, its plan and rows at every cut (every 1, 2, 5 lines) gives
    /// what loading, planning and analysing the whole gives, on every fixture.
    #[test]
    fn growing_is_loading_the_whole() {
        let batch = |name: &str, bytes: &[u8], options: &PlanOptions| {
            let session = Session::load(name, bytes, LoadOptions::default()).ok()?;
            let plan = plan(&session, options);
            let rows = crate::cache::analyze(&session, &plan);
            Some(outputs(&session, &plan, &rows))
        };
        let mut compared = 0;
        for (name, bytes) in crate::test_support::fixture_bytes() {
            let ends: Vec<usize> = memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1).collect();
            for every in [1, 2, 5] {
                // Two threads once: the headers are worked out beside the views.
                let options = PlanOptions {
                    estimate_tokens: true,
                    threads: crate::core::parallel::Threads::new(if every == 2 { 2 } else { 1 }),
                    ..PlanOptions::default()
                };
                let mut cuts = ends.iter().copied().step_by(every).chain([bytes.len()]);
                let mut current = None;
                for cut in cuts.by_ref() {
                    if let Ok(session) = Session::load(&name, &bytes[..cut], LoadOptions::default())
                    {
                        let mut planner = Planner::new(&session, &options);
                        planner.extend(&session, 0);
                        let rows = analysed(&session, planner.plan());
                        current = Some((session, planner, rows, cut));
                        break;
                    }
                }
                let Some((mut session, mut planner, mut rows, mut from)) = current else {
                    continue;
                };
                let mut lines = bytes[..from].iter().filter(|&&b| b == b'\n').count();
                for cut in cuts {
                    if cut <= from {
                        continue;
                    }
                    let grown = &bytes[from..cut];
                    lines =
                        super::grow(&mut session, &mut planner, &mut rows, grown, lines, false).0;
                    from = cut;
                    assert_eq!(
                        Some(outputs(&session, planner.plan(), rows.rows())),
                        batch(&name, &bytes[..cut], &options),
                        "{name}, every {every} lines, at byte {cut}"
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000, "{compared} cuts compared");
    }

    /// A fork, its parent found or not, grown a line at a time is the fork loaded whole: its
    /// parent's history first (items replay made keep their ids as the file gains items), the
    /// fork's notes last.
    #[test]
    fn a_growing_fork_is_the_fork_loaded_whole() {
        use crate::agents::codex::session::{Parent, fork_point, parent_prefix};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/fork-home/sessions/2026/12/02");
        let parent = std::fs::read(
            dir.join("rollout-2026-12-02T09-02-58-01a235fe-2931-7c83-aca7-0875ae32363a.jsonl"),
        )
        .unwrap();
        let bytes = std::fs::read(
            dir.join("rollout-2026-12-02T09-02-59-01a235fe-2b89-7a80-8bb7-5c585a098b44.jsonl"),
        )
        .unwrap();
        let fork =
            crate::agents::codex::parse::load("fork", &bytes, LoadOptions::default()).unwrap();
        let point = fork_point(&fork).expect("a fork");
        let options = PlanOptions {
            estimate_tokens: true,
            ..PlanOptions::default()
        };
        for found in [true, false] {
            let load = |bytes: &[u8]| {
                let parent = if found {
                    let prefix = parent_prefix(&parent, &point).to_vec();
                    Parent::Found(Box::new(
                        Session::load("parent", prefix, LoadOptions::default()).unwrap(),
                    ))
                } else {
                    Parent::NotFound("not looked for".into())
                };
                let rollout =
                    crate::agents::codex::parse::load("fork", bytes, LoadOptions::default())
                        .unwrap();
                Session::fork(rollout, &point, parent)
            };
            let ends: Vec<usize> = memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1).collect();
            let mut session = load(&bytes[..ends[0]]);
            let mut planner = Planner::new(&session, &options);
            planner.extend(&session, 0);
            let mut rows = analysed(&session, planner.plan());
            let mut lines = 1;
            for pair in ends.windows(2) {
                let (from, cut) = (pair[0], pair[1]);
                let grown = &bytes[from..cut];
                lines = super::grow(&mut session, &mut planner, &mut rows, grown, lines, false).0;
                let whole = load(&bytes[..cut]);
                let plan = plan(&whole, &options);
                let whole_rows = crate::cache::analyze(&whole, &plan);
                assert_eq!(
                    outputs(&session, planner.plan(), rows.rows()),
                    outputs(&whole, &plan, &whole_rows),
                    "parent found: {found}, at byte {cut}"
                );
            }
            assert!(!session.replay.approximations.is_empty() || found);
            assert!(!rows.rows().is_empty());
        }
    }

    /// A `session_meta` that arrives after two steps (its instructions count in every request)
    /// plans every step again: the rows of the earlier steps are made again too.
    #[test]
    fn a_late_session_meta_changes_the_earlier_rows() {
        let line = |kind: &str, payload: &str| {
            format!(
                r#"{{"timestamp":"2026-01-05T10:00:00.000Z","type":"{kind}","payload":{payload}}}"#
            )
        };
        let user = |text: &str| {
            line(
                "response_item",
                &format!(
                    r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}"#
                ),
            )
        };
        let answer = line(
            "response_item",
            r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}"#,
        );
        let meta = line(
            "session_meta",
            r#"{"id":"019b0000-0000-7000-8000-000000000001","base_instructions":{"text":"Some instructions, a few tokens long."}}"#,
        );
        let lines = [
            user("one"),
            answer.clone(),
            user("two"),
            answer.clone(),
            meta,
            user("three"),
            answer,
        ];
        let bytes = (lines.join("\n") + "\n").into_bytes();
        let options = PlanOptions {
            estimate_tokens: true,
            ..PlanOptions::default()
        };
        let cut = lines[..4].iter().map(|l| l.len() + 1).sum::<usize>();
        let mut session = Session::load("late", &bytes[..cut], LoadOptions::default()).unwrap();
        let mut planner = Planner::new(&session, &options);
        planner.extend(&session, 0);
        let mut rows = analysed(&session, planner.plan());
        assert_eq!(session.replay.steps.len(), 2);
        let before = rows.rows()[0].estimated_input;
        super::grow(
            &mut session,
            &mut planner,
            &mut rows,
            &bytes[cut..],
            4,
            false,
        );
        let whole = Session::load("late", bytes, LoadOptions::default()).unwrap();
        let plan = plan(&whole, &options);
        let whole_rows = crate::cache::analyze(&whole, &plan);
        // The instructions now count in the first request.
        assert!(whole_rows[0].estimated_input > before, "{whole_rows:?}");
        assert_eq!(
            outputs(&session, planner.plan(), rows.rows()),
            outputs(&whole, &plan, &whole_rows)
        );
    }

    /// Lines that cannot bring an event are not loaded: no events, no load.
    #[test]
    fn only_lines_that_can_bring_an_event_reload() {
        let mut watch = Watch::new(
            "x",
            Loader::<Session> {
                load: Box::new(|_, _| panic!("loaded")),
                planner: Box::new(|s: &Session| Planner::new(s, &PlanOptions::default())),
            },
        );
        let line = br#"{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#;
        assert_eq!(watch.push(line).unwrap(), Vec::new());
        assert_eq!(watch.partial_len(), line.len());
        assert_eq!(watch.push(b"\n").unwrap(), Vec::new());
        assert_eq!(watch.partial_len(), 0);
    }
}

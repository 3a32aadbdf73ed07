//! The body of the `pipeline` fuzz target, also run over the fixtures as an ordinary test
//! (`tests/cli/fuzz_bodies.rs`). The whole pipeline on arbitrary bytes: load, replay, normalize, plan (fingerprints and token
//! estimates), cache analysis, checks, every renderer (text and JSON), and diff.
//!
//! Input: one or two rollouts. The bytes split at the first 0xFF byte into A and B (0xFF never
//! occurs in UTF-8, so the split byte is never part of a valid line); with no 0xFF, A = B = input.
//!
//! Invariants checked (a failure is a crash):
//! - rendering into a `Vec<u8>` never returns an error;
//! - every JSON output is well-formed JSON (its grammar: a number as recorded may be past an
//!   `f64`);
//! - every text output is UTF-8 and, with colour off, contains no raw ESC (0x1b) byte;
//! - `diff(A, A)` is identical, and so is its rendering's verdict; with no 0xFF, the diff of two
//!   loads of the same bytes is identical too (loading and planning are deterministic);
//! - one fingerprint per step.
use promptc::agents::codex::session::Session;
use promptc::core::parallel::Threads;
use promptc::fingerprint::{Plan, PlanOptions};
use promptc::render::RenderOptions;
use promptc::{LoadOptions, TurnSelector};

/// Every output of the pipeline on `data` (each named), loading and planning on `threads`
/// threads; empty when A does not load. Panics where an invariant breaks.
pub fn run(data: &[u8], threads: usize) -> Outputs {
    let threads = Threads::new(threads);
    let mut outputs = Vec::new();
    let (a_bytes, b_bytes) = match data.iter().position(|&b| b == 0xFF) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, data),
    };
    // Vary the layout with the input so narrow, normal and side-by-side text all run.
    let options = RenderOptions {
        color: false,
        width: [100, 40, 160][data.len() % 3],
        full: data.len().is_multiple_of(2),
    };
    let Some(a) = load("a.jsonl", a_bytes, threads) else {
        return outputs;
    };
    let pa = single(&a, &options, threads, &mut outputs);
    self_diff(&a, &pa, &options, &mut outputs);
    let Some(b) = load("b.jsonl", b_bytes, threads) else {
        return outputs;
    };
    let pb = if a_bytes == b_bytes {
        // A second load of the same bytes: only its plan, for the determinism check below.
        plan(&b, threads)
    } else {
        let pb = single(&b, &options, threads, &mut outputs);
        self_diff(&b, &pb, &options, &mut outputs);
        pb
    };
    let diff = promptc::diff::diff(&a, &pa, &b, &pb, None);
    render_diff(&a, &b, &diff, &options, &mut outputs);
    if a_bytes == b_bytes {
        assert!(
            diff.identical(),
            "diff of two loads of the same bytes is not identical: {diff:?}"
        );
    }
    // A diff restricted to the last steps (what `diff --turn N` does).
    if let (Some(sa), Some(sb)) = (
        a.replay.steps.len().checked_sub(1),
        b.replay.steps.len().checked_sub(1),
    ) {
        let diff = promptc::diff::diff(&a, &pa, &b, &pb, Some((sa, sb)));
        render_diff(&a, &b, &diff, &options, &mut outputs);
    }
    outputs
}

fn load(name: &str, bytes: &[u8], threads: Threads) -> Option<Session> {
    Session::load(
        name,
        bytes,
        LoadOptions {
            threads,
            // Parts of a few lines: the split and join is fuzzed on small inputs too.
            min_part_bytes: 64,
            ..LoadOptions::default()
        },
    )
    .ok()
}

/// The outputs so far, each named.
pub type Outputs = Vec<(&'static str, Vec<u8>)>;

fn text(outputs: &mut Outputs, what: &'static str, bytes: Vec<u8>) {
    if let Err(e) = std::str::from_utf8(&bytes) {
        panic!("{what}: text output is not UTF-8: {e}");
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0x1b) {
        let around = &bytes[at.saturating_sub(40)..(at + 40).min(bytes.len())];
        panic!(
            "{what}: raw ESC at byte {at} with colour off: {:?}",
            String::from_utf8_lossy(around)
        );
    }
    outputs.push((what, bytes));
}

/// Well-formed JSON (RFC 8259's grammar), not JSON a `serde_json::Value` can hold: an item is
/// shown as recorded, and a recorded number may be past an `f64` (`1e400`), which Python's and
/// jq's readers take and `Value` refuses.
fn json(outputs: &mut Outputs, what: &'static str, bytes: Vec<u8>) {
    if let Err(e) = serde_json::from_slice::<Box<serde_json::value::RawValue>>(&bytes) {
        panic!(
            "{what}: JSON output does not parse: {e}\n{}",
            String::from_utf8_lossy(&bytes)
        );
    }
    outputs.push((what, bytes));
}

/// Run `write` into a fresh buffer; rendering into memory must not fail.
fn render(
    what: &str,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Vec<u8> {
    let mut out = Vec::new();
    if let Err(e) = write(&mut out) {
        panic!("{what}: rendering failed: {e}");
    }
    out
}

fn plan(session: &Session, threads: Threads) -> Plan {
    promptc::agents::codex::plan::plan(
        session,
        &PlanOptions {
            estimate_tokens: true,
            threads,
            ..Default::default()
        },
    )
}

/// Everything done to one rollout on its own.
fn single(
    session: &Session,
    options: &RenderOptions,
    threads: Threads,
    outputs: &mut Outputs,
) -> Plan {
    use promptc::agents::codex::render::{compile, view};
    use promptc::render::{check as rcheck, fingerprint, steps};

    let plan = plan(session, threads);
    let steps = session.replay.steps.len();
    assert_eq!(plan.fingerprints.len(), steps, "one fingerprint per step");

    let rows = promptc::cache::analyze(session, &plan);
    let findings = promptc::check::check(session, &plan);
    let report = rcheck::RolloutReport {
        kind: "rollout",
        name: session.rollout.name.clone(),
        steps,
        findings: findings
            .into_iter()
            .map(|f| {
                let at = f.step.map(|k| {
                    let s = &session.replay.steps[k];
                    (session.replay.turns[s.turn].number, s.number)
                });
                (f, at)
            })
            .collect(),
    };
    let reports = [report];
    text(
        outputs,
        "check text",
        render("check text", |o| {
            rcheck::write_check(o, &reports, false, options)
        }),
    );
    json(
        outputs,
        "check json",
        render("check json", |o| {
            rcheck::write_check(o, &reports, true, options)
        }),
    );

    // `view`: whole session, the last turn, the last step.
    let mut scopes = vec![view::scope(session, None, None).expect("no selection always resolves")];
    if !session.replay.turns.is_empty() {
        let last = TurnSelector::Number(session.replay.turns.len());
        scopes.push(view::scope(session, Some(&last), None).expect("the last turn exists"));
        if let Ok(scope) = view::scope(session, Some(&last), Some(1)) {
            scopes.push(scope);
        }
    }
    for scope in &scopes {
        text(
            outputs,
            "view text",
            render("view text", |o| {
                view::write_text_view(o, session, scope, options)
            }),
        );
        json(
            outputs,
            "view json",
            render("view json", |o| {
                view::write_json_view(o, session, scope, &plan)
            }),
        );
    }

    if let Some(last) = steps.checked_sub(1) {
        json(
            outputs,
            "compile json",
            render("compile json", |o| {
                compile::write_compile_json(o, session, &plan, last)
            }),
        );
        text(
            outputs,
            "compile text",
            render("compile text", |o| {
                compile::write_compile_text(o, session, &plan, last, options)
            }),
        );
    }
    let all: Vec<usize> = (0..steps).collect();
    text(
        outputs,
        "fingerprint text",
        render("fingerprint text", |o| {
            fingerprint::write_fingerprints(o, session, &plan, &all, false)
        }),
    );
    json(
        outputs,
        "fingerprint json",
        render("fingerprint json", |o| {
            fingerprint::write_fingerprints(o, session, &plan, &all, true)
        }),
    );
    text(
        outputs,
        "steps text",
        render("steps text", |o| {
            steps::write_steps(o, session, &plan, &rows, false, options)
        }),
    );
    json(
        outputs,
        "steps json",
        render("steps json", |o| {
            steps::write_steps(o, session, &plan, &rows, true, options)
        }),
    );
    plan
}

fn self_diff(session: &Session, plan: &Plan, options: &RenderOptions, outputs: &mut Outputs) {
    let diff = promptc::diff::diff(session, plan, session, plan, None);
    assert!(diff.identical(), "diff(A, A) is not identical: {diff:?}");
    assert!(
        !diff.has_unexpected(),
        "diff(A, A) has unexpected drift: {diff:?}"
    );
    assert_eq!(promptc::render::diff::verdict(&diff), "identical");
    render_diff(session, session, &diff, options, outputs);
}

fn render_diff(
    a: &Session,
    b: &Session,
    diff: &promptc::diff::PromptDiff,
    options: &RenderOptions,
    outputs: &mut Outputs,
) {
    use promptc::render::diff::{write_diff_json, write_diff_text};
    text(
        outputs,
        "diff text",
        render("diff text", |o| write_diff_text(o, a, b, diff, options)),
    );
    json(
        outputs,
        "diff json",
        render("diff json", |o| write_diff_json(o, a, b, diff)),
    );
}

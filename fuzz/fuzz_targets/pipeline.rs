//! The whole pipeline on arbitrary bytes: load, replay, normalize, plan (fingerprints and token
//! estimates), cache analysis, checks, every renderer (text and JSON), and diff.
//!
//! Input: one or two rollouts. The bytes split at the first 0xFF byte into A and B (0xFF never
//! occurs in UTF-8, so the split byte is never part of a valid line); with no 0xFF, A = B = input.
//!
//! Invariants checked (a failure is a crash):
//! - rendering into a `Vec<u8>` never returns an error;
//! - every JSON output parses as JSON;
//! - every text output is UTF-8 and, with colour off, contains no raw ESC (0x1b) byte;
//! - `diff(A, A)` is identical, and so is its rendering's verdict; with no 0xFF, the diff of two
//!   loads of the same bytes is identical too (loading and planning are deterministic);
//! - one fingerprint per step.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptc::fingerprint::{Plan, PlanOptions};
use promptc::render::RenderOptions;
use promptc::{LoadOptions, Session, TurnSelector};

fuzz_target!(|data: &[u8]| {
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
    let Some(a) = load("a.jsonl", a_bytes) else {
        return;
    };
    let pa = single(&a, &options);
    self_diff(&a, &pa, &options);
    let Some(b) = load("b.jsonl", b_bytes) else {
        return;
    };
    let pb = if a_bytes == b_bytes {
        // A second load of the same bytes: only its plan, for the determinism check below.
        plan(&b)
    } else {
        let pb = single(&b, &options);
        self_diff(&b, &pb, &options);
        pb
    };
    let diff = promptc::diff::diff(&a, &pa, &b, &pb, None);
    render_diff(&a, &b, &diff, &options);
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
        render_diff(&a, &b, &diff, &options);
    }
});

fn load(name: &str, bytes: &[u8]) -> Option<Session> {
    Session::load(name, bytes.to_vec(), LoadOptions::default()).ok()
}

fn text(what: &str, bytes: &[u8]) {
    if let Err(e) = std::str::from_utf8(bytes) {
        panic!("{what}: text output is not UTF-8: {e}");
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0x1b) {
        let around = &bytes[at.saturating_sub(40)..(at + 40).min(bytes.len())];
        panic!(
            "{what}: raw ESC at byte {at} with colour off: {:?}",
            String::from_utf8_lossy(around)
        );
    }
}

fn json(what: &str, bytes: &[u8]) {
    if let Err(e) = serde_json::from_slice::<serde_json::Value>(bytes) {
        panic!(
            "{what}: JSON output does not parse: {e}\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
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

fn plan(session: &Session) -> Plan {
    promptc::fingerprint::plan(
        session,
        &PlanOptions {
            estimate_tokens: true,
            ..Default::default()
        },
    )
}

/// Everything done to one rollout on its own.
fn single(session: &Session, options: &RenderOptions) -> Plan {
    use promptc::render::{check as rcheck, request, view};

    let plan = plan(session);
    let steps = session.replay.steps.len();
    assert_eq!(plan.fingerprints.len(), steps, "one fingerprint per step");

    let rows = promptc::cache::analyze(session, &plan);
    let findings = promptc::check::check(session, &plan);
    let report = rcheck::RolloutReport {
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
        "check text",
        &render("check text", |o| {
            rcheck::write_check(o, &reports, false, options)
        }),
    );
    json(
        "check json",
        &render("check json", |o| {
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
            "view text",
            &render("view text", |o| {
                view::write_text_view(o, session, scope, options)
            }),
        );
        json(
            "view json",
            &render("view json", |o| {
                view::write_json_view(o, session, scope, &plan)
            }),
        );
    }

    if let Some(last) = steps.checked_sub(1) {
        json(
            "compile json",
            &render("compile json", |o| {
                request::write_compile_json(o, session, &plan, last)
            }),
        );
        text(
            "compile text",
            &render("compile text", |o| {
                request::write_compile_text(o, session, &plan, last, options)
            }),
        );
    }
    let all: Vec<usize> = (0..steps).collect();
    text(
        "fingerprint text",
        &render("fingerprint text", |o| {
            request::write_fingerprints(o, session, &plan, &all, false)
        }),
    );
    json(
        "fingerprint json",
        &render("fingerprint json", |o| {
            request::write_fingerprints(o, session, &plan, &all, true)
        }),
    );
    text(
        "steps text",
        &render("steps text", |o| {
            request::write_steps(o, session, &plan, &rows, false, options)
        }),
    );
    json(
        "steps json",
        &render("steps json", |o| {
            request::write_steps(o, session, &plan, &rows, true, options)
        }),
    );
    plan
}

fn self_diff(session: &Session, plan: &Plan, options: &RenderOptions) {
    let diff = promptc::diff::diff(session, plan, session, plan, None);
    assert!(diff.identical(), "diff(A, A) is not identical: {diff:?}");
    assert!(
        !diff.has_unexpected(),
        "diff(A, A) has unexpected drift: {diff:?}"
    );
    assert_eq!(promptc::render::diff::verdict(&diff), "identical");
    render_diff(session, session, &diff, options);
}

fn render_diff(
    a: &Session,
    b: &Session,
    diff: &promptc::diff::PromptDiff,
    options: &RenderOptions,
) {
    use promptc::render::diff::{write_diff_json, write_diff_text};
    text(
        "diff text",
        &render("diff text", |o| write_diff_text(o, a, b, diff, options)),
    );
    json(
        "diff json",
        &render("diff json", |o| write_diff_json(o, a, b, diff)),
    );
}

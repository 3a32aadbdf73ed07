//! `promptc check`.

use std::io::Write;

use anyhow::Context as _;

use crate::cli::{CheckArgs, Format, InputArgs};
use crate::commands::{Context, Items, load, plan, with_stdout};
use crate::exit::ExitStatus;
use promptc::AgentSession;
use promptc::check::{Baseline, baseline_steps, check, compare_baseline};
use promptc::render::check::{RolloutReport, write_check};

pub fn run(args: CheckArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let baseline: Option<Baseline> = match (&args.baseline, args.update_baseline) {
        (Some(path), false) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the baseline", path.display()))?;
            let baseline: Baseline = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a promptc baseline", path.display()))?;
            if let Some(reason) = baseline.incompatibility() {
                anyhow::bail!(
                    "{}: cannot compare with this baseline: {reason}",
                    path.display()
                );
            }
            Some(baseline)
        }
        _ => None,
    };
    let mut reports = Vec::new();
    let mut new_baseline = Baseline::new();
    let cwd = std::env::current_dir().ok();
    for rollout in &args.rollouts {
        let session = load(
            &InputArgs {
                rollout: rollout.clone(),
                strict: args.strict,
            },
            context,
            Items::Json,
        )?;
        let plan = plan(&session, &args.plan, false, context)?;
        let mut findings = check(&session, &plan);
        let steps = baseline_steps(&session, &plan);
        // Transcripts and rollouts are kept apart in the baseline, each under its file's path
        // (see `baseline_key`); a baseline an older promptc wrote has the argument as given.
        let key = baseline_key(rollout, session.name(), cwd.as_deref());
        let (kind, entries) = match &session {
            promptc::Session::Claude(_) => {
                ("transcript", baseline.as_ref().map(|b| &b.transcripts))
            }
            promptc::Session::Codex(_) => ("rollout", baseline.as_ref().map(|b| &b.rollouts)),
        };
        let expected = entries.map(|e| e.get(&key).or_else(|| e.get(rollout)));
        match expected {
            Some(Some(expected)) => findings.extend(compare_baseline(expected, &steps)),
            Some(None) => findings.push(promptc::check::Finding {
                name: "baseline:missing".into(),
                step: None,
                detail: format!(
                    "this {kind} is not in the baseline as `{key}` (a path from the folder check runs in; run with --update-baseline)"
                ),
            }),
            None => {}
        }
        let located = findings
            .into_iter()
            .map(|f| {
                // A baseline of more steps than the rollout names steps it does not have.
                let at = f.step.and_then(|k| {
                    let s = session.steps().get(k)?;
                    Some((session.turns()[s.turn].number, s.number))
                });
                (f, at)
            })
            .collect();
        reports.push(RolloutReport {
            kind,
            name: rollout.clone(),
            steps: session.steps().len(),
            findings: located,
        });
        match &session {
            promptc::Session::Claude(_) => new_baseline.transcripts.insert(key, steps),
            promptc::Session::Codex(_) => new_baseline.rollouts.insert(key, steps),
        };
    }
    if args.update_baseline
        && let Some(path) = &args.baseline
    {
        let mut text = serde_json::to_string_pretty(&new_baseline)?;
        text.push('\n');
        std::fs::write(path, text)
            .with_context(|| format!("{}: cannot write the baseline", path.display()))?;
        let counts: Vec<String> = [
            (new_baseline.rollouts.len(), "rollout"),
            (new_baseline.transcripts.len(), "transcript"),
        ]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, noun)| format!("{n} {noun}{}", if n == 1 { "" } else { "s" }))
        .collect();
        let _ = writeln!(
            std::io::stderr(),
            "wrote baseline {} ({})",
            promptc::core::sanitize::escape_line(&path.display().to_string()),
            if counts.is_empty() {
                "empty".to_string()
            } else {
                counts.join(", ")
            }
        );
    }
    let json = args.format.format() == Format::Json;
    with_stdout(|out| write_check(out, &reports, json, &context.stdout))?;
    Ok(if reports.iter().any(|r| !r.findings.is_empty()) {
        ExitStatus::Differences
    } else {
        ExitStatus::Success
    })
}

/// The name a session has in a baseline: its file's path, the same however it was named on the
/// command line (`./a.jsonl`, `a.jsonl`, the absolute path from the folder holding it, `latest`
/// or a session id resolved to the file): `.` and `..` taken out, relative to the working folder
/// when under it, `/`-separated. Standard input is `-`.
fn baseline_key(argument: &str, file: &str, cwd: Option<&std::path::Path>) -> String {
    use std::path::{Component, Path, PathBuf};
    if argument == "-" {
        return argument.to_string();
    }
    let mut parts: Vec<Component<'_>> = Vec::new();
    for component in Path::new(file).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let path: PathBuf = parts.iter().collect();
    // The working folder is its real path: an absolute path through a link to it (macOS's
    // /tmp) is made real to be found under it.
    let under_cwd = |path: &Path| {
        let cwd = cwd?;
        let relative = path
            .strip_prefix(cwd)
            .ok()
            .map(Path::to_path_buf)
            .or_else(|| {
                let real = std::fs::canonicalize(path).ok()?;
                real.strip_prefix(cwd).ok().map(Path::to_path_buf)
            })?;
        (!relative.as_os_str().is_empty()).then_some(relative)
    };
    let path = match path.is_absolute().then(|| under_cwd(&path)).flatten() {
        Some(relative) => relative,
        None => path,
    };
    let key = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        key.into_owned()
    } else {
        key.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

#[cfg(test)]
mod tests {
    use super::baseline_key;
    use std::path::Path;

    #[test]
    fn one_file_has_one_baseline_key_however_it_is_named() {
        let cwd = Some(Path::new("/work/repo"));
        for (argument, file) in [
            ("a.jsonl", "a.jsonl"),
            ("./a.jsonl", "./a.jsonl"),
            ("/work/repo/a.jsonl", "/work/repo/a.jsonl"),
            ("x/../a.jsonl", "x/../a.jsonl"),
            ("latest", "/work/repo/a.jsonl"),
        ] {
            assert_eq!(baseline_key(argument, file, cwd), "a.jsonl", "{argument}");
        }
        assert_eq!(
            baseline_key("fixtures//r/./b.jsonl", "fixtures//r/./b.jsonl", cwd),
            "fixtures/r/b.jsonl"
        );
        // Outside the working folder: the path as it is, `..` kept where nothing is left to go up.
        assert_eq!(
            baseline_key("/elsewhere/a.jsonl", "/elsewhere/a.jsonl", cwd),
            "/elsewhere/a.jsonl"
        );
        assert_eq!(baseline_key("../a.jsonl", "../a.jsonl", cwd), "../a.jsonl");
        assert_eq!(baseline_key("-", "<stdin>", cwd), "-");
    }
}

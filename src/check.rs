//! Invariants a healthy rollout keeps (for CI on fixture rollouts), and baselines of every
//! step's fingerprint.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::AgentSession;
use crate::cache::{PrefixBreak, analyze};
use crate::core::volatile;
use crate::diff::{Components, DriftClass, component_drifts};
use crate::fingerprint::Plan;
use crate::render::fingerprint::FingerprintDocument;

/// Names of the invariants, in the order they are checked.
pub const INVARIANTS: &[&str] = &[
    "input_extends_previous",
    "stable_prefix_components",
    "no_volatile_prefix",
    "model_view_normalized",
    "unique_call_ids",
];

/// A broken invariant or a baseline difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// An invariant name, or `baseline:<drift class>`.
    pub name: String,
    /// Step index, when the finding is about one step.
    pub step: Option<usize>,
    pub detail: String,
}

fn finding(name: &str, step: Option<usize>, detail: String) -> Finding {
    Finding {
        name: name.to_string(),
        step,
        detail,
    }
}

/// Check every invariant of one rollout.
pub fn check<S: AgentSession>(session: &S, plan: &Plan) -> Vec<Finding> {
    let mut findings = Vec::new();
    let rows = analyze(session, plan);
    for row in &rows {
        // The request's prefix, not the verdict: an expired entry may be named first.
        match row.prefix_break {
            Some(PrefixBreak::Input(index)) => findings.push(finding(
                "input_extends_previous",
                Some(row.step),
                match &row.location {
                    Some(at) => {
                        format!("the input does not extend the previous request: {at} differs")
                    }
                    None => format!(
                        "the input does not extend the previous request: item {index} differs"
                    ),
                },
            )),
            Some(PrefixBreak::Component(component)) => {
                let model_switch = row.step > 0
                    && session.step_model(row.step - 1) != session.step_model(row.step);
                let explained = match component {
                    // Parameters come from the recorded turn context; new instructions are
                    // explained by a recorded model switch.
                    "params" => true,
                    "instructions" | "system" => model_switch,
                    _ => false,
                };
                if !explained {
                    findings.push(finding(
                        "stable_prefix_components",
                        Some(row.step),
                        format!(
                            "{} changed within the thread with no recorded cause",
                            row.location.as_deref().unwrap_or(component)
                        ),
                    ));
                }
            }
            None => {}
        }
        if let Some(reason) = &row.chain_break
            && reason.starts_with("normalization")
            && !session.repairs_in_place(plan, row.step)
        {
            findings.push(finding(
                "input_extends_previous",
                Some(row.step),
                reason.clone(),
            ));
        }
    }
    findings.extend(volatile_findings(session, plan));
    if let Some(violation) = session.model_view_violation() {
        findings.push(finding("model_view_normalized", None, violation));
    }
    findings.extend(
        session
            .repeated_call_ids()
            .into_iter()
            .map(|detail| finding("unique_call_ids", None, detail)),
    );
    findings
}

fn volatile_findings<S: AgentSession>(session: &S, plan: &Plan) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen_instructions: Vec<String> = Vec::new();
    // A part's text is asked for only where its fingerprint is one not seen before: an agent
    // may build it from the whole request (Claude Code compiles the body).
    let mut seen_hashes = std::collections::HashSet::new();
    for step in 0..plan.views.len() {
        let Some(hash) = plan.fingerprints[step].instructions else {
            continue;
        };
        if !seen_hashes.insert(hash) {
            continue;
        }
        if let (Some(text), _) = session.instructions(plan, step)
            && !seen_instructions.iter().any(|t| t == text)
        {
            seen_instructions.push(text.to_string());
            let values: Vec<String> = volatile::find(text).into_iter().map(|v| v.text).collect();
            if !values.is_empty() {
                out.push(finding(
                    "no_volatile_prefix",
                    Some(step),
                    format!("instructions contain per-run values: {}", values.join(", ")),
                ));
            }
        }
    }
    // Each tool list once, and in a later list only the tools no earlier list had (an agent
    // whose tools change from request to request has several lists).
    let mut earlier_tools: Vec<&str> = Vec::new();
    let mut last_list: Option<&[String]> = None;
    let mut seen_hashes = std::collections::HashSet::new();
    for step in 0..plan.views.len() {
        let Some(hash) = plan.fingerprints[step].tools else {
            continue;
        };
        if !seen_hashes.insert(hash) {
            continue;
        }
        let Some(tools) = session.tools(plan, step) else {
            continue;
        };
        if last_list.is_some_and(|last| std::ptr::eq(last, tools) || last == tools) {
            continue;
        }
        last_list = Some(tools);
        let new: Vec<&String> = tools
            .iter()
            .filter(|t| !earlier_tools.contains(&t.as_str()))
            .collect();
        earlier_tools.extend(tools.iter().map(String::as_str));
        for tool in new {
            let values: Vec<String> = volatile::find(tool).into_iter().map(|v| v.text).collect();
            if !values.is_empty() {
                out.push(finding(
                    "no_volatile_prefix",
                    None,
                    format!(
                        "tool {} contains per-run values: {}",
                        crate::core::request::tool_name(tool),
                        values.join(", ")
                    ),
                ));
            }
        }
    }
    // The opening context messages of the first request sit in every later prefix.
    if !plan.views.is_empty() {
        for k in 0..plan.views[0].1 {
            let entry = session.entry(plan, 0, k);
            if !entry.context {
                break;
            }
            let values: Vec<String> = volatile::find(&entry.json)
                .into_iter()
                .map(|v| v.text)
                .collect();
            if !values.is_empty() {
                out.push(finding(
                    "no_volatile_prefix",
                    Some(0),
                    format!(
                        "context message at line {} contains per-run values: {}",
                        entry.line,
                        values.join(", ")
                    ),
                ));
            }
        }
    }
    out
}

/// A committed file of every step's fingerprint per rollout.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Baseline {
    pub schema_version: u32,
    /// The hash behind the fingerprints ([`crate::fingerprint::HASH_NAME`]); baselines written
    /// before it was recorded hold BLAKE3 fingerprints.
    #[serde(default = "hash_of_unmarked_baselines")]
    pub fingerprint_hash: String,
    pub rollouts: BTreeMap<String, Vec<BaselineStep>>,
    /// Claude Code transcripts, by file, in the same form.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub transcripts: BTreeMap<String, Vec<BaselineStep>>,
}

fn hash_of_unmarked_baselines() -> String {
    "blake3".to_string()
}

impl Baseline {
    /// An empty baseline with this version's schema and hash.
    pub fn new() -> Baseline {
        Baseline {
            schema_version: crate::SCHEMA_VERSION,
            fingerprint_hash: crate::fingerprint::HASH_NAME.to_string(),
            rollouts: BTreeMap::new(),
            transcripts: BTreeMap::new(),
        }
    }

    /// Why this baseline cannot be compared with fingerprints of this version, if it cannot.
    pub fn incompatibility(&self) -> Option<String> {
        if self.schema_version != crate::SCHEMA_VERSION {
            return Some(format!(
                "its schema_version is {} and this promptc reads {}; rewrite it with --update-baseline",
                self.schema_version,
                crate::SCHEMA_VERSION
            ));
        }
        (self.fingerprint_hash != crate::fingerprint::HASH_NAME).then(|| {
            format!(
                "its fingerprints are {} hashes and this promptc writes {}; rewrite it with --update-baseline",
                self.fingerprint_hash,
                crate::fingerprint::HASH_NAME
            )
        })
    }
}

impl Default for Baseline {
    fn default() -> Self {
        Self::new()
    }
}

/// One step in a baseline: where it is and its fingerprint, as `fingerprint --format json`
/// writes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BaselineStep {
    pub turn: usize,
    pub step: usize,
    #[serde(flatten)]
    pub fingerprint: FingerprintDocument,
}

/// The baseline entries of one rollout.
pub fn baseline_steps<S: AgentSession>(session: &S, plan: &Plan) -> Vec<BaselineStep> {
    plan.fingerprints
        .iter()
        .enumerate()
        .map(|(k, fp)| {
            let s = &session.steps()[k];
            BaselineStep {
                turn: session.turns()[s.turn].number,
                step: s.number,
                fingerprint: FingerprintDocument::new(fp),
            }
        })
        .collect()
}

/// A baseline entry's fingerprints, for [`component_drifts`].
fn components(f: &FingerprintDocument) -> Components<'_, String> {
    Components {
        prompt_cache_key: f.prompt_cache_key.as_ref(),
        instructions: f.instructions.as_ref(),
        tools: f.tools.as_ref(),
        tools_canonical: f.tools_canonical.as_ref(),
        params: &f.params,
        checkpoint: f.checkpoint.as_ref(),
        input: &f.input,
    }
}

/// Compare a rollout's steps with its baseline entries: one finding per drift class (as
/// [`component_drifts`] classifies them, with `diff`), at the first step that shows it. The entries must come from a baseline without
/// [`Baseline::incompatibility`]: fingerprints of another hash differ at every step.
pub fn compare_baseline(expected: &[BaselineStep], actual: &[BaselineStep]) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |class: &str, step: usize, detail: String| {
        let name = format!("baseline:{class}");
        if !out.iter().any(|f| f.name == name) {
            out.push(Finding {
                name,
                step: Some(step),
                detail,
            });
        }
    };
    for (k, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e == a {
            continue;
        }
        let at = format!("turn {} step {}", a.turn, a.step);
        if (e.turn, e.step) != (a.turn, a.step) {
            push(
                "steps_changed",
                k,
                format!("step {k} was turn {} step {}, now {at}", e.turn, e.step),
            );
            continue;
        }
        for (class, _) in component_drifts(components(&e.fingerprint), components(&a.fingerprint)) {
            let detail = match class {
                DriftClass::CacheKeyChanged => format!("{at}: prompt_cache_key changed"),
                DriftClass::InstructionsChanged => format!("{at}: instructions changed"),
                DriftClass::ToolsReordered | DriftClass::ToolsChanged => {
                    format!("{at}: tools changed")
                }
                DriftClass::ParamsChanged => format!("{at}: request parameters changed"),
                DriftClass::Compaction => {
                    format!("{at}: the history starts from another checkpoint")
                }
                _ => format!(
                    "{at}: input changed ({} items, was {})",
                    a.fingerprint.input_items, e.fingerprint.input_items
                ),
            };
            push(class.name(), k, detail);
        }
    }
    if expected.len() != actual.len() {
        push(
            "steps_changed",
            expected.len().min(actual.len()),
            format!(
                "{} steps, the baseline has {}",
                actual.len(),
                expected.len()
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{baseline_steps, compare_baseline};
    use crate::agents::codex::plan::plan;
    use crate::diff::diff;
    use crate::fingerprint::PlanOptions;
    use crate::test_support::fixture;

    /// `check --baseline` and `diff` classify with one classifier: on every diff fixture (A's
    /// steps as the baseline, B's as the rollout), each class the baseline names is the class
    /// `diff` gives the same component, before `diff` refines it from the requests' content
    /// (a fork is a changed key, per-run values changed instructions, any input drift a
    /// rewritten history).
    #[test]
    fn baseline_and_diff_name_the_same_classes() {
        let cases = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/diff"))
            .expect("fixtures/diff")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned());
        let mut compared = 0;
        for case in cases {
            let a = fixture(&format!("diff/{case}/a.jsonl"));
            let b = fixture(&format!("diff/{case}/b.jsonl"));
            let (pa, pb) = (
                plan(&a, &PlanOptions::default()),
                plan(&b, &PlanOptions::default()),
            );
            let coarse: Vec<&str> = diff(&a, &pa, &b, &pb, None)
                .drifts
                .iter()
                .map(|d| match d.component {
                    "prompt_cache_key" => "cache_key_changed",
                    "instructions" => "instructions_changed",
                    "tools" => d.class.name(),
                    "params" => "params_changed",
                    "checkpoint" => "compaction",
                    _ => "history_rewritten",
                })
                .collect();
            for finding in compare_baseline(&baseline_steps(&a, &pa), &baseline_steps(&b, &pb)) {
                let class = finding.name.trim_start_matches("baseline:");
                if class == "steps_changed" {
                    continue;
                }
                compared += 1;
                assert!(
                    coarse.contains(&class),
                    "{case}: the baseline names {class}, diff {coarse:?}"
                );
            }
        }
        assert!(compared >= 10, "only {compared} classes compared");
    }
}

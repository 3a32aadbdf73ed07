//! The components before the input (cache key, instructions, tools, params, checkpoint):
//! which differ, and how, from the fingerprints and then from the requests themselves.

use crate::AgentSession;
use serde_json::Value;

use super::input::{input_drift, pretty};
use super::{Drift, DriftClass, Side, drift};
use crate::core::request::tool_name;
use crate::core::volatile;
use crate::fingerprint::{Fingerprint, Hash};

/// The fingerprint components of one request, as a plan has them (hashes) or a baseline file
/// does (hex): what [`component_drifts`] compares.
#[derive(Debug, Clone, Copy)]
pub struct Components<'a, T> {
    pub prompt_cache_key: Option<&'a T>,
    pub instructions: Option<&'a T>,
    pub tools: Option<&'a T>,
    pub tools_canonical: Option<&'a T>,
    pub params: &'a T,
    pub checkpoint: Option<&'a T>,
    pub input: &'a T,
}

impl<'a> From<&'a Fingerprint> for Components<'a, Hash> {
    fn from(f: &'a Fingerprint) -> Self {
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
}

/// The components two requests differ in, each with the drift class their fingerprints alone
/// show, in report order: the one classifier of `diff` (which then reads the requests to refine
/// a class: a fork, per-run values, which input drift) and of `check --baseline` (which has
/// only the fingerprints). Another checkpoint accounts for any change of the input after it.
pub fn component_drifts<T: PartialEq>(
    a: Components<'_, T>,
    b: Components<'_, T>,
) -> Vec<(DriftClass, &'static str)> {
    let mut out = Vec::new();
    if a.prompt_cache_key != b.prompt_cache_key {
        out.push((DriftClass::CacheKeyChanged, "prompt_cache_key"));
    }
    if a.instructions != b.instructions {
        out.push((DriftClass::InstructionsChanged, "instructions"));
    }
    if a.tools != b.tools {
        let reordered =
            a.tools.is_some() && b.tools.is_some() && a.tools_canonical == b.tools_canonical;
        let class = if reordered {
            DriftClass::ToolsReordered
        } else {
            DriftClass::ToolsChanged
        };
        out.push((class, "tools"));
    }
    if a.params != b.params {
        out.push((DriftClass::ParamsChanged, "params"));
    }
    if a.checkpoint != b.checkpoint {
        out.push((DriftClass::Compaction, "checkpoint"));
    } else if a.input != b.input {
        out.push((DriftClass::HistoryRewritten, "input"));
    }
    out
}

/// Every drift between two aligned requests, component by component.
pub(super) fn compare<S: AgentSession>(a: Side<'_, S>, b: Side<'_, S>) -> Vec<Drift> {
    let mut out = Vec::new();
    for (class, _) in component_drifts(a.fingerprint().into(), b.fingerprint().into()) {
        match class {
            DriftClass::CacheKeyChanged => out.push(cache_key_drift(&a, &b)),
            DriftClass::InstructionsChanged => out.push(instructions_drift(&a, &b)),
            DriftClass::ToolsReordered | DriftClass::ToolsChanged => {
                out.push(tools_drift(&a, &b, class));
            }
            DriftClass::ParamsChanged => out.push(params_drift(&a, &b)),
            DriftClass::Compaction => out.push(drift(
                DriftClass::Compaction,
                "checkpoint",
                &a,
                &b,
                format!(
                    "the histories start from different compaction checkpoints ({} vs {})",
                    checkpoint_line(&a),
                    checkpoint_line(&b)
                ),
            )),
            DriftClass::HistoryRewritten => out.extend(input_drift(&a, &b)),
            other => unreachable!("component_drifts gives no {}", other.name()),
        }
    }
    out
}

/// A changed `prompt_cache_key`: a fork when one session records the other as its origin.
fn cache_key_drift<S: AgentSession>(a: &Side<'_, S>, b: &Side<'_, S>) -> Drift {
    let (a_id, b_id) = (a.session.id(), b.session.id());
    let forked = (a_id.is_some() && b.session.forked_from() == a_id)
        || (b_id.is_some() && a.session.forked_from() == b_id);
    let show = |id: Option<&str>| id.unwrap_or("none").to_string();
    drift(
        if forked {
            DriftClass::Fork
        } else {
            DriftClass::CacheKeyChanged
        },
        "prompt_cache_key",
        a,
        b,
        if forked {
            format!("B is a fork of A: key {} → {}", show(a_id), show(b_id))
        } else {
            format!(
                "key {} → {} and no fork is recorded",
                show(a_id),
                show(b_id)
            )
        },
    )
}

/// Changed instructions: per-run values when only those differ.
fn instructions_drift<S: AgentSession>(a: &Side<'_, S>, b: &Side<'_, S>) -> Drift {
    let (ta, source_a) = a.session.instructions(a.plan, a.step);
    let (tb, source_b) = b.session.instructions(b.plan, b.step);
    let mut d = match (ta, tb) {
        (Some(x), Some(y)) if volatile::mask(x) == volatile::mask(y) => {
            let values: Vec<String> = volatile::find(x).into_iter().map(|v| v.text).collect();
            drift(
                DriftClass::VolatilePrefix,
                "instructions",
                a,
                b,
                format!(
                    "instructions differ only in per-run values ({})",
                    values.join(", ")
                ),
            )
        }
        _ => {
            let model_a = a.session.step_model(a.step);
            let model_b = b.session.step_model(b.step);
            let why = if model_a != model_b {
                format!(
                    " with a model switch {} → {}",
                    model_a.unwrap_or("?"),
                    model_b.unwrap_or("?")
                )
            } else {
                String::new()
            };
            drift(
                DriftClass::InstructionsChanged,
                "instructions",
                a,
                b,
                format!(
                    "instructions differ ({source_a} → {source_b}){why}{}",
                    match (ta, tb) {
                        (Some(x), Some(y)) => a
                            .session
                            .name_change(x, y)
                            .map(|what| format!(": {what} changed"))
                            .unwrap_or_default(),
                        _ => String::new(),
                    }
                ),
            )
        }
    };
    d.evidence = Some((
        ta.unwrap_or("(unknown)").to_string(),
        tb.unwrap_or("(unknown)").to_string(),
    ));
    d
}

/// Changed tools (`class` from [`component_drifts`]): which were added, removed or changed,
/// or the names in their two orders.
fn tools_drift<S: AgentSession>(a: &Side<'_, S>, b: &Side<'_, S>, class: DriftClass) -> Drift {
    let (Some(ta), Some(tb)) = (
        a.session.tools(a.plan, a.step),
        b.session.tools(b.plan, b.step),
    ) else {
        return drift(
            DriftClass::ToolsChanged,
            "tools",
            a,
            b,
            "the tool list is known on one side only".into(),
        );
    };
    let names_a: Vec<String> = ta.iter().map(|t| tool_name(t)).collect();
    let names_b: Vec<String> = tb.iter().map(|t| tool_name(t)).collect();
    if class == DriftClass::ToolsReordered {
        let mut d = drift(
            DriftClass::ToolsReordered,
            "tools",
            a,
            b,
            format!(
                "same tools in another order: [{}] → [{}]",
                names_a.join(", "),
                names_b.join(", ")
            ),
        );
        d.evidence = Some((names_a.join("\n"), names_b.join("\n")));
        return d;
    }
    let mut changes = Vec::new();
    let mut evidence = (String::new(), String::new());
    for name in &names_a {
        if !names_b.contains(name) {
            changes.push(format!("removed {name}"));
        }
    }
    for name in &names_b {
        if !names_a.contains(name) {
            changes.push(format!("added {name}"));
        }
    }
    for (i, name) in names_a.iter().enumerate() {
        let Some(j) = names_b.iter().position(|n| n == name) else {
            continue;
        };
        let va: Value = serde_json::from_str(&ta[i]).unwrap_or(Value::Null);
        let vb: Value = serde_json::from_str(&tb[j]).unwrap_or(Value::Null);
        if va == vb {
            continue;
        }
        let mut fields: Vec<String> = Vec::new();
        if let (Some(oa), Some(ob)) = (va.as_object(), vb.as_object()) {
            for key in oa.keys().chain(ob.keys()) {
                if oa.get(key) != ob.get(key) && !fields.contains(key) {
                    fields.push(key.clone());
                }
            }
        }
        changes.push(format!("{name}: {} changed", fields.join(", ")));
        evidence = (pretty(&ta[i]), pretty(&tb[j]));
    }
    if changes.is_empty() {
        changes.push("same tools and order, other serialization".into());
    }
    let mut d = drift(DriftClass::ToolsChanged, "tools", a, b, changes.join("; "));
    d.evidence = Some(evidence);
    d
}

/// Changed request parameters, each changed field named.
fn params_drift<S: AgentSession>(a: &Side<'_, S>, b: &Side<'_, S>) -> Drift {
    let ja = a.session.request_params(a.step);
    let jb = b.session.request_params(b.step);
    let va: Value = serde_json::from_str(&ja).unwrap_or(Value::Null);
    let vb: Value = serde_json::from_str(&jb).unwrap_or(Value::Null);
    let mut changes = Vec::new();
    if let (Some(oa), Some(ob)) = (va.as_object(), vb.as_object()) {
        let mut keys: Vec<&String> = oa.keys().chain(ob.keys()).collect();
        keys.dedup();
        let mut seen = std::collections::HashSet::new();
        for key in keys {
            if !seen.insert(key) {
                continue;
            }
            let (x, y) = (oa.get(key), ob.get(key));
            if x != y {
                let show = |v: Option<&Value>| v.map_or("absent".to_string(), Value::to_string);
                let label = if key == "model" {
                    "model switch"
                } else {
                    key.as_str()
                };
                changes.push(format!("{label}: {} → {}", show(x), show(y)));
            }
        }
    }
    let mut d = drift(
        DriftClass::ParamsChanged,
        "params",
        a,
        b,
        changes.join("; "),
    );
    d.evidence = Some((pretty(&ja), pretty(&jb)));
    d
}

fn checkpoint_line<S: AgentSession>(side: &Side<'_, S>) -> String {
    side.session
        .checkpoint_line(side.step)
        .map_or("none".to_string(), |line| format!("line {line}"))
}

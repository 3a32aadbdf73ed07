//! Issue 36: the per-build model table `src/codex_models.json`, generated from Codex's own model
//! definitions by `conformance/codex_models.py`, against every request the recorded builds sent
//! (`tests/conformance`, CONFORMANCE.md "The model table").
//!
//! For each recorded request but compaction requests (they offer no tools and no parallel calls
//! whatever the model), the table's entry for (build that sent it, `body.model`) must give what
//! the body shows. The build is the case's version, or `upgrade_version` for the runs of an
//! upgrade case that carry it; a setting counts as configured when the case's `config_toml` or
//! the run's `-c key="value"` arguments set it.

use std::path::Path;

use serde_json::Value;

use crate::support::root;

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The table's entry of `slug` in `build`: by slug (catalog builds) or by the first family whose
/// prefix the slug starts with (0.58-0.77, Codex's `find_family_for_model`).
fn entry<'a>(table: &'a Value, build: &str, slug: &str) -> Option<&'a Value> {
    let build = &table["builds"][build];
    match build["match"].as_str()? {
        "slug" => build["models"].get(slug),
        "prefix" => build["families"].as_array()?.iter().find(|family| {
            family["prefixes"].as_array().is_some_and(|p| {
                p.iter()
                    .any(|p| p.as_str().is_some_and(|p| slug.starts_with(p)))
            })
        }),
        _ => None,
    }
}

/// `key = "value"` in config.toml, overridden by a run's `-c key="value"`.
fn configured(case: &Value, run: &Value, key: &str) -> Option<String> {
    let prefix = format!("{key} = \"");
    let mut value = case["config_toml"].as_str().and_then(|toml| {
        toml.lines()
            .find_map(|line| line.strip_prefix(&prefix)?.strip_suffix('"'))
            .map(str::to_string)
    });
    let args: Vec<&str> = run["command"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let assignment = format!("{key}=\"");
    for pair in args.windows(2) {
        if pair[0] == "-c"
            && let Some(v) = pair[1]
                .strip_prefix(&assignment)
                .and_then(|v| v.strip_suffix('"'))
        {
            value = Some(v.to_string());
        }
    }
    value
}

fn expand(value: &Value, blobs: &Path) -> Value {
    match value.get("$blob").and_then(Value::as_str) {
        Some(hash) => read_json(&blobs.join(format!("{hash}.json"))),
        None => value.clone(),
    }
}

fn str_of(value: &Value) -> Option<&str> {
    value.as_str()
}

/// What one request shows against the table's entry: each disagreement, described.
fn disagreements(
    build: &str,
    entry: &Value,
    body: &Value,
    case: &Value,
    run: &Value,
    blobs: &Path,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut expect = |what: &str, got: Option<&str>, want: Option<&str>| {
        if got != want {
            out.push(format!("{what}: sent {got:?}, table says {want:?}"));
        }
    };
    let code_mode = entry["tool_mode"] == "code_mode_only";
    let reasoning = &body["reasoning"];
    let flag = |b: bool| if b { "true" } else { "false" };

    // Code-mode models send no parallel calls whatever the catalog says (0.152.1/model_switch).
    let parallel = entry["supports_parallel_tool_calls"] == true && !code_mode;
    expect(
        "parallel_tool_calls",
        body["parallel_tool_calls"].as_bool().map(flag),
        Some(flag(parallel)),
    );

    let effort = configured(case, run, "model_reasoning_effort");
    let effort = effort
        .as_deref()
        .or(str_of(&entry["default_reasoning_effort"]));
    expect("reasoning.effort", str_of(&reasoning["effort"]), effort);

    // The configured summary, else the model's default (`auto` where the definitions name
    // none), left out when `none` or the model has no summaries. 0.171 sends none even when
    // one is configured (0.171.0/effort_change), a rule of the build, not of the model.
    let summary = configured(case, run, "model_reasoning_summary");
    let summary = match summary {
        Some(_) if build == "0.171.0" => None,
        Some(s) => Some(s),
        None => Some(
            str_of(&entry["default_reasoning_summary"])
                .unwrap_or("auto")
                .to_string(),
        ),
    };
    let summary = summary.filter(|s| s != "none" && entry["supports_reasoning_summaries"] == true);
    expect(
        "reasoning.summary",
        str_of(&reasoning["summary"]),
        summary.as_deref(),
    );

    let verbosity = configured(case, run, "model_verbosity");
    let verbosity = (entry["support_verbosity"] == true)
        .then(|| verbosity.as_deref().or(str_of(&entry["default_verbosity"])))
        .flatten();
    expect(
        "text.verbosity",
        str_of(&body["text"]["verbosity"]),
        verbosity,
    );

    if code_mode {
        expect(
            "reasoning.context",
            str_of(&reasoning["context"]),
            Some("all_turns"),
        );
    }
    let tools = body.get("tools").map(|t| expand(t, blobs));
    expect(
        "a `tools` key (none in code mode)",
        Some(flag(tools.is_some())),
        Some(flag(!code_mode)),
    );
    let Some(Value::Array(tools)) = tools else {
        return out;
    };
    let has = |type_: &str, name: &str| {
        tools
            .iter()
            .any(|t| t["type"] == type_ && t["name"] == name)
    };
    match str_of(&entry["apply_patch_tool_type"]) {
        Some("freeform") if !has("custom", "apply_patch") => {
            out.push("the freeform (custom) apply_patch tool is not offered".into());
        }
        Some("function") if !has("function", "apply_patch") => {
            out.push("the function apply_patch tool is not offered".into());
        }
        _ => {}
    }
    // The model's shell tool decides 0.58-0.77's (`shell_type`); from 0.104 unified exec, on by
    // default, offers `exec_command` whatever the catalog's `shell_type`.
    let shell = if entry.get("prefixes").is_some() {
        match str_of(&entry["shell_type"]) {
            Some("default") => ("function", "shell"),
            Some("shell_command") => ("function", "shell_command"),
            Some("local") => ("local_shell", ""),
            other => panic!("{build}: a shell_type the test does not know: {other:?}"),
        }
    } else {
        ("function", "exec_command")
    };
    let offered = if shell.0 == "local_shell" {
        tools.iter().any(|t| t["type"] == "local_shell")
    } else {
        has(shell.0, shell.1)
    };
    if !offered {
        out.push(format!("the shell tool {shell:?} is not offered"));
    }
    out
}

/// Every check of every recorded request against `table`: (requests checked, disagreements).
fn check(table: &Value) -> (usize, Vec<String>) {
    let recordings = root().join("tests/conformance");
    let blobs = recordings.join("blobs");
    let mut checked = 0;
    let mut problems = Vec::new();
    let mut cases: Vec<_> = std::fs::read_dir(&recordings)
        .expect("tests/conformance")
        .flatten()
        .flat_map(|version| {
            std::fs::read_dir(version.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|scenario| scenario.path())
        .filter(|dir| dir.join("case.json").exists())
        .collect();
    cases.sort();
    for dir in cases {
        let case = read_json(&dir.join("case.json"));
        if case["available"] != true {
            continue;
        }
        let name = dir
            .strip_prefix(&recordings)
            .unwrap_or(&dir)
            .display()
            .to_string();
        let text = std::fs::read_to_string(dir.join("requests.jsonl")).expect("requests.jsonl");
        let requests: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a request"))
            .collect();
        for run in case["runs"].as_array().expect("runs") {
            let build = run["version"]
                .as_str()
                .or(case["version"].as_str())
                .expect("a version");
            for index in run["requests"].as_array().expect("a run's requests") {
                let index = index.as_u64().expect("an index") as usize;
                let request = &requests[index];
                if request["mock_saw_compaction"] == true {
                    continue;
                }
                let body = &request["body"];
                let model = body["model"].as_str().expect("a model");
                checked += 1;
                let Some(entry) = entry(table, build, model) else {
                    problems.push(format!("{name} #{index}: no entry for {model} in {build}"));
                    continue;
                };
                for problem in disagreements(build, entry, body, &case, run, &blobs) {
                    problems.push(format!("{name} #{index} ({build}, {model}): {problem}"));
                }
            }
        }
    }
    (checked, problems)
}

fn table() -> Value {
    read_json(&root().join("src/codex_models.json"))
}

#[test]
fn the_generated_model_table_agrees_with_every_recorded_request() {
    let (checked, problems) = check(&table());
    assert!(
        checked >= 340,
        "every recorded request is checked ({checked})"
    );
    assert!(
        problems.is_empty(),
        "{} disagreement(s) between src/codex_models.json and the recordings:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn the_table_covers_every_recorded_build_and_says_where_it_comes_from() {
    let table = table();
    for build in [
        "0.58.0", "0.77.0", "0.104.0", "0.122.0", "0.141.0", "0.152.1", "0.162.1", "0.171.0",
    ] {
        let source = &table["builds"][build]["source"];
        assert!(
            source["kind"].is_string() && source["path"].is_string(),
            "{build}: {source}"
        );
    }
}

/// The check can fail: one value changed in the table is caught, on the request it decides.
#[test]
fn a_corrupted_table_value_is_caught() {
    let mut corrupted = table();
    corrupted["builds"]["0.58.0"]["families"]
        .as_array_mut()
        .expect("0.58.0's families")
        .iter_mut()
        .find(|f| f["prefixes"][0] == "gpt-5.1")
        .expect("the gpt-5.1 family")["default_reasoning_effort"] = Value::from("high");
    let (_, problems) = check(&corrupted);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("0.58.0/model_switch_gpt-5.1 #2")
                && p.contains("reasoning.effort")),
        "{problems:?}"
    );
    let mut corrupted = table();
    corrupted["builds"]["0.141.0"]["models"]["gpt-5.4-mini"]["default_verbosity"] =
        Value::from("low");
    let (_, problems) = check(&corrupted);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("text.verbosity"), "{problems:?}");
}

//! The Messages API body of a sampling request, in the shape of the Claude Code build that sent
//! it: from 2.1.3xx's replay records where the transcript has them ([`super::replay`]), else
//! the messages by the build's rules and every part the transcript does not record `null` and
//! named. Each rule cites the recorded case it comes from (`tests/conformance/claude/`).

use serde_json::{Map, Value, json};

use super::load::{LineKind, Transcript};
use super::replay::{ReplayError, Unknown, replay};
use super::thread::{Conversation, Request, RequestKind, Role};

/// The recorded builds whose request rules promptc knows; a build between two is sent in the
/// nearest older one's shape (said in `rules`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Build {
    /// 1.0.30: breakpoints on the last two messages; under `claude -p` the last call and its
    /// result repeated after a tool turn (not in interactive sessions: named, not sent). Also
    /// the rules of a line that names no version.
    #[default]
    V1_0_30,
    /// 1.0.128: breakpoints on the last two messages.
    V1_0_128,
    /// 2.0.77: as 1.0.128, no `temperature`; a resumed process sends the first prompt as a list.
    V2_0_77,
    /// 2.1.100: one breakpoint, on the last message; `thinking` and `context_management`.
    V2_1_100,
    /// 2.1.3xx: replay records in the transcript.
    V2_1_332,
}

impl Build {
    pub fn of(version: &str) -> Build {
        let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
        let mut next = || parts.next().unwrap_or(0);
        let v = (next(), next(), next());
        match v {
            (0, ..) | (1, 0, 0..=99) => Build::V1_0_30,
            (1, ..) => Build::V1_0_128,
            (2, 0, _) => Build::V2_0_77,
            (2, 1, 0..=299) => Build::V2_1_100,
            _ => Build::V2_1_332,
        }
    }

    pub fn case(self) -> &'static str {
        match self {
            Build::V1_0_30 => "tests/conformance/claude/1.0.30/tool_call",
            Build::V1_0_128 => "tests/conformance/claude/1.0.128/tool_call",
            Build::V2_0_77 => "tests/conformance/claude/2.0.77/tool_call",
            Build::V2_1_100 => "tests/conformance/claude/2.1.100/tool_call",
            Build::V2_1_332 => "tests/conformance/claude/2.1.332/tool_call",
        }
    }

    /// The body's keys in the order the build sends them.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Build::V1_0_30 | Build::V1_0_128 => &[
                "model",
                "messages",
                "temperature",
                "system",
                "tools",
                "metadata",
                "max_tokens",
                "stream",
            ],
            Build::V2_0_77 => &[
                "model",
                "messages",
                "system",
                "tools",
                "metadata",
                "max_tokens",
                "stream",
            ],
            Build::V2_1_100 => &[
                "model",
                "messages",
                "system",
                "tools",
                "metadata",
                "max_tokens",
                "thinking",
                "context_management",
                "stream",
            ],
            // Where its replay record cannot be followed (a fork's copied request).
            Build::V2_1_332 => &[
                "model",
                "messages",
                "system",
                "tools",
                "metadata",
                "max_tokens",
                "thinking",
                "context_management",
                "output_config",
                "stream",
            ],
        }
    }
}

/// What the caller gives that the transcript does not hold (a captured request's parts).
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub system: Option<Value>,
    pub tools: Option<Value>,
}

/// A rule applied, with the case it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub part: String,
    pub rule: String,
    pub case: &'static str,
}

#[derive(Debug, Clone)]
pub struct Compiled {
    pub body: Value,
    pub build: Build,
    /// The build's version as the request's lines write it.
    pub version: Option<String>,
    pub unknown: Vec<Unknown>,
    pub rules: Vec<Rule>,
    /// 2.1.3xx: the rebuild's digest equals the recorded `requestDigest`; `None` where the
    /// transcript has no replay record.
    pub verified: Option<bool>,
    /// The response names a replay record this file does not have: a line copied from another
    /// session's file (a fork copies the history without its records).
    pub record_elsewhere: bool,
}

/// The body `request` was sent with.
pub fn compile(t: &Transcript, c: &Conversation, request: &Request, given: &Given) -> Compiled {
    let version = request_version(t, c, request);
    let build = version.as_deref().map_or(Build::V1_0_30, Build::of);
    if request.kind == RequestKind::Sampling {
        match replay(t, c, request) {
            Ok(replayed) => {
                return Compiled {
                    verified: Some(replayed.verified()),
                    body: replayed.body,
                    build: Build::V2_1_332,
                    version,
                    unknown: replayed.unknown,
                    rules: vec![Rule {
                        part: "request".into(),
                        rule: "rebuilt from the transcript's replay records (api-request, api-request-blob, api-request-shape)".into(),
                        case: Build::V2_1_332.case(),
                    }],
                    record_elsewhere: false,
                };
            }
            Err(ReplayError::NoRecord) => {}
            Err(other) => {
                let mut compiled = by_rule(t, c, request, given, build, version);
                compiled.record_elsewhere = matches!(other, ReplayError::MissingRecord(_));
                compiled.unknown.push(Unknown {
                    part: "request".into(),
                    reason: format!("its replay record cannot be followed: {other}"),
                });
                return compiled;
            }
        }
    }
    by_rule(t, c, request, given, build, version)
}

fn request_version(t: &Transcript, c: &Conversation, request: &Request) -> Option<String> {
    let line = match request.response {
        Some(r) => c.responses[r].lines[0],
        None => request.at,
    };
    t.lines[line].context.version.as_deref().map(str::to_string)
}

fn by_rule(
    t: &Transcript,
    c: &Conversation,
    request: &Request,
    given: &Given,
    build: Build,
    version: Option<String>,
) -> Compiled {
    let history = c.history(t, request);
    let mut rules = Vec::new();
    let mut unknown = Vec::new();
    if let Some(v) = &version
        && !matches!(
            v.as_str(),
            "1.0.30" | "1.0.128" | "2.0.77" | "2.1.100" | "2.1.332"
        )
    {
        rules.push(Rule {
            part: "request".into(),
            rule: format!(
                "{v} was not recorded: sent in the shape of the nearest older recorded build"
            ),
            case: build.case(),
        });
    }
    if history.missing_parent.is_some() {
        unknown.push(Unknown {
            part: "messages".into(),
            reason: "the history reaches a line this file does not have: the messages before it are missing".into(),
        });
    }
    let mut messages: Vec<Value> = Vec::new();
    for m in &history.messages {
        let value = message(t, build, m.role, &m.lines);
        if value["content"].as_array().is_some_and(Vec::is_empty) {
            continue;
        }
        // The first prompt always carries injected context; a later one where an attachment
        // stands whose text the build did not record.
        if messages.is_empty() && m.role == Role::User || holds_unrecorded_context(t, &m.lines) {
            unknown.push(Unknown {
                part: format!("messages[{}].content", messages.len()),
                reason: "context Claude Code puts before the prompt (<system-reminder> blocks: CLAUDE.md, skills, reminders) is not recorded by this build".into(),
            });
        }
        messages.push(value);
    }
    if build == Build::V1_0_30 && repeated_tool_turn(&messages).is_some() {
        unknown.push(Unknown {
            part: "messages".into(),
            reason: REPEAT_POSSIBLE.into(),
        });
    }
    // Breakpoints on the last block of the last message (2.1.x) or the last two (1.x, 2.0.x).
    let marked = if build >= Build::V2_1_100 { 1 } else { 2 };
    let count = messages.len();
    for m in messages.iter_mut().skip(count.saturating_sub(marked)) {
        if let Some(Value::Array(blocks)) = m.get_mut("content")
            && let Some(Value::Object(last)) = blocks.last_mut()
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
    }
    rules.push(Rule {
        part: "messages".into(),
        rule: format!("a breakpoint on the last block of the last {marked} message(s)"),
        case: build.case(),
    });
    for m in &mut messages {
        if m["role"] != "assistant"
            && let Some(Value::Array(blocks)) = m.get("content")
            && let [block] = blocks.as_slice()
            && block["type"] == "text"
            && block.get("cache_control").is_none()
        {
            let text = block["text"].clone();
            m["content"] = text;
        }
    }
    let model = request
        .response
        .and_then(|r| c.responses[r].model.as_deref())
        .map_or(Value::Null, |m| Value::String(m.to_string()));
    // Before 2.1.x `thinking` is sent only when thinking is on (MAX_THINKING_TOKENS, a "think"
    // prompt), which the transcript does not say; a response with a thinking block shows it was.
    let thinking_on = build < Build::V2_1_100
        && request.response.is_some_and(|r| {
            c.responses[r]
                .lines
                .iter()
                .any(|&i| matches!(&t.lines[i].kind, LineKind::Assistant(a) if a.thinking))
        });
    let mut keys: Vec<&str> = build.keys().to_vec();
    if thinking_on {
        keys.insert(keys.len() - 1, "thinking");
        rules.push(Rule {
            part: "thinking".into(),
            rule: "sent because the response has a thinking block (its budget is not recorded)"
                .into(),
            case: "tests/conformance/claude/1.0.128/thinking",
        });
    }
    let mut body = Map::new();
    for key in keys {
        let value = match key {
            "model" => model.clone(),
            "messages" => Value::Array(std::mem::take(&mut messages)),
            "system" if given.system.is_some() => given.system.clone().unwrap_or(Value::Null),
            "tools" if given.tools.is_some() => given.tools.clone().unwrap_or(Value::Null),
            "stream" => Value::Bool(true),
            _ => {
                unknown.push(Unknown {
                    part: key.into(),
                    reason: reason_unknown(key).into(),
                });
                Value::Null
            }
        };
        body.insert(key.into(), value);
    }
    Compiled {
        body: Value::Object(body),
        build,
        version,
        unknown,
        rules,
        verified: None,
        record_elsewhere: false,
    }
}

fn reason_unknown(key: &str) -> &'static str {
    match key {
        "system" => "the system prompt is not recorded by this build (--system gives it)",
        "tools" => "the tool specs are not recorded by this build (--tools gives them)",
        "metadata" => "`metadata.user_id` comes from `~/.claude.json`, which no transcript records",
        _ => "not recorded by this build",
    }
}

/// A message as sent: the content blocks of its lines, in order. 2.1.100 ends a text with a
/// newline where the next line of the same message starts with text (a summary and the command
/// after it, a prompt and the "Continue" after an interrupt).
fn message(t: &Transcript, build: Build, role: Role, lines: &[usize]) -> Value {
    let mut content: Vec<Value> = Vec::new();
    for &i in lines {
        let text = match &t.lines[i].kind {
            LineKind::User(u) => &u.content,
            LineKind::Assistant(a) => &a.content,
            _ => continue,
        };
        let blocks = match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(blocks)) => blocks,
            Ok(Value::String(s)) => vec![json!({"type": "text", "text": s})],
            _ => continue,
        };
        if build == Build::V2_1_100
            && role == Role::User
            && blocks.first().is_some_and(|b| b["type"] == "text")
            && let Some(last) = content.last_mut()
            && last["type"] == "text"
            && let Some(Value::String(text)) = last.get_mut("text")
        {
            text.push('\n');
        }
        content.extend(blocks);
    }
    let role = match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    };
    json!({"role": role, "content": content})
}

/// Whether a message holds context the build injected without recording its text (an
/// attachment line without `rendered`).
fn holds_unrecorded_context(t: &Transcript, lines: &[usize]) -> bool {
    lines
        .iter()
        .any(|&i| matches!(&t.lines[i].kind, LineKind::Attachment(a) if a.rendered.is_none()))
}

/// Why the messages of a 1.0.x request after a tool turn are not certain.
pub const REPEAT_POSSIBLE: &str = "1.0.x run as `claude -p` sends the last call and its result twice after a tool turn (recorded: tests/conformance/claude/1.0.30/tool_call); interactive sessions send them once (the real 1.0.x samples read the whole previous prefix), and the transcript does not say which it was";

/// 1.0.30 after a tool turn: the last assistant message (with calls) and the results after it.
fn repeated_tool_turn(messages: &[Value]) -> Option<Vec<Value>> {
    let [.., call, result] = messages else {
        return None;
    };
    let has = |m: &Value, kind: &str| {
        m["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == kind))
    };
    (has(call, "tool_use") && has(result, "tool_result"))
        .then(|| vec![call.clone(), result.clone()])
}

//! In-process benchmarks of the library pipeline: parse, replay, `Session::load` (both), and
//! `Session::model_view` of the final history.
//!
//! `cargo bench --bench pipeline` runs them on an in-memory Era-B rollout of 10 000 steps made by
//! the small generator below (override with `PROMPTC_BENCH_STEPS`). With `PROMPTC_BENCH_FILE` set
//! they run on that file instead, e.g. one written by `benches/gen_rollout.py`. Whole-process
//! numbers (and the comparison with cat, jq and Python) come from `benches/run.sh`.
//!
//! `rewrites` loads and plans rewrite-heavy files (many rollbacks, or many outputs that each
//! arrive after a later request) at two sizes: the time per cycle should not grow with the size.

use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use promptc::LoadOptions;
use promptc::agents::codex::session::Session;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const DEFAULT_STEPS: usize = 10_000;

static ROLLOUT: LazyLock<Vec<u8>> =
    LazyLock::new(|| match std::env::var_os("PROMPTC_BENCH_FILE") {
        Some(path) => std::fs::read(&path)
            .unwrap_or_else(|err| panic!("PROMPTC_BENCH_FILE={}: {err}", path.display())),
        None => {
            let steps = std::env::var("PROMPTC_BENCH_STEPS")
                .ok()
                .map(|s| s.parse().expect("PROMPTC_BENCH_STEPS is a number"))
                .unwrap_or(DEFAULT_STEPS);
            generate(steps, 1)
        }
    });

fn load_session() -> Session {
    Session::load("bench.jsonl", &**ROLLOUT, LoadOptions::default()).expect("rollout loads")
}

/// Bytes to records.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn parse(bencher: Bencher) {
    bencher.counter(BytesCount::new(ROLLOUT.len())).bench(|| {
        promptc::agents::codex::parse::load("bench.jsonl", &**ROLLOUT, LoadOptions::default())
            .expect("rollout loads")
    });
}

/// Records to raw history, turns and steps.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn replay(bencher: Bencher) {
    let rollout =
        promptc::agents::codex::parse::load("bench.jsonl", &**ROLLOUT, LoadOptions::default())
            .expect("rollout loads");
    bencher
        .counter(ItemsCount::new(rollout.records.len()))
        .bench(|| promptc::agents::codex::replay::replay(&rollout));
}

/// `Session::load`: parse + replay.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn session_load(bencher: Bencher) {
    bencher.counter(BytesCount::new(ROLLOUT.len())).bench(|| {
        Session::load("bench.jsonl", &**ROLLOUT, LoadOptions::default()).expect("rollout loads")
    });
}

/// `agents::codex::plan::plan` on one thread: every step's request, compiled and hashed (what
/// `promptc fingerprint` and `promptc steps --no-tokens` do after loading), and with token
/// estimates what `promptc steps` adds: each distinct item counted once. The thread's
/// remembered pieces stay from one sample to the next, so samples after the first count with
/// a warm memo.
#[divan::bench(sample_count = 10, sample_size = 1, args = [false, true])]
fn plan(bencher: Bencher, estimate_tokens: bool) {
    let session = load_session();
    let options = promptc::fingerprint::PlanOptions {
        instructions: None,
        tools: None,
        estimate_tokens,
        threads: promptc::core::parallel::Threads::new(1),
        ..Default::default()
    };
    bencher
        .counter(ItemsCount::new(session.replay.steps.len()))
        .bench(|| promptc::agents::codex::plan::plan(&session, &options));
}

/// `Session::model_view` of the history after the whole file.
#[divan::bench(sample_count = 20)]
fn model_view(bencher: Bencher) {
    let session = load_session();
    let history = session.replay.history();
    bencher
        .counter(ItemsCount::new(history.len()))
        .bench(|| session.model_view(history));
}

/// Which rewrite a rewrite-heavy file repeats.
#[derive(Debug, Clone, Copy)]
enum Rewrite {
    /// A kept turn (call, output, answer), a dropped turn, `thread_rolled_back` of one turn.
    Rollbacks,
    /// A turn whose call is answered only after a later user message and request.
    LateOutputs,
}

/// `Session::load` and `agents::codex::plan::plan` (no token estimates) of a file of `cycles` rewrites.
#[divan::bench(
    sample_count = 5,
    sample_size = 1,
    consts = [1_000, 4_000],
    args = ["rollbacks", "late_outputs"],
)]
fn rewrites<const CYCLES: usize>(bencher: Bencher, kind: &str) {
    let kind = match kind {
        "rollbacks" => Rewrite::Rollbacks,
        _ => Rewrite::LateOutputs,
    };
    let bytes = generate_rewrites(kind, CYCLES);
    let options = promptc::fingerprint::PlanOptions::default();
    bencher.counter(ItemsCount::new(CYCLES)).bench(|| {
        let session = Session::load("bench.jsonl", &bytes, LoadOptions::default()).expect("loads");
        promptc::agents::codex::plan::plan(&session, &options)
    });
}

// --- a small deterministic Era-B rollout generator ------------------------------------------------
//
// Simpler than benches/gen_rollout.py: same line mix (turn_context, two token_counts,
// agent_reasoning, reasoning with encrypted_content, a shell function_call and its JSON-string
// output, and every 20-60 steps an assistant message and a new user turn), but tool outputs are
// log-uniform between 4 bytes and 16 KB so 10 000 steps stay around 50 MB.

const CWD: &str = "/home/user/projects/bench/widget-service";
const MAX_OUTPUT: f64 = 16_384.0;
const POOL_LINES: &[&str] = &[
    "    let config = request.get(\"config\")?;",
    "src/server/router.rs:120:    if payload.len() > 4096 {",
    "-rw-r--r--  1 user user   4211 Nov 17 21:32 src/lib.rs",
    "2025-11-17T21:33:02.114Z INFO cache: refreshing handler in 12ms",
    "test result: ok. 42 passed; 0 failed; 0 ignored",
    "\twarning: unused variable: `state` — prefix it with an underscore",
    "    \"path\": \"C:\\\\Users\\\\dev\\\\widget\",",
    "        return Err(Error::new(\"retry failed: {}\", session_id));",
    "✓ 128 tests passed (3.2s) — café",
    "",
];
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn text(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| char::from(alphabet[self.range(0, alphabet.len() as u64 - 1) as usize]))
            .collect()
    }
}

struct Writer {
    out: Vec<u8>,
    ms: u64,
}

impl Writer {
    fn line(&mut self, kind: &str, payload: Value) {
        let (secs, ms) = (self.ms / 1000, self.ms % 1000);
        let stamp = format!(
            "2025-11-17T{:02}:{:02}:{:02}.{ms:03}Z",
            secs / 3600 % 24,
            secs / 60 % 60,
            secs % 60
        );
        let line = json!({"timestamp": stamp, "type": kind, "payload": payload});
        serde_json::to_writer(&mut self.out, &line).expect("JSON serializes");
        self.out.push(b'\n');
        self.ms += 137;
    }
}

fn usage(input: u64, cached: u64, output: u64, reasoning: u64) -> Value {
    json!({
        "input_tokens": input, "cached_input_tokens": cached, "output_tokens": output,
        "reasoning_output_tokens": reasoning, "total_tokens": input + output,
    })
}

/// An Era-B (CLI 0.58-style) rollout of `steps` sampling requests.
fn generate(steps: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let pool = POOL_LINES.join("\n").repeat(160);
    let mut w = Writer {
        out: Vec::with_capacity(steps * 6_000),
        ms: 0,
    };
    let rate_limits = json!({
        "primary": {"used_percent": 12.0, "window_minutes": 300, "resets_at": 1_763_422_724},
        "secondary": {"used_percent": 30.0, "window_minutes": 10080, "resets_at": 1_763_910_107},
    });
    w.line(
        "session_meta",
        json!({
            "id": "019a93b9-0000-7000-8000-000000000001", "timestamp": "2025-11-17T21:00:00.000Z",
            "cwd": CWD, "originator": "codex_cli_rs", "cli_version": "0.58.0", "instructions": null,
            "source": "cli", "model_provider": "openai",
            "git": {"commit_hash": "0123456789abcdef0123456789abcdef01234567", "branch": "main"},
        }),
    );
    let mut context: u64 = 10_128;
    let mut previous_input: u64 = 0;
    let mut total = [0u64; 4]; // input, cached, output, reasoning
    let mut info = Value::Null;
    let mut step = 0;
    let mut turn = 0;
    while step < steps {
        turn += 1;
        let env = format!(
            "<environment_context>\n  <cwd>{CWD}</cwd>\n  <approval_policy>never</approval_policy>\n  \
             <sandbox_mode>danger-full-access</sandbox_mode>\n  <network_access>enabled</network_access>\n  \
             <shell>bash</shell>\n</environment_context>"
        );
        let prompt =
            format!("Turn {turn}: fix the failing test in src/lib.rs and keep clippy clean.");
        for text in [&env, &prompt] {
            w.line(
                "response_item",
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
            );
        }
        w.line(
            "event_msg",
            json!({"type": "user_message", "message": prompt, "images": []}),
        );
        context += (env.len() + prompt.len()) as u64 / 4;
        let turn_len = rng.range(20, 60) as usize;
        for i in 0..turn_len {
            if step == steps {
                break;
            }
            step += 1;
            w.line(
                "turn_context",
                json!({"cwd": CWD, "approval_policy": "never", "sandbox_policy": {"mode": "danger-full-access"},
                       "model": "gpt-5.1-codex", "effort": "high", "summary": "auto"}),
            );
            w.line(
                "event_msg",
                json!({"type": "token_count", "info": info, "rate_limits": rate_limits}),
            );
            let summary = format!("**Checking step {step}**");
            w.line(
                "event_msg",
                json!({"type": "agent_reasoning", "text": summary}),
            );
            let cached = if previous_input == 0 {
                0
            } else {
                previous_input / 128 * 128
            };
            let reasoning = rng.range(0, 12) * 64;
            let output = reasoning + rng.range(20, 400);
            for (slot, value) in total.iter_mut().zip([context, cached, output, reasoning]) {
                *slot += value;
            }
            info = json!({
                "total_token_usage": usage(total[0], total[1], total[2], total[3]),
                "last_token_usage": usage(context, cached, output, reasoning),
                "model_context_window": 258_400,
            });
            previous_input = context;
            context += output;
            w.line(
                "event_msg",
                json!({"type": "token_count", "info": info, "rate_limits": rate_limits}),
            );
            let encrypted_len = rng.range(1000, 2000) as usize;
            let encrypted = format!("gAAAAAB{}", rng.text(BASE64, encrypted_len));
            w.line(
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}],
                       "content": null, "encrypted_content": encrypted}),
            );
            if i + 1 == turn_len {
                let answer = format!("Done with turn {turn}: the tests pass.");
                w.line(
                    "event_msg",
                    json!({"type": "agent_message", "message": answer}),
                );
                w.line(
                    "response_item",
                    json!({"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": answer}]}),
                );
                continue;
            }
            let call_id = format!("call_{}", rng.text(&BASE64[..62], 24));
            let arguments =
                json!({"command": ["bash", "-lc", "rg -n 'fn handle' src"], "workdir": CWD})
                    .to_string();
            w.line(
                "response_item",
                json!({"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}),
            );
            let size = (4f64.ln() + rng.unit() * (MAX_OUTPUT.ln() - 4f64.ln())).exp() as usize;
            let start = rng.range(0, (pool.len() / 2) as u64) as usize;
            let start = (start..).find(|&i| pool.is_char_boundary(i)).unwrap_or(0);
            let end = ((start + size).min(pool.len())..=pool.len())
                .find(|&i| pool.is_char_boundary(i))
                .unwrap_or(pool.len());
            let text = &pool[start..end];
            let output_json =
                json!({"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
                    .to_string();
            context += (arguments.len() + output_json.len().min(10_000)) as u64 / 4 + 20;
            w.line(
                "response_item",
                json!({"type": "function_call_output", "call_id": call_id, "output": output_json}),
            );
        }
    }
    w.out
}

/// A rewrite-heavy Era-B rollout of `cycles` cycles (see [`Rewrite`]), with small items.
fn generate_rewrites(kind: Rewrite, cycles: usize) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(cycles * 2_000),
        ms: 0,
    };
    w.line(
        "session_meta",
        json!({"id": "019a93b9-0000-7000-8000-000000000002", "cwd": CWD, "originator": "codex_cli_rs",
               "cli_version": "0.58.0", "source": "cli", "model_provider": "openai"}),
    );
    let message = |w: &mut Writer, role: &str, text: &str| {
        let part = if role == "user" {
            "input_text"
        } else {
            "output_text"
        };
        w.line(
            "response_item",
            json!({"type": "message", "role": role, "content": [{"type": part, "text": text}]}),
        );
    };
    let context = |w: &mut Writer| {
        w.line(
            "turn_context",
            json!({"cwd": CWD, "approval_policy": "never", "model": "gpt-5.1-codex", "effort": "high"}),
        );
    };
    let call = |w: &mut Writer, id: &str| {
        w.line(
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": id}),
        );
    };
    let output = |w: &mut Writer, id: &str| {
        w.line(
            "response_item",
            json!({"type": "function_call_output", "call_id": id, "output": "Cargo.toml\nsrc\n"}),
        );
    };
    for cycle in 0..cycles {
        let id = format!("call_{cycle}");
        match kind {
            Rewrite::Rollbacks => {
                message(&mut w, "user", &format!("Turn {cycle}: list the files."));
                context(&mut w);
                call(&mut w, &id);
                output(&mut w, &id);
                context(&mut w);
                message(&mut w, "assistant", "Cargo.toml and src.");
                message(&mut w, "user", &format!("Turn {cycle}b: never mind."));
                context(&mut w);
                message(&mut w, "assistant", "Fine.");
                w.line(
                    "event_msg",
                    json!({"type": "thread_rolled_back", "num_turns": 1}),
                );
            }
            Rewrite::LateOutputs => {
                message(&mut w, "user", &format!("Turn {cycle}: list the files."));
                context(&mut w);
                call(&mut w, &id);
                message(&mut w, "user", &format!("Turn {cycle}b: and the tests?"));
                context(&mut w);
                message(&mut w, "assistant", "Looking.");
                output(&mut w, &id);
                context(&mut w);
                message(&mut w, "assistant", "Cargo.toml and src; no tests.");
            }
        }
    }
    w.out
}

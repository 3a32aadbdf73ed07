#!/usr/bin/env python3
"""Generate a synthetic Era-B Codex rollout (CLI 0.58-style) for benchmarks.

The output is deterministic for a given --seed and size/step target, and is written as a
stream (nothing but a ~1 MB text pool is held in memory), so 1 GB files are fine.

Shape, per the 0.58.0 line mix (see shared/reference/codex-rollout.md sections 2-5):

    session_meta
    per user turn:   response_item message user <environment_context>
                     response_item message user (the prompt)
                     event_msg user_message
                     (first step only) response_item ghost_snapshot
    per step:        turn_context (gpt-5.1-codex, effort high, summary auto)
                     event_msg token_count   (re-emit at stream start, unchanged info)
                     event_msg agent_reasoning
                     event_msg token_count   (completion: cumulative usage grows)
                     response_item reasoning (summary + base64 encrypted_content, 1-2 KB)
                     then either a tool call:
                       response_item function_call shell (arguments: a JSON string)
                       response_item function_call_output (output: a JSON string
                         {"output": ..., "metadata": {"exit_code": 0, "duration_seconds": 0.1}},
                         text size log-uniform from a few bytes to 100 KB)
                     or, every 20-60 steps, the turn's final answer:
                       event_msg agent_message + response_item message assistant

Sizes: "10MB" means 10 * 10**6 bytes (SI), "1GB" 10**9; "KiB/MiB/GiB" are binary; a bare
number is bytes. With --size the generator stops after the first whole step that reaches it.

--mutate-near-end additionally writes OUT.mutated: a byte-identical copy except for one
function_call_output near the end (the third-last one) whose output text is changed; that is
the input pair for `promptc diff`.

--rollbacks N writes a rewrite-heavy file instead: N cycles of a kept turn (a tool call, its
output and a final answer), a turn that is then dropped, and `thread_rolled_back` of one turn,
so the history grows by one turn per cycle and every rollback rewinds it. --late-outputs N
writes N cycles of a turn whose tool call is answered only after a later request (a user
message and a step in between), so every output rewrites history already sent with a synthetic
aborted output. Both use small tool outputs (at most --max-output, default 100 bytes here).
--mid-rewrites N writes rewrites in the middle of a long history: a call at the start, then N
cycles of a kept turn, and a turn that answers that first call and is then rolled back, so
every cycle rewrites the view from the first call on.

Usage:
    benches/gen_rollout.py --size 100MB -o /tmp/promptc-bench/100MB.jsonl --mutate-near-end
    benches/gen_rollout.py --steps 10000 --seed 7 -o rollout.jsonl
    benches/gen_rollout.py --rollbacks 4000 -o /tmp/promptc-bench/rollbacks-4000.jsonl
    benches/gen_rollout.py --late-outputs 4000 -o /tmp/promptc-bench/late-4000.jsonl
    benches/gen_rollout.py --mid-rewrites 1000 -o /tmp/promptc-bench/mid-1000.jsonl
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import re
import sys
import time

CWD = "/home/user/projects/bench/widget-service"
MODEL = "gpt-5.1-codex"
CONTEXT_WINDOW = 258400
BASE_PROMPT_TOKENS = 10128  # system prompt + tools, as in a first 0.58 request


def dumps(obj) -> str:
    # serde_json's compact form: no spaces, raw UTF-8.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B?)?\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (try 10MB, 1GB, 5MiB, 123456)")
    number = float(m.group(1))
    unit = (m.group(2) or "").upper()
    scale = {
        "": 1, "B": 1,
        "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9,
        "T": 10**12, "TB": 10**12,
        "KI": 2**10, "KIB": 2**10, "MI": 2**20, "MIB": 2**20, "GI": 2**30, "GIB": 2**30,
    }.get(unit)
    if scale is None:
        raise argparse.ArgumentTypeError(f"bad size unit in {text!r}")
    return int(number * scale)


# --- text pools -------------------------------------------------------------------------------

WORDS = (
    "planning inspecting reviewing checking updating refactoring wiring testing tracing "
    "verifying summarizing adjusting locating fixing reading comparing"
).split()
VERBS = "plan inspect review check update refactor wire test trace verify fix compare".split()
NOUNS = (
    "repository config handler router schema migration test suite parser cache client "
    "endpoint build script module layout fixtures logging retry policy dependency"
).split()
FILES = [
    "src/main.rs", "src/lib.rs", "src/server/router.rs", "src/server/handlers.rs",
    "src/db/schema.sql", "src/db/migrations/0003_add_index.sql", "tests/api.rs",
    "package.json", "README.md", "components/chat/chat-input.tsx", "lib/models/llm.ts",
    "app/api/chat/route.ts", "Cargo.toml", "docs/ARCHITECTURE.md", ".github/workflows/ci.yml",
]
COMMANDS = [
    "ls", "ls -la", "git status -sb", "git diff --stat", "git log --oneline -n 20",
    "rg -n \"TODO|FIXME\" src", "rg -n 'fn handle' src/server", "cat {f}", "sed -n '1,200p' {f}",
    "sed -n '200,400p' {f}", "nl -ba {f} | sed -n '40,120p'", "cargo test --quiet",
    "cargo build 2>&1 | tail -n 40", "npm test -- --silent", "pnpm lint", "find . -name '*.ts' | head -n 50",
    "cat <<'EOF' > {f}\n// generated\nexport const retries = 3;\nEOF", "python3 -c \"import json;print(json.dumps({{'ok': True}}))\"",
]


def build_text_pool(rng: random.Random, size: int = 1 << 20) -> tuple[str, list[int]]:
    """~1 MB of shell-output-like lines (listings, code, logs, some escapes and non-ASCII)."""
    idents = ["request", "response", "config", "retry_count", "session_id", "payload", "cache_key",
              "handler", "router", "state", "timeout_ms", "user", "token", "buffer"]
    def ident():
        return rng.choice(idents)
    def code_line():
        indent = " " * (4 * rng.randint(0, 3))
        choice = rng.randrange(8)
        if choice == 0:
            return f"{indent}let {ident()} = {ident()}.get(\"{ident()}\")?;"
        if choice == 1:
            return f"{indent}if {ident()}.len() > {rng.randint(1, 4096)} {{"
        if choice == 2:
            return f"{indent}}}"
        if choice == 3:
            return f"{indent}// {rng.choice(WORDS)} the {rng.choice(NOUNS)} before the {rng.choice(NOUNS)}"
        if choice == 4:
            return f"{indent}return Err(Error::new(\"{rng.choice(NOUNS)} failed: {{}}\", {ident()}));"
        if choice == 5:
            return f"{indent}const {ident()} = await fetch(`/api/{rng.choice(NOUNS)}`, {{ method: 'POST' }});"
        if choice == 6:
            return f"{indent}\"{ident()}\": \"C:\\\\Users\\\\dev\\\\{rng.choice(NOUNS)}\","
        return f"{indent}fn {ident()}_{rng.choice(NOUNS)}(&self) -> Result<(), Error> {{"
    def listing_line():
        return f"-rw-r--r--  1 user user {rng.randint(0, 99999):>6} Nov 17 21:{rng.randint(10, 59)} {rng.choice(FILES)}"
    def log_line():
        lvl = rng.choice(["INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR"])
        return (f"2025-11-17T21:{rng.randint(10, 59)}:{rng.randint(10, 59)}.{rng.randint(100, 999)}Z "
                f"{lvl} {rng.choice(NOUNS)}: {rng.choice(WORDS)} {rng.choice(NOUNS)} in {rng.randint(1, 900)}ms")
    def grep_line():
        return f"{rng.choice(FILES)}:{rng.randint(1, 900)}:    {code_line().strip()}"
    def misc_line():
        return rng.choice([
            "", "test result: ok. 42 passed; 0 failed; 0 ignored",
            "\twarning: unused variable: `state` — prefix it with an underscore",
            "   Compiling widget-service v0.3.1 (/home/user/projects/bench/widget-service)",
            "✓ 128 tests passed (3.2s) — café naïve résumé",
            "Success. Updated the following files:\nM " + rng.choice(FILES),
        ])
    kinds = [code_line] * 5 + [listing_line, log_line, log_line, grep_line, grep_line, misc_line]
    lines = []
    total = 0
    while total < size:
        line = rng.choice(kinds)()
        lines.append(line)
        total += len(line) + 1
    text = "\n".join(lines) + "\n"
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    starts.pop()
    return text, starts


class Clock:
    """Monotonic fake timestamps in the rollout's `2025-11-17T21:30:28.664Z` format."""

    def __init__(self, start_ms: int):
        self.ms = start_ms
        self._sec = None
        self._prefix = ""

    def advance(self, rng: random.Random, lo: int, hi: int) -> None:
        self.ms += rng.randint(lo, hi)

    def stamp(self) -> str:
        sec, ms = divmod(self.ms, 1000)
        if sec != self._sec:
            self._sec = sec
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        return f"{self._prefix}.{ms:03d}Z"


class Generator:
    def __init__(self, seed: int, out, max_output: int):
        self.rng = random.Random(seed)
        self.out = out
        self.bytes = 0
        self.lines = 0
        self.steps = 0
        self.turns = 0
        self.max_output = max_output
        self.clock = Clock(1763415028664)  # 2025-11-17T21:30:28.664Z
        self.pool, self.pool_starts = build_text_pool(random.Random(seed ^ 0x5EED))
        self.fco_offsets: list[tuple[int, int]] = []  # (byte offset, byte length) of output lines
        self.context_tokens = BASE_PROMPT_TOKENS
        self.prev_input = 0
        self.total = dict.fromkeys(
            ["input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"], 0)
        self.last_info = None
        self.primary_pct = 12.0
        self.secondary_pct = 30.0
        self.commit = self.hex(40)

    # -- helpers --
    def hex(self, n: int) -> str:
        return "%0*x" % (n, self.rng.getrandbits(4 * n))

    def call_id(self) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "call_" + "".join(self.rng.choices(alphabet, k=24))

    def emit(self, kind: str, payload) -> int:
        line = dumps({"timestamp": self.clock.stamp(), "type": kind, "payload": payload}) + "\n"
        data = line.encode("utf-8")
        offset = self.bytes
        self.out.write(data)
        self.bytes += len(data)
        self.lines += 1
        return offset

    def pool_text(self, size: int) -> str:
        start = self.pool_starts[self.rng.randrange(len(self.pool_starts))]
        text = self.pool[start:start + size]
        while len(text) < size:  # wrap around for outputs near the pool's end
            text += self.pool[: size - len(text)]
        return text

    def title(self) -> str:
        return f"**{self.rng.choice(WORDS).capitalize()} {self.rng.choice(NOUNS)} {self.rng.choice(NOUNS)}**"

    def rate_limits(self):
        self.primary_pct = min(99.0, self.primary_pct + self.rng.choice([0.0, 0.0, 0.0, 1.0]))
        return {
            "primary": {"used_percent": self.primary_pct, "window_minutes": 300, "resets_at": 1763422724},
            "secondary": {"used_percent": self.secondary_pct, "window_minutes": 10080, "resets_at": 1763910107},
        }

    # -- structure --
    def session_meta(self):
        uuid = f"019a93b9-{self.hex(4)}-7{self.hex(3)}-{self.rng.choice('89ab')}{self.hex(3)}-{self.hex(12)}"
        self.emit("session_meta", {
            "id": uuid,
            "timestamp": self.clock.stamp(),
            "cwd": CWD,
            "originator": "codex_cli_rs",
            "cli_version": "0.58.0",
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
            "git": {"commit_hash": self.commit, "branch": "main",
                    "repository_url": "git@github.com:example/widget-service.git"},
        })

    def user_turn(self):
        self.turns += 1
        self.clock.advance(self.rng, 5000, 120000)
        env = (f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <approval_policy>never</approval_policy>\n"
               "  <sandbox_mode>danger-full-access</sandbox_mode>\n  <network_access>enabled</network_access>\n"
               "  <shell>bash</shell>\n</environment_context>")
        self.emit("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": env}]})
        prompt = (f"Turn {self.turns}: please {self.rng.choice(VERBS)} the "
                  f"{self.rng.choice(NOUNS)} in {self.rng.choice(FILES)} and make sure the tests still pass. "
                  + " ".join(self.rng.choice(WORDS + NOUNS) for _ in range(self.rng.randint(5, 60))))
        self.emit("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": prompt}]})
        self.emit("event_msg", {"type": "user_message", "message": prompt, "images": []})
        self.context_tokens += (len(env) + len(prompt)) // 4
        return True

    def step(self, first_in_turn: bool, final: bool):
        rng = self.rng
        self.steps += 1
        self.clock.advance(rng, 1, 50)
        self.emit("turn_context", {"cwd": CWD, "approval_policy": "never",
                                   "sandbox_policy": {"mode": "danger-full-access"},
                                   "model": MODEL, "effort": "high", "summary": "auto"})
        if first_in_turn:
            self.emit("response_item", {"type": "ghost_snapshot", "ghost_commit": {
                "id": self.hex(40), "parent": self.commit,
                "preexisting_untracked_files": [".env.local", "notes.md"],
                "preexisting_untracked_dirs": ["node_modules", "target"]}})
        self.clock.advance(rng, 300, 1500)
        # Stream start: rate limits with the previous request's info, unchanged.
        self.emit("event_msg", {"type": "token_count", "info": self.last_info, "rate_limits": self.rate_limits()})
        self.clock.advance(rng, 500, 8000)
        title = self.title()
        summary = title if rng.random() < 0.7 else (
            title + "\n\n" + " ".join(rng.choice(WORDS + NOUNS) for _ in range(rng.randint(10, 60))) + ".")
        self.emit("event_msg", {"type": "agent_reasoning", "text": summary})

        # Completion: this request's usage.
        input_tokens = self.context_tokens
        if self.prev_input == 0 or rng.random() < 0.03:
            cached = 0  # cold cache or an occasional miss
        else:
            cached = min(self.prev_input, input_tokens) // 128 * 128
        reasoning_out = rng.randint(0, 12) * 64
        output_tokens = reasoning_out + rng.randint(20, 400)
        last = {"input_tokens": input_tokens, "cached_input_tokens": cached, "output_tokens": output_tokens,
                "reasoning_output_tokens": reasoning_out, "total_tokens": input_tokens + output_tokens}
        for k, v in last.items():
            self.total[k] += v
        self.last_info = {"total_token_usage": dict(self.total), "last_token_usage": last,
                          "model_context_window": CONTEXT_WINDOW}
        self.prev_input = input_tokens
        self.clock.advance(rng, 1, 500)
        self.emit("event_msg", {"type": "token_count", "info": self.last_info, "rate_limits": self.rate_limits()})

        enc_len = rng.randint(750, 1500)  # base64 of this is ~1-2 KB
        encrypted = "gAAAAAB" + base64.urlsafe_b64encode(rng.randbytes(enc_len)).decode("ascii")
        self.emit("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}],
                                    "content": None, "encrypted_content": encrypted})
        self.context_tokens += output_tokens

        if final:
            answer = ("Done. " + " ".join(rng.choice(WORDS + NOUNS) for _ in range(rng.randint(20, 200)))
                      + f"\n\n- Updated `{rng.choice(FILES)}`\n- Tests: `cargo test` passes.")
            self.emit("event_msg", {"type": "agent_message", "message": answer})
            self.emit("response_item", {"type": "message", "role": "assistant",
                                        "content": [{"type": "output_text", "text": answer}]})
            self.context_tokens += len(answer) // 4
            return

        command = rng.choice(COMMANDS).format(f=rng.choice(FILES))
        args = dumps({"command": ["bash", "-lc", command], "workdir": CWD, "timeout_ms": 120000})
        cid = self.call_id()
        self.emit("response_item", {"type": "function_call", "name": "shell", "arguments": args, "call_id": cid})
        # Log-uniform from 4 bytes to max_output (100 KB): mean ~10 KB, median ~630 B.
        size = int(math.exp(rng.uniform(math.log(4), math.log(self.max_output))))
        text = self.pool_text(size)
        output = dumps({"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
        self.clock.advance(rng, 20, 3000)
        offset = self.emit("response_item", {"type": "function_call_output", "call_id": cid, "output": output})
        self.fco_offsets.append((offset, self.bytes - offset))
        if len(self.fco_offsets) > 8:
            del self.fco_offsets[0]
        # Roughly what the item adds to the model's input (recorded outputs are truncated ~10 KB).
        self.context_tokens += (len(args) + min(len(output), 10_000)) // 4 + 20

    def tool_call(self) -> str:
        command = self.rng.choice(COMMANDS).format(f=self.rng.choice(FILES))
        args = dumps({"command": ["bash", "-lc", command], "workdir": CWD, "timeout_ms": 120000})
        cid = self.call_id()
        self.emit("response_item", {"type": "function_call", "name": "shell", "arguments": args, "call_id": cid})
        return cid

    def tool_output(self, cid: str):
        size = int(math.exp(self.rng.uniform(math.log(4), math.log(self.max_output))))
        output = dumps({"output": self.pool_text(size), "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
        self.clock.advance(self.rng, 20, 3000)
        self.emit("response_item", {"type": "function_call_output", "call_id": cid, "output": output})

    def run_rollbacks(self, cycles: int):
        """Per cycle: a kept turn (call, output, answer), a dropped turn, a rollback of one turn."""
        self.session_meta()
        for _ in range(cycles):
            self.user_turn()
            self.step(first_in_turn=False, final=False)
            self.step(first_in_turn=False, final=True)
            self.user_turn()
            self.step(first_in_turn=False, final=True)
            self.clock.advance(self.rng, 1000, 5000)
            self.emit("event_msg", {"type": "thread_rolled_back", "num_turns": 1})

    def run_late_outputs(self, cycles: int):
        """Per cycle: a turn whose call is answered only after a later user message and request."""
        self.session_meta()
        for _ in range(cycles):
            self.user_turn()
            self.steps += 1
            self.emit("turn_context", {"cwd": CWD, "approval_policy": "never",
                                       "sandbox_policy": {"mode": "danger-full-access"},
                                       "model": MODEL, "effort": "high", "summary": "auto"})
            cid = self.tool_call()
            self.user_turn()
            # The next request sends a synthetic aborted output for `cid`; its output comes after.
            self.step(first_in_turn=False, final=True)
            self.tool_output(cid)
            self.step(first_in_turn=False, final=True)

    def run_mid_rewrites(self, cycles: int):
        """A call at the start; per cycle a kept turn, then a turn that answers that call and
        is rolled back: the first call's status flips twice per cycle."""
        self.session_meta()
        self.user_turn()
        self.steps += 1
        cid = self.tool_call()
        for _ in range(cycles):
            self.user_turn()
            self.step(first_in_turn=False, final=True)
            self.user_turn()
            self.tool_output(cid)
            self.step(first_in_turn=False, final=True)
            self.clock.advance(self.rng, 1000, 5000)
            self.emit("event_msg", {"type": "thread_rolled_back", "num_turns": 1})

    def run(self, target_bytes: int | None, target_steps: int | None):
        self.session_meta()
        while True:
            self.user_turn()
            turn_len = self.rng.randint(20, 60)
            for i in range(turn_len):
                if target_steps is not None and self.steps >= target_steps:
                    return
                if target_bytes is not None and self.bytes >= target_bytes:
                    return
                self.step(first_in_turn=(i == 0), final=(i == turn_len - 1))


def copy_range(src, dst, length: int, chunk: int = 1 << 20):
    while length > 0:
        data = src.read(min(chunk, length))
        if not data:
            raise RuntimeError("unexpected end of file while copying")
        dst.write(data)
        length -= len(data)


def write_mutated(path: str, offsets: list[tuple[int, int]]) -> str:
    """Copy `path` to `path.mutated`, changing the third-last function_call_output's text."""
    if not offsets:
        raise SystemExit("no function_call_output to mutate (file too small)")
    offset, length = offsets[-3] if len(offsets) >= 3 else offsets[0]
    target = path + ".mutated"
    with open(path, "rb") as src, open(target, "wb", buffering=1 << 20) as dst:
        copy_range(src, dst, offset)
        line = json.loads(src.read(length))
        inner = json.loads(line["payload"]["output"])
        inner["output"] = "[mutated] " + inner["output"]
        line["payload"]["output"] = dumps(inner)
        dst.write((dumps(line) + "\n").encode("utf-8"))
        while True:
            data = src.read(1 << 20)
            if not data:
                break
            dst.write(data)
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--size", type=parse_size, help="target size: 10MB, 100MB, 1GB, 5MiB or bytes")
    target.add_argument("--steps", type=int, help="number of steps (sampling requests)")
    target.add_argument("--rollbacks", type=int, metavar="N",
                        help="N cycles of two turns and a rollback of the second")
    target.add_argument("--late-outputs", type=int, metavar="N",
                        help="N tool outputs that each arrive after a later request")
    target.add_argument("--mid-rewrites", type=int, metavar="N",
                        help="N answers to the first call, each rolled back")
    parser.add_argument("-o", "--output", required=True, help="output .jsonl path")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--max-output", type=parse_size, default=None,
                        help="largest function_call_output text (default 100KB; 100 bytes with "
                             "--rollbacks, --late-outputs and --mid-rewrites)")
    parser.add_argument("--mutate-near-end", action="store_true",
                        help="also write OUTPUT.mutated with one function_call_output changed near the end")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)

    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    rewrites = any(n is not None for n in (args.rollbacks, args.late_outputs, args.mid_rewrites))
    if args.max_output is None:
        args.max_output = 100 if rewrites else 100_000
    start = time.perf_counter()
    with open(args.output, "wb", buffering=1 << 20) as out:
        gen = Generator(args.seed, out, args.max_output)
        if args.rollbacks is not None:
            gen.run_rollbacks(args.rollbacks)
        elif args.late_outputs is not None:
            gen.run_late_outputs(args.late_outputs)
        elif args.mid_rewrites is not None:
            gen.run_mid_rewrites(args.mid_rewrites)
        else:
            gen.run(args.size, args.steps)
    elapsed = time.perf_counter() - start
    if not args.quiet:
        print(f"{args.output}: {gen.bytes} bytes, {gen.lines} lines, {gen.turns} turns, {gen.steps} steps "
              f"in {elapsed:.2f}s ({gen.bytes / 1e6 / elapsed:.1f} MB/s)", file=sys.stderr)
    if args.mutate_near_end:
        start = time.perf_counter()
        target = write_mutated(args.output, gen.fco_offsets)
        elapsed = time.perf_counter() - start
        if not args.quiet:
            print(f"{target}: mutated copy in {elapsed:.2f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

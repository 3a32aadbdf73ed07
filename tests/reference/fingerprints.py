#!/usr/bin/env python3
"""Fingerprints computed from their documented encoding (src/fingerprint.rs, "Encoding"), apart
from promptc, with the `xxhash` package (which wraps xxHash's reference C code).

    pip install xxhash==3.5.0
    python3 tests/reference/fingerprints.py          # write tests/reference/fingerprints.json
    python3 tests/reference/fingerprints.py --check  # exit 1 if that file is stale, or if
                                                     # fixtures/baseline.json breaks the encoding

Two parts, both read by src/fingerprint/tests.rs:

- `cases`: small rollouts written here, each step's every component. Their steps are simple
  enough to follow by hand: a `turn_context` line before each request (era B), every call
  answered, no ghost snapshot, so a step's input is every item recorded before its
  `turn_context` (after a `compacted` line: its replacement history, then the items after it),
  each item the exact bytes of its JSON in the line.
- `baseline`: for each rollout of fixtures/baseline.json, the values each component may take,
  from the rollout's own lines (`prompt_cache_key` from session_meta's id, `instructions` from
  session_meta or a turn_context, `params` from each turn_context, `checkpoint` from each
  `compacted` line). Inputs are not recomputed there (that takes normalization); the request
  fingerprint is, from each step's components.
"""

import json
import sys
from pathlib import Path

import xxhash

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/reference/fingerprints.json"


def h(tag: str, data: bytes) -> bytes:
    return xxhash.xxh3_128(tag.encode() + b"\0" + data).digest()


def hx(digest):
    return None if digest is None else digest.hex()


def compact(value) -> str:
    """serde_json's compact form: no spaces, non-ASCII as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def params(tc) -> bytes:
    """The documented `params` object: {model, tool_choice, parallel_tool_calls, reasoning,
    store, stream, include, text}; `reasoning` only with an effort or a summary (its summary left
    out when `none`), `text` only with a verbosity or an output schema (codex-rollout.md,
    "request building"). `parallel_tool_calls` is not recorded: null."""
    tc = tc or {}
    obj = {"model": tc.get("model"), "tool_choice": "auto", "parallel_tool_calls": None}
    effort = tc.get("effort")
    if effort is None:
        effort = ((tc.get("collaboration_mode") or {}).get("settings") or {}).get("reasoning_effort")
    summary = tc.get("summary")
    reasoning = effort is not None or summary is not None
    if reasoning:
        r = {"effort": effort}
        if summary is not None and summary != "none":
            r["summary"] = summary
        obj["reasoning"] = r
    obj["store"] = False
    obj["stream"] = True
    obj["include"] = ["reasoning.encrypted_content"] if reasoning else []
    verbosity, schema = tc.get("verbosity"), tc.get("final_output_json_schema")
    if verbosity is not None or schema is not None:
        text = {}
        if verbosity is not None:
            text["verbosity"] = verbosity
        if schema is not None:
            text["format"] = {"type": "json_schema", "strict": True, "schema": schema,
                              "name": "codex_output_schema"}
        obj["text"] = text
    return h("params", compact(obj).encode())


def tools_hashes(tools):
    """`tools`: the array as sent (each spec's exact JSON, request order); `tools_canonical`:
    each spec with keys sorted, the specs sorted, joined by newlines."""
    if tools is None:
        return None, None
    exact = h("tools", ("[" + ",".join(tools) + "]").encode())
    canonical = sorted(json.dumps(json.loads(t), sort_keys=True, separators=(",", ":"),
                                  ensure_ascii=False) for t in tools)
    return exact, h("tools-canonical", "\n".join(canonical).encode())


def chain(items):
    """c_0 = XXH3-128("input" 0x00), c_{i+1} = XXH3-128(c_i || XXH3-128("item" 0x00 item))."""
    c = h("input", b"")
    for item in items:
        c = xxhash.xxh3_128(c + h("item", item.encode())).digest()
    return c


def request(instructions, tools, prm, key, checkpoint, inp) -> bytes:
    def show(d, missing):
        return missing if d is None else d.hex()
    text = (f"instructions={show(instructions, 'unknown')}\ntools={show(tools, 'unknown')}\n"
            f"params={prm.hex()}\nprompt_cache_key={show(key, 'unknown')}\n"
            f"checkpoint={show(checkpoint, 'none')}\ninput={inp.hex()}\n")
    return h("request", text.encode())


def raw_span(line: str, key: str):
    """The exact text of the value of the first `"key":` in `line`."""
    start = line.index(f'"{key}":') + len(key) + 3
    _, end = json.JSONDecoder().raw_decode(line, start)
    return line[start:end]


def raw_elements(array_text: str):
    """The exact text of each element of a JSON array written compactly."""
    out, i, dec = [], 1, json.JSONDecoder()
    while array_text[i] != "]":
        _, end = dec.raw_decode(array_text, i)
        out.append(array_text[i:end])
        i = end + (array_text[end] == ",")
    return out


def case_steps(lines, instructions_option=None, tools_option=None):
    """Every step's components for a rollout of the simple shape described above."""
    meta, history, checkpoint, steps = {}, [], None, []
    for line in lines:
        record = json.loads(line)
        kind, payload = record["type"], record["payload"]
        if kind == "session_meta":
            meta = payload
        elif kind == "response_item":
            history.append(raw_span(line, "payload"))
        elif kind == "compacted":
            history = raw_elements(raw_span(line, "replacement_history"))
            checkpoint = h("checkpoint", line.encode())
        elif kind == "turn_context":
            steps.append((payload, list(history), checkpoint))
    base = meta.get("base_instructions")
    meta_text = base.get("text") if isinstance(base, dict) else base
    tools = tools_option
    if meta.get("dynamic_tools") is not None:
        tools = (tools or []) + [compact(t) for t in meta["dynamic_tools"]]
    tools_exact, tools_canonical = tools_hashes(tools)
    key = h("prompt_cache_key", meta["id"].encode()) if "id" in meta else None
    out = []
    for tc, items, cp in steps:
        tc_base = tc.get("base_instructions")
        tc_text = tc_base.get("text") if isinstance(tc_base, dict) else tc_base
        text = instructions_option or tc_text or meta_text
        ins = None if text is None else h("instructions", text.encode())
        prm = params(tc)
        inp = chain(items)
        out.append({
            "request": hx(request(ins, tools_exact, prm, key, cp, inp)),
            "instructions": hx(ins),
            "tools": hx(tools_exact),
            "tools_canonical": hx(tools_canonical),
            "params": hx(prm),
            "prompt_cache_key": hx(key),
            "checkpoint": hx(cp),
            "input": hx(inp),
            "input_items": len(items),
        })
    return out


def line(kind, payload, ts="2026-01-05T10:00:00.000Z"):
    return compact({"timestamp": ts, "type": kind, "payload": payload})


def user(text):
    return line("response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": text}]})


def assistant(text):
    return line("response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": text}]})


CASES = [
    {
        # Everything known from the file: the key, the instructions, dynamic tools (keys out of
        # order, nested, non-ASCII), reasoning params; then a compaction, after which a
        # turn_context switches model, drops the summary and adds a verbosity and a schema.
        "name": "all_known_with_compaction",
        "lines": [
            line("session_meta", {
                "id": "019b8e10-0000-7000-8000-0000000000a1", "cli_version": "0.104.0",
                "base_instructions": {"text": "You are a test agent.\nBe brief."},
                "dynamic_tools": [
                    {"type": "function", "name": "zeta", "parameters": {"b": 1, "a": [2, {"y": 1, "x": 0}]}},
                    {"name": "alpha", "type": "function", "description": "d\u00e9j\u00e0 vu \u2192 \"quoted\""},
                ],
            }),
            user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
            user("Fix the bug."),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.1-codex", "effort": "high", "summary": "auto"}),
            line("response_item", {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAAA-1"}),
            line("response_item", {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "call_1"}),
            line("response_item", {"type": "function_call_output", "call_id": "call_1", "output": "a\nb"}),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.1-codex", "effort": "high", "summary": "auto"}),
            assistant("Fixed."),
            line("compacted", {"message": "", "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the bug."}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary: fixed"}]},
            ]}),
            user("Now add a test."),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.1-codex-mini", "summary": "none", "verbosity": "low",
                                  "final_output_json_schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}),
        ],
    },
    {
        # Nothing but params from the file: no session_meta (key unknown), instructions and
        # tools from the options (`--instructions`, `--tools`), no reasoning.
        "name": "options_only",
        "instructions": "Be brief.",
        "tools": ['{"type":"function","name":"b","parameters":{}}', '{"name":"a","type":"function"}'],
        "lines": [
            user("hi"),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.1"}),
            assistant("hello"),
            user("again"),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.1"}),
        ],
    },
    {
        # Instructions from a turn_context (over session_meta's), the effort from the
        # collaboration mode, a summary alone; no tools known.
        "name": "turn_context_overrides",
        "lines": [
            line("session_meta", {"id": "019b8e10-0000-7000-8000-0000000000a3",
                                  "base_instructions": {"text": "Session prompt."}}),
            user("go"),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.2", "base_instructions": {"text": "Turn prompt."},
                                  "collaboration_mode": {"mode": "default", "settings": {"reasoning_effort": "low"}}}),
            assistant("went"),
            user("and?"),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.2", "summary": "detailed"}),
        ],
    },
]


def baseline_expectations():
    """For each rollout of fixtures/baseline.json, the values each component may take."""
    baseline = json.loads((ROOT / "fixtures/baseline.json").read_text())
    out = {}
    for path in baseline["rollouts"]:
        meta, contexts, checkpoints = None, [], [None]
        for number, text in enumerate((ROOT / path).read_text().split("\n")):
            try:
                record = json.loads(text)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            kind, payload = record.get("type"), record.get("payload")
            # Era A: the metadata is the line itself, tagged or (bare) the first line.
            era_a_meta = record.get("record_type") == "session_meta" or (
                number == 0 and "id" in record and "type" not in record)
            if meta is None and (kind == "session_meta" or era_a_meta):
                meta = payload if kind == "session_meta" else record
            elif kind == "turn_context":
                contexts.append(payload)
            elif kind == "compacted":
                checkpoints.append(h("checkpoint", text.encode()))
        meta = meta or {}
        texts = [meta.get("base_instructions")] + [c.get("base_instructions") for c in contexts]
        texts = [t.get("text") if isinstance(t, dict) else t for t in texts]
        dynamic = meta.get("dynamic_tools")
        exact, canonical = tools_hashes(None if dynamic is None else [compact(t) for t in dynamic])
        out[path] = {
            "prompt_cache_key": [hx(h("prompt_cache_key", meta["id"].encode()) if "id" in meta else None)],
            "instructions": sorted({hx(h("instructions", t.encode())) for t in texts if t is not None}) or [None],
            "tools": [hx(exact)],
            "tools_canonical": [hx(canonical)],
            "params": sorted({hx(params(c)) for c in contexts + [None]}),
            "checkpoint": [hx(c) for c in checkpoints],
        }
    return baseline, out


def check_baseline(baseline, allowed):
    """Every step of fixtures/baseline.json within the values allowed, and its request
    fingerprint the hash of its components."""
    errors = []
    unhex = lambda v: None if v is None else bytes.fromhex(v)
    for path, steps in baseline["rollouts"].items():
        for s in steps:
            at = f"{path} turn {s['turn']} step {s['step']}"
            for component, values in allowed[path].items():
                if component == "instructions" and s[component] is None:
                    continue  # a rollout may record no instructions for some steps
                if s[component] not in values:
                    errors.append(f"{at}: {component} {s[component]} not in {values}")
            want = request(unhex(s["instructions"]), unhex(s["tools"]), unhex(s["params"]),
                           unhex(s["prompt_cache_key"]), unhex(s["checkpoint"]), unhex(s["input"]))
            if s["request"] != want.hex():
                errors.append(f"{at}: request {s['request']}, the encoding gives {want.hex()}")
    return errors


def main():
    cases = [dict(case, steps=case_steps(case["lines"], case.get("instructions"), case.get("tools")))
             for case in CASES]
    baseline, allowed = baseline_expectations()
    document = {"xxhash": xxhash.VERSION, "cases": cases, "baseline": allowed}
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    errors = check_baseline(baseline, allowed)
    for e in errors:
        print(f"fixtures/baseline.json: {e}", file=sys.stderr)
    if "--check" in sys.argv[1:]:
        if OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run {Path(__file__).relative_to(ROOT)}",
                  file=sys.stderr)
            errors.append("stale")
    else:
        OUT.write_text(text)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Mock Responses-API server for recording what the real Codex CLI sends.

Python 3.11 standard library only. It listens on 127.0.0.1, records every
POST to /v1/responses (or /responses) with its raw body and the headers that
tie it to a session and turn, and answers with server-sent events whose output
items come from a per-scenario script (see CONFORMANCE.md, "Mock server").

Used in-process by record.py (MockServer) or standalone:

    python3 conformance/mock_server.py --script S.json --log requests.raw.jsonl \
        [--port 0] [--port-file F]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.server
import json
import math
import sys
import threading

# Headers that tie a request to a session, a turn or a client build.
TYING_HEADERS = (
    "session_id",
    "session-id",
    "conversation_id",
    "x-codex-turn-metadata",
    "x-codex-turn-state",
    "x-codex-beta-features",
    "x-openai-subagent",
    "originator",
    "version",
)

SHELL_TOOL_NAMES = ("shell", "container.exec", "shell_command", "exec_command")

COMPACTION_MARKERS = ("context checkpoint compaction", "handoff summary for another llm", "memento")

CACHE_STEP = 128
CACHE_MIN = 1024


def compact(value) -> str:
    """Serialization used for token estimates and blobs (serde_json style)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def est_tokens(value) -> int:
    """Token estimate of one JSON value: ceil(UTF-8 bytes of its compact JSON / 4)."""
    return math.ceil(len(compact(value).encode("utf-8")) / 4)


def prompt_elements(body: dict) -> list:
    """The cacheable prefix elements in order: instructions, tools, each input item."""
    elems = []
    if "instructions" in body:
        elems.append(("instructions", body["instructions"]))
    if "tools" in body:
        elems.append(("tools", body["tools"]))
    for item in body.get("input") or []:
        elems.append(("input", item))
    return elems


class PrefixCache:
    """Simulated provider prefix cache per (prompt_cache_key, model)."""

    def __init__(self) -> None:
        self.seen: dict[tuple, list[list[str]]] = {}

    def usage_for(self, body: dict) -> tuple[int, int]:
        elems = prompt_elements(body)
        digests = [hashlib.sha256(compact(e).encode("utf-8")).hexdigest() for e in elems]
        tokens = [est_tokens(v) for _, v in elems]
        key = (body.get("prompt_cache_key"), body.get("model"))
        earlier = self.seen.setdefault(key, [])
        best = 0
        for prev in earlier:
            n = 0
            while n < len(prev) and n < len(digests) and prev[n] == digests[n]:
                n += 1
            best = max(best, n)
        earlier.append(digests)
        total = sum(tokens)
        cached = sum(tokens[:best]) // CACHE_STEP * CACHE_STEP
        if cached < CACHE_MIN:
            cached = 0
        return total, cached


def item_text(item) -> str:
    parts = item.get("content") or []
    if isinstance(parts, str):
        return parts
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def turn_metadata(headers) -> dict:
    raw = headers.get("x-codex-turn-metadata") if headers is not None else None
    if not raw:
        return {}
    try:
        meta = json.loads(raw)
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def is_compaction_request(body: dict, headers=None) -> bool:
    """A request for a compaction summary: newer builds say so in the turn metadata
    header; otherwise the last input item is the user message asking for a
    checkpoint/summary, or the request offers no tools at all."""
    kind = turn_metadata(headers).get("request_kind")
    if kind is not None:
        return kind == "compaction"
    items = body.get("input") or []
    if items:
        last = items[-1]
        if last.get("type") == "message" and last.get("role") == "user":
            text = item_text(last).lower()
            if any(m in text for m in COMPACTION_MARKERS):
                return True
    offers_tools = bool(body.get("tools")) or any(i.get("type") == "additional_tools" for i in items)
    return not offers_tools


def tool_index(body: dict) -> dict:
    """Tools by name, from `tools` and from `additional_tools` input items (namespaces flattened)."""
    out = {}

    def add(tools):
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            if t.get("type") == "namespace":
                add(t.get("tools"))
                continue
            out.setdefault(t.get("name") or t.get("type"), t)

    add(body.get("tools"))
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            add(item.get("tools"))
    return out


class Scenario:
    """Turns script entries into output items, deterministically."""

    def __init__(self, script: dict) -> None:
        self.responses = list(script.get("responses", []))
        self.next = 0
        self.counter = 0

    def _id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter:04d}"

    def take(self):
        if self.next < len(self.responses):
            entry = self.responses[self.next]
            self.next += 1
        else:
            entry = [{"message": "done"}]
        if isinstance(entry, list):
            entry = {"items": entry}
        return entry

    def shell_call(self, body: dict, command: str, extra: dict | None) -> dict:
        tools = tool_index(body)
        name = None
        # The first shell-like tool in the request's own order.
        for n in tools:
            if n in SHELL_TOOL_NAMES:
                name = n
                break
        if name is None and "local_shell" in tools:
            return {
                "type": "local_shell_call",
                "id": self._id("lsh"),
                "call_id": self._id("call"),
                "status": "completed",
                "action": {"type": "exec", "command": ["bash", "-lc", command]},
            }
        if name in ("shell", "container.exec"):
            args = {"command": ["bash", "-lc", command]}
        elif name == "exec_command":
            args = {"cmd": command}
        else:
            name = name or "shell_command"
            args = {"command": command}
        if extra:
            args.update(extra)
        return {
            "type": "function_call",
            "id": self._id("fc"),
            "status": "completed",
            "call_id": self._id("call"),
            "name": name,
            "arguments": compact(args),
        }

    def patch_call(self, body: dict, patch: str) -> dict:
        tool = tool_index(body).get("apply_patch")
        if tool is not None and tool.get("type") == "custom":
            return {
                "type": "custom_tool_call",
                "id": self._id("ctc"),
                "status": "completed",
                "call_id": self._id("call"),
                "name": "apply_patch",
                "input": patch,
            }
        if tool is not None:
            return {
                "type": "function_call",
                "id": self._id("fc"),
                "status": "completed",
                "call_id": self._id("call"),
                "name": "apply_patch",
                "arguments": compact({"input": patch}),
            }
        # No apply_patch tool: the shell-like tool runs the apply_patch command.
        return self.shell_call(body, "apply_patch <<'EOF'\n" + patch + "\nEOF", None)

    def message(self, text: str) -> dict:
        return {
            "type": "message",
            "id": self._id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }

    def reasoning(self, spec: dict) -> dict:
        rid = self._id("rs")
        summary = spec.get("summary", "Thinking.")
        secret = spec.get("encrypted", f"opaque reasoning {rid}")
        return {
            "type": "reasoning",
            "id": rid,
            "summary": [{"type": "summary_text", "text": summary}] if summary else [],
            "encrypted_content": "gAAAAB" + base64.b64encode(secret.encode()).decode(),
        }

    def items_for(self, body: dict, specs: list) -> list:
        out = []
        for spec in specs:
            if "raw" in spec:
                out.append(spec["raw"])
            elif "shell" in spec:
                out.append(self.shell_call(body, spec["shell"], spec.get("args")))
            elif "patch" in spec:
                out.append(self.patch_call(body, spec["patch"]))
            elif "reasoning" in spec:
                out.append(self.reasoning(spec["reasoning"] or {}))
            elif "message" in spec:
                out.append(self.message(spec["message"]))
            else:
                raise ValueError(f"unknown script item {spec!r}")
        return out


class MockState:
    def __init__(self, script: dict, log_path: str | None = None) -> None:
        self.lock = threading.Lock()
        self.scenario = Scenario(script)
        self.cache = PrefixCache()
        self.compaction_summary = script.get(
            "compaction_summary", "Summary for the next model: the user asked for shell commands; all ran."
        )
        self.records: list[dict] = []
        self.other: list[dict] = []
        self.log_path = log_path
        self.responses = 0
        # Set when a response has been sent; record.py waits on it (interrupts).
        self.sent = threading.Condition(self.lock)

    def handle(self, path: str, headers, raw: bytes) -> bytes:
        body = json.loads(raw.decode("utf-8"))
        with self.lock:
            index = len(self.records)
            compaction = is_compaction_request(body, headers)
            if compaction:
                entry = {"items": [{"message": self.compaction_summary}]}
            else:
                entry = self.scenario.take()
            items = self.scenario.items_for(body, entry.get("items", []))
            input_tokens, cached = self.cache.usage_for(body)
            output_tokens = sum(est_tokens(i) for i in items)
            reasoning_tokens = sum(est_tokens(i) for i in items if i.get("type") == "reasoning")
            over = entry.get("usage") or {}
            input_tokens = over.get("input_tokens", input_tokens)
            cached = over.get("cached_tokens", cached)
            output_tokens = over.get("output_tokens", output_tokens)
            usage = {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": input_tokens + output_tokens,
            }
            rid = f"resp_{index + 1:04d}"
            hdrs = {}
            for name in TYING_HEADERS:
                v = headers.get(name)
                if v is not None:
                    hdrs[name] = v
            rec = {
                "index": index,
                "path": path,
                "headers": hdrs,
                "raw": raw.decode("utf-8"),
                "usage": usage,
                "compaction": compaction,
                "output": items,
            }
            self.records.append(rec)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            self.responses += 1
            self.sent.notify_all()
        return sse(rid, body.get("model"), items, usage)


def sse(rid: str, model, items: list, usage: dict) -> bytes:
    def event(kind: str, data: dict) -> str:
        return f"event: {kind}\ndata: {compact(data)}\n\n"

    base = {"id": rid, "object": "response", "model": model}
    chunks = [event("response.created", {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}})]
    for i, item in enumerate(items):
        chunks.append(event("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item}))
    done = {**base, "status": "completed", "output": items, "usage": usage}
    chunks.append(event("response.completed", {"type": "response.completed", "response": done}))
    return "".join(chunks).encode("utf-8")


def make_handler(state: MockState):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: stderr belongs to the recorder
            pass

        def _read(self) -> bytes:
            n = int(self.headers.get("content-length") or 0)
            if n:
                return self.rfile.read(n)
            if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                out = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return b""

        def _reply(self, code: int, ctype: str, payload: bytes) -> None:
            self.send_response(code)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self):
            raw = self._read()
            path = self.path.split("?")[0]
            if path in ("/v1/responses", "/responses"):
                if (self.headers.get("content-encoding") or "").lower() == "zstd":
                    state.other.append({"method": "POST", "path": path, "note": "zstd body"})
                    self._reply(415, "text/plain", b"zstd not supported by mock")
                    return
                payload = state.handle(path, self.headers, raw)
                self._reply(200, "text/event-stream", payload)
                return
            with state.lock:
                state.other.append({"method": "POST", "path": path})
            self._reply(404, "application/json", b'{"error":"not found"}')

        def do_GET(self):
            path = self.path.split("?")[0]
            with state.lock:
                state.other.append({"method": "GET", "path": path})
            if path in ("/v1/models", "/models"):
                self._reply(200, "application/json", b'{"object":"list","data":[],"models":[]}')
                return
            self._reply(404, "application/json", b'{"error":"not found"}')

    return Handler


class MockServer:
    def __init__(self, script: dict, port: int = 0, log_path: str | None = None) -> None:
        self.state = MockState(script, log_path)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), make_handler(self.state))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", help="scenario script JSON ({\"responses\": [...]})")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--log", help="append one JSON line per request here")
    a = ap.parse_args()
    script = {}
    if a.script:
        with open(a.script, encoding="utf-8") as f:
            script = json.load(f)
    server = MockServer(script, a.port, a.log)
    print(f"mock listening on http://127.0.0.1:{server.port}/v1", flush=True)
    if a.port_file:
        with open(a.port_file, "w") as f:
            f.write(str(server.port))
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

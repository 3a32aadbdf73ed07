#!/usr/bin/env python3
"""Mock Anthropic Messages API for recording what the real Claude Code CLI sends.

Python 3.11 standard library only. It listens on 127.0.0.1, records every POST to
/v1/messages with its raw body and the headers that tie it to a session or a build, and
answers with server-sent events as the real API streams them. Usage comes from a simulated
Anthropic prompt cache (see CONFORMANCE.md, "The Claude mock"): `cache_control` breakpoints,
tools -> system -> messages order, 5-minute and 1-hour TTLs, per model, a 20-block lookback
and a per-model minimum cacheable length.

Used in-process by claude_record.py (ClaudeMock) or standalone:

    python3 conformance/claude_mock.py --script S.json --log requests.raw.jsonl [--port 0]
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import math
import sys
import threading
import time

# Headers that tie a request to a session or a client build, lower-cased.
TYING_HEADERS = (
    "anthropic-beta",
    "anthropic-version",
    "x-app",
    "user-agent",
    "x-claude-code-session-id",
    "x-stainless-retry-count",
    "x-stainless-timeout",
    "anthropic-dangerous-direct-browser-access",
)

# Blocks the cache looks back over from each breakpoint for an earlier entry.
LOOKBACK_BLOCKS = 20

# Minimum cacheable prefix per model family (Anthropic's prompt-caching documentation): below
# it a breakpoint writes nothing, without error. The first matching substring wins.
MIN_CACHEABLE = (
    ("claude-3-haiku", 2048),
    ("claude-3-5-haiku", 2048),
    ("haiku-4-5", 4096),
    ("opus-4-5", 4096),
    ("opus-4-6", 4096),
    ("opus-4-7", 4096),
    ("", 1024),
)

TTL_SECONDS = {"5m": 300, "1h": 3600}

# A compaction request: the summary instruction is the last user text (1.0.128+, /compact in
# 1.0.30) or the system prompt (1.0.30's auto-compaction, whose last message is a tool result).
COMPACTION_MARKERS = (
    "create a detailed summary of the conversation",
    "your task is to create a detailed summary",
)
COMPACTION_SYSTEM_MARKERS = ("tasked with summarizing conversations",)


def compact(value) -> str:
    """JSON.stringify's serialization: no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def est_tokens(value) -> int:
    """Token estimate of one JSON value: ceil(UTF-8 bytes of its compact JSON / 4)."""
    return math.ceil(len(compact(value).encode("utf-8")) / 4)


def min_cacheable(model: str) -> int:
    for needle, n in MIN_CACHEABLE:
        if needle in (model or ""):
            return n
    return 1024


def without_cache_control(block):
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def prompt_blocks(body: dict) -> list[tuple[str, object, dict | None]]:
    """The cacheable blocks in the order the cache sees them: (where, block, cache_control).

    Tools, then system blocks, then a marker for the parameters that invalidate the messages'
    cache (thinking, tool_choice), then each message's content blocks (string content is one
    text block; the role is part of the block's identity)."""
    out = []
    for tool in body.get("tools") or []:
        out.append(("tools", without_cache_control(tool), tool.get("cache_control") if isinstance(tool, dict) else None))
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system or []:
        out.append(("system", without_cache_control(block), block.get("cache_control") if isinstance(block, dict) else None))
    params = {"thinking": body.get("thinking"), "tool_choice": body.get("tool_choice")}
    out.append(("params", params, None))
    for i, msg in enumerate(body.get("messages") or []):
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            cc = block.get("cache_control") if isinstance(block, dict) else None
            out.append((f"messages.{i}", {"role": msg.get("role"), "block": without_cache_control(block)}, cc))
    return out


class AnthropicCache:
    """The simulated provider cache: entries at earlier breakpoints, per model, with expiry."""

    def __init__(self, clock=time.time) -> None:
        self.entries: dict[tuple[str, str], float] = {}
        self.clock = clock

    def usage_for(self, body: dict) -> dict:
        model = body.get("model") or ""
        blocks = prompt_blocks(body)
        # The params marker carries no tokens of its own: it only separates the messages' chain.
        tokens = [0 if where == "params" else est_tokens(block) for where, block, _ in blocks]
        cum, chain, h = [], [], hashlib.sha256(model.encode())
        total = 0
        for (where, block, _), n in zip(blocks, tokens):
            total += n
            cum.append(total)
            h.update(compact([where.split(".")[0], block]).encode("utf-8"))
            chain.append(h.copy().hexdigest())
        now = self.clock()
        breakpoints = [(i, (cc or {}).get("ttl", "5m")) for i, (_, _, cc) in enumerate(blocks) if cc]
        read_at = -1
        for bp, _ in breakpoints:
            for p in range(bp, max(-1, bp - LOOKBACK_BLOCKS - 1), -1):
                expiry = self.entries.get((model, chain[p]))
                if expiry is not None and expiry > now:
                    read_at = max(read_at, p)
                    break
        read = cum[read_at] if read_at >= 0 else 0
        # A hit refreshes the entry's TTL.
        for bp, ttl in breakpoints:
            if bp <= read_at and (model, chain[bp]) in self.entries:
                self.entries[(model, chain[bp])] = max(self.entries[(model, chain[bp])], now + TTL_SECONDS.get(ttl, 300))
        if read_at >= 0 and (model, chain[read_at]) in self.entries:
            self.entries[(model, chain[read_at])] = max(self.entries[(model, chain[read_at])], now + 300)
        written = {"5m": 0, "1h": 0}
        edge = read
        minimum = min_cacheable(model)
        for bp, ttl in breakpoints:
            if bp <= read_at or cum[bp] < minimum:
                continue
            self.entries[(model, chain[bp])] = now + TTL_SECONDS.get(ttl, 300)
            written[ttl if ttl in written else "5m"] += cum[bp] - edge
            edge = cum[bp]
        creation = written["5m"] + written["1h"]
        return {
            "input_tokens": total - read - creation,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written["5m"],
                "ephemeral_1h_input_tokens": written["1h"],
            },
            "breakpoints": [bp for bp, _ in breakpoints],
            "read_block": read_at,
            "minimum": minimum,
        }


def user_texts(msg: dict) -> list[str]:
    content = msg.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def last_user_text(body: dict) -> str:
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            return "\n".join(user_texts(msg))
    return ""


def last_user_block(body: dict) -> str:
    """The last text block of the last user message (context blocks come before it)."""
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            texts = user_texts(msg)
            return texts[-1] if texts else ""
    return ""


def system_text(body: dict) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system or [] if isinstance(b, dict))


def first_user_text(body: dict) -> str:
    for msg in body.get("messages") or []:
        if msg.get("role") == "user":
            return "\n".join(user_texts(msg))
    return ""


def tool_named(body: dict, *names: str) -> str | None:
    have = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    for name in names:
        if name in have:
            return name
    return None


class Script:
    """The scenario's answers: the conversation's in order, a subagent's in order."""

    def __init__(self, script: dict) -> None:
        self.responses = list(script.get("responses", []))
        self.subagent = list(script.get("subagent", []))
        self.subagent_prompts: list[str] = []
        self.summary = script.get(
            "compaction_summary", "The user asked for shell commands; each ran and printed its word."
        )
        self.next_id = 0

    def new_id(self, prefix: str) -> str:
        self.next_id += 1
        return f"{prefix}_mock{self.next_id:04d}"

    def classify(self, body: dict) -> str:
        model = body.get("model") or ""
        last = last_user_text(body).lower()
        first = first_user_text(body)
        system = system_text(body).lower()
        if any(m in last for m in COMPACTION_MARKERS) or any(m in system for m in COMPACTION_SYSTEM_MARKERS):
            return "compaction"
        if last_user_block(body).strip().lower() == "warmup":
            return "warmup"
        if any(p and p in first for p in self.subagent_prompts):
            return "subagent"
        if "haiku" in model:
            return "side"
        if not body.get("tools"):
            return "side"
        return "conversation"

    def take(self, kind: str):
        queue = self.subagent if kind == "subagent" else self.responses
        if queue:
            entry = queue.pop(0)
            return entry if isinstance(entry, dict) else {"blocks": entry}
        return {"blocks": [{"text": "done"}]}

    def blocks_for(self, body: dict, kind: str) -> tuple[list, dict]:
        if kind == "compaction":
            text = f"<analysis>Nothing left open.</analysis>\n<summary>{self.summary}</summary>"
            return [{"type": "text", "text": text}], {}
        if kind == "warmup":
            return [{"type": "text", "text": "Ready."}], {}
        if kind == "side":
            return [{"type": "text", "text": "{\"isNewTopic\": false, \"title\": null}"}], {}
        entry = self.take(kind)
        out = []
        for spec in entry.get("blocks", []):
            if "text" in spec:
                out.append({"type": "text", "text": spec["text"]})
            elif "thinking" in spec:
                out.append({"type": "thinking", "thinking": spec["thinking"], "signature": spec.get("signature", "c2lnbmF0dXJl")})
            elif "bash" in spec:
                name = tool_named(body, "Bash") or "Bash"
                out.append({"type": "tool_use", "id": self.new_id("toolu"), "name": name,
                            "input": {"command": spec["bash"], "description": spec.get("description", "Run a command")}})
            elif "task" in spec:
                name = tool_named(body, "Task", "Agent") or "Task"
                task = {"description": spec["task"]["description"], "prompt": spec["task"]["prompt"],
                        "subagent_type": spec["task"].get("subagent_type", "general-purpose")}
                self.subagent_prompts.append(task["prompt"])
                out.append({"type": "tool_use", "id": self.new_id("toolu"), "name": name, "input": task})
            elif "raw" in spec:
                out.append(spec["raw"])
        return out, entry.get("usage") or {}


def sse_events(message_id: str, model: str, blocks: list, usage: dict) -> bytes:
    def event(kind: str, data: dict) -> str:
        return f"event: {kind}\ndata: {compact(data)}\n\n"

    start_usage = {k: usage[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "cache_creation")}
    start_usage.update({"output_tokens": 1, "service_tier": "standard"})
    message = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": start_usage}
    chunks = [event("message_start", {"type": "message_start", "message": message}), event("ping", {"type": "ping"})]
    for i, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                      {"type": "signature_delta", "signature": block["signature"]}]
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": compact(block["input"])}]
        else:
            start, deltas = block, []
        chunks.append(event("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        for d in deltas:
            chunks.append(event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}))
        chunks.append(event("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    end_usage = {k: usage[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")}
    end_usage["output_tokens"] = usage["output_tokens"]
    chunks.append(event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": end_usage}))
    chunks.append(event("message_stop", {"type": "message_stop"}))
    return "".join(chunks).encode("utf-8")


class MockState:
    def __init__(self, script: dict, log_path: str | None = None) -> None:
        self.lock = threading.Lock()
        self.script = Script(script)
        self.cache = AnthropicCache()
        self.records: list[dict] = []
        self.other: list[dict] = []
        self.log_path = log_path
        self.sent = threading.Condition(self.lock)

    def handle(self, path: str, query: str, headers, raw: bytes) -> tuple[bytes, str]:
        body = json.loads(raw.decode("utf-8"))
        with self.lock:
            index = len(self.records)
            kind = self.script.classify(body)
            blocks, override = self.script.blocks_for(body, kind)
            cache = self.cache.usage_for(body)
            usage = {k: cache[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "cache_creation")}
            usage["output_tokens"] = sum(est_tokens(b) for b in blocks)
            usage.update({k: v for k, v in override.items() if k in usage})
            message_id = f"msg_mock{index + 1:04d}"
            request_id = f"req_mock{index + 1:04d}"
            hdrs = {name: headers.get(name) for name in TYING_HEADERS if headers.get(name) is not None}
            rec = {
                "index": index,
                "path": path,
                "query": query,
                "headers": hdrs,
                "raw": raw.decode("utf-8"),
                "kind": kind,
                "time": time.time(),
                "usage": usage,
                "cache": {k: cache[k] for k in ("breakpoints", "read_block", "minimum")},
                "message_id": message_id,
                "request_id": request_id,
                "output": blocks,
            }
            self.records.append(rec)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            self.sent.notify_all()
        return sse_events(message_id, body.get("model"), blocks, usage), request_id


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

        def _reply(self, code: int, ctype: str, payload: bytes, extra: dict | None = None) -> None:
            self.send_response(code)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(payload)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self):
            raw = self._read()
            path, _, query = self.path.partition("?")
            if path == "/v1/messages":
                payload, request_id = state.handle(path, query, self.headers, raw)
                self._reply(200, "text/event-stream", payload, {"request-id": request_id})
                return
            with state.lock:
                state.other.append({"method": "POST", "path": path, "query": query})
            if path == "/v1/messages/count_tokens":
                body = json.loads(raw.decode("utf-8") or "{}")
                n = sum(est_tokens(b) for _, b, _ in prompt_blocks(body))
                self._reply(200, "application/json", compact({"input_tokens": n}).encode())
                return
            self._reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"not found"}}')

        def do_GET(self):
            path, _, query = self.path.partition("?")
            with state.lock:
                state.other.append({"method": "GET", "path": path, "query": query})
            self._reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"not found"}}')

        def do_HEAD(self):
            with state.lock:
                state.other.append({"method": "HEAD", "path": self.path})
            self._reply(200, "text/plain", b"")

    return Handler


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client closing a kept-alive connection is normal; anything else is printed.
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class ClaudeMock:
    def __init__(self, script: dict, port: int = 0, log_path: str | None = None) -> None:
        self.state = MockState(script, log_path)
        self.httpd = QuietServer(("127.0.0.1", port), make_handler(self.state))
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
    ap.add_argument("--log", help="append one JSON line per request here")
    a = ap.parse_args()
    script = {}
    if a.script:
        with open(a.script, encoding="utf-8") as f:
            script = json.load(f)
    server = ClaudeMock(script, a.port, a.log)
    print(f"mock listening on http://127.0.0.1:{server.port}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generate a synthetic Claude Code transcript for benchmarks.

--style 2.1.100 (default): one prompt, then N requests, each a Bash tool call whose result the
next request sends (lines as 2.1.100 writes them).

--style 2.1.332: turns of a prompt (its context attachments, a `prompt_snapshot`) and 20-60 tool
steps, with 2.1.3xx's replay records: an `api-request-shape` per turn, `api-request-blob`s for the
context messages the transcript does not hold otherwise, and per request an `api-request` whose
`base`/`keep`/`tail` name its messages and whose `requestDigest` is the one the build computes
(promptc compile says `verified`). The lines carry the fields of the recorded 2.1.332 lines
(tests/conformance/claude/2.1.332/): `--check FILE` compares their key sets with a recorded
transcript's.

Tool results are cut from benches/gen_rollout.py's text pool (code, listings, logs; quotes,
backslashes, tabs and non-ASCII), as the Codex rollouts' outputs are, and the lines are written
in UTF-8 as Claude Code writes them: escapes and non-ASCII text change what a JSON reader costs.

    python3 benches/gen_transcript.py --steps 10000 -o /tmp/t.jsonl
    python3 benches/gen_transcript.py --style 2.1.332 --size 100MB -o /tmp/t332.jsonl
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_rollout import build_text_pool  # noqa: E402

SESSION = "cc8e0a78-3dc8-410f-99f3-c591b2dcc36f"
START = datetime.datetime(2026, 12, 3, 10, 0, 0)
WORDS = "handler retry parser module schema client config build test wiring endpoint".split()


def size_arg(text):
    units = {"KB": 10**3, "MB": 10**6, "GB": 10**9}
    for unit, factor in units.items():
        if text.upper().endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, help="requests (or use --size)")
    ap.add_argument("--size", type=size_arg, help="stop once the file has this many bytes (10MB, 1GB)")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-output", type=int, default=4000, help="largest tool result (bytes)")
    ap.add_argument("--style", choices=["2.1.100", "2.1.332"], default="2.1.100")
    ap.add_argument("--check", metavar="RECORDED", help="compare the key sets of each line type with a recorded transcript")
    args = ap.parse_args()
    if args.steps is None and args.size is None:
        ap.error("--steps or --size")
    with open(args.output, "w", encoding="utf-8") as out:
        (gen_100 if args.style == "2.1.100" else gen_332)(args, out)
    if args.check:
        sys.exit(check(args.output, args.check))


class Outputs:
    """Tool results cut from the rollouts' text pool at a line start, of 35 bytes to --max-output."""

    def __init__(self, args):
        self.pool, self.starts = build_text_pool(random.Random(args.seed ^ 0x5EED))
        self.largest = args.max_output

    def next(self, rng):
        size = rng.randint(35, self.largest)
        start = self.starts[rng.randrange(len(self.starts))]
        text = self.pool[start:start + size]
        while len(text) < size:  # wrap around near the pool's end
            text += self.pool[: size - len(text)]
        return text


def done(args, out, k):
    """Whether request k is the last."""
    if args.steps is not None:
        return k >= args.steps
    return out.tell() >= args.size


def gen_100(args, out):
    rng = random.Random(args.seed)
    outputs = Outputs(args)
    ids = (str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in iter(int, 1))
    base = {"isSidechain": False, "userType": "external", "entrypoint": "sdk-cli",
            "cwd": "/tmp/work", "sessionId": SESSION, "version": "2.1.100", "gitBranch": "main"}
    seconds = 0

    def stamp():
        # From 10:00 on 2026-12-03 (the days roll over in long files).
        return (START + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def line(value):
        out.write(json.dumps({**value, **base}, separators=(",", ":"), ensure_ascii=False) + "\n")

    parent = next(ids)
    line({"parentUuid": None, "type": "user", "uuid": parent, "timestamp": stamp(),
          "message": {"role": "user", "content": "Refactor the retry handler."}})
    prompt = 20000
    k = 0
    while True:
        k += 1
        seconds += rng.randint(2, 40)
        last = done(args, out, k)
        content = ([{"type": "text", "text": "Done."}] if last else
                   [{"type": "tool_use", "id": "toolu_%06d" % k, "name": "Bash",
                     "input": {"command": "grep -rn %s src" % rng.choice(WORDS),
                               "description": "Search"}}])
        written = rng.randint(200, 900)
        usage = {"input_tokens": 3, "cache_creation_input_tokens": written,
                 "cache_read_input_tokens": prompt if k > 1 else 0, "output_tokens": rng.randint(20, 300),
                 "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": written}}
        prompt += written + 3
        assistant = next(ids)
        line({"parentUuid": parent, "type": "assistant", "uuid": assistant, "timestamp": stamp(),
              "requestId": "req_%06d" % k,
              "message": {"id": "msg_%06d" % k, "type": "message", "role": "assistant",
                          "model": "claude-sonnet-4-6", "content": content,
                          "stop_reason": "end_turn" if last else "tool_use", "usage": usage}})
        parent = assistant
        if last:
            break
        result = outputs.next(rng)
        user = next(ids)
        seconds += 1
        line({"parentUuid": parent, "type": "user", "uuid": user, "timestamp": stamp(),
              "message": {"role": "user", "content": [
                  {"tool_use_id": "toolu_%06d" % k, "type": "tool_result", "content": result,
                   "is_error": False}]},
              "sourceToolAssistantUUID": parent})
        parent = user


def canonical(value):
    """Keys sorted, no spaces: the form 2.1.3xx hashes (serde_json's escaping)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def without_cache_control(value):
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def as_blocks(message):
    if isinstance(message.get("content"), str):
        return {**message, "content": [{"type": "text", "text": message["content"]}]}
    return message


def message_hash(message):
    """The sha256 a replay record names a message by."""
    return sha256(canonical(as_blocks(without_cache_control(message))))


MODEL = "claude-sonnet-4-6"
BETAS = ["claude-code-20250219", "interleaved-thinking-2025-05-14", "context-management-2025-06-27"]
PARAMS = {"model": MODEL, "betas": BETAS, "max_tokens": 64000,
          "thinking": {"type": "adaptive", "display": "omitted"},
          "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
          "output_config": {"effort": "medium"}}


def shape(rng):
    prose = lambda n: " ".join(rng.choice(WORDS) for _ in range(n))
    system = [{"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK."},
              {"type": "text", "text": "\nYou are an agent working with the user.\n\n# Harness\n" + prose(1500)}]
    tools = [{"name": name, "description": prose(rng.randint(100, 400)),
              "input_schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                               "properties": {"command": {"description": prose(20), "type": "string"}},
                               "required": ["command"], "additionalProperties": False}}
             for name in ["Agent", "Bash", "Edit", "Glob", "Grep", "Read", "Skill", "ToolSearch", "Write"]]
    return {"system": system, "tools": tools}


class Digest:
    """`requestDigest` of each request as its messages grow: the body without metadata, stream
    and the billing block, with the betas, breakpoints on the first two system blocks and on the
    last message's first block; canonical JSON, the messages before the last hashed once."""

    def __init__(self, the_shape):
        system = [dict(b, cache_control={"type": "ephemeral"}) if i < 2 else b
                  for i, b in enumerate(the_shape["system"])]
        body = {k: v for k, v in PARAMS.items() if k not in ("model", "betas")}
        body.update(model=MODEL, betas=BETAS, system=system, tools=the_shape["tools"])
        part = lambda keys: ",".join("%s:%s" % (json.dumps(k), canonical(body[k])) for k in keys)
        keys = sorted(list(body) + ["messages"])
        at = keys.index("messages")
        self.head = hashlib.sha256(("{" + part(keys[:at]) + ("," if at else "") + '"messages":[').encode())
        self.tail = ("]," + part(keys[at + 1:]) + "}").encode()
        self.sent = 0

    def of(self, messages):
        """The digest of a request sending `messages` (the last request's and some more)."""
        for m in messages[self.sent:-1]:
            self.head.update((canonical(as_blocks(m)) + ",").encode())
        self.sent = len(messages) - 1
        last = as_blocks(json.loads(json.dumps(messages[-1])))
        last["content"][0]["cache_control"] = {"type": "ephemeral"}
        h = self.head.copy()
        h.update(canonical(last).encode())
        h.update(self.tail)
        return h.hexdigest()


def gen_332(args, out):
    rng = random.Random(args.seed)
    outputs = Outputs(args)
    ids = (str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in iter(int, 1))
    common = {"userType": "external", "entrypoint": "sdk-cli", "cwd": "/tmp/work",
              "sessionId": SESSION, "version": "2.1.332", "gitBranch": "main"}
    seconds = 0

    def stamp():
        moment = START + datetime.timedelta(seconds=seconds)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % rng.randint(0, 999)

    def line(value):
        out.write(json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n")

    def record(kind, **fields):
        line({"type": kind, "sessionId": SESSION, **fields})

    the_shape = shape(rng)
    shape_hash = sha256(canonical(the_shape))
    digests = Digest(the_shape)
    parent = None
    messages = []  # what the last request sent
    last_request = None
    sent_before = 0  # messages the last request sent (kept by the next)
    pending = []  # messages since the last request
    prompt_tokens = 18000
    k = 0
    turn = 0
    finished = False
    while not finished:
        turn += 1
        prompt_id = next(ids)
        seconds += rng.randint(30, 600)
        prompt = "Turn %d: %s." % (turn, " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30))))
        user = next(ids)
        line({"parentUuid": parent, "isSidechain": False, "promptId": prompt_id, "type": "user",
              "message": {"role": "user", "content": prompt}, "uuid": user, "timestamp": stamp(),
              "permissionMode": "bypassPermissions", "promptSource": "sdk", "sentAtMs": 1796304680894 + seconds * 1000,
              "rowSource": "local", "turnOrigin": "sdk", "turnPosition": {"promptIndex": turn - 1, "turnIndex": 1},
              **common})
        parent = user
        environment = "# Environment\n - Primary working directory: /tmp/work\n - Platform: linux\n\nToday's date is 2026-12-03."
        for kind, role, rendered, extra in [
                ("environment", "system", environment, {"snapshot": {"workingDirectory": "/tmp/work"}}),
                ("date", "system", "Today's date is 2026-12-03.", {"date": "2026-12-03"})]:
            attachment = next(ids)
            line({"parentUuid": parent, "isSidechain": False, "attachment": {"type": kind, **extra},
                  "type": "attachment", "uuid": attachment, "timestamp": stamp(), "rendered": rendered,
                  "renderedRole": role, **common})
            parent = attachment
        snapshot = next(ids)
        line({"parentUuid": parent, "isSidechain": False,
              "attachment": {"type": "prompt_snapshot", "systemPrompt": [b["text"] for b in the_shape["system"][1:]],
                             "tools": the_shape["tools"], "cliPrefix": the_shape["system"][0]["text"],
                             "reminderFold": False, "systemTurns": True, "toolChangeHeader": True,
                             "inlineTools": False, "keptReminders": False, "echoWireToolInputs": False,
                             "contextRendering": "announced"},
              "type": "attachment", "uuid": snapshot, "timestamp": stamp(), **common})
        parent = snapshot
        record("api-request-shape", shapeHash=shape_hash, timestamp=stamp(), version="2.1.332", shape=the_shape)
        context = {"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# gitStatus\nCurrent branch: main\n</system-reminder>"},
            {"type": "text", "text": prompt}]}
        new = [context] + ([{"role": "system", "content": environment, "output_config": {"effort": "medium"}}]
                           if turn == 1 else [])
        for m in new:
            record("api-request-blob", hash=message_hash(m), message=m)
        pending += new
        steps = rng.randint(20, 60)
        for s in range(1, steps + 1):
            k += 1
            last_of_turn = s == steps
            finished = done(args, out, k)
            last_of_turn |= finished
            # The request: the last one's messages kept, the new ones named.
            messages = messages[:sent_before] + pending
            request_id = next(ids)
            fields = {"id": request_id, "timestamp": stamp(), "version": "2.1.332", "querySource": "sdk",
                      "shapeHash": shape_hash, "params": PARAMS, "thread": {"type": "none"},
                      "echoWireToolInputs": False}
            if last_request:
                fields["base"] = last_request
            fields.update(keep=sent_before, tail=[message_hash(m) for m in pending],
                          cacheControl=[{"path": ["system", 0], "value": {"type": "ephemeral"}},
                                        {"path": ["system", 1], "value": {"type": "ephemeral"}},
                                        {"path": ["messages", len(messages) - 1, "content", 0],
                                         "value": {"type": "ephemeral"}}],
                          requestDigest=digests.of(messages))
            record("api-request", **fields)
            last_request, sent_before, pending = request_id, len(messages), []
            seconds += rng.randint(2, 40)
            call = "toolu_%08d" % k
            content = ([{"type": "text", "text": "Done with turn %d." % turn}] if last_of_turn else
                       [{"type": "tool_use", "id": call, "name": "Bash",
                         "input": {"command": "grep -rn %s src" % rng.choice(WORDS), "description": "Search"}}])
            written = rng.randint(200, 900)
            read = prompt_tokens if k > 1 and s > 1 else rng.choice([prompt_tokens, 0])
            usage = {"input_tokens": 0, "cache_creation_input_tokens": written, "cache_read_input_tokens": read,
                     "output_tokens": rng.randint(20, 300), "output_tokens_details": {"thinking_tokens": 0},
                     "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                     "service_tier": "standard",
                     "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": written},
                     "inference_geo": "", "iterations": [], "speed": "standard", "fallback_credit": None}
            prompt_tokens += written
            assistant = next(ids)
            line({"parentUuid": parent, "isSidechain": False,
                  "message": {"id": "msg_%08d" % k, "type": "message", "role": "assistant", "model": MODEL,
                              "content": content, "stop_reason": "end_turn" if last_of_turn else "tool_use",
                              "stop_sequence": None, "usage": usage, "stop_details": None},
                  **({} if last_of_turn else {"toolInputStreamMs": rng.randint(1, 40)}),
                  "apiBlockIndex": 0, "requestId": "req_%08d" % k, "requestRef": request_id,
                  "requestedModel": MODEL, "promptCacheRequested": "5m", "type": "assistant",
                  "uuid": assistant, "timestamp": stamp(), "effort": "medium", "perTurnEffort": "medium",
                  "madeBy": "model", **common})
            parent = assistant
            pending.append({"role": "assistant", "content": content})
            if last_of_turn:
                break
            result = outputs.next(rng)
            user = next(ids)
            seconds += 1
            block = {"tool_use_id": call, "type": "tool_result", "content": result, "is_error": False}
            line({"parentUuid": parent, "isSidechain": False, "promptId": prompt_id, "type": "user",
                  "message": {"role": "user", "content": [block]}, "uuid": user, "timestamp": stamp(),
                  "toolUseResult": {"stdout": result, "stderr": "", "interrupted": False, "isImage": False,
                                    "noOutputExpected": False},
                  "sandboxed": False, "sourceToolAssistantUUID": parent,
                  "permissionDecision": {"decision": "accept", "source": "config", "reasonType": "mode"},
                  **common})
            parent = user
            pending.append({"role": "user", "content": [block]})
        line({"type": "last-prompt", "lastPrompt": prompt[:40], "leafUuid": parent, "sessionId": SESSION})


def keys(value, prefix=""):
    """The key paths of a line: its keys, and those of its `message`, `usage` and records' parts."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(prefix + k)
            if k in ("message", "usage", "cache_creation", "attachment") and isinstance(v, dict):
                out |= keys(v, prefix + k + ".")
    return out


def kind(value):
    t = value.get("type")
    if t == "user":
        content = value["message"]["content"]
        return "user (tool result)" if isinstance(content, list) and content[0].get("type") == "tool_result" else "user (prompt)"
    if t == "attachment":
        return "attachment " + value["attachment"]["type"]
    return t


def check(generated, recorded):
    """Each generated line type has the key paths the recorded transcript's lines of that type
    have (the recorded lines' key sets, for those types both files hold)."""
    def by_kind(path):
        found = {}
        for text in open(path):
            value = json.loads(text)
            found.setdefault(kind(value), set()).update(keys(value))
        return found
    mine, theirs = by_kind(generated), by_kind(recorded)
    status = 0
    for k in sorted(mine):
        if k not in theirs:
            print("%s: not in the recording" % k)
            continue
        missing, extra = theirs[k] - mine[k], mine[k] - theirs[k]
        print("%-28s %s" % (k, "same keys" if not (missing or extra) else
                            "missing %s, extra %s" % (sorted(missing), sorted(extra))))
        status |= bool(missing or extra)
    return status


if __name__ == "__main__":
    main()

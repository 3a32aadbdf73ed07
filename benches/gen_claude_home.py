#!/usr/bin/env python3
"""Generate a Claude Code home of many transcripts (deterministic: same arguments, same bytes).

    python3 benches/gen_claude_home.py OUT [--sessions 3000] [--seed 37]

OUT/projects/<project>/<session>.jsonl, in the shapes real builds write (CONFORMANCE.md, "Claude
Code"): every response streamed as one line per content block, each repeating the message's
usage (output growing to its final value on the last line); tool calls and results; 2.1.x
subagents in <session>/subagents/agent-*.jsonl whose messages the main file's `progress` lines
embed again, with usage; 2.0.x subagent files beside the sessions; 1.0.x resumes whose new file
starts with copies of the old lines (no requestId on the copies, as 1.0.30 writes them); and some
sessions of a backend behind ANTHROPIC_BASE_URL (no requestId, no cache fields, a first line of
zero usage). The truth of what was billed is written to OUT/truth.json: the generator's own count,
one entry per response it made.
"""

import argparse
import json
import os
import random
import uuid as uuidlib

MODELS = ["claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sessions", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=37)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    counter = [0]

    def uid():
        counter[0] += 1
        return str(uuidlib.UUID(int=rnd.getrandbits(128) | (counter[0] << 64), version=4))

    truth = {"requests": 0, "input": 0, "cache_creation": 0, "cache_read": 0, "output": 0, "daily": {}}

    def bill(day, u):
        truth["requests"] += 1
        d = truth["daily"].setdefault(day, {"requests": 0, "input": 0, "cache_creation": 0, "cache_read": 0, "output": 0})
        for t in (truth, d):
            t["input"] += u["input_tokens"]
            t["cache_creation"] += u["cache_creation_input_tokens"]
            t["cache_read"] += u["cache_read_input_tokens"]
            t["output"] += u["output_tokens"]
        d["requests"] += 1

    projects = [f"-home-dev-proj{p:02d}" for p in range(40)]
    base = 1_767_225_600  # 2026-01-01T00:00:00Z
    previous = {}  # project -> (session id, lines, end) of a 1.0.x-style session, for resumes
    for s in range(args.sessions):
        project = rnd.choice(projects)
        cwd = "/" + project[1:].replace("-", "/")
        session = uid()
        style = rnd.choices(["2.1", "2.0", "1.0", "proxy"], [55, 15, 20, 10])[0]
        version = {"2.1": "2.1.100", "2.0": "2.0.77", "1.0": "1.0.30", "proxy": "2.1.90"}[style]
        model = "glm-4.7" if style == "proxy" else rnd.choice(MODELS)
        now = base + rnd.randrange(0, 330 * 86400)
        lines = []
        common = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session, "version": version, "gitBranch": "main"}

        def ts():
            return __import__("datetime").datetime.fromtimestamp(now, __import__("datetime").timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{rnd.randrange(1000):03d}Z"

        # A resume of an earlier 1.0.x session of this project: its lines copied first.
        if style == "1.0" and project in previous and rnd.random() < 0.5:
            old_id, old_lines, old_end = previous.pop(project)
            # A resume comes after the session it resumes.
            now = max(now, old_end + rnd.randrange(60, 3 * 86400))
            for line in old_lines:
                copy = dict(line)
                copy["sessionId"] = session
                copy.pop("requestId", None)
                lines.append(copy)
        parent = lines[-1]["uuid"] if lines else None
        sub_files = []
        cache = 0
        for turn in range(rnd.randrange(2, 9)):
            u = {**common, "parentUuid": parent, "type": "user", "message": {"role": "user", "content": f"Prompt {turn} of session {s}: " + "x" * rnd.randrange(20, 400)}, "uuid": uid(), "timestamp": ts()}
            lines.append(u)
            parent = u["uuid"]
            for step in range(rnd.randrange(1, 6)):
                now += rnd.randrange(2, 400)
                msg_id = ("chatcmpl-" if style == "proxy" else "msg_01") + uid().replace("-", "")[:24]
                req_id = "req_011" + uid().replace("-", "")[:21]
                written = rnd.randrange(0, 3000)
                usage = {"input_tokens": rnd.randrange(1, 40), "cache_creation_input_tokens": written, "cache_read_input_tokens": cache, "output_tokens": 0}
                if style in ("2.1", "2.0"):
                    h1 = written if rnd.random() < 0.6 else 0
                    usage["cache_creation"] = {"ephemeral_5m_input_tokens": written - h1, "ephemeral_1h_input_tokens": h1}
                if style == "proxy":
                    usage = {"input_tokens": rnd.randrange(500, 20000), "output_tokens": 0}
                cache += written
                final_out = rnd.randrange(20, 2500)
                blocks = rnd.randrange(1, 4)
                calls = []
                if style == "proxy":
                    zero = {"input_tokens": 0, "output_tokens": 0}
                    a = {**common, "parentUuid": parent, "type": "assistant", "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [], "usage": zero}, "uuid": uid(), "timestamp": ts()}
                    lines.append(a)
                    parent = a["uuid"]
                for b in range(blocks):
                    last = b == blocks - 1
                    call = last and step < 4 and rnd.random() < 0.7
                    out = final_out if last else rnd.randrange(1, final_out + 1)
                    content = [{"type": "tool_use", "id": "toolu_" + uid()[:18], "name": "Bash", "input": {"command": "ls"}}] if call else [{"type": "text", "text": "y" * rnd.randrange(10, 300)}]
                    if call:
                        calls.append(content[0]["id"])
                    a = {**common, "parentUuid": parent, "type": "assistant", "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": content, "stop_reason": "tool_use" if call else None, "usage": {**usage, "output_tokens": out}}, "uuid": uid(), "timestamp": ts()}
                    if style != "proxy":
                        a["requestId"] = req_id
                    lines.append(a)
                    parent = a["uuid"]
                bill(ts()[:10], {**usage, "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0), "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0), "output_tokens": final_out})
                # A subagent now and then (2.x): its own file, embedded again by progress lines.
                if style in ("2.1", "2.0") and calls and rnd.random() < 0.15:
                    agent = uid().replace("-", "")[:17]
                    sub = []
                    sparent = None
                    sc = 0
                    for k in range(rnd.randrange(1, 4)):
                        su = {**common, "isSidechain": True, "agentId": agent, "parentUuid": sparent, "type": "user", "message": {"role": "user", "content": "Sub task"}, "uuid": uid(), "timestamp": ts()}
                        w = rnd.randrange(100, 2000)
                        suse = {"input_tokens": 3, "cache_creation_input_tokens": w, "cache_read_input_tokens": sc, "output_tokens": rnd.randrange(10, 500), "cache_creation": {"ephemeral_5m_input_tokens": w, "ephemeral_1h_input_tokens": 0}}
                        sc += w
                        sm = {"id": "msg_01" + uid().replace("-", "")[:24], "type": "message", "role": "assistant", "model": "claude-haiku-4-5-20251001", "content": [{"type": "text", "text": "done"}], "usage": suse}
                        sa = {**common, "isSidechain": True, "agentId": agent, "parentUuid": su["uuid"], "type": "assistant", "message": sm, "requestId": "req_011" + uid().replace("-", "")[:21], "uuid": uid(), "timestamp": ts()}
                        sparent = sa["uuid"]
                        sub += [su, sa]
                        bill(ts()[:10], suse)
                        if style == "2.1":
                            lines.append({**common, "parentUuid": parent, "type": "progress", "data": {"message": {"type": "assistant", "message": sm, "uuid": sa["uuid"], "timestamp": sa["timestamp"]}, "normalizedMessages": [], "type": "agent_progress", "prompt": "Sub task", "agentId": agent}, "toolUseID": "agent_msg_" + uid()[:12], "parentToolUseID": calls[0], "uuid": uid(), "timestamp": ts()})
                    sub_files.append((agent, sub))
                for call in calls:
                    r = {**common, "parentUuid": parent, "type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "file\n" * rnd.randrange(1, 50)}]}, "uuid": uid(), "timestamp": ts()}
                    lines.append(r)
                    parent = r["uuid"]
                if not calls:
                    break
            now += rnd.randrange(30, 3000)
        folder = os.path.join(args.out, "projects", project)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, session + ".jsonl"), "w") as f:
            for line in lines:
                f.write(json.dumps(line, separators=(",", ":")) + "\n")
        for agent, sub in sub_files:
            where = os.path.join(folder, session, "subagents") if style == "2.1" else folder
            os.makedirs(where, exist_ok=True)
            with open(os.path.join(where, f"agent-{agent}.jsonl"), "w") as f:
                for line in sub:
                    f.write(json.dumps(line, separators=(",", ":")) + "\n")
        if style == "1.0":
            previous[project] = (session, lines, now)
    truth["daily"] = dict(sorted(truth["daily"].items()))
    with open(os.path.join(args.out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generate a synthetic Claude Code transcript (2.1.100-style lines) for benchmarks: one prompt,
then N requests, each a Bash tool call whose result the next request sends.

    python3 benches/gen_transcript.py --steps 10000 -o /tmp/t.jsonl
"""

import argparse
import json
import random
import uuid

SESSION = "cc8e0a78-3dc8-410f-99f3-c591b2dcc36f"
WORDS = "handler retry parser module schema client config build test wiring endpoint".split()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-output", type=int, default=4000, help="largest tool result (bytes)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ids = (str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in iter(int, 1))
    base = {"isSidechain": False, "userType": "external", "entrypoint": "sdk-cli",
            "cwd": "/tmp/work", "sessionId": SESSION, "version": "2.1.100", "gitBranch": "main"}
    seconds = 0

    def stamp():
        return "2026-12-03T%02d:%02d:%02d.000Z" % (10 + seconds // 3600, seconds // 60 % 60, seconds % 60)

    with open(args.output, "w") as out:
        def line(value):
            out.write(json.dumps({**value, **base}, separators=(",", ":")) + "\n")

        parent = next(ids)
        line({"parentUuid": None, "type": "user", "uuid": parent, "timestamp": stamp(),
              "message": {"role": "user", "content": "Refactor the retry handler."}})
        prompt = 20000
        for k in range(1, args.steps + 1):
            seconds += rng.randint(2, 40)
            last = k == args.steps
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
            result = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, args.max_output // 7)))
            user = next(ids)
            seconds += 1
            line({"parentUuid": parent, "type": "user", "uuid": user, "timestamp": stamp(),
                  "message": {"role": "user", "content": [
                      {"tool_use_id": "toolu_%06d" % k, "type": "tool_result", "content": result,
                       "is_error": False}]},
                  "sourceToolAssistantUUID": parent})
            parent = user


if __name__ == "__main__":
    main()

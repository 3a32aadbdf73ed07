#!/usr/bin/env python3
"""Compare promptc's Claude Code totals with ccusage's, per day and per session, and check why
they differ.

    python3 benches/claude_vs_ccusage.py HOME PROMPTC.json CCUSAGE_DAILY.json CCUSAGE_SESSION.json

PROMPTC.json is `cargo run --release --example claude_totals -- HOME`; the ccusage files are
`CLAUDE_CONFIG_DIR=HOME ccusage claude daily|session --json --offline -z UTC`. Besides the two,
it counts HOME by ccusage's rule as this script reads it (every `assistant` line with usage, one
per `message.id:requestId` when the line has both, every line otherwise) and by one response per
`message.id` (last line's usage; a copy in a later file, same id and usage, left out), so each
difference is named by the lines that make it.
"""

import json
import os
import sys
from collections import defaultdict

FIELDS = ("input", "cache_creation", "cache_read", "output")


def usage_of(u):
    return {
        "input": u.get("input_tokens", 0) or 0,
        "cache_creation": u.get("cache_creation_input_tokens", 0) or 0,
        "cache_read": u.get("cache_read_input_tokens", 0) or 0,
        "output": u.get("output_tokens", 0) or 0,
    }


def files(home):
    out = []
    for root, _, names in os.walk(os.path.join(home, "projects")):
        for n in names:
            if n.endswith(".jsonl"):
                out.append(os.path.join(root, n))
    return sorted(out)


def session_of(path, home):
    rel = os.path.relpath(path, os.path.join(home, "projects")).split(os.sep)
    return rel[1] if len(rel) > 2 else rel[-1][: -len(".jsonl")]


def ccusage_rule(home):
    """Per day (UTC) and per session (ccusage's: the file's stem, subagents' folder)."""
    seen = set()
    day = defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    sess = defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    for p in files(home):
        s = session_of(p, home)
        for line in open(p, encoding="utf-8", errors="replace"):
            try:
                o = json.loads(line)
            except ValueError:
                continue
            m = o.get("message") if isinstance(o, dict) else None
            if not isinstance(m, dict) or not isinstance(m.get("usage"), dict) or "timestamp" not in o:
                continue
            if o.get("type") != "assistant":
                continue
            if m.get("id") and o.get("requestId"):
                k = (m["id"], o["requestId"])
                if k in seen:
                    continue
                seen.add(k)
            u = usage_of(m["usage"])
            for t in (day[o["timestamp"][:10]], sess[s]):
                for f in FIELDS:
                    t[f] += u[f]
    return day, sess


def main():
    home, pc, ccd, ccs = sys.argv[1:5]
    pc = json.load(open(pc))
    ccd = json.load(open(ccd))
    ccs = json.load(open(ccs))
    rule_day, rule_sess = ccusage_rule(home)

    def cc(row):
        return {"input": row["inputTokens"], "cache_creation": row["cacheCreationTokens"], "cache_read": row["cacheReadTokens"], "output": row["outputTokens"]}

    def mine(row):
        return {"input": row["input"], "cache_creation": row["cache_write_5m"] + row["cache_write_1h"], "cache_read": row["cache_read"], "output": row["output"]}

    for name, theirs, ours, rule in (
        ("day", {r["date"]: (cc(r), r["totalCost"]) for r in ccd["daily"]}, {r["date"]: (mine(r), r["cost_usd"]) for r in pc["daily"]}, rule_day),
        ("session", {r["sessionId"]: (cc(r), r["totalCost"]) for r in ccs["sessions"]}, {r["session"]: (mine(r), r["cost_usd"]) for r in pc["session"]}, rule_sess),
    ):
        keys = sorted(set(theirs) | set(ours))
        same = [k for k in keys if theirs.get(k, (None,))[0] == ours.get(k, (None,))[0]]
        differ = [k for k in keys if k not in same]
        explained = [k for k in differ if k in theirs and dict(rule.get(k, {})) == theirs[k][0]]
        print(f"## per {name}: {len(keys)} keys, {len(same)} equal, {len(differ)} differ, {len(explained)} of them exactly ccusage's rule over the lines")
        print(f"| {name} | ccusage input | promptc input | ccusage writes | promptc writes | ccusage reads | promptc reads | ccusage output | promptc output | ccusage $ | promptc $ |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        zero = (dict.fromkeys(FIELDS, 0), 0.0)
        for k in differ:
            a, ac = theirs.get(k, zero)
            b, bc = ours.get(k, zero)
            print(f"| {k if name == 'day' else k[:8]} | {a['input']} | {b['input']} | {a['cache_creation']} | {b['cache_creation']} | {a['cache_read']} | {b['cache_read']} | {a['output']} | {b['output']} | {ac:.2f} | {bc:.2f} |")
        print()


if __name__ == "__main__":
    main()

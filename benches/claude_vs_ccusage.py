#!/usr/bin/env python3
"""Compare promptc's Claude Code totals with ccusage's, per day and per session, and check why
they differ.

    python3 benches/claude_vs_ccusage.py HOME PROMPTC_DAY.json PROMPTC_SESSION.json \
        CCUSAGE_DAILY.json CCUSAGE_SESSION.json

The promptc files are `promptc report --agent claude --claude-home HOME --timezone UTC
--format json` (by day) and the same with `--by session`; the ccusage files are
`HOME=<empty> CLAUDE_CONFIG_DIR=HOME ccusage daily|session --json --offline -z UTC`. Besides the two,
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
    home, pday, psess, ccd, ccs = sys.argv[1:6]
    pday = json.load(open(pday))
    psess = json.load(open(psess))
    ccd = json.load(open(ccd))
    ccs = json.load(open(ccs))
    # `ccusage daily|session` (every agent) key their rows by `period` (and write `session`
    # rows); `ccusage claude daily|session` by `date` and `sessionId` (`sessions` rows).
    sessions = ccs.get("sessions") or ccs.get("session") or []
    for r in sessions:
        r.setdefault("sessionId", r.get("period"))
    for r in ccd["daily"]:
        r.setdefault("date", r.get("period"))
    rule_day, rule_sess = ccusage_rule(home)

    def cc(row):
        return {"input": row["inputTokens"], "cache_creation": row["cacheCreationTokens"], "cache_read": row["cacheReadTokens"], "output": row["outputTokens"]}

    def mine(row):
        return {"input": row["unwritten_input_tokens"], "cache_creation": row["cache_write_input_tokens"], "cache_read": row["cached_input_tokens"], "output": row["output_tokens"]}

    def session_key(key):
        # A session named by its file's path (no session id in its name): its stem, as ccusage.
        return os.path.basename(key)[: -len(".jsonl")] if key.endswith(".jsonl") else key

    for label, report in (("day", pday), ("session", psess)):
        t = report["total"]
        print(f"promptc by {label}: {t['requests']} requests, input {t['unwritten_input_tokens']}, writes {t['cache_write_input_tokens']} (5m {t['cache_write_5m_input_tokens']}, 1h {t['cache_write_1h_input_tokens']}), reads {t['cached_input_tokens']}, output {t['output_tokens']}, ${t['cost_usd']:.2f}, {t['unpriced_requests']} requests unpriced")
    for label, rows, key in (("daily", ccd["daily"], "date"), ("session", sessions, "sessionId")):
        tot = {f: sum(cc(r)[f] for r in rows) for f in FIELDS}
        print(f"ccusage {label}: input {tot['input']}, writes {tot['cache_creation']}, reads {tot['cache_read']}, output {tot['output']}, ${sum(r['totalCost'] for r in rows):.2f}")
    print()

    for name, theirs, ours, rule in (
        ("day", {r["date"]: (cc(r), r["totalCost"]) for r in ccd["daily"]}, {g["key"]: (mine(g), g["cost_usd"]) for g in pday["groups"]}, rule_day),
        ("session", {r["sessionId"]: (cc(r), r["totalCost"]) for r in sessions}, {session_key(g["key"]): (mine(g), g["cost_usd"]) for g in psess["groups"]}, rule_sess),
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

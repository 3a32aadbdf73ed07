#!/usr/bin/env python3
"""Compare promptc's compiled requests with the requests Codex really sent.

For each recorded case (tests/conformance/<version>/<scenario>/), list the steps
of every rollout with `promptc steps ROLLOUT --format json`, compile each with
`promptc compile ROLLOUT --turn T --step S --format json`, pair each step with a
captured request (same prompt_cache_key; same input_tokens as the step's observed
usage, else the next one in order) and print the first JSON paths where the two
bodies differ. With --captured, promptc also gets the captured request's tools
(--tools) and instructions (--instructions), so what is left is what promptc
itself rebuilds wrong.

    python3 conformance/compare.py [CASE_DIR ...] [--root tests/conformance]
        [--promptc target/debug/promptc] [--captured] [--paths 5] [--summary] [--json]

Exit status: 0 all paired requests equal, 1 differences, 2 errors.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MISSING = object()


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def load_blob(root: Path, h: str):
    return json.loads((root / "blobs" / f"{h}.json").read_bytes().decode("utf-8"))


def expand(value, root: Path):
    """Replace every {"$blob": sha} by the stored value (layout in CONFORMANCE.md)."""
    if isinstance(value, dict):
        if len(value) == 1 and "$blob" in value:
            return load_blob(root, value["$blob"])
        return {k: expand(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, root) for v in value]
    return value


def short(value, n: int = 70) -> str:
    if value is MISSING:
        return "(absent)"
    s = compact(value)
    return s if len(s) <= n else s[: n - 1] + "…"


def diff_paths(a, b, path: str = "$", out: list | None = None, limit: int = 1000) -> list:
    """Paths where a (promptc) and b (captured) differ, in document order.
    Key order counts: a body must match byte for byte, not only as a value."""
    if out is None:
        out = []
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in b:
            if k not in a:
                out.append((f"{path}.{k}", MISSING, b[k], "missing in promptc"))
        for k in a:
            if k not in b:
                out.append((f"{path}.{k}", a[k], MISSING, "extra in promptc"))
        for k in b:
            if k in a:
                diff_paths(a[k], b[k], f"{path}.{k}", out, limit)
        common_a = [k for k in a if k in b]
        common_b = [k for k in b if k in a]
        if common_a != common_b:
            out.append((path, common_a, common_b, "key order"))
        return out
    if path == "$.input" and isinstance(a, list) and isinstance(b, list):
        return diff_input(a, b, out, limit)
    if isinstance(a, list) and isinstance(b, list):
        for i in range(min(len(a), len(b))):
            diff_paths(a[i], b[i], f"{path}[{i}]", out, limit)
        if len(a) != len(b):
            out.append((f"{path}.length", len(a), len(b), "length"))
        return out
    if a != b or type(a) is not type(b):
        out.append((path, a, b, "value"))
    return out


def is_named(path: str, parts: set) -> bool:
    for part in parts:
        p = "$." + part
        if path == p or path.startswith(p + ".") or path.startswith(p + "["):
            return True
    return False


def item_key(item) -> tuple:
    if not isinstance(item, dict):
        return ("?", compact(item))
    return (item.get("type"), item.get("role"), item.get("call_id"), item.get("name"))


def diff_input(a: list, b: list, out: list, limit: int) -> list:
    """Align the input lists on (type, role, call_id, name) so one inserted item does not
    show as a difference in every later item. Paths name both indices: [P<promptc>/C<codex>]."""
    sm = difflib.SequenceMatcher(None, [item_key(x) for x in a], [item_key(x) for x in b], autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal" or op == "replace":
            n = min(i2 - i1, j2 - j1)
            for k in range(n):
                diff_paths(a[i1 + k], b[j1 + k], f"$.input[P{i1 + k}/C{j1 + k}]", out, limit)
            for k in range(i1 + n, i2):
                out.append((f"$.input[P{k}]", a[k], MISSING, "item extra in promptc"))
            for k in range(j1 + n, j2):
                out.append((f"$.input[C{k}]", MISSING, b[k], "item missing in promptc"))
        elif op == "delete":
            for k in range(i1, i2):
                out.append((f"$.input[P{k}]", a[k], MISSING, "item extra in promptc"))
        elif op == "insert":
            for k in range(j1, j2):
                out.append((f"$.input[C{k}]", MISSING, b[k], "item missing in promptc"))
    return out


def run_json(argv: list[str], env: dict) -> tuple[dict | None, str]:
    p = subprocess.run(argv, capture_output=True, env=env, timeout=120)
    if p.returncode not in (0, 1):
        return None, p.stderr.decode("utf-8", "replace").strip()
    try:
        return json.loads(p.stdout), p.stderr.decode("utf-8", "replace").strip()
    except ValueError as e:
        return None, f"bad JSON from promptc: {e}"


def rollouts_of(case: Path) -> list[Path]:
    return sorted((case / "home").rglob("rollout-*.jsonl")) if (case / "home").exists() else []


def is_compaction(req: dict) -> bool:
    if req.get("mock_saw_compaction"):
        return True
    meta = req.get("headers", {}).get("x-codex-turn-metadata")
    try:
        return json.loads(meta).get("request_kind") == "compaction" if meta else False
    except ValueError:
        return False


def pair(steps: list, reqs: list) -> list:
    """[(step, request or None)], and requests left unpaired are returned too."""
    pairs, j, used = [], 0, set()
    for st in steps:
        obs = st.get("observed_input_tokens")
        k = None
        if obs is not None:
            k = next((i for i in range(j, len(reqs)) if reqs[i]["usage"]["input_tokens"] == obs), None)
        if k is None and j < len(reqs):
            k = j
        if k is None:
            pairs.append((st, None))
            continue
        pairs.append((st, reqs[k]))
        used.add(k)
        j = k + 1
    left = [r for i, r in enumerate(reqs) if i not in used]
    return pairs, left


def compare_case(case: Path, root: Path, promptc: str, captured: bool, npaths: int) -> dict:
    result = {"case": str(case.relative_to(root)), "requests": 0, "results": [], "errors": []}
    case_json = json.loads((case / "case.json").read_text())
    if not case_json.get("available", True):
        result["note"] = case_json.get("note")
        return result
    reqs = []
    with (case / "requests.jsonl").open(encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            r["body"] = expand(r["body"], root)
            reqs.append(r)
    result["requests"] = len(reqs)
    env = dict(os.environ, CODEX_HOME=str(case / "home"))
    paired_ids = set()
    tmp = tempfile.TemporaryDirectory()
    for rollout in rollouts_of(case):
        steps_doc, err = run_json([promptc, "steps", str(rollout), "--format", "json", "--no-tokens"], env)
        if steps_doc is None:
            # --no-tokens drops observed tokens in some builds; retry without it.
            steps_doc, err = run_json([promptc, "steps", str(rollout), "--format", "json"], env)
        if steps_doc is None:
            result["errors"].append(f"{rollout.name}: promptc steps failed: {err}")
            continue
        if any(s.get("observed_input_tokens") is None for s in steps_doc["steps"]):
            full, _ = run_json([promptc, "steps", str(rollout), "--format", "json"], env)
            if full is not None:
                steps_doc = full
        sid = rollout.stem[-36:]
        mine = [r for r in reqs if r["body"].get("prompt_cache_key") == sid]
        pairs, _ = pair(steps_doc["steps"], mine)
        for st, req in pairs:
            label = f"{rollout.name[-16:-6]} turn {st['turn']} step {st['step']}"
            argv = [promptc, "compile", str(rollout), "--turn", str(st["turn"]), "--step", str(st["step"]), "--format", "json"]
            if captured and req is not None:
                body = req["body"]
                if "tools" in body:
                    tp = Path(tmp.name) / f"tools-{req['index']}.json"
                    tp.write_text(compact(body["tools"]))
                    argv += ["--tools", str(tp)]
                if isinstance(body.get("instructions"), str):
                    ip = Path(tmp.name) / f"instructions-{req['index']}.txt"
                    ip.write_text(body["instructions"])
                    argv += ["--instructions", str(ip)]
            doc, err = run_json(argv, env)
            entry = {"step": label, "request": None if req is None else req["index"]}
            if doc is None:
                entry["error"] = f"promptc compile failed: {err.splitlines()[-1] if err else '?'}"
                result["results"].append(entry)
                continue
            if req is None:
                entry["error"] = "no captured request for this step"
                result["results"].append(entry)
                continue
            paired_ids.add(req["index"])
            compiled = doc["request"]
            # Parts promptc says it cannot know: fingerprint.unknown and approximations.
            unknown = set((doc.get("fingerprint") or {}).get("unknown") or [])
            unknown |= {a.get("part") for a in doc.get("approximations") or [] if a.get("part")}
            diffs = diff_paths(compiled, req["body"])
            named = [d for d in diffs if is_named(d[0], unknown)]
            entry["exact"] = compact(compiled) == compact(req["body"])
            entry["unknown"] = sorted(unknown)
            entry["diffs"] = [
                {"path": p, "promptc": short(a), "codex": short(b), "kind": kind}
                for p, a, b, kind in diffs
            ]
            entry["only_named_unknowns"] = bool(diffs) and len(named) == len(diffs)
            entry["compaction_request"] = is_compaction(req)
            result["results"].append(entry)
    tmp.cleanup()
    for r in reqs:
        if r["index"] not in paired_ids:
            result["results"].append({
                "step": None, "request": r["index"],
                "error": "captured request matches no promptc step"
                + (" (a compaction request)" if is_compaction(r) else ""),
            })
    return result


def print_case(res: dict, npaths: int) -> None:
    if res.get("note"):
        print(f"{res['case']}: {res['note']}")
        return
    print(f"{res['case']}: {res['requests']} requests")
    for e in res["errors"]:
        print(f"  error: {e}")
    for e in res["results"]:
        head = f"  req {e['request']} <- {e['step']}"
        if "error" in e:
            print(f"{head}: {e['error']}")
            continue
        if e["exact"]:
            print(f"{head}: exact")
            continue
        tag = " (only named unknowns: " + ",".join(e["unknown"]) + ")" if e["only_named_unknowns"] else ""
        print(f"{head}: {len(e['diffs'])} differences{tag}")
        for d in e["diffs"][:npaths]:
            print(f"      {d['kind']:<18} {d['path']}: promptc {d['promptc']} | codex {d['codex']}")


def kind_of(path: str) -> str:
    """A coarse bucket for a differing path, for the summary: indices dropped."""
    return re.sub(r"\[[^\]]*\]", "[]", path)


def summary(results: list) -> None:
    counts = Counter()
    for res in results:
        for e in res["results"]:
            if "error" in e:
                counts["error: " + e["error"].split(":")[0]] += 1
                continue
            for d in e["diffs"]:
                counts[f"{d['kind']} {kind_of(d['path'])}"] += 1
    print("\ndifference kinds (count of differing paths over all paired requests):")
    for k, n in counts.most_common():
        print(f"  {n:5d}  {k}")


def table(results: list) -> None:
    print("\n| version | scenario | requests | paired | exact | only named unknowns | unpaired or errors |")
    print("|---|---|---|---|---|---|---|")
    for res in results:
        v, s = res["case"].split("/", 1)
        if res.get("note"):
            print(f"| {v} | {s} | 0 | - | - | - | n/a |")
            continue
        ok = [e for e in res["results"] if "error" not in e]
        print(f"| {v} | {s} | {res['requests']} | {len(ok)} | {sum(e['exact'] for e in ok)} | "
              f"{sum(e['only_named_unknowns'] for e in ok)} | {len(res['results']) - len(ok) + len(res['errors'])} |")


def vkey(case: Path):
    try:
        return tuple(int(x) for x in case.parent.name.split(".")), case.name
    except ValueError:
        return (9999,), case.name


def main() -> int:
    ap = argparse.ArgumentParser(description="Compare promptc's compiled requests with captured ones.")
    ap.add_argument("cases", nargs="*", help="case directories (default: every case under --root)")
    ap.add_argument("--root", default=str(REPO / "tests" / "conformance"))
    ap.add_argument("--promptc", default=str(REPO / "target" / "debug" / "promptc"))
    ap.add_argument("--captured", action="store_true", help="give promptc the captured tools and instructions")
    ap.add_argument("--paths", type=int, default=5, help="differing paths shown per request")
    ap.add_argument("--summary", action="store_true", help="also print difference kinds and a table")
    ap.add_argument("--json", action="store_true", help="print all results as JSON")
    a = ap.parse_args()
    root = Path(a.root).resolve()
    if not Path(a.promptc).exists():
        print(f"error: {a.promptc} not found; run `cargo build` first", file=sys.stderr)
        return 2
    cases = [Path(c).resolve() for c in a.cases] or sorted(
        (p.parent for p in root.glob("*/*/case.json")), key=vkey)
    results = [compare_case(c, root, a.promptc, a.captured, a.paths) for c in cases]
    if a.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
    else:
        for res in results:
            print_case(res, a.paths)
        if a.summary:
            summary(results)
            table(results)
    bad = any("error" in e or not e.get("exact") for r in results for e in r["results"]) or any(r["errors"] for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

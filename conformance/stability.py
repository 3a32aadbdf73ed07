#!/usr/bin/env python3
"""How stable is a recording? Compare two recordings of the same cases request by request.

    python3 conformance/record.py --out /tmp/again
    python3 conformance/stability.py tests/conformance /tmp/again

Ids (UUIDs), timestamps, wall times and exec chunk ids are replaced by placeholders
first; every other difference is printed (one example per kind) and counted.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import diff_paths, expand, kind_of, short  # noqa: E402

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NOISE = [
    (re.compile(r"Wall time: [0-9.]+ seconds"), "Wall time: T seconds"),
    (re.compile(r"after [0-9.]+s"), "after Ts"),
    (re.compile(r"Chunk ID: [0-9a-f]+"), "Chunk ID: C"),
    (re.compile(r'"duration_seconds":[0-9.]+'), '"duration_seconds":D'),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"), "TS"),
    (re.compile(r'"turn_started_at_unix_ms":\d+'), '"turn_started_at_unix_ms":N'),
]


def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, str):
        v = UUID.sub("UUID", v)
        for pat, rep in NOISE:
            v = pat.sub(rep, v)
    return v


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = Path(sys.argv[1]), Path(sys.argv[2])
    kinds, same, total = Counter(), 0, 0
    for f in sorted(a.glob("*/*/requests.jsonl")):
        case = f.parent.relative_to(a)
        g = b / case / "requests.jsonl"
        if not g.exists():
            print(f"{case}: missing in {b}")
            continue
        ra = [json.loads(line) for line in f.open(encoding="utf-8")]
        rb = [json.loads(line) for line in g.open(encoding="utf-8")]
        if len(ra) != len(rb):
            print(f"{case}: {len(ra)} requests, then {len(rb)}")
            continue
        for x, y in zip(ra, rb):
            total += 1
            diffs = diff_paths(norm(expand(x["body"], a)), norm(expand(y["body"], b)))
            same += not diffs
            for path, va, vb, kind in diffs:
                key = (str(case).split("/")[0], kind, kind_of(path))
                if not kinds[key]:
                    print(f"{case} req {x['index']}: {kind} {path}: {short(va)} | {short(vb)}")
                kinds[key] += 1
    print(f"{same} of {total} requests equal after normalizing ids, timestamps and timings")
    for (version, kind, path), n in sorted(kinds.items()):
        print(f"  {n:4d}  {version} {kind} {path}")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The floors of issue 24 in one run (BENCHMARKS.md, "Floors"): jq, the Python json.loads loop and
# promptc interleaved round by round (benches/ab.py; 10 rounds, 3 for 1 GB), then peak RSS
# (median of 5). Inputs in DIR: rollout-10MB/100MB/1GB.jsonl (made here with gen_rollout.py
# when missing, as run.sh makes them) and real.jsonl, the real samples concatenated (made from
# ../shared/codex-rollout-samples/real-corpus when it exists).
#
#   PROMPTC=target/release/promptc DIR=/dev/shm/promptc-bench benches/floors.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
promptc="${PROMPTC:-$here/../target/release/promptc}"
dir="${DIR:-/tmp/promptc-bench}"
mkdir -p "$dir"
python="$(python3 -c 'import sys; print(sys.executable)')"
loop="$(mktemp)"
trap 'rm -f "$loop"' EXIT
printf 'import json, sys\nwith open(sys.argv[1], "rb") as f:\n    for line in f:\n        json.loads(line)\n' >"$loop"
files=()
for size in 10MB 100MB 1GB; do
  [[ -f "$dir/rollout-$size.jsonl" ]] || python3 "$here/gen_rollout.py" --size "$size" -o "$dir/rollout-$size.jsonl"
  files+=("$dir/rollout-$size.jsonl")
done
corpus="$here/../../shared/codex-rollout-samples/real-corpus"
if [[ ! -f "$dir/real.jsonl" && -d "$corpus" ]]; then
  cat "$corpus"/*.jsonl >"$dir/real.jsonl"
fi
[[ -f "$dir/real.jsonl" ]] && files+=("$dir/real.jsonl")
echo "== $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $("$promptc" --version)"
for file in "${files[@]}"; do
  rounds=10
  [[ "$file" == *1GB* ]] && rounds=3
  echo "== $(basename "$file"), $rounds rounds"
  python3 "$here/ab.py" "$rounds" "exec jq -c . $file" "exec $python -S $loop $file" \
    "exec $promptc fingerprint $file" "exec $promptc steps --no-tokens $file" "exec $promptc steps $file"
done
echo "== peak RSS, median of 5: KiB, and KiB x 1024 / bytes"
for file in "${files[@]}"; do
  bytes="$(stat -c %s "$file")"
  for command in fingerprint "steps --no-tokens" steps; do
    # shellcheck disable=SC2086
    kib="$(for _ in 1 2 3 4 5; do { /usr/bin/time -f %M "$promptc" $command "$file" >/dev/null; } 2>&1 | tail -1; done | sort -n | sed -n 3p)"
    echo "$(basename "$file") | $command | $kib | $(python3 -c "print(round($kib * 1024 / $bytes, 3))")"
  done
done

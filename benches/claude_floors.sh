#!/usr/bin/env bash
# The floors of issue 24 on Claude Code transcripts in one run (BENCHMARKS.md, "Floors: Claude
# Code transcripts"): jq, the Python json.loads loop and `promptc steps` interleaved round by
# round (benches/ab.py, 10 rounds, 3 for 1 GB), then peak RSS (median of 5). Inputs in DIR, made
# here when missing: claude-real.jsonl, the real samples concatenated in `ls` order (a newline
# added after a file that lacks one), and benches/gen_transcript.py's 2.1.100-style and
# 2.1.3xx-style transcripts (replay records) of 10 MB, 100 MB and 1 GB (SIZES="10MB 100MB"
# leaves out the 1 GB files, 2 GB of disk and about five minutes).
#
#   PROMPTC=target/release/promptc DIR=/dev/shm/promptc-bench benches/claude_floors.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
promptc="${PROMPTC:-$here/../target/release/promptc}"
dir="${DIR:-/tmp/promptc-bench}"
rounds="${ROUNDS:-10}"
mkdir -p "$dir"
python="$(python3 -c 'import sys; print(sys.executable)')"
loop="$(mktemp)"
trap 'rm -f "$loop"' EXIT
printf 'import json, sys\nwith open(sys.argv[1], "rb") as f:\n    for line in f:\n        json.loads(line)\n' >"$loop"
files=()
samples="$here/../../shared/claude-code-samples"
if [[ ! -f "$dir/claude-real.jsonl" && -d "$samples" ]]; then
  python3 - "$samples" "$dir/claude-real.jsonl" <<'EOF'
import pathlib, sys
with open(sys.argv[2], "wb") as out:
    for path in sorted(pathlib.Path(sys.argv[1]).glob("*.jsonl")):
        data = path.read_bytes()
        out.write(data if data.endswith(b"\n") else data + b"\n")
EOF
fi
[[ -f "$dir/claude-real.jsonl" ]] && files+=("$dir/claude-real.jsonl")
for style in 2.1.100 2.1.332; do
  for size in ${SIZES:-10MB 100MB 1GB}; do
    # Named apart from the files an older generator made (tool results of plain words).
    file="$dir/transcript-$style-$size.jsonl"
    [[ -f "$file" ]] || python3 "$here/gen_transcript.py" --style "$style" --size "$size" -o "$file"
    files+=("$file")
  done
done
echo "== $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $("$promptc" --version)"
for file in "${files[@]}"; do
  file_rounds="$rounds"
  [[ "$file" == *1GB* ]] && file_rounds=3
  echo "== $(basename "$file") ($(stat -c %s "$file") bytes), $file_rounds rounds"
  python3 "$here/ab.py" "$file_rounds" "exec jq -c . $file" "exec $python -S $loop $file" \
    "exec $promptc steps $file"
done
echo "== peak RSS of steps, median of 5: KiB, and KiB x 1024 / bytes"
for file in "${files[@]}"; do
  bytes="$(stat -c %s "$file")"
  kib="$(for _ in 1 2 3 4 5; do { /usr/bin/time -f %M "$promptc" steps "$file" >/dev/null; } 2>&1 | tail -1; done | sort -n | sed -n 3p)"
  echo "$(basename "$file") | $kib | $(python3 -c "print(round($kib * 1024 / $bytes, 3))")"
done

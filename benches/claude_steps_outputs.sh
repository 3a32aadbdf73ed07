#!/usr/bin/env bash
# `steps` (text and JSON) of every real Claude Code sample and every recorded transcript, one
# file per input and format in OUT, to compare two builds byte for byte:
#
#   benches/claude_steps_outputs.sh /tmp/old-promptc /tmp/out-old
#   benches/claude_steps_outputs.sh target/release/promptc /tmp/out-new
#   diff -r /tmp/out-old /tmp/out-new && echo identical
#
# Each output file holds stdout, then stderr and the exit status, so a change of any is seen.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
promptc="$1"
out="$2"
samples="${SAMPLES:-$here/../../shared/claude-code-samples}"
mkdir -p "$out"
inputs=()
while IFS= read -r f; do inputs+=("$f"); done < <(
  { [[ -d "$samples" ]] && find "$samples" -name '*.jsonl'
    find "$here/../tests/conformance/claude" -path '*/home/*' -name '*.jsonl' -size +0; } | sort)
n=0
for f in "${inputs[@]}"; do
  name="$(echo "${f#"$here/../"}" | sed 's|.*/shared/||; s|/|__|g')"
  for format in text json; do
    {
      set +e
      "$promptc" steps --format "$format" --color never --width 100 "$f" 2>"$out/.stderr"
      status=$?
      set -e
      echo "-- stderr"
      cat "$out/.stderr"
      echo "-- exit $status"
    } >"$out/$name.$format"
  done
  n=$((n + 1))
done
rm -f "$out/.stderr"
echo "$n inputs, $((2 * n)) outputs in $out"

#!/usr/bin/env bash
# The outputs of every real Claude Code sample and every recorded transcript, one file per input
# and command in OUT, to compare two builds byte for byte: `steps` (text and JSON),
# `fingerprint` (JSON), `check`, `view --format html`, and `diff` of each input against the
# next one in the list (text).
#
#   benches/claude_steps_outputs.sh /tmp/old-promptc /tmp/out-old
#   benches/claude_steps_outputs.sh target/release/promptc /tmp/out-new
#   diff -r /tmp/out-old /tmp/out-new && echo identical
#
# Each output file holds stdout, then stderr and the exit status, so a change of any is seen.
# ONLY=steps skips the other commands (a quick run).
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
# One output: stdout, then stderr and the exit status.
capture() {
  local file="$1"
  shift
  {
    set +e
    "$@" 2>"$out/.stderr"
    status=$?
    set -e
    echo "-- stderr"
    # A panic names its thread's id, which changes from run to run.
    sed -E "s/thread '([^']*)' \([0-9]+\)/thread '\1'/" "$out/.stderr"
    echo "-- exit $status"
  } >"$file"
}
n=0
outputs=0
previous=""
for f in "${inputs[@]}"; do
  name="$(echo "${f#"$here/../"}" | sed 's|.*/shared/||; s|/|__|g')"
  common=(--color never --width 100)
  for format in text json; do
    capture "$out/$name.steps.$format" "$promptc" "${common[@]}" steps --format "$format" "$f"
    outputs=$((outputs + 1))
  done
  if [[ "${ONLY:-}" != steps ]]; then
    capture "$out/$name.fingerprint.json" "$promptc" "${common[@]}" fingerprint "$f"
    capture "$out/$name.check" "$promptc" "${common[@]}" check "$f"
    capture "$out/$name.view.html" "$promptc" "${common[@]}" view --format html "$f"
    outputs=$((outputs + 3))
    if [[ -n "$previous" ]]; then
      capture "$out/$name.diff" "$promptc" "${common[@]}" diff "$previous" "$f"
      outputs=$((outputs + 1))
    fi
  fi
  previous="$f"
  n=$((n + 1))
done
rm -f "$out/.stderr"
echo "$n inputs, $outputs outputs in $out"

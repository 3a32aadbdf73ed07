#!/usr/bin/env bash
# Seed the fuzz corpora from the repository's fixtures. Run from anywhere; idempotent.
#
#   fuzz/corpus/pipeline/  every fixtures/**/*.jsonl as it is, plus one "A 0xFF B" input per
#                          fixtures/diff/<case>/ pair (the pipeline target splits at the first
#                          0xFF byte, so these seeds drive the diff of two different rollouts)
#   fuzz/corpus/load/      every fixtures/**/*.jsonl as it is
#
# fuzz/corpus/ is git-ignored: it grows while fuzzing and is not committed. Regression inputs
# found by fuzzing are kept as fixtures/malformed/fuzz_*.jsonl, which this script seeds too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fixtures="$root/fixtures"
pipeline="$root/fuzz/corpus/pipeline"
load="$root/fuzz/corpus/load"
mkdir -p "$pipeline" "$load"

count=0
while IFS= read -r -d '' file; do
    # Name each seed after its path: fixtures/diff/fork/a.jsonl -> diff__fork__a.jsonl
    rel="${file#"$fixtures"/}"
    name="${rel//\//__}"
    cp "$file" "$pipeline/$name"
    cp "$file" "$load/$name"
    count=$((count + 1))
done < <(find "$fixtures" -type f -name '*.jsonl' -print0 | sort -z)

pairs=0
for dir in "$fixtures"/diff/*/; do
    case="$(basename "$dir")"
    if [[ -f "$dir/a.jsonl" && -f "$dir/b.jsonl" ]]; then
        { cat "$dir/a.jsonl"; printf '\xff'; cat "$dir/b.jsonl"; } > "$pipeline/pair__$case.jsonl"
        pairs=$((pairs + 1))
    fi
done

echo "seeded $count fixture files and $pairs diff pairs into $pipeline (and $count into $load)"

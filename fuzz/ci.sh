#!/usr/bin/env bash
# Build both fuzz targets with libFuzzer's coverage instrumentation on the stable toolchain (the
# flags cargo-fuzz passes, less its nightly-only ones), then fuzz each for a fixed time from the
# seed corpus (fuzz/seed.sh). The targets load and plan on 1 to 3 threads, chosen per input.
# `.ci/run` runs it; the same target bodies also run over the corpus in `cargo test`
# (tests/cli/fuzz_bodies.rs).
#
#   fuzz/ci.sh [SECONDS]    # seconds per target, 30 by default
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-30}"
host="$(rustc -vV | sed -n 's/^host: //p')"
target_dir="${CARGO_TARGET_DIR:-$root/fuzz/target}"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# With --target the flags reach the targets, not the build scripts (which have no libFuzzer).
# Not --locked: fuzz/Cargo.lock trails the main Cargo.lock whenever promptc's dependencies
# change, and cargo brings it up to date keeping every other pin.
cargo build --release --manifest-path "$root/fuzz/Cargo.toml" --target "$host" --bins \
  --target-dir "$target_dir"
"$root/fuzz/seed.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for target in pipeline load; do
  # A copy: libFuzzer adds what it finds to the corpus it is given.
  mkdir "$work/$target"
  mkdir -p "$root/fuzz/artifacts/$target"
  cp "$root/fuzz/corpus/$target/"* "$work/$target/"
  "$target_dir/$host/release/$target" "$work/$target" \
    -max_total_time="$seconds" -dict="$root/fuzz/rollout.dict" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$root/fuzz/artifacts/$target/"
  echo "fuzz $target: ${seconds}s without a crash"
done

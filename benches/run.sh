#!/usr/bin/env bash
# Whole-process benchmarks for promptc against plain baselines (cat, wc -l, jq, a Python loop).
#
# Usage: benches/run.sh
#
# Environment:
#   RUNS=5            timed runs per command (the median and the fastest are reported)
#   WARMUP=1          untimed runs before them (hyperfine only)
#   BIG=1             also generate and measure a 1 GB file
#   SIZES="10MB 100MB" file sizes to measure (BIG=1 appends 1GB)
#   BENCH_DIR=/tmp/promptc-bench   where the generated files and results go (outside the repo)
#                     (/dev/shm/... keeps them in memory where the host may take page cache back)
#   SEED=1            generator seed
#   PROMPTC=/path     use this promptc binary instead of building with `cargo build --release`
#   WAIT_QUIET=600    after the build, wait up to this many seconds for a quiet machine: 30 s in
#                     a row with no `rustc` and the CPUs at most 25 % busy
#   NO_INSTALL=1      never apt-get install hyperfine, jq or time
#   ONLY="cat promptc-view"  measure only these rows (names as in the table's first column)
#
# Output: a markdown report on stdout and in $BENCH_DIR/results-<date>.md, ready to paste into
# BENCHMARKS.md. Raw numbers are in $BENCH_DIR/results-<date>.tsv.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${RUNS:-5}"
WARMUP="${WARMUP:-1}"
BENCH_DIR="${BENCH_DIR:-/tmp/promptc-bench}"
SEED="${SEED:-1}"
SIZES="${SIZES:-10MB 100MB}"
if [[ "${BIG:-0}" == 1 ]]; then SIZES="$SIZES 1GB"; fi
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
TSV="$BENCH_DIR/results-$STAMP.tsv"
REPORT="$BENCH_DIR/results-$STAMP.md"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/promptc-bench-run.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

log() { printf '%s\n' "$*" >&2; }
q() { printf '%q' "$1"; }

mkdir -p "$BENCH_DIR"
case "$(cd "$BENCH_DIR" && pwd)/" in
  "$REPO"/*) log "BENCH_DIR must be outside the repository"; exit 2 ;;
esac

# --- tools --------------------------------------------------------------------------------------
apt_updated=0
ensure_tool() { # ensure_tool COMMAND PACKAGE
  if command -v "$1" >/dev/null 2>&1 || [[ -x "$1" ]]; then return 0; fi
  if [[ "${NO_INSTALL:-0}" == 1 ]] || ! command -v apt-get >/dev/null 2>&1 || [[ "$(id -u)" != 0 ]]; then
    return 1
  fi
  if [[ $apt_updated == 0 ]]; then
    log "apt-get update"
    apt-get update -qq >/dev/null 2>&1 || true
    apt_updated=1
  fi
  log "apt-get install $2"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1 || return 1
  command -v "$1" >/dev/null 2>&1 || [[ -x "$1" ]]
}
HAVE_HYPERFINE=0; ensure_tool hyperfine hyperfine && HAVE_HYPERFINE=1
HAVE_JQ=0; ensure_tool jq jq && HAVE_JQ=1
HAVE_TIME=0; ensure_tool /usr/bin/time time && HAVE_TIME=1
command -v python3 >/dev/null || { log "python3 is required"; exit 2; }
# The interpreter itself, not a wrapper such as a pyenv shim (which adds ~0.2 s a start).
PYTHON="$(python3 -c 'import sys; print(sys.executable)')"
[[ $HAVE_HYPERFINE == 1 ]] || log "hyperfine not found: using a Python timing loop"
[[ $HAVE_TIME == 1 ]] || log "/usr/bin/time not found: no peak RSS"

# --- build --------------------------------------------------------------------------------------
if [[ -z "${PROMPTC:-}" ]]; then
  log "cargo build --release"
  (cd "$REPO" && cargo build --release --quiet --bin promptc)
  target_dir="$(cd "$REPO" && cargo metadata --no-deps --format-version 1 \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
  PROMPTC="$target_dir/release/promptc"
fi
[[ -x "$PROMPTC" ]] || { log "no promptc binary at $PROMPTC"; exit 2; }

# --- wait for a quiet machine -------------------------------------------------------------------
# Quiet: no rustc, and the CPUs were at most 25 % busy over the last 2 s, for 30 s in a row.
cpu_busy_pct() { # over the next 2 seconds, from /proc/stat
  local a b
  read -r -a a </proc/stat; sleep 2; read -r -a b </proc/stat
  local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
  echo $(( total > 0 ? 100 * (total - idle) / total : 0 ))
}
if [[ -n "${WAIT_QUIET:-}" ]]; then
  log "waiting up to ${WAIT_QUIET}s for a quiet machine"
  deadline=$((SECONDS + WAIT_QUIET)); quiet_since=$SECONDS; quiet=0
  while (( SECONDS < deadline )); do
    if pgrep -x rustc >/dev/null || (( $(cpu_busy_pct) > 25 )); then quiet_since=$SECONDS; fi
    if (( SECONDS - quiet_since >= 30 )); then quiet=1; break; fi
  done
  (( quiet )) || log "machine still busy after ${WAIT_QUIET}s; measuring anyway"
fi

# Which subcommands (and flags) this build has.
COMMANDS="$("$PROMPTC" help 2>/dev/null | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{exit}')"
has_command() { grep -qx "$1" <<<"$COMMANDS"; }
has_flag() { "$PROMPTC" "$1" --help 2>/dev/null | grep -q -- "$2"; }

# --- input files --------------------------------------------------------------------------------
GEN="$REPO/benches/gen_rollout.py"
gen_hash="$(sha256sum "$GEN" | cut -c1-16)"
for size in $SIZES; do
  file="$BENCH_DIR/rollout-$size.jsonl"
  want="$gen_hash seed=$SEED size=$size"
  if [[ -f "$file" && -f "$file.mutated" && "$(cat "$file.stamp" 2>/dev/null)" == "$want" ]]; then
    continue
  fi
  log "generating $file"
  python3 "$GEN" --size "$size" --seed "$SEED" --mutate-near-end -o "$file"
  printf '%s\n' "$want" >"$file.stamp"
done

# --- measuring ----------------------------------------------------------------------------------
PYLOOP='import json, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)'
printf '%s\n' "$PYLOOP" >"$WORK/pyloop.py"

# One row per (name, command template); FILE and MUTATED are substituted; "needs" is what the
# binary must have for the row to run.
ROWS=(
  "cat|cat FILE > /dev/null|"
  "wc-l|wc -l FILE > /dev/null|"
  "jq|jq -c . FILE > /dev/null|tool:jq"
  "python|$(q "$PYTHON") -S $WORK/pyloop.py FILE|"
  "promptc-view|PROMPTC view --format json FILE > /dev/null|cmd:view"
  "promptc-steps-no-tokens|PROMPTC steps FILE --no-tokens > /dev/null|cmd:steps flag:steps:--no-tokens"
  "promptc-steps|PROMPTC steps FILE > /dev/null|cmd:steps"
  "promptc-fingerprint|PROMPTC fingerprint FILE > /dev/null|cmd:fingerprint"
  "promptc-diff|PROMPTC diff FILE MUTATED > /dev/null|cmd:diff exit:1"
  "promptc-diff-no-tokens|PROMPTC diff FILE MUTATED --no-tokens > /dev/null|cmd:diff flag:diff:--no-tokens exit:1"
)

available() { # available NEEDS -> 0 if all needs are met
  local need
  for need in $1; do
    case "$need" in
      tool:jq) [[ $HAVE_JQ == 1 ]] || return 1 ;;
      cmd:*) has_command "${need#cmd:}" || return 1 ;;
      flag:*) local rest="${need#flag:}"; has_flag "${rest%%:*}" "${rest#*:}" || return 1 ;;
      exit:*) ;;
    esac
  done
}

max_exit() { # the highest exit status a row accepts (diff: 1 = differences found)
  local need
  for need in $1; do [[ "$need" == exit:* ]] && { echo "${need#exit:}"; return; }; done
  echo 0
}

time_loop() { # time_loop COMMAND -> "median mean stddev min max" via a Python loop
  python3 - "$RUNS" "$1" <<'EOF'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2]
times = []
for _ in range(runs):
    start = time.perf_counter()
    subprocess.run(["bash", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - start)
sd = statistics.stdev(times) if len(times) > 1 else 0.0
print(statistics.median(times), statistics.mean(times), sd, min(times), max(times))
EOF
}

printf 'name\tsize\tbytes\tmedian_s\tmean_s\tstddev_s\tmin_s\tmax_s\trss_kb\tstatus\n' >"$TSV"
busy_start="$( (pgrep -x rustc || true) | wc -l)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

for size in $SIZES; do
  file="$BENCH_DIR/rollout-$size.jsonl"
  bytes="$(stat -c %s "$file")"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r name template needs <<<"$row"
    if [[ -n "${ONLY:-}" && " $ONLY " != *" $name "* ]]; then continue; fi
    if ! available "$needs"; then
      printf '%s\t%s\t%s\t\t\t\t\t\t\tn/a\n' "$name" "$size" "$bytes" >>"$TSV"
      log "$size $name: n/a"
      continue
    fi
    cmd="${template//PROMPTC/$(q "$PROMPTC")}"
    cmd="${cmd//MUTATED/$(q "$file.mutated")}"
    cmd="${cmd//FILE/$(q "$file")}"
    allowed="$(max_exit "$needs")"

    # One run under /usr/bin/time -v: checks the exit status, warms the page cache, gives peak RSS.
    rss_kb=""
    set +e
    if [[ $HAVE_TIME == 1 ]]; then
      /usr/bin/time -v -o "$WORK/time.txt" bash -c "$cmd" 2>"$WORK/stderr.txt"
      status=$?
      rss_kb="$(awk -F': ' '/Maximum resident set size/{print $2}' "$WORK/time.txt")"
    else
      bash -c "$cmd" 2>"$WORK/stderr.txt"
      status=$?
    fi
    set -e
    if (( status > allowed )); then
      printf '%s\t%s\t%s\t\t\t\t\t\t%s\terror %s\n' "$name" "$size" "$bytes" "$rss_kb" "$status" >>"$TSV"
      log "$size $name: exit $status: $(head -c 300 "$WORK/stderr.txt")"
      continue
    fi

    if [[ $HAVE_HYPERFINE == 1 ]]; then
      hyperfine --runs "$RUNS" --warmup "$WARMUP" --ignore-failure --style none \
        --export-json "$WORK/h.json" "$cmd" >/dev/null 2>&1
      stats="$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
print(r["median"], r["mean"], r["stddev"] or 0, r["min"], r["max"])' "$WORK/h.json")"
    else
      stats="$(time_loop "$cmd")"
    fi
    read -r median mean sd tmin tmax <<<"$stats"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\tok\n' \
      "$name" "$size" "$bytes" "$median" "$mean" "$sd" "$tmin" "$tmax" "$rss_kb" >>"$TSV"
    log "$(printf '%s %s: median %.3fs, peak RSS %s kB' "$size" "$name" "$median" "${rss_kb:-?}")"
  done
done

busy_end="$( (pgrep -x rustc || true) | wc -l)"
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"
timer="hyperfine $(hyperfine --version 2>/dev/null | cut -d' ' -f2)"
[[ $HAVE_HYPERFINE == 1 ]] || timer="python timing loop"

python3 - "$TSV" "$RUNS" "$timer" "$busy_start" "$busy_end" "$load_start" "$load_end" "$PROMPTC" \
  >"$REPORT" <<'EOF'
import csv, os, platform, subprocess, sys
tsv, runs, timer, busy_start, busy_end, load_start, load_end, promptc = sys.argv[1:]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))

def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"

def mem_gib():
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    return "?"

def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except Exception:
        return "?"

def fmt_ratio(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 1 else f"{x:.2g}"

def fmt_time(t):
    return f"{t:.3f}" if t >= 1 else f"{t:.4f}"

def num(x):
    return float(x) if x not in ("", None) else None

by = {(r["name"], r["size"]): r for r in rows}
sizes = list(dict.fromkeys(r["size"] for r in rows))
names = list(dict.fromkeys(r["name"] for r in rows))

print(f"- machine: {os.cpu_count()} CPUs, {cpu_model()}, {mem_gib()} RAM, {platform.system()} {platform.release()}")
print(f"- tools: {timer}; {version(['jq', '--version'])}; Python {platform.python_version()}; {version(['cat', '--version'])}")
print(f"- promptc: {version([promptc, '--version'])} ({promptc})")
print(f"- runs: median (and fastest) of {runs}; files in page cache (a checked run under /usr/bin/time -v comes first)")
print("- python: `python3 -S` (no site import) reading the file in binary and calling json.loads per line")
print(f"- load average at start {load_start}, at end {load_end}; rustc processes at start {busy_start}, at end {busy_end}")
print()
print("| command | file | median s | min s | MB/s | × cat | × jq | × python | peak RSS MB | RSS / file |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for size in sizes:
    base = {b: num(by.get((b, size), {}).get("median_s")) for b in ("cat", "jq", "python")}
    for name in names:
        r = by.get((name, size))
        if r is None:
            continue
        mb = int(r["bytes"]) / 1e6
        t = num(r["median_s"])
        rss = num(r["rss_kb"])
        label = name
        if t is None:
            status = r["status"]
            rss_txt = f"{rss / 1024:.0f}" if rss else ""
            print(f"| {label} | {size} | {status} | | | | | | {rss_txt} | |")
            continue
        ratio = lambda b: fmt_ratio(t / base[b]) if base.get(b) else ""
        rss_txt = f"{rss / 1024:.1f}" if rss is not None else ""
        rss_ratio = f"{rss * 1024 / int(r['bytes']):.2f}" if rss is not None else ""
        print(f"| {label} | {size} | {fmt_time(t)} | {fmt_time(num(r['min_s']))} | {mb / t:.0f} | {ratio('cat')} | {ratio('jq')} | "
              f"{ratio('python')} | {rss_txt} | {rss_ratio} |")

print()
if len(sizes) > 1:
    pairs = list(zip(sizes, sizes[1:]))
    print("Time per MB between file sizes (slope of median time; constant = linear scaling):")
    print()
    print("| command | " + " | ".join(f"ms/MB {a}→{b}" for a, b in pairs) + " | ms/MB overall |")
    print("|---|" + "---:|" * (len(pairs) + 1))
    for name in names:
        cells = []
        for a, b in pairs:
            ra, rb = by.get((name, a)), by.get((name, b))
            ta, tb = (num(ra["median_s"]) if ra else None), (num(rb["median_s"]) if rb else None)
            if ta is None or tb is None:
                cells.append("n/a")
                continue
            dmb = (int(rb["bytes"]) - int(ra["bytes"])) / 1e6
            cells.append(f"{(tb - ta) * 1000 / dmb:.2f}")
        overall = []
        for s in sizes:
            r = by.get((name, s))
            if r and num(r["median_s"]) is not None:
                overall.append(num(r["median_s"]) * 1000 / (int(r["bytes"]) / 1e6))
        ov = f"{overall[-1]:.2f}" if overall else "n/a"
        print(f"| {name} | " + " | ".join(cells) + f" | {ov} |")
    print()
    print("\"ms/MB overall\" is the largest file's median divided by its size.")
EOF

cat "$REPORT"
log "report: $REPORT"
log "raw:    $TSV"

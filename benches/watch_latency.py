#!/usr/bin/env python3
"""CPU time `promptc watch` spends per appended line, against the session's size (Linux).

Writes all of ROLLOUT but its last TAIL lines (default 40) to a temporary file, starts
`promptc watch FILE --format json --interval 10`, waits until it is idle, then appends the
remaining lines one at a time; after each, waits until the process is idle again and records
the CPU time (utime + stime from /proc, in clock ticks of 10 ms) it took. Lines are grouped by
whether they can bring an event (and so load the new lines: `token_count`, turn boundaries,
`compacted`, `thread_rolled_back`; Claude Code: a response's line, a compaction boundary) or not. Idle polling (a stat every 10 ms) is in both.

    benches/watch_latency.py target/release/promptc /tmp/s10000.jsonl
"""
import os, subprocess, sys, tempfile, time

# Codex's lines that bring an event, then Claude Code's (a response's line, a compaction's).
TRIGGERS = [b"token_count", b"_started", b"_complete", b"turn_aborted", b"compacted",
            b"thread_rolled_back", b'"assistant"', b"compact_boundary"]
TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def settle(pid: int) -> float:
    """CPU seconds at the moment the process has used under 20 ms in the last 300 ms."""
    last = cpu(pid)
    while True:
        time.sleep(0.3)
        now = cpu(pid)
        if now - last < 0.02:
            return now
        last = now


def main() -> int:
    exe, source = sys.argv[1], sys.argv[2]
    tail = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    lines = open(source, "rb").read().splitlines(keepends=True)
    head, rest = lines[:-tail], lines[-tail:]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rollout.jsonl")
        with open(path, "wb") as f:
            f.writelines(head)
        proc = subprocess.Popen([exe, "watch", path, "--format", "json", "--interval", "10"],
                                stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        before = settle(proc.pid)
        spent = {True: [], False: []}
        with open(path, "ab") as f:
            for line in rest:
                f.write(line)
                f.flush()
                after = settle(proc.pid)
                spent[any(t in line for t in TRIGGERS)].append(after - before)
                before = after
        proc.send_signal(2)
        proc.wait()
    size = os.path.getsize(source) / 1e6
    for trigger, times in spent.items():
        if times:
            times.sort()
            kind = "event lines" if trigger else "other lines"
            # The clock ticks every 10 ms: the mean tells what the median rounds away.
            print(f"{size:.0f} MB, {len(lines)} lines, {kind} ({len(times)}): CPU per line median "
                  f"{times[len(times) // 2] * 1000:.0f} ms, mean "
                  f"{sum(times) / len(times) * 1000:.1f} ms, max {times[-1] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`promptc report` against `promptc sessions` on generated Codex homes (BENCHMARKS.md, "`report`
over many rollouts").

Usage: benches/report_vs_sessions.py [--make] RUNS HOME...

--make first builds the homes under /dev/shm (outside the repository): home5k (5 000 hard links
to `gen_rollout.py --steps 6 --seed 3` under Codex file names in dated folders), home1250 and
home2500 (its first files), home5kx4 (5 000 links to `--steps 24 --seed 3`). Each round runs the
three commands in alternating order; medians and minimums are printed. PROMPTC=/path picks the
binary (default: target/release/promptc).
"""
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPTC = os.environ.get("PROMPTC", os.path.join(REPO, "target/release/promptc"))


def make_home(home, rollout, count):
    for i in range(count):
        day = 1 + i % 28
        folder = f"{home}/sessions/2026/01/{day:02d}"
        os.makedirs(folder, exist_ok=True)
        name = f"rollout-2026-01-{day:02d}T10-{(i // 60) % 60:02d}-{i % 60:02d}-019b8e10-0000-7000-8000-{i:012x}.jsonl"
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            os.link(rollout, path)


def make():
    gen = os.path.join(REPO, "benches/gen_rollout.py")
    for steps in (6, 24):
        out = f"/dev/shm/r{steps}.jsonl"
        subprocess.run([sys.executable, gen, "--steps", str(steps), "--seed", "3", "-o", out, "-q"], check=True)
    make_home("/dev/shm/home5k", "/dev/shm/r6.jsonl", 5000)
    make_home("/dev/shm/home1250", "/dev/shm/r6.jsonl", 1250)
    make_home("/dev/shm/home2500", "/dev/shm/r6.jsonl", 2500)
    make_home("/dev/shm/home5kx4", "/dev/shm/r24.jsonl", 5000)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--make":
        make()
        args = args[1:]
    runs, homes = int(args[0]), args[1:]
    for home in homes:
        commands = [
            [PROMPTC, "sessions", "--codex-home", home],
            [PROMPTC, "report", "--codex-home", home, "--timezone", "UTC"],
            [PROMPTC, "report", "--codex-home", home, "--timezone", "UTC", "--format", "json"],
        ]
        times = [[] for _ in commands]
        for command in commands:
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        for round_ in range(runs):
            order = range(len(commands)) if round_ % 2 == 0 else reversed(range(len(commands)))
            for i in order:
                start = time.perf_counter()
                subprocess.run(commands[i], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                times[i].append(time.perf_counter() - start)
        median = [statistics.median(t) for t in times]
        fastest = [min(t) for t in times]
        print(
            f"{home}: median {' '.join(f'{m:.3f}' for m in median)} s, "
            f"fastest {' '.join(f'{m:.3f}' for m in fastest)} s "
            f"(sessions, report, report --format json); report/sessions {median[1] / median[0]:.2f}"
        )


if __name__ == "__main__":
    main()

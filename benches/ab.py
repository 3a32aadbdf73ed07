#!/usr/bin/env python3
"""Interleaved timing of whole commands, for comparing two builds on a noisy machine.

Usage: benches/ab.py RUNS 'command A' 'command B' [...]

Each round runs every command once, in turn (the order reversed every other round), so a
drift of the machine's speed over minutes hits all of them alike; run.sh times each command
in a block of its own, and this VM's speed drifts by 10-20 % from one block to the next.
Prints each command's median and fastest time and the median of its per-round ratio to the
first command. Commands run through the shell with output discarded; prefix them with `exec`
to leave out the shell's own start. One untimed run of each comes first.
"""
import os
import statistics
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs, commands = int(sys.argv[1]), sys.argv[2:]
    times = [[] for _ in commands]
    with open(os.devnull, "wb") as null:
        for command in commands:
            subprocess.run(command, shell=True, stdout=null, stderr=null)
        for round_ in range(runs):
            order = range(len(commands)) if round_ % 2 == 0 else reversed(range(len(commands)))
            for k in order:
                start = time.perf_counter()
                subprocess.run(commands[k], shell=True, stdout=null, stderr=null)
                times[k].append(time.perf_counter() - start)
    for k, command in enumerate(commands):
        ratio = statistics.median(a / b for a, b in zip(times[k], times[0]))
        print(
            f"{statistics.median(times[k]) * 1000:9.1f} ms median {min(times[k]) * 1000:9.1f} ms min"
            f"  {ratio:.4g}x the first  {command}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End to end: `promptc watch` follows a real Codex session live, against the mock server.

Runs Codex (0.171.0 from the recorder's cache, see CONFORMANCE.md) in a throwaway CODEX_HOME:
`exec` with a shell call that sleeps (so the session is still running while watch reads it),
then `exec resume` with `--sandbox read-only` (the tools depend on the sandbox: an unexpected
drift, `prefix_broken_context`; a model switch would not do, 0.171 compacts before it). `promptc
watch latest --codex-home HOME --next --format json` runs from the moment the first rollout
appears until both runs are over, then gets Ctrl-C. Checked: it exits 0, its step rows are
`promptc steps` rows on the final file, a row arrived while Codex was still running, and the
sandbox change is reported as an unexpected drift. Skipped (exit 0, with a message) when Codex is
not installed. `cargo test` runs it (tests/cli/watch.rs); `.ci/run` installs Codex for it.

    python3 conformance/watch_live.py [--promptc target/release/promptc] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import record  # noqa: E402
from mock_server import MockServer  # noqa: E402

VERSION = "0.171.0"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--promptc", default=str(record.REPO / "target" / "debug" / "promptc"))
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "promptc-conformance"))
    args = ap.parse_args()
    exe = Path(args.cache) / f"codex-{VERSION}" / "node_modules" / ".bin" / "codex"
    if not exe.exists():
        print(f"skipped: Codex {VERSION} is not installed at {exe} "
              f"(conformance/record.py --versions {VERSION} installs it)")
        return 0
    model, _ = record.models_for(VERSION)
    # A folder of its own, not the recorder's fixed one (whose paths the recorded cases hold):
    # two test runs at once, from two work trees, would share and clear it.
    root = Path(tempfile.mkdtemp(prefix="promptc-watch-live-"))
    try:
        record.ROOT, record.HOME = root, root / "home"
        record.WORK, record.TMP = root / "work", root / "tmp"
        for d in (record.HOME, record.WORK, record.TMP):
            d.mkdir(parents=True)
        return watch_live(args, exe, model)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def watch_live(args: argparse.Namespace, exe: Path, model: str) -> int:
    script = {"responses": [
        record.run("sleep 3 && echo alpha"), record.say("Printed alpha."), record.say("Beta."),
    ]}
    watch_out: list[tuple[float, str]] = []
    running = {"codex": True}
    with MockServer(script) as mock:
        record.write_config(model, mock.port, {})
        base = [str(exe), "exec", "--skip-git-repo-check", "--sandbox"]

        def codex() -> None:
            log: dict = {}
            record.run_codex(base + ["danger-full-access", "Print alpha."], None, log)
            first = record.rollouts()
            session = record.session_id(first[0]) if first else None
            if session:
                record.run_codex(base + ["read-only", "resume", session, "Print beta."], None, log)
            running["codex"] = False

        thread = threading.Thread(target=codex)
        thread.start()
        deadline = time.time() + 60
        while not record.rollouts() and time.time() < deadline:
            time.sleep(0.05)
        if not record.rollouts():
            print("FAIL: Codex wrote no rollout")
            return 1
        watch = subprocess.Popen(
            [args.promptc, "watch", "latest", "--codex-home", str(record.HOME), "--next",
             "--format", "json", "--interval", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def read() -> None:
            for line in watch.stdout:
                watch_out.append((running["codex"], line.decode()))

        reader = threading.Thread(target=read)
        reader.start()
        thread.join()
        time.sleep(1.0)
        watch.send_signal(signal.SIGINT)
        code = watch.wait(timeout=30)
        reader.join()
        stderr = watch.stderr.read().decode()
    events = [(live, json.loads(line)) for live, line in watch_out]
    for _, e in events:
        print(json.dumps({k: v for k, v in e.items() if k != "row"})
              + (f"  row: {e['row']['turn']}.{e['row']['step']} {e['row']['verdict']}"
                 if "row" in e else ""))
    failures = []
    if code != 0:
        failures.append(f"watch exited {code}: {stderr}")
    rollout = record.rollouts()[-1]
    steps = json.loads(subprocess.run([args.promptc, "steps", str(rollout), "--format", "json"],
                                      capture_output=True, check=True).stdout)["steps"]
    last = max((i for i, (_, e) in enumerate(events) if e["event"] in ("restart", "watching")),
               default=0)
    rows = [e["row"] for _, e in events[last:] if e["event"] == "step"]
    if rows != steps:
        failures.append(f"watch rows differ from steps: {len(rows)} rows, {len(steps)} steps")
    if not any(live and e["event"] == "step" for live, e in events):
        failures.append("no row arrived while Codex was running")
    if not any(e["event"] == "drift" and not e["expected"] for _, e in events):
        failures.append("the sandbox change was not reported as an unexpected drift")
    for f in failures:
        print(f"FAIL: {f}")
    if not failures:
        print(f"ok: Codex {VERSION}, {len(rows)} rows live, equal to `steps` on {rollout.name}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

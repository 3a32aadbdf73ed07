#!/usr/bin/env python3
"""Record what real Codex CLI versions send, against a local mock server.

For each pinned version: install @openai/codex@VERSION with npm into a cache
outside the repository (reused if present), then run every scenario in a
throwaway CODEX_HOME and work dir at fixed paths, and write the case under
tests/conformance/<version>/<scenario>/. See CONFORMANCE.md.

    python3 conformance/record.py [--versions 0.58.0,0.171.0] [--scenarios resume,fork]
                                  [--out tests/conformance] [--cache DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mock_server import MockServer, compact  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VERSIONS = ["0.58.0", "0.77.0", "0.104.0", "0.122.0", "0.141.0", "0.152.1", "0.162.1", "0.171.0"]

# Fixed paths so nothing recorded needs rewriting: cwd and CODEX_HOME appear in
# rollouts and requests. TMPDIR is set inside ROOT so newer versions do not treat
# CODEX_HOME as "under a temporary dir" (they then refuse to create PATH helpers).
ROOT = Path("/tmp/promptc-conformance")
HOME = ROOT / "home"
WORK = ROOT / "work"
TMP = ROOT / "tmp"

RUN_TIMEOUT = 120
BLOB_MIN = 2048


def vtuple(v: str) -> tuple:
    return tuple(int(x) for x in v.split("-")[0].split("."))


def models_for(version: str) -> tuple[str, str]:
    """(main model, another slug the same catalog knows) for a version."""
    v = vtuple(version)
    if v < (0, 104, 0):
        return "gpt-5.1-codex", "gpt-5.1-codex-mini"
    if v < (0, 152, 0):
        return "gpt-5.3-codex", "gpt-5.2"
    return "gpt-5.5", "gpt-5.6-sol"


def model_switch_to(slug: str) -> dict:
    """`model_switch_<slug>`: the model_switch scenario, resumed with `slug` instead of the
    other slug of models_for (to record models the suite has not seen; CONFORMANCE.md)."""
    spec = json.loads(json.dumps(SCENARIOS["model_switch"]))
    spec["about"] = f"resume with -m {slug} (the resumed turn answers with a message only)"
    spec["runs"][1]["model"] = slug
    return spec


def has_fork(version: str) -> bool:
    return vtuple(version) >= (0, 152, 0)


PATCH_ADD = """*** Begin Patch
*** Update File: hello.txt
@@
-hello
+hello, world
*** End Patch"""

def say(text: str) -> list:
    return [{"message": text}]


def run(cmd: str) -> list:
    return [{"shell": cmd}]


def scenario(about: str, runs: list, responses: list, **extra) -> dict:
    """A scenario: `runs` (exec / resume / fork), the mock's `responses` in order, and extras:
    `files` (written to cwd first), `config` (added to config.toml), `min_version`,
    `compaction_summary`."""
    script = {"responses": responses}
    if "compaction_summary" in extra:
        script["compaction_summary"] = extra.pop("compaction_summary")
    return {"about": about, "runs": runs, "script": script, **extra}


def ex(prompt: str, **kw) -> dict:
    return {"kind": "exec", "prompt": prompt, **kw}


def resume(prompt: str, **kw) -> dict:
    return {"kind": "resume", "prompt": prompt, **kw}


# Sessions started with an older build and resumed with a newer one (its own default model),
# recorded under <old version>/upgrade_to_<new version>/.
UPGRADES = [("0.58.0", "0.171.0"), ("0.58.0", "0.104.0"), ("0.104.0", "0.171.0"), ("0.141.0", "0.171.0")]

UPGRADE = scenario(
    "a run with a shell call in the old build, then `exec resume <id>` with the new build and "
    "its default model (as after upgrading Codex)",
    [ex("Print old."), resume("Print new.", upgrade=True)],
    [run("echo old"), say("Printed old."), run("echo new"), say("Printed new.")],
)


def interrupt_scenario(about: str, sig: str) -> dict:
    """A long shell call that is stopped with `sig` once it runs, then a resume."""
    return scenario(
        about,
        [ex("Wait for a minute.", interrupt="started.marker", signal=sig), resume("Never mind, just say hi.")],
        [run("touch started.marker; sleep 60"), say("Hi.")],
    )


# Run fields: kind, prompt, sandbox, model ("alt" = the other slug of models_for),
# before (files to write before the run), interrupt (marker file: signal once it exists), signal,
# args (more exec options, before the subcommand).
SCENARIOS: dict[str, dict] = {
    "tool_calls": scenario(
        "one shell call, then a message",
        [ex("List the files in the current directory.")],
        [run("ls -a"), say("The directory holds notes.txt.")],
        files={"notes.txt": "a note\n"},
    ),
    "parallel_calls": scenario(
        "two shell calls in one response, then a message",
        [ex("Print one and two.")],
        [[{"shell": "echo one"}, {"shell": "echo two"}], say("Printed one and two.")],
    ),
    "resume": scenario(
        "a run with a shell call, then `exec resume <id>` with a new prompt",
        [ex("Print first."), resume("Now print second.")],
        [run("echo first"), say("Printed first."), run("echo second"), say("Printed second.")],
    ),
    "model_switch": scenario(
        "resume with another model slug of the same catalog (the resumed turn answers with a message only: "
        "the other model may offer other tools)",
        [ex("Print alpha."), resume("Print beta.", model="alt")],
        [run("echo alpha"), say("Printed alpha."), say("Beta.")],
    ),
    "agents_md_edit": scenario(
        "AGENTS.md in cwd; it is edited between the run and the resume",
        [
            ex("Check the project."),
            resume("Check it again.", before={
                "AGENTS.md": "# Project rules\n\nAlways run `echo verify` before answering.\nAnswer in one line.\n"}),
        ],
        [run("echo check"), say("Checked."), run("echo verify"), say("Verified.")],
        files={"AGENTS.md": "# Project rules\n\nAlways run `echo check` before answering.\n"},
    ),
    "sandbox_change": scenario(
        "run with danger-full-access, resume with read-only, then with workspace-write",
        [
            ex("Print one.", sandbox="danger-full-access"),
            resume("Print two.", sandbox="read-only"),
            resume("Print three.", sandbox="workspace-write"),
        ],
        [run("echo one"), say("One."), say("Two."), say("Three.")],
    ),
    "fork": scenario(
        "run, then `exec fork <id>` with a new prompt (0.152+), then resume the parent",
        [ex("Print root."), {"kind": "fork", "prompt": "In the fork, print branch."}, resume("In the parent, print trunk.")],
        [run("echo root"), say("Printed root."), run("echo branch"), say("Printed branch."), say("Trunk.")],
        min_version="0.152.0",
    ),
    "interrupted_call": interrupt_scenario(
        "a shell call running `sleep 60`; SIGINT to codex while it runs; then resume", "SIGINT"),
    "killed_call": interrupt_scenario(
        "a shell call running `sleep 60`; SIGKILL to the whole codex process group while it runs, so "
        "the call may stay unanswered in the rollout; then resume", "SIGKILL"),
    "auto_compaction": scenario(
        "model_auto_compact_token_limit = 50000 and a reported usage of 200000 input tokens after the "
        "first response, so Codex compacts mid-turn; then resume",
        [ex("Print big."), resume("Print small.")],
        [
            {"items": [{"shell": "echo big"}], "usage": {"input_tokens": 200000, "cached_tokens": 0}},
            say("Printed big."), run("echo small"), say("Printed small."),
        ],
        config={"model_auto_compact_token_limit": 50000},
        compaction_summary="Summary so far: the user asked to print big; `echo big` ran.",
    ),
    "effort_change": scenario(
        "resume with `-c model_reasoning_effort=\"high\"` (and `model_reasoning_summary=\"detailed\"`)",
        [
            ex("Print low."),
            resume("Print high.", args=["-c", 'model_reasoning_effort="high"', "-c", 'model_reasoning_summary="detailed"']),
        ],
        [run("echo low"), say("Printed low."), say("High.")],
    ),
    "output_schema": scenario(
        "`codex exec --output-schema schema.json`: the final answer must follow a JSON schema",
        [ex("Report the file count as JSON.", args=["--output-schema", "schema.json"])],
        [run("ls | wc -l"), say('{"files":1}')],
        files={"schema.json": json.dumps({
            "type": "object",
            "properties": {"files": {"type": "integer"}},
            "required": ["files"],
            "additionalProperties": False,
        }) + "\n"},
    ),
    "apply_patch": scenario(
        "an apply_patch call (freeform custom tool where offered, else function or shell), then a message",
        [ex("Change hello to hello, world in hello.txt.")],
        [[{"patch": PATCH_ADD}], say("Patched hello.txt.")],
        files={"hello.txt": "hello\n"},
    ),
    "reasoning": scenario(
        "reasoning items with encrypted content and summaries across steps and a resume",
        [ex("Think, then print r1."), resume("Think again, then answer.")],
        [
            [{"reasoning": {"summary": "**Planning**\n\nI will print r1.", "encrypted": "step one"}}, {"shell": "echo r1"}],
            [{"reasoning": {"summary": "**Done**", "encrypted": "step two"}}, {"message": "Printed r1."}],
            [{"reasoning": {"summary": "", "encrypted": "step three"}}, {"message": "Answer."}],
        ],
    ),
}


def install(version: str, cache: Path) -> Path:
    d = cache / f"codex-{version}"
    exe = d / "node_modules" / ".bin" / "codex"
    if exe.exists():
        return exe
    d.mkdir(parents=True, exist_ok=True)
    (d / "package.json").write_text('{"private":true}\n')
    print(f"installing @openai/codex@{version} into {d}", file=sys.stderr)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", f"@openai/codex@{version}"],
        cwd=d, check=True, timeout=1800,
    )
    return exe


def codex_env() -> dict:
    env = {
        "HOME": str(ROOT),
        "CODEX_HOME": str(HOME),
        "TMPDIR": str(TMP),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "SHELL": "/bin/bash",
        "USER": os.environ.get("USER", "root"),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
        "NO_COLOR": "1",
        # Anything not for 127.0.0.1 goes to a dead proxy: no traffic leaves the machine.
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
        "no_proxy": "127.0.0.1,localhost",
        "OTEL_SDK_DISABLED": "true",
        "CODEX_DISABLE_UPDATE_CHECK": "1",
    }
    return env


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(v)


def write_config(model: str, port: int, extra: dict) -> str:
    lines = [
        f"model = {toml_value(model)}",
        'model_provider = "mock"',
        "check_for_update_on_startup = false",
    ]
    for k, v in extra.items():
        lines.append(f"{k} = {toml_value(v)}")
    lines += [
        "",
        "[model_providers.mock]",
        'name = "mock"',
        "base_url = \"http://127.0.0.1:PORT/v1\"",
        'wire_api = "responses"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "",
        "[analytics]",
        "enabled = false",
        "",
    ]
    text = "\n".join(lines)
    (HOME / "config.toml").write_text(text.replace("PORT", str(port)))
    return text


def rollouts() -> list[Path]:
    out = []
    for sub in ("sessions", "archived_sessions"):
        base = HOME / sub
        if base.exists():
            out += sorted(base.rglob("rollout-*.jsonl"))
    return out


def session_id(path: Path) -> str:
    with path.open(encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            if obj.get("type") == "session_meta":
                return obj["payload"]["id"]
    # Era A: first line is the bare meta.
    with path.open(encoding="utf-8") as f:
        return json.loads(f.readline())["id"]


def children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            out.append(int(p.name))
    return out


def run_codex(argv: list[str], interrupt: str | None, log: dict, sig: str = "SIGINT") -> None:
    proc = subprocess.Popen(
        argv, cwd=WORK, env=codex_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        if interrupt:
            marker = WORK / interrupt
            deadline = time.time() + 60
            while not marker.exists() and time.time() < deadline and proc.poll() is None:
                time.sleep(0.1)
            log["interrupt_marker_seen"] = marker.exists()
            time.sleep(1.0)
            # SIGINT to the Node launcher only; it forwards the signal to the native
            # binary. The whole group would also stop `sleep` and answer the call.
            if proc.poll() is None and sig == "SIGKILL":
                # No chance to clean up: what a crash or `kill -9` leaves behind.
                os.killpg(proc.pid, signal.SIGKILL)
                log["sigkill"] = True
            elif proc.poll() is None:
                os.kill(proc.pid, signal.SIGINT)
                log["sigint"] = True
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        log["timed_out"] = True
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # Leftover children (e.g. `sleep 60` after an interrupt) die with the group.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    log["exit_code"] = proc.returncode
    log["stderr_tail"] = err.decode("utf-8", "replace").splitlines()[-15:]
    log["stdout_tail"] = out.decode("utf-8", "replace").splitlines()[-5:]


class Blobs:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def put(self, value) -> dict:
        data = compact(value).encode("utf-8")
        h = hashlib.sha256(data).hexdigest()
        p = self.root / f"{h}.json"
        if not p.exists():
            p.write_bytes(data)
        return {"$blob": h}

    def expand(self, value):
        if isinstance(value, dict):
            if len(value) == 1 and "$blob" in value:
                return json.loads((self.root / f"{value['$blob']}.json").read_bytes().decode("utf-8"))
            return {k: self.expand(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        return value


def big(value) -> bool:
    """Blob-worthy: the value's compact JSON is longer than BLOB_MIN bytes."""
    return len(compact(value).encode("utf-8")) > BLOB_MIN


def shrink(body: dict, blobs: Blobs) -> dict:
    """Replace large repeated values by blob references (layout in CONFORMANCE.md)."""
    out = dict(body)
    if isinstance(out.get("instructions"), str) and big(out["instructions"]):
        out["instructions"] = blobs.put(out["instructions"])
    if isinstance(out.get("tools"), list) and big(out["tools"]):
        out["tools"] = blobs.put(out["tools"])
    new_input = []
    for item in out.get("input") or []:
        if (
            isinstance(item, dict)
            and item.get("type") == "message"
            and item.get("role") == "developer"
            and isinstance(item.get("content"), list)
        ):
            item = dict(item)
            parts = []
            for part in item["content"]:
                if isinstance(part, dict) and isinstance(part.get("text"), str) and big(part["text"]):
                    part = dict(part)
                    part["text"] = blobs.put(part["text"])
                parts.append(part)
            item["content"] = parts
        elif isinstance(item, dict) and item.get("type") == "additional_tools" and big(item.get("tools")):
            item = dict(item)
            item["tools"] = blobs.put(item["tools"])
        new_input.append(item)
    if "input" in out:
        out["input"] = new_input
    return out


def placeholder_cmd(argv: list[str], exe: Path) -> list[str]:
    return ["codex" if a == str(exe) else a for a in argv]


def record_case(version: str, exe: Path, name: str, spec: dict, out_root: Path, blobs: Blobs,
                upgrade: tuple[str, Path] | None = None) -> dict:
    """Run one scenario with `exe` and write its case. Runs marked `upgrade` use the
    second build of `upgrade` (version, exe) in the same home, with its own model."""
    model, alt = models_for(version)
    case_dir = out_root / version / name
    if case_dir.exists():
        shutil.rmtree(case_dir)
    case_dir.mkdir(parents=True)
    case = {
        "version": version,
        "scenario": name,
        "about": spec["about"],
        "model": model,
        "paths": {"ROOT": str(ROOT), "HOME": str(ROOT), "CODEX_HOME": str(HOME), "cwd": str(WORK), "TMPDIR": str(TMP)},
        "env": {k: v for k, v in codex_env().items()},
        "script": spec["script"],
        "files": spec.get("files", {}),
    }
    if upgrade:
        case["upgrade_version"] = upgrade[0]
        case["upgrade_model"] = models_for(upgrade[0])[0]
    if spec.get("min_version") and vtuple(version) < vtuple(spec["min_version"]):
        case["available"] = False
        case["note"] = f"`codex exec {spec['runs'][1]['kind']}` is not available before {spec['min_version']}; no requests recorded"
        case["requests"] = 0
        (case_dir / "case.json").write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n")
        return case
    case["available"] = True

    if ROOT.exists():
        shutil.rmtree(ROOT)
    for d in (HOME, WORK, TMP):
        d.mkdir(parents=True)
    for fname, text in spec.get("files", {}).items():
        (WORK / fname).write_text(text)

    runs_log = []
    with MockServer(spec["script"]) as mock:
        case["config_toml"] = write_config(model, mock.port, spec.get("config", {}))
        parent_id = None
        for i, run in enumerate(spec["runs"]):
            for fname, text in (run.get("before") or {}).items():
                (WORK / fname).write_text(text)
            run_model = alt if run.get("model") == "alt" else run.get("model")
            run_exe = exe
            if run.get("upgrade"):
                run_exe = upgrade[1]
                run_model = models_for(upgrade[0])[0]
            argv = [str(run_exe), "exec", "--skip-git-repo-check", "--sandbox", run.get("sandbox", "danger-full-access")]
            if run_model:
                argv += ["-m", run_model]
            argv += run.get("args", [])
            if run["kind"] == "exec":
                argv += [run["prompt"]]
            else:
                argv += [run["kind"], parent_id, run["prompt"]]
            before = set(rollouts())
            n_before = len(mock.state.records)
            log = {"run": i, "kind": run["kind"], "command": placeholder_cmd(argv, exe)}
            if run.get("upgrade"):
                log["version"] = upgrade[0]
                log["command"][0] = f"codex@{upgrade[0]}"
            if run.get("before"):
                log["files_written_before"] = run["before"]
            if run_model:
                log["model"] = run_model
            run_codex(argv, run.get("interrupt"), log, run.get("signal", "SIGINT"))
            log["requests"] = [r["index"] for r in mock.state.records[n_before:]]
            new = [p for p in rollouts() if p not in before]
            log["new_rollouts"] = [str(p.relative_to(HOME)) for p in new]
            if i == 0:
                if not new:
                    log["error"] = "no rollout written"
                    runs_log.append(log)
                    break
                parent_id = session_id(new[0])
                case["session_id"] = parent_id
            runs_log.append(log)
            print(f"  {version} {name} run {i} ({run['kind']}): exit {log['exit_code']}, "
                  f"{len(log['requests'])} requests", file=sys.stderr)
        records = list(mock.state.records)
        other = list(mock.state.other)
    case["runs"] = runs_log
    case["other_requests"] = other

    # Rollouts, exactly as written, keeping their path below CODEX_HOME.
    for p in rollouts():
        dst = case_dir / "home" / p.relative_to(HOME)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dst)
    case["rollouts"] = [str(p.relative_to(HOME)) for p in rollouts()]

    exact = True
    with (case_dir / "requests.jsonl").open("w", encoding="utf-8") as f:
        for r in records:
            body = json.loads(r["raw"])
            if compact(body) != r["raw"]:
                exact = False
            small = shrink(body, blobs)
            # The documented rebuild (expand blobs, serialize compactly) must give the raw bytes.
            if compact(blobs.expand(small)) != r["raw"]:
                exact = False
            line = {
                "index": r["index"],
                "path": r["path"],
                "headers": r["headers"],
                "body": small,
                "usage": r["usage"],
            }
            if r["compaction"]:
                line["mock_saw_compaction"] = True
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    case["requests"] = len(records)
    # True when every body, rebuilt from requests.jsonl and the blobs, equals the raw bytes sent.
    case["bodies_roundtrip_exact"] = exact
    (case_dir / "case.json").write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n")
    return case


def prune_blobs(out_root: Path) -> None:
    """Delete blobs no requests.jsonl refers to any more (left by re-recorded cases)."""
    used = set()
    for f in out_root.glob("*/*/requests.jsonl"):
        used.update(re.findall(r'"\$blob":"([0-9a-f]{64})"', f.read_text(encoding="utf-8")))
    for b in (out_root / "blobs").glob("*.json"):
        if b.stem not in used:
            b.unlink()
            print(f"removed unused blob {b.name}", file=sys.stderr)


def print_table(out_root: Path) -> None:
    """Markdown table for CONFORMANCE.md: requests per case; the last three columns are filled by hand."""
    print("| version | scenario | model | requests | exact | exact with captured tools | named unknowns |")
    print("|---|---|---|---|---|---|---|")
    versions = sorted({p.parent.parent.name for p in out_root.glob("*/*/case.json")}, key=vtuple)
    for v in versions:
        upgrades = sorted((p.name for p in (out_root / v).glob("upgrade_to_*")), key=lambda n: vtuple(n[11:]))
        switches = sorted(p.name for p in (out_root / v).glob("model_switch_*"))
        for name in list(SCENARIOS) + upgrades + switches:
            f = out_root / v / name / "case.json"
            if not f.exists():
                continue
            c = json.loads(f.read_text())
            if not c.get("available"):
                n = "n/a"
            else:
                comp = 0
                with (out_root / v / name / "requests.jsonl").open(encoding="utf-8") as fh:
                    comp = sum(1 for line in fh if json.loads(line).get("mock_saw_compaction"))
                n = f"{c['requests']}" + (f" ({comp} compaction)" if comp else "")
            model = c["model"] + (f" → {c['upgrade_model']}" if c.get("upgrade_model") else "")
            print(f"| {v} | {name} | {model} | {n} | | | |")


def main() -> int:
    ap = argparse.ArgumentParser(description="Record Codex CLI requests against a mock server.")
    ap.add_argument("--versions", default=",".join(VERSIONS))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out", default=str(REPO / "tests" / "conformance"))
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "promptc-conformance"))
    ap.add_argument("--upgrades", default=",".join(f"{a}:{b}" for a, b in UPGRADES),
                    help="OLD:NEW pairs for upgrade_to_NEW cases ('' for none); only OLD in --versions")
    ap.add_argument("--table", action="store_true", help="print the version x scenario table of recorded cases and stop")
    ap.add_argument("--install", action="store_true", help="install --versions into --cache and stop")
    a = ap.parse_args()
    if a.install:
        for version in [v for v in a.versions.split(",") if v]:
            print(install(version, Path(a.cache)))
        return 0
    out_root = Path(a.out)
    if a.table:
        print_table(out_root)
        return 0
    blobs = Blobs(out_root / "blobs")
    failures = 0
    for version in [v for v in a.versions.split(",") if v]:
        exe = install(version, Path(a.cache))
        for name in [s for s in a.scenarios.split(",") if s]:
            if name.startswith("model_switch_"):
                spec = model_switch_to(name.removeprefix("model_switch_"))
            elif name in SCENARIOS:
                spec = SCENARIOS[name]
            else:
                print(f"unknown scenario {name}", file=sys.stderr)
                return 2
            try:
                case = record_case(version, exe, name, spec, out_root, blobs)
            finally:
                if ROOT.exists():
                    shutil.rmtree(ROOT, ignore_errors=True)
            print(f"{version} {name}: {case['requests']} requests", file=sys.stderr)
            if case.get("available") and case["requests"] == 0:
                failures += 1
    versions = [v for v in a.versions.split(",") if v]
    for pair in [p for p in a.upgrades.split(",") if p]:
        old, new = pair.split(":")
        if old not in versions:
            continue
        name = f"upgrade_to_{new}"
        try:
            case = record_case(old, install(old, Path(a.cache)), name, UPGRADE, out_root, blobs,
                               (new, install(new, Path(a.cache))))
        finally:
            if ROOT.exists():
                shutil.rmtree(ROOT, ignore_errors=True)
        print(f"{old} {name}: {case['requests']} requests", file=sys.stderr)
        failures += case["requests"] == 0
    prune_blobs(out_root)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

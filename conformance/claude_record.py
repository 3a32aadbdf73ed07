#!/usr/bin/env python3
"""Record what real Claude Code builds send, for promptc's conformance suite.

Python 3.11 standard library only; run as root (it creates and switches to an unprivileged
user: Claude Code refuses --dangerously-skip-permissions as root). Each pinned version of
@anthropic-ai/claude-code is installed from npm into ~/.cache/promptc-conformance/claude-VERSION
(outside the repository) and run through every scenario against conformance/claude_mock.py in a
throwaway HOME. Cases go to tests/conformance/claude/<version>/<scenario>/ (CONFORMANCE.md,
"Claude Code").

    python3 conformance/claude_record.py                          # every version, every scenario
    python3 conformance/claude_record.py --versions 2.1.332 --scenarios resume,compact
    python3 conformance/claude_record.py --table                  # the CONFORMANCE.md table
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from claude_mock import ClaudeMock, compact, LOOKBACK_BLOCKS, MIN_CACHEABLE, TTL_SECONDS  # noqa: E402
# The Codex recorder's blob store, its size rule and its pruning: one layout for both agents.
from record import Blobs, big, prune_blobs  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VERSIONS = ["1.0.30", "1.0.128", "2.0.77", "2.1.100", "2.1.332"]
USER = "promptc-rec"
ROOT = Path("/tmp/promptc-claude")
HOME = ROOT
WORK = ROOT / "work"
PROJECT = HOME / ".claude" / "projects" / "-tmp-promptc-claude-work"
RUN_TIMEOUT = 120

CLAUDE_MD = "# Project notes\n\nAnswer in one short sentence.\n"
CLAUDE_MD_EDITED = "# Project notes\n\nAnswer in one short sentence.\nPrefer `echo` over `printf`.\n"


def vtuple(v: str) -> tuple:
    return tuple(int(x) for x in v.split("."))


def new(prompt: str, **kw) -> dict:
    return {"kind": "new", "prompt": prompt, **kw}


def resume(prompt: str, **kw) -> dict:
    return {"kind": "resume", "prompt": prompt, **kw}


def bash(cmd: str) -> dict:
    return {"bash": cmd}


def text(t: str) -> dict:
    return {"text": t}


SCENARIOS = {
    "tool_call": {
        "about": "one Bash call (`ls -a`), then a message",
        "runs": [new("List the files here.")],
        "responses": [[bash("ls -a")], [text("Listed.")]],
    },
    "parallel_calls": {
        "about": "two Bash calls in one response, then a message",
        "runs": [new("Print one and two.")],
        "responses": [[bash("echo one"), bash("echo two")], [text("Printed both.")]],
    },
    "thinking": {
        "about": "thinking blocks (with signatures) before a call and before the answer; MAX_THINKING_TOKENS=4096",
        "runs": [new("Think, then print a word.", env={"MAX_THINKING_TOKENS": "4096"})],
        "responses": [
            [{"thinking": "The user wants a word printed; echo will do.", "signature": "c2lnLW9uZQ=="}, bash("echo word")],
            [{"thinking": "It printed. Say so.", "signature": "c2lnLXR3bw=="}, text("Printed a word.")],
        ],
    },
    "resume": {
        "about": "a run with a Bash call; `--resume <id>` with a new prompt and another call",
        "runs": [new("Print first."), resume("Now print second.")],
        "responses": [[bash("echo first")], [text("Printed first.")], [bash("echo second")], [text("Printed second.")]],
    },
    "continue": {
        "about": "a run with a Bash call; `--continue` with a new prompt and another call",
        "runs": [new("Print first."), {"kind": "continue", "prompt": "Now print second."}],
        "responses": [[bash("echo first")], [text("Printed first.")], [bash("echo second")], [text("Printed second.")]],
    },
    "model_switch": {
        "about": "a run with `--model sonnet`; `--resume <id> --model opus` (aliases: each build's own models)",
        "runs": [new("Print first.", model="sonnet"), resume("Now print second.", model="opus")],
        "responses": [[bash("echo first")], [text("Printed first.")], [bash("echo second")], [text("Printed second.")]],
    },
    "claude_md_edit": {
        "about": "CLAUDE.md committed in the git work tree; edited (uncommitted) between the run and the resume",
        "files": {"CLAUDE.md": CLAUDE_MD},
        "runs": [new("Print first."), resume("Now print second.", files={"CLAUDE.md": CLAUDE_MD_EDITED})],
        "responses": [[bash("echo first")], [text("Printed first.")], [bash("echo second")], [text("Printed second.")]],
    },
    "compact": {
        "about": "a run with a Bash call; `-p /compact --resume <id>`; a resume with a new prompt",
        "runs": [new("Print first."), resume("/compact"), resume("Now print second.")],
        "responses": [[bash("echo first")], [text("Printed first.")], [bash("echo second")], [text("Printed second.")]],
    },
    "auto_compaction": {
        "about": "the first response reports 995 000 input tokens, so Claude Code compacts on its own; then a resume",
        "runs": [new("Print first."), resume("Now print second.")],
        "responses": [
            {"blocks": [bash("echo first")], "usage": {"input_tokens": 995000}},
            [text("Printed first.")],
            [bash("echo second")],
            [text("Printed second.")],
        ],
    },
    "interrupted_call": {
        "about": "a Bash call `touch started.marker; sleep 60`; SIGINT to the CLI one second after the marker appears; then a resume",
        "runs": [new("Wait a minute.", interrupt="started.marker"), resume("Never mind; print done.")],
        "responses": [[bash("touch started.marker; sleep 60")], [bash("echo done")], [text("Printed done.")]],
    },
    "subagent": {
        "about": "the Task (Agent) tool starts a subagent that makes a Bash call; the main thread answers after it",
        "runs": [new("Ask a subagent to print sub.")],
        "responses": [
            [{"task": {"description": "Print sub", "prompt": "Run `echo sub` and report what it printed."}}],
            [text("The subagent printed sub.")],
        ],
        "subagent": [[bash("echo sub")], [text("It printed sub.")]],
    },
    "fork_session": {
        "about": "a run; `--resume <id> --fork-session` with a new prompt (a new session id, the history copied)",
        "runs": [new("Print first."), resume("Now print second.", fork=True)],
        "responses": [[bash("echo first")], [text("Printed first.")], [bash("echo second")], [text("Printed second.")]],
    },
}


def install(version: str, cache: Path) -> list[str]:
    d = cache / f"claude-{version}"
    native = d / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
    script = d / "node_modules" / "@anthropic-ai" / "claude-code" / "cli.js"
    if not native.exists() and not script.exists():
        d.mkdir(parents=True, exist_ok=True)
        print(f"installing @anthropic-ai/claude-code@{version} into {d}", file=sys.stderr)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(d),
                        f"@anthropic-ai/claude-code@{version}"], check=True, timeout=1800)
    # The unprivileged user must reach the installation: every folder above it needs o+x.
    for p in [d, *d.parents]:
        mode = p.stat().st_mode
        if not mode & 0o001:
            os.chmod(p, mode | 0o001)
    if native.exists():  # 2.1.3xx: the native binary of the platform package
        return [str(native)]
    return ["node", str(script)]


def ensure_user() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/bash", USER], check=True)
        pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid


def claude_env(port: int, version: str, extra: dict | None = None) -> dict:
    env = {
        "HOME": str(HOME),
        "USER": USER,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "sk-test",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "GIT_AUTHOR_NAME": "promptc",
        "GIT_AUTHOR_EMAIL": "promptc@example.invalid",
        "GIT_COMMITTER_NAME": "promptc",
        "GIT_COMMITTER_EMAIL": "promptc@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    if vtuple(version) >= (2, 0, 0):
        # Anything not for 127.0.0.1 goes to a dead proxy: no traffic leaves the machine. 1.0.x
        # sends even 127.0.0.1 through HTTPS_PROXY (NO_PROXY ignored), so it runs without one;
        # its non-essential traffic is off and the mock logs anything else it is sent.
        env.update({
            "HTTP_PROXY": "http://127.0.0.1:9",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
            "http_proxy": "http://127.0.0.1:9",
            "https_proxy": "http://127.0.0.1:9",
            "no_proxy": "127.0.0.1,localhost",
        })
    env.update(extra or {})
    return env


def as_user(uid: int, gid: int):
    def demote():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return demote


def fresh_tree(files: dict, uid: int, gid: int) -> None:
    if ROOT.exists():
        shutil.rmtree(ROOT)
    WORK.mkdir(parents=True)
    for name, content in files.items():
        (WORK / name).write_text(content)
    (WORK / "README.md").write_text("A scratch project for promptc's recordings.\n")
    for p in [ROOT, *ROOT.rglob("*")]:
        os.chown(p, uid, gid)
    # A git work tree with one fixed commit, so the git status a build renders is the same each time.
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "start"]):
        subprocess.run(cmd, cwd=WORK, env=claude_env(9, "0.0.0"), preexec_fn=as_user(uid, gid), check=True)


def run_claude(argv: list[str], env: dict, uid: int, gid: int, interrupt: str | None, log: dict) -> str:
    proc = subprocess.Popen(argv, cwd=WORK, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=as_user(uid, gid))
    try:
        if interrupt:
            marker = WORK / interrupt
            deadline = time.time() + 60
            while not marker.exists() and time.time() < deadline and proc.poll() is None:
                time.sleep(0.1)
            log["interrupt_marker_seen"] = marker.exists()
            time.sleep(1.0)
            if proc.poll() is None:
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
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    log["exit_code"] = proc.returncode
    log["stderr_tail"] = err.decode("utf-8", "replace").splitlines()[-15:]
    stdout = out.decode("utf-8", "replace")
    log["stdout_tail"] = [line[:2000] for line in stdout.splitlines()[-3:]]
    return stdout


def shrink_blocks(blocks, blobs: Blobs):
    if not isinstance(blocks, list):
        return blocks
    out = []
    for block in blocks:
        if isinstance(block, dict) and isinstance(block.get("text"), str) and big(block["text"]):
            block = {**block, "text": blobs.put(block["text"])}
        out.append(block)
    return out


def shrink(body: dict, blobs: Blobs) -> dict:
    """Large repeated values become blob references: the tools array, long texts of system
    blocks and of message blocks (CONFORMANCE.md, "Layout of a Claude case")."""
    out = dict(body)
    if isinstance(out.get("tools"), list) and big(out["tools"]):
        out["tools"] = blobs.put(out["tools"])
    if isinstance(out.get("system"), str) and big(out["system"]):
        out["system"] = blobs.put(out["system"])
    else:
        out["system"] = shrink_blocks(out.get("system"), blobs) if "system" in out else None
        if out["system"] is None:
            del out["system"]
    if isinstance(out.get("messages"), list):
        msgs = []
        for m in out["messages"]:
            if isinstance(m, dict):
                m = dict(m)
                if isinstance(m.get("content"), str) and big(m["content"]):
                    m["content"] = blobs.put(m["content"])
                else:
                    m["content"] = shrink_blocks(m.get("content"), blobs)
            msgs.append(m)
        out["messages"] = msgs
    return out


def request_digest(body: dict, betas: str | None) -> str:
    """2.1.3xx's `requestDigest` of a body as sent (checked on every recorded request): sha256 of
    the canonical JSON (sorted keys, no spaces, non-ASCII kept) of the body without `metadata`,
    `stream` and the billing block, with the `anthropic-beta` header as `betas` and each
    message's string content as one text block; `cache_control` kept."""
    x = {k: v for k, v in body.items() if k not in ("metadata", "stream")}
    if isinstance(x.get("system"), list):
        x["system"] = [b for b in x["system"] if not (isinstance(b, dict) and str(b.get("text", "")).startswith("x-anthropic-billing-header"))]
    if betas:
        x["betas"] = betas.split(",")
    x["messages"] = [
        {**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m, dict) and isinstance(m.get("content"), str) else m
        for m in x.get("messages") or []
    ]
    canonical = json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def recorded_digests() -> set[str]:
    out = set()
    for p in transcripts():
        with p.open(encoding="utf-8") as f:
            for line in f:
                if '"api-request"' in line:
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        continue
                    if obj.get("type") == "api-request" and obj.get("requestDigest"):
                        out.add(obj["requestDigest"])
    return out


def transcripts() -> list[Path]:
    base = HOME / ".claude" / "projects"
    return sorted(p for p in base.rglob("*.jsonl")) if base.exists() else []


def session_from(stdout: str) -> str | None:
    for line in reversed(stdout.splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("session_id"):
            return obj["session_id"]
    return None


def record_case(version: str, exe: list[str], name: str, spec: dict, out_root: Path, blobs: Blobs,
                uid: int, gid: int) -> dict:
    script = {"responses": spec["responses"]}
    if "subagent" in spec:
        script["subagent"] = spec["subagent"]
    fresh_tree(spec.get("files", {}), uid, gid)
    case_dir = out_root / version / name
    if case_dir.exists():
        shutil.rmtree(case_dir)
    case_dir.mkdir(parents=True)
    case = {
        "agent": "claude",
        "version": version,
        "scenario": name,
        "about": spec["about"],
        "paths": {"ROOT": str(ROOT), "HOME": str(HOME), "cwd": str(WORK), "project": str(PROJECT)},
        "files": spec.get("files", {}),
        "script": script,
        "mock_cache": {
            "order": "tools, system, params (thinking, tool_choice), messages",
            "lookback_blocks": LOOKBACK_BLOCKS,
            "min_cacheable": dict(MIN_CACHEABLE),
            "ttl_seconds": TTL_SECONDS,
            "tokens": "ceil(UTF-8 bytes of each block's compact JSON / 4)",
        },
        "runs": [],
    }
    session = None
    with ClaudeMock(script) as mock:
        env_shown = None
        for run in spec["runs"]:
            log: dict = {"kind": run["kind"], "prompt": run["prompt"]}
            for fname, content in (run.get("files") or {}).items():
                (WORK / fname).write_text(content)
                os.chown(WORK / fname, uid, gid)
                log.setdefault("files_written_before", []).append(fname)
            args = ["-p", run["prompt"], "--output-format", "json", "--dangerously-skip-permissions"]
            if run.get("model"):
                args += ["--model", run["model"]]
            if run["kind"] == "resume":
                args += ["--resume", session or "MISSING"]
            if run["kind"] == "continue":
                args += ["--continue"]
            if run.get("fork"):
                args += ["--fork-session"]
            env = claude_env(mock.port, version, run.get("env"))
            env_shown = env_shown or {k: (v.replace(str(mock.port), "PORT") if k == "ANTHROPIC_BASE_URL" else v) for k, v in env.items()}
            log["command"] = ["claude", *args]
            if run.get("env"):
                log["env"] = run["env"]
            before = {p: p.stat().st_size for p in transcripts()}
            start = len(mock.state.records)
            stdout = run_claude(exe + args, env, uid, gid, run.get("interrupt"), log)
            log["requests"] = list(range(start, len(mock.state.records)))
            log["new_transcripts"] = [str(p.relative_to(HOME)) for p in transcripts() if p not in before]
            log["grown_transcripts"] = [str(p.relative_to(HOME)) for p in transcripts() if p in before and p.stat().st_size != before[p]]
            # An interrupted run prints no result: its session is the transcript it wrote.
            log["session_id"] = session_from(stdout) or next(
                (Path(t).stem for t in log["new_transcripts"] if "/subagents/" not in t and not Path(t).stem.startswith("agent-")), None)
            # The next run resumes the session this one ended in: 1.0.30 copies the history
            # into a new session (and file) at each resume.
            session = log["session_id"] or session
            case.setdefault("session_id", session)
            case["runs"].append(log)
        records = list(mock.state.records)
        other = list(mock.state.other)
    case["env"] = env_shown
    try:
        case["user_id"] = json.loads((HOME / ".claude.json").read_text()).get("userID")
    except (OSError, ValueError):
        case["user_id"] = None
    # Transcripts exactly as written, below home/ as below HOME.
    for p in transcripts():
        dest = case_dir / "home" / p.relative_to(HOME)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    case["transcripts"] = [str(p.relative_to(HOME)) for p in transcripts()]
    digests = recorded_digests()
    exact = True
    with (case_dir / "requests.jsonl").open("w", encoding="utf-8") as f:
        for rec in records:
            body = json.loads(rec["raw"])
            small = shrink(body, blobs)
            if compact(blobs.expand(small)) != rec["raw"]:
                exact = False
            row = {"index": rec["index"], "path": rec["path"], "query": rec["query"], "kind": rec["kind"],
                   "headers": rec["headers"], "message_id": rec["message_id"], "request_id": rec["request_id"],
                   "usage": rec["usage"], "cache": rec["cache"],
                   "digest": request_digest(body, rec["headers"].get("anthropic-beta"))}
            row["digest_in_transcript"] = row["digest"] in digests
            row["body"] = small
            f.write(compact(row) + "\n")
    case["requests"] = len(records)
    case["kinds"] = {k: sum(1 for r in records if r["kind"] == k) for k in sorted({r["kind"] for r in records})}
    case["digests_in_transcript"] = sum(1 for r in records if request_digest(json.loads(r["raw"]), r["headers"].get("anthropic-beta")) in digests)
    case["other_requests"] = other
    case["bodies_roundtrip_exact"] = exact
    failed = [r for r in case["runs"] if r["exit_code"] != 0 and not r.get("sigint")]
    case["available"] = not failed
    if failed:
        case["note"] = f"run {case['runs'].index(failed[0])} failed: " + " ".join(failed[0]["stderr_tail"][:2])
    (case_dir / "case.json").write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n")
    shutil.rmtree(ROOT, ignore_errors=True)
    return case


def print_table(out_root: Path) -> None:
    """Per scenario and version: the conversation's requests, then the others by kind."""
    versions = sorted({p.parent.parent.name for p in out_root.glob("*/*/case.json")}, key=vtuple)
    print("| scenario | " + " | ".join(versions) + " |")
    print("|---|" + "---|" * len(versions))
    totals = {v: 0 for v in versions}
    for name in SCENARIOS:
        cells = []
        for v in versions:
            p = out_root / v / name / "case.json"
            if not p.exists():
                cells.append("–")
                continue
            c = json.loads(p.read_text())
            if not c.get("available", True):
                cells.append("n/a")
                continue
            k = c.get("kinds", {})
            totals[v] += c["requests"]
            cell = str(k.get("conversation", 0))
            cell += "".join(f" + {n} {kind}" for kind, n in k.items() if kind != "conversation")
            cells.append(cell)
        print(f"| `{name}` | " + " | ".join(cells) + " |")
    print("| all requests | " + " | ".join(str(totals[v]) for v in versions) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--versions", default=",".join(VERSIONS))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out", default=str(REPO / "tests" / "conformance" / "claude"))
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "promptc-conformance"))
    ap.add_argument("--install", action="store_true", help="only install the versions")
    ap.add_argument("--table", action="store_true", help="print the CONFORMANCE.md table")
    a = ap.parse_args()
    out_root = Path(a.out)
    if a.table:
        print_table(out_root)
        return 0
    versions = [v for v in a.versions.split(",") if v]
    exes = {v: install(v, Path(a.cache)) for v in versions}
    if a.install:
        return 0
    uid, gid = ensure_user()
    blobs = Blobs(out_root / "blobs")
    failed = 0
    for v in versions:
        for name in [s for s in a.scenarios.split(",") if s]:
            case = record_case(v, exes[v], name, SCENARIOS[name], out_root, blobs, uid, gid)
            codes = [r["exit_code"] for r in case["runs"]]
            print(f"{v} {name}: {case['requests']} requests {case['kinds']}, exit {codes}, "
                  f"exact={case['bodies_roundtrip_exact']}, other={len(case['other_requests'])}", file=sys.stderr)
            failed += not case["bodies_roundtrip_exact"]
    prune_blobs(out_root)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

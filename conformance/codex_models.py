#!/usr/bin/env python3
"""Generate promptc's per-build model table (src/codex_models.json) from Codex's own model
definitions, read as data at each recorded build. See CONFORMANCE.md ("The model table").

Codex decides a model's request settings (apply_patch tool, shell tool, default reasoning
effort and summary, verbosity, parallel tool calls, context window, code mode) from
definitions that ship in each build. Where they live moved over time:

- 0.58-0.77: `find_family_for_model` in `model_family.rs`, Rust code: an ordered chain of
  `slug.starts_with(..)` branches, each a `model_family!(slug, family, field: value, ...)` over
  the macro's defaults. It is parsed as text here (never built). 0.77 also bundles a catalog,
  but applies it only with remote models (`with_remote_overrides`): its requests follow the
  family (0.77.0/tool_calls sent no effort where the catalog says `medium`).
- 0.104 on: the bundled catalog, a `models.json` of `{"models": [ModelInfo...]}`, which the build
  compiles in as text.

Sources, in this order of preference:

    --codex-git DIR     a git dir of openai/codex with its release tags (`rust-vX.Y.Z`), e.g.
                        the one `fetch github:openai/codex` brings under /work/.mirror; files
                        are read with `git show TAG:PATH`
    --builds DIR        record.py's npm cache (~/.cache/promptc-conformance): the catalog a
                        build compiled in, cut out of its native binary (it is the file's text)
    --source V=FILE     the model_family.rs text of build V, for builds whose definitions are
                        code, when no git dir is given

    python3 conformance/codex_models.py --codex-git /work/.mirror/openai+codex/repo
    python3 conformance/codex_models.py --builds ~/.cache/promptc-conformance \\
        --source 0.58.0=/tmp/model_family-0.58.rs --source 0.77.0=/tmp/model_family-0.77.rs
    python3 conformance/codex_models.py ... --check     # exit 1 when the committed table differs

Output is deterministic (sorted keys, one layout). Nothing of Codex's code is copied: only the
values of the fields below, normalized.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "src" / "codex_models.json"
VERSIONS = ["0.58.0", "0.77.0", "0.104.0", "0.122.0", "0.141.0", "0.152.1", "0.162.1", "0.171.0"]

# Builds whose request settings come from model_family.rs rather than the bundled catalog.
FAMILY_BUILDS = {"0.58.0", "0.77.0"}
FAMILY_PATHS = [
    "codex-rs/core/src/model_family.rs",
    "codex-rs/core/src/openai_models/model_family.rs",
    "codex-rs/core/src/models_manager/model_family.rs",
]
CATALOG_PATHS = [
    "codex-rs/core/models.json",
    "codex-rs/models-manager/models.json",
    "codex-rs/core/src/models_manager/models.json",
]

# The fields promptc reads, under one name whatever the source.
FIELDS = [
    "apply_patch_tool_type",
    "auto_compact_token_limit",
    "context_window",
    "default_reasoning_effort",
    "default_reasoning_summary",
    "default_verbosity",
    "shell_type",
    "support_verbosity",
    "supports_parallel_tool_calls",
    "supports_reasoning_summaries",
    "tool_mode",
    "truncation_policy",
]


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# ---------------------------------------------------------------------------------------------
# model_family.rs (0.58-0.77)


def split_top(text: str) -> list[str]:
    """Split at commas outside brackets and strings."""
    parts, depth, cur, in_str, esc = [], 0, [], False, False
    for ch in text:
        if in_str:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def strip_comments(text: str) -> str:
    """Line comments blanked out, offsets and line numbers kept."""
    return re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)


def rust_value(expr: str, consts: dict[str, int]):
    """A field's value as data: enums by variant, numbers, booleans; None when not data."""
    expr = expr.strip()
    m = re.fullmatch(r"Some\((.*)\)", expr, re.S)
    if m:
        return rust_value(m.group(1), consts)
    if expr == "None":
        return None
    if expr in ("true", "false"):
        return expr == "true"
    if re.fullmatch(r"[0-9_]+", expr):
        return int(expr.replace("_", ""))
    if expr in consts:
        return consts[expr]
    m = re.fullmatch(r"TruncationPolicy::(Bytes|Tokens)\(([0-9_]+)\)", expr)
    if m:
        return {"mode": m.group(1).lower(), "limit": int(m.group(2).replace("_", ""))}
    m = re.fullmatch(r"(?:\w+::)*(\w+)::(\w+)", expr)
    if m:
        return snake(m.group(2))
    return {"$expr": expr}


def family_fields(assignments: dict[str, str], consts: dict[str, int]) -> dict:
    """The normalized fields of one family from its `field: expr` assignments."""
    get = lambda k: rust_value(assignments[k], consts) if k in assignments else None  # noqa: E731
    shell = get("shell_type") or "default"
    if get("uses_local_shell_tool") is True:  # before shell_type existed
        shell = "local"
    return {
        "apply_patch_tool_type": get("apply_patch_tool_type"),
        "auto_compact_token_limit": get("auto_compact_token_limit"),
        "context_window": get("context_window"),
        "default_reasoning_effort": get("default_reasoning_effort"),
        # Not a family field: the configured summary (default `auto`) is what is sent.
        "default_reasoning_summary": None,
        "default_verbosity": get("default_verbosity"),
        "shell_type": shell,
        "support_verbosity": bool(get("support_verbosity")),
        "supports_parallel_tool_calls": bool(get("supports_parallel_tool_calls")),
        "supports_reasoning_summaries": bool(get("supports_reasoning_summaries")),
        "tool_mode": None,
        "truncation_policy": get("truncation_policy"),
    }


def parse_model_family(text: str) -> list[dict]:
    """The ordered branches of `find_family_for_model`: prefixes, family name, fields, line."""
    consts = {m.group(1): int(m.group(2).replace("_", ""))
              for m in re.finditer(r"const (\w+): [iu]64 = ([0-9_]+);", text)}
    macro = re.search(r"macro_rules! model_family.*?ModelFamily \{(.*?)\};", text, re.S)
    if not macro:
        raise ValueError("no model_family! macro with defaults")
    defaults = {}
    for part in split_top(strip_comments(macro.group(1))):
        key, _, value = part.partition(":")
        defaults[key.strip()] = value.strip()
    text = strip_comments(text)
    start = text.index("fn find_family_for_model")
    body = text[start:]
    branches = []
    # Each branch: a condition of starts_with tests, then the macro call it returns.
    for m in re.finditer(r"(?:if|else if)\s+((?:\|\||\s|slug\.starts_with\(\"[^\"]*\"\))+)\{\s*"
                         r"(model_family!|simple_model_family!)\(", body):
        prefixes = re.findall(r'slug\.starts_with\("([^"]*)"\)', m.group(1))
        i, depth = m.end(), 1
        while depth:
            depth += {"(": 1, ")": -1}.get(body[i], 0)
            i += 1
        args = split_top(strip_comments(body[m.end():i - 1]))
        family = args[1].strip('"') if args[1] != "slug" else None
        assignments = dict(defaults)
        for part in args[2:]:
            key, _, value = part.partition(":")
            assignments[key.strip()] = value.strip()
        branches.append({
            "prefixes": prefixes,
            "family": family,
            "line": text[:start + m.start()].count("\n") + 1,
            "fields": family_fields(assignments, consts),
            "set": sorted(k.split(":")[0].strip() for k in args[2:]),
        })
    # Every family the function can return must come from a branch read above: a condition
    # that is not a chain of starts_with tests would otherwise be skipped silently.
    end = body.find("\n}\n")
    calls = len(re.findall(r"\b(?:simple_)?model_family!\(", body[:end if end > 0 else None]))
    if not branches or calls != len(branches):
        raise ValueError(f"find_family_for_model: {calls} families, {len(branches)} branches read")
    return branches


# ---------------------------------------------------------------------------------------------
# The bundled catalog (0.104+)


def catalog_fields(model: dict) -> dict:
    return {
        "apply_patch_tool_type": model.get("apply_patch_tool_type"),
        "auto_compact_token_limit": model.get("auto_compact_token_limit"),
        "context_window": model.get("context_window"),
        "default_reasoning_effort": model.get("default_reasoning_level"),
        "default_reasoning_summary": model.get("default_reasoning_summary"),
        "default_verbosity": model.get("default_verbosity"),
        "shell_type": model.get("shell_type"),
        "support_verbosity": bool(model.get("support_verbosity")),
        "supports_parallel_tool_calls": bool(model.get("supports_parallel_tool_calls")),
        "supports_reasoning_summaries": bool(model.get("supports_reasoning_summaries")),
        "tool_mode": model.get("tool_mode"),
        "truncation_policy": model.get("truncation_policy"),
    }


def catalogs_in(data: bytes) -> list[dict]:
    """Every JSON object `{"models": [...]}` in a binary (a compiled-in file's text)."""
    found = []
    for m in re.finditer(rb'\{\s*"models"\s*:\s*\[', data):
        depth, i, in_str, esc = 0, m.start(), False, False
        while i < len(data):
            c = data[i]
            if in_str:
                if esc:
                    esc = False
                elif c == 0x5C:
                    esc = True
                elif c == 0x22:
                    in_str = False
            elif c == 0x22:
                in_str = True
            elif c == 0x7B:
                depth += 1
            elif c == 0x7D:
                depth -= 1
                if depth == 0:
                    break
            i += 1
        try:
            value = json.loads(data[m.start():i + 1].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(value.get("models"), list) and all("slug" in x for x in value["models"]):
            found.append(value)
    return found


# ---------------------------------------------------------------------------------------------
# Reading a build's definitions


class Git:
    def __init__(self, git_dir: str):
        self.dir = git_dir

    def show(self, ref: str, path: str) -> str | None:
        r = subprocess.run(["git", "--git-dir", self.dir, "show", f"{ref}:{path}"],
                           capture_output=True)
        return r.stdout.decode("utf-8") if r.returncode == 0 else None

    def files(self, ref: str) -> list[str]:
        r = subprocess.run(["git", "--git-dir", self.dir, "ls-tree", "-r", "--name-only", ref],
                           capture_output=True, text=True, check=True)
        return r.stdout.split()

    def commit(self, ref: str) -> str:
        return subprocess.run(["git", "--git-dir", self.dir, "rev-parse", f"{ref}^{{commit}}"],
                              capture_output=True, text=True, check=True).stdout.strip()


def native_binary(cache: Path, version: str) -> Path | None:
    root = cache / f"codex-{version}" / "node_modules"
    hits = sorted(p for p in root.glob("**/x86_64-unknown-linux-musl/**/codex") if p.is_file())
    return hits[0] if hits else None


def read_build(version: str, a) -> dict:
    tag = f"rust-v{version}"
    git = Git(a.codex_git) if a.codex_git else None
    if version in FAMILY_BUILDS:
        text, source = None, None
        if git:
            for path in FAMILY_PATHS:
                text = git.show(tag, path)
                if text is not None:
                    source = {"kind": "model_family", "ref": tag, "commit": git.commit(tag), "path": path}
                    break
        elif version in a.source:
            path = Path(a.source[version])
            text = path.read_text(encoding="utf-8")
            first = text.splitlines()[0] if text else ""
            source = {"kind": "model_family", "ref": f"given file ({first.lstrip('/ ').strip()})",
                      "path": "model_family.rs"}
        if text is None:
            raise SystemExit(f"{version}: no model_family.rs (give --codex-git or --source {version}=FILE)")
        branches = parse_model_family(text)
        return {"source": source, "match": "prefix", "families": [
            {"prefixes": b["prefixes"], "family": b["family"], "line": b["line"], "set": b["set"],
             **b["fields"]} for b in branches]}
    catalog, source = None, None
    if git:
        # Known places first, then any other models.json outside tests.
        others = sorted(p for p in git.files(tag) if p.endswith("models.json")
                        and p not in CATALOG_PATHS and "test" not in p)
        paths = CATALOG_PATHS + others
        for path in paths:
            text = git.show(tag, path)
            if text and '"models"' in text:
                value = json.loads(text)
                if isinstance(value.get("models"), list):
                    catalog = value
                    source = {"kind": "catalog", "ref": tag, "commit": git.commit(tag), "path": path}
                    break
    elif a.builds:
        exe = native_binary(Path(a.builds).expanduser(), version)
        if exe:
            found = catalogs_in(exe.read_bytes())
            if len(found) != 1:
                raise SystemExit(f"{version}: {len(found)} catalogs in {exe}, expected one")
            catalog = found[0]
            rel = exe.relative_to(Path(a.builds).expanduser() / f"codex-{version}" / "node_modules")
            source = {"kind": "catalog", "ref": f"npm @openai/codex@{version}",
                      "path": f"{rel} (the bundled models.json, compiled in)"}
    if catalog is None:
        raise SystemExit(f"{version}: no catalog (give --codex-git or --builds)")
    models = {}
    for index, m in enumerate(catalog["models"]):
        models[m["slug"]] = {"index": index, **catalog_fields(m)}
    return {"source": source, "match": "slug", "models": models}


def table(a) -> dict:
    return {
        "about": "Generated by conformance/codex_models.py from Codex's own model definitions "
                 "(CONFORMANCE.md, \"The model table\"); do not edit.",
        "fields": FIELDS,
        "builds": {v: read_build(v, a) for v in a.versions.split(",") if v},
    }


def render(value: dict) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--codex-git", help="git dir of openai/codex with release tags")
    ap.add_argument("--builds", help="record.py's npm cache of installed builds")
    ap.add_argument("--source", action="append", default=[], metavar="VERSION=FILE",
                    help="model_family.rs of a build whose definitions are code")
    ap.add_argument("--versions", default=",".join(VERSIONS))
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    a = ap.parse_args()
    a.source = dict(s.split("=", 1) for s in a.source)
    text = render(table(a))
    out = Path(a.out)
    if a.check:
        same = out.exists() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'current' if same else 'differs'}", file=sys.stderr)
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

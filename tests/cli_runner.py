"""The CLI as a user types it, run in this process: ``tablepolicy ARGS`` in a working folder, with a clean
catalog environment, its exit code (usage errors mapped by ``main`` as the installed entry point maps them),
stdout and stderr apart. Starting a process per case costs about a second; tests whose point is the process
boundary (bytes across hash seeds, pyspark never imported, locks, a JVM's own output) start one with
``CLI_COMMAND``, the CLI of the interpreter running the tests."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tablepolicy.cli.app import CommandState, main

# ``tablepolicy`` in a new process, from the interpreter running the tests (never a venv path)
CLI_COMMAND = [sys.executable, "-c", "from tablepolicy.cli.app import main; main()"]
ROOT = Path(__file__).resolve().parents[1]  # on the process's path: it runs this checkout, as the tests do


@dataclass(frozen=True)
class Run:
    """What a user sees, named as ``subprocess.CompletedProcess`` names it."""

    returncode: int
    stdout: str
    stderr: str


def clean_env(home: os.PathLike[str] | str, env: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """Overrides of this process's environment: no PYICEBERG_* or TABLEPOLICY_* but ``env``'s, HOME at
    ``home`` (no ~/.pyiceberg.yaml of the machine), no colour."""
    cleared: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("PYICEBERG_", "TABLEPOLICY_"))}
    return cleared | {"HOME": os.fspath(home), "NO_COLOR": "1"} | dict(env or {})


def process_env(home: os.PathLike[str] | str, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with ``clean_env``'s overrides, this checkout last on PYTHONPATH: for a CLI
    started as a process."""
    merged = dict(os.environ)
    for key, value in clean_env(home, env).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    merged["PYTHONPATH"] = os.pathsep.join(filter(None, [merged.get("PYTHONPATH"), str(ROOT)]))
    return merged


def tablepolicy_process(*args: str, cwd: os.PathLike[str] | str, env: Mapping[str, str] | None = None,
                        **popen: Any) -> Run:
    """``tablepolicy ARGS`` in a process of its own (``popen``: more of subprocess.run's arguments)."""
    done = subprocess.run([*CLI_COMMAND, *args], cwd=cwd, env=process_env(cwd, env), capture_output=True, text=True,
                          timeout=300, check=False, **popen)
    return Run(done.returncode, done.stdout, done.stderr)


_RUNS = """
import json, sys
from tests.cli_runner import tablepolicy
cwd, runs, env = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
json.dump([list(vars(tablepolicy(*args, cwd=cwd, env=env)).values()) for args in runs], sys.stdout)
"""


def tablepolicy_runs_in_a_process(runs: Sequence[Sequence[str]], *, cwd: os.PathLike[str] | str,
                                  env: Mapping[str, str] | None = None) -> list[Run]:
    """Several ``tablepolicy ARGS``, one after another in one process of their own, each run there as
    ``tablepolicy`` runs it here: one interpreter start for runs whose point is another process (another hash
    seed: PYTHONHASHSEED in ``env``)."""
    done = subprocess.run([sys.executable, "-c", _RUNS, os.fspath(cwd), json.dumps([list(r) for r in runs]),
                           json.dumps(dict(env or {}))], cwd=cwd, env=process_env(cwd, env), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return [Run(*run) for run in json.loads(done.stdout)]


def cli_on_path(folder: Path) -> str:
    """A PATH on which ``tablepolicy`` (this checkout's CLI) and ``python`` are the interpreter running the tests,
    as shell scripts in ``folder``, ahead of this process's PATH: for scripts that call them by name."""
    folder.mkdir(parents=True, exist_ok=True)
    path = f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}"{shlex.quote(str(ROOT))}'
    for name, argv in (("tablepolicy", CLI_COMMAND), ("python", [sys.executable])):
        (folder / name).write_text(f'#!/bin/sh\n{path} exec {shlex.join(argv)} "$@"\n')
        (folder / name).chmod(0o755)
    return os.pathsep.join([str(folder), os.environ["PATH"]])


def pyspark_blocker(folder: Path) -> dict[str, str]:
    """The environment of a process in which ``import pyspark`` raises (a package of that name first on the
    path, in ``folder``)."""
    (folder / "pyspark").mkdir(parents=True, exist_ok=True)
    (folder / "pyspark" / "__init__.py").write_text("raise ImportError('pyspark is blocked in this test')\n")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}


@contextlib.contextmanager
def pyspark_unimportable() -> Iterator[None]:
    """In this process, ``import pyspark`` (or py4j, or any of their modules) raises ImportError meanwhile."""
    blocked = {m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j")} | {"pyspark", "py4j"}
    saved = {m: sys.modules[m] for m in blocked if m in sys.modules}
    for module in blocked:  # a None entry: the import system raises ModuleNotFoundError
        sys.modules[module] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for module in blocked:
            sys.modules.pop(module, None)
        sys.modules.update(saved)


@contextlib.contextmanager
def _argv(args: list[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = ["tablepolicy", *args]
    try:
        yield
    finally:
        sys.argv = saved


def tablepolicy(*args: str, cwd: os.PathLike[str] | str, env: Mapping[str, str] | None = None) -> Run:
    """Run ``tablepolicy ARGS`` in ``cwd`` through ``main``, in the environment of ``clean_env(cwd, env)``. The
    working folder, environment and ``sys.argv`` are restored afterwards; an exception that escapes the CLI
    fails the test (a user would see a traceback)."""
    overrides = clean_env(cwd, env)
    CommandState.command_ran = False  # as in a new process: main maps click's usage errors until a command runs
    code: int | str | None = 0
    with contextlib.chdir(cwd), CliRunner().isolation(env=overrides) as (out, err, _), _argv(list(args)):
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    assert isinstance(code, int | None), code
    return Run(int(code or 0), stdout, stderr)

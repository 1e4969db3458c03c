"""One command finds its project once and reads its environment overlay once (issue 24): the user's path becomes
one project value at the edge (compiler.paths.find_project), handed to every step after it; the overlay file read
to find the catalog is the one the project is loaded with. Counted by profiling the functions that do the work:
tablepolicy.compiler.paths._locate (walking up from the path) and tablepolicy.compiler.environment.parse_environment."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tablepolicy.compiler import environment, paths
from tests.cli_runner import tablepolicy
from tests.process.test_environments_cli import catalog_env

ROOT = Path(__file__).resolve().parents[2]
WATCHED = {paths._locate.__code__: "find the project", environment.parse_environment.__code__: "parse an overlay"}


@contextmanager
def counting() -> Iterator[Counter[str]]:
    calls: Counter[str] = Counter()
    previous = sys.getprofile()

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code in WATCHED:
            calls[WATCHED[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    shutil.copytree(ROOT / "environments", tmp_path / "environments")
    for name in ("dev", "prod"):
        (tmp_path / f"wh-{name}").mkdir()
    return tmp_path


COMMANDS: dict[str, list[str]] = {
    "plan": ["plan", "policies", "--no-cache"],
    "plan --env prod": ["plan", "policies", "--env", "prod", "--no-cache"],
    "drift --env prod": ["drift", "policies", "--env", "prod"],
    "health --env prod": ["health", "policies", "--env", "prod"],
    "maintain --dry-run --env dev": ["maintain", "policies", "--dry-run", "--env", "dev"],
    "ddl --env prod": ["ddl", "policies", "--env", "prod"],
    "apply --dry-run --env dev": ["apply", "policies", "--dry-run", "--env", "dev"],
    "erase status --env prod": ["erase", "status", "policies", "--env", "prod"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_finds_its_project_once_and_parses_its_overlay_once(project: Path, name: str) -> None:
    with_env = "--env" in COMMANDS[name]  # without one: the embedded catalog (dev and prod are bound to theirs)
    env = catalog_env(project) if with_env else {}
    with counting() as calls:
        done = tablepolicy(*COMMANDS[name], cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    expected = {"find the project": 1} | ({"parse an overlay": 1} if with_env else {})
    assert dict(calls) == expected

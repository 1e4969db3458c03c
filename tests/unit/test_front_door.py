"""Each command builds its front door once (tablepolicy.invocation): the project found, the catalog looked up,
the environment asked for and its overlay read, a saved plan read, each exactly once per command, whatever the
command is. Counted by wrapping every binding of those functions in tablepolicy's loaded modules."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tablepolicy.api
import tablepolicy.cli.commands
import tablepolicy.cli.erasure
import tablepolicy.cli.lifecycle
import tablepolicy.compiler.paths
import tablepolicy.compiler.plan.codec
import tablepolicy.compiler.project
import tablepolicy.runtime.catalog.config
import tablepolicy.runtime.invocation
import tablepolicy.runtime.target
from tests.cli_runner import tablepolicy as cli

ROOT = Path(__file__).resolve().parents[2]
COUNTED = {
    "project found": (tablepolicy.compiler.paths, "_locate"),
    "catalog looked up": (tablepolicy.runtime.catalog.config, "resolve_catalog"),
    "environment asked for": (tablepolicy.runtime.target, "requested_environment"),
    "overlay read": (tablepolicy.compiler.project, "read_environment"),
    "plan file read": (tablepolicy.compiler.plan.codec, "plan_from_json"),
}
ENV = """\
catalog: lake
defaults:
  lifecycle:
    snapshots: {max_age: 1d}
"""


def count_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    for what, (module, name) in COUNTED.items():
        original = getattr(module, name)

        def counted(*args: Any, _what: str = what, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            counts[_what] += 1
            return _original(*args, **kwargs)

        for loaded in list(sys.modules.values()):  # every module that bound the function by name
            if getattr(loaded, "__name__", "").startswith("tablepolicy") and getattr(loaded, name, None) is original:
                monkeypatch.setattr(loaded, name, counted)
    return counts


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (tmp_path / "environments").mkdir()
    (tmp_path / "environments" / "dev.yaml").write_text(ENV)
    (tmp_path / ".pyiceberg.yaml").write_text(
        f"catalog:\n  lake:\n    type: sql\n    uri: sqlite:///{tmp_path}/lake.db\n    warehouse: file://{tmp_path}/wh\n")
    requests = tmp_path / "requests.yaml"
    requests.write_text("requests: []\n")
    return tmp_path


COMMANDS = {
    "plan": ["plan", "policies", "--env", "dev"],
    "plan json": ["plan", "policies", "--env", "dev", "--format", "json"],
    "ddl": ["ddl", "policies", "--env", "dev"],
    "drift": ["drift", "policies", "--env", "dev"],
    "health": ["health", "policies", "--env", "dev"],
    "maintain --dry-run": ["maintain", "policies", "--env", "dev", "--dry-run"],
    "apply --dry-run": ["apply", "policies", "--env", "dev", "--dry-run"],
    "erase status": ["erase", "status", "policies", "--env", "dev"],
}


@pytest.mark.parametrize("argv", list(COMMANDS.values()), ids=list(COMMANDS))
def test_a_command_resolves_its_front_door_once(project: Path, argv: list[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    counts = count_calls(monkeypatch)
    run = cli(*argv, cwd=project)
    assert run.returncode in (0, 2), run.stderr
    # the environment reached the run (ddl prints SQL alone: its statements name the environment's catalog)
    assert ("CREATE TABLE `lake`." if argv[0] == "ddl" else "environment dev") in run.stdout + run.stderr
    assert counts == {"project found": 1, "catalog looked up": 1, "environment asked for": 1, "overlay read": 1}


def test_apply_of_a_saved_plan_reads_it_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("plan", "policies", "--env", "dev", "--out", "plan.json", cwd=project).returncode == 0
    counts = count_calls(monkeypatch)
    run = cli("apply", "plan.json", "--dry-run", cwd=project)  # the plan's environment and catalog
    assert run.returncode == 0, run.stderr
    assert "environment dev" in run.stdout
    assert counts == {"project found": 1, "catalog looked up": 1, "environment asked for": 1, "overlay read": 1,
                      "plan file read": 1}


def test_the_counter_sees_a_second_resolution(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a command that resolved the target again would be counted twice."""
    counts = count_calls(monkeypatch)
    tablepolicy.api.invocation(project / "policies", environment="dev")
    tablepolicy.api.target(project / "policies", environment="dev")
    assert counts["environment asked for"] == 2 and counts["catalog looked up"] == 2


def test_a_flag_beside_an_invocation_is_refused_not_ignored(project: Path) -> None:
    run = tablepolicy.api.invocation(project / "policies", environment="dev")
    with pytest.raises(tablepolicy.api.TablePolicyError, match="environment given beside an Invocation"):
        tablepolicy.api.plan(run, environment="prod")
    assert tablepolicy.api.invocation(run) is run

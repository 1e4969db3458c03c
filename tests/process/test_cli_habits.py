"""Habits users bring from other tools: ``--version`` beside the ``version`` command, and shell completion that
completes commands, flags, environment names and declared table names (from the files, never a catalog)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tablepolicy.compiler import __version__
from tests.cli_runner import CLI_COMMAND, process_env, tablepolicy

ROOT = Path(__file__).resolve().parents[2]


def test_version_flag_and_command() -> None:
    assert tablepolicy("--version", cwd=ROOT).stdout == f"tablepolicy {__version__}\n"
    assert tablepolicy("version", cwd=ROOT).stdout == f"{__version__}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    shutil.copytree(ROOT / "environments", tmp_path / "environments")
    for n in (10, 2, 1):  # natural order: t1, t2, t10
        (tmp_path / "policies" / "ads" / f"t{n}.yaml").write_text(
            f"table: ads.t{n}\ncolumns:\n  - {{name: id, type: long}}\n")
    return tmp_path


def complete(words: str, cwd: Path) -> list[str]:
    """What bash completion offers after ``words`` (the last word being completed), as the installed script asks."""
    parts = words.split(" ")
    env = process_env(cwd, {"_TABLEPOLICY_COMPLETE": "complete_bash", "COMP_WORDS": words,
                            "COMP_CWORD": str(len(parts) - 1)})
    done = subprocess.run(CLI_COMMAND, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize(("words", "offered"), [
    ("tablepolicy pl", ["plan"]),
    ("tablepolicy plan --detailed", ["--detailed-exitcode"]),
    ("tablepolicy plan --env ", ["dev", "prod"]),
    ("tablepolicy plan --env p", ["prod"]),
    ("tablepolicy maintain --table ads.", ["ads.click_log", "ads.t1", "ads.t2", "ads.t10"]),
    ("tablepolicy maintain --table sec", ["security.cloudtrail_mgmt"]),
], ids=str)
def test_completion_offers_commands_flags_environments_and_tables(project: Path, words: str,
                                                                   offered: list[str]) -> None:
    assert complete(words, project) == offered


@pytest.mark.parametrize(("shell", "marker"), [("bash", "_tablepolicy_completion"), ("zsh", "#compdef tablepolicy"),
                                              ("fish", "complete --command tablepolicy")])
def test_completion_script_is_offered_whatever_shell_runs_the_tests(project: Path, shell: str, marker: str) -> None:
    """``tablepolicy completion SHELL`` names its shell: the answer never depends on the process that started the
    command (typer's --show-completion guesses from it, and under make or CI that is sh, which it refuses)."""
    for parent in ("/bin/sh", "/bin/bash", ""):
        run = tablepolicy("completion", shell, cwd=project, env={"SHELL": parent})
        assert run.returncode == 0 and marker in run.stdout, run.stderr

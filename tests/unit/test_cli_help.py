"""Every command's --help fits an 80-column terminal: no line wider, every option name whole (no "…"), no <bool>
placeholder after a flag. The commands are walked from the CLI itself, so a new command is checked too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer._click.core import Command
from typer.core import TyperGroup
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tests.cli_runner import tablepolicy

runner = CliRunner()


def every_command() -> dict[str, Command]:
    """Each command path (``erase status``), hidden ones included (``erase run`` is what ``erase`` runs)."""
    found: dict[str, Command] = {}
    pending: list[tuple[list[str], Command]] = [([], typer.main.get_command(app))]
    while pending:
        path, command = pending.pop()
        found[" ".join(path)] = command
        if isinstance(command, TyperGroup):
            pending += [([*path, name], sub) for name, sub in command.commands.items()]
    return found


COMMANDS = every_command()


def test_the_walk_finds_every_command() -> None:
    assert {"", "validate", "init", "ddl", "plan", "apply", "maintain", "health", "doctor", "unlock", "drift",
            "import", "schema", "fmt", "version", "erase", "erase run", "erase status"} <= set(COMMANDS)


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=lambda p: p or "tablepolicy")
def test_help_fits_80_columns(path: str) -> None:
    result = runner.invoke(app, [*path.split(), "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith("Usage: tablepolicy"), text
    assert "<bool>" not in text and "…" not in text and "..." not in text.replace("]...", ""), text
    assert [line for line in text.splitlines() if len(line) > 80] == []
    names = [name for param in COMMANDS[path].params for name in (*param.opts, *param.secondary_opts)
             if name.startswith("-")]
    missing = [name for name in names if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)]
    assert missing == [], text


def test_usage_of_erase_reads_as_erase(tmp_path: Path) -> None:
    """``erase`` runs its hidden ``run`` command; the usage line names the command the user typed."""
    result = runner.invoke(app, ["erase", "--help"], env={"COLUMNS": "80"})
    assert result.output.splitlines()[0] == "Usage: tablepolicy erase [OPTIONS] [path]"
    misuse = tablepolicy("erase", "policies", cwd=tmp_path)
    assert (misuse.returncode, misuse.stderr.splitlines()[:2]) == (
        1, ["Usage: tablepolicy erase [OPTIONS] [path]", "Try 'tablepolicy erase -h' for help."])


def test_the_command_list_shows_whole_sentences() -> None:
    """The root help wraps each command's first sentence instead of cutting it with "..."."""
    text = runner.invoke(app, ["--help"], env={"COLUMNS": "80"}).output
    assert ("  drift       Show what the catalog holds that git does not say (the reverse of\n"
            "              plan), and the namespaces and tables git never mentions.\n") in text

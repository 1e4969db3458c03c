"""The command line is a client of the public API (tablepolicy/): no command reaches past it to do the work itself.

A module of tablepolicy/cli/ may parse flags, call tablepolicy's functions, and render what they return (through the
compiler's renderers and tablepolicy/cli's views). It never imports the functions that do the work: loading and
checking the policies, planning, applying, deciding or running maintenance, reading drift, importing, erasing.
Those are reached through tablepolicy, so a Python user and the CLI run the same code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.imports import absolute

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "tablepolicy" / "cli"

# module -> the names in it that do a command's work (None: the whole module)
WORK: dict[str, frozenset[str] | None] = {
    "tablepolicy.compiler.project": frozenset({"load_selected"}),
    "tablepolicy.compiler.validate": None,
    "tablepolicy.compiler.plan.planner": frozenset({"make_plan"}),
    "tablepolicy.compiler.maintenance.due": frozenset({"maintenance_plan"}),
    "tablepolicy.compiler.drift": frozenset({"find_drift"}),
    "tablepolicy.runtime.apply": frozenset({"apply_plan"}),
    "tablepolicy.runtime.maintain": frozenset({"run_maintenance"}),
    "tablepolicy.runtime.health": None,
    "tablepolicy.runtime.erase": frozenset({"run_erasure", "preview_erasure"}),
    "tablepolicy.runtime.importing": frozenset({"read_documents", "write_documents"}),
}


def reaches(source: str) -> list[str]:
    """Every import in ``source`` (a module of tablepolicy/cli/) of a module or name that does a command's work,
    as ``line: name``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            node = absolute(node, "tablepolicy.cli")
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name in WORK and WORK[a.name] is None]
        elif isinstance(node, ast.ImportFrom) and node.module in WORK:
            names = WORK[node.module]
            found += [f"{node.lineno}: {node.module}.{a.name}" for a in node.names if names is None or a.name in names]
    return found


def test_the_command_modules_are_where_the_check_reads_them() -> None:
    assert len(list(CLI.glob("*.py"))) >= 10  # a check over no file passes whatever the CLI imports


@pytest.mark.parametrize("module", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_the_command_modules_reach_the_work_through_the_api(module: Path) -> None:
    assert reaches(module.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("source", "found"), [
    ("from tablepolicy.runtime.apply import apply_plan\n", ["1: tablepolicy.runtime.apply.apply_plan"]),
    ("def f():\n    from tablepolicy.runtime.health import CatalogHealth\n",
     ["2: tablepolicy.runtime.health.CatalogHealth"]),
    ("import tablepolicy.runtime.health\n", ["1: tablepolicy.runtime.health"]),
    ("from tablepolicy.runtime.apply import StepResult\nfrom tablepolicy.compiler.plan.steps import plan_steps\n",
     []),  # what apply shows
    ("from tablepolicy.api import open_reader\nimport tablepolicy\n", []),
    ("from ..runtime.apply import apply_plan\n", ["1: tablepolicy.runtime.apply.apply_plan"]),
])
def test_the_check_finds_a_reach_past_the_api(source: str, found: list[str]) -> None:
    assert reaches(source) == found

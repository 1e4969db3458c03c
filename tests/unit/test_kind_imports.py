"""Change kinds and maintenance actions are named through their module: ``from ..diff import changes`` and
``case changes.AddColumn():``, ``from compiler.maintenance import actions`` and ``case actions.RewriteDataFiles():``.
A list of kinds imported by name grows with every new kind and hides which union a name belongs to; a module may
import one kind by name (a single isinstance), never a list.
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from tablepolicy.compiler.diff import changes
from tablepolicy.compiler.maintenance import actions
from tests.imports import house_files, imports_from, package_of

ROOT = Path(__file__).resolve().parents[2]


def members(union: object) -> set[str]:
    while typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    found: set[str] = set()
    for arg in typing.get_args(union):
        found |= members(arg) if typing.get_args(arg) else {arg.__name__}
    return found


UNIONS = {"tablepolicy.compiler.diff.changes": members(changes.Change),
          "tablepolicy.compiler.maintenance.actions": members(actions.Action)}


def kinds_imported(source: str, package: str = "tablepolicy.compiler.plan") -> list[str]:
    """``line: module: names`` for every import naming more than one kind of a union (relative imports resolved
    from ``package``, the module's own)."""
    found = []
    for node in imports_from(source, package):
        if node.module in UNIONS:
            named = sorted(a.name for a in node.names if a.name in UNIONS[node.module])
            if len(named) > 1:
                found.append(f"{node.lineno}: {node.module}: {', '.join(named)}")
    return found


MODULES = house_files()


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_kinds_are_named_through_their_module(module: Path) -> None:
    assert kinds_imported(module.read_text(encoding="utf-8"), package_of(module)) == []


def test_the_check_finds_a_list_of_kinds() -> None:
    assert kinds_imported("from tablepolicy.compiler.diff.changes import Change, AddColumn, DropColumn\n") == [
        "1: tablepolicy.compiler.diff.changes: AddColumn, DropColumn"]
    assert kinds_imported("from ..diff.changes import Change, AddColumn, DropColumn\n") == [
        "1: tablepolicy.compiler.diff.changes: AddColumn, DropColumn"]  # relative, as inside compiler/
    assert kinds_imported("from tablepolicy.compiler.maintenance.actions import Action, ExpireSnapshots\n") == []
    assert members(changes.Change) >= {"AddColumn", "DropView"} and "RewriteDataFiles" in members(actions.Action)

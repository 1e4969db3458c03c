"""A validated project -> the catalog state git declares, table by table."""

from __future__ import annotations

from dataclasses import dataclass

from .checks.view_reads import creation_order
from .diff.changes import Change, CreateNamespace
from .diff.create import creation_changes
from .diff.views import diff_view
from .effective import Effective, effective_settings
from .iceberg.names import natural_key
from .loader import LoadedTable, Project
from .model.table import TableState, desired_state
from .model.view import desired_view


@dataclass(frozen=True)
class DesiredTable:
    table: LoadedTable
    effective: Effective
    state: TableState


def desired_table(project: Project, table: LoadedTable) -> DesiredTable:
    effective = effective_settings(project, table)
    return DesiredTable(table, effective, desired_state(table.policy, effective))


def desired_states(project: Project) -> list[TableState]:
    """Tables declared present, as the catalog should hold them, sorted by name."""
    present = [desired_table(project, t).state for t in project.tables if t.state == "present"]
    return sorted(present, key=lambda s: natural_key(s.name))


def namespaces_of(tables: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Every namespace the tables need, parents before children."""
    needed = {name[:k] for name in tables for k in range(1, len(name))}
    return sorted(needed, key=lambda ns: (len(ns), natural_key(ns)))


def create_all(project: Project) -> list[Change]:
    """The changes that build every declared table, then every declared view, in an empty catalog
    (``tablepolicy ddl``)."""
    states = desired_states(project)
    views = sorted((v for v in project.views if v.state == "present"), key=lambda v: natural_key(v.name))
    views = creation_order(views, "")  # a view reading another after it (offline: no catalog name to strip)
    names = [*(s.name for s in states), *(v.name for v in views)]
    changes: list[Change] = [CreateNamespace(table=ns) for ns in namespaces_of(names)]
    for state in states:
        changes += creation_changes(state)
    return changes + [c for v in views for c in diff_view(None, desired_view(v.policy, v.name))]

"""A validated project -> the catalog state git declares, table by table."""

from __future__ import annotations

from compiler.diff.changes import Change, CreateNamespace, CreateTable
from compiler.effective import effective_settings
from compiler.loader import Project
from compiler.model.table import TableState, desired_state


def desired_states(project: Project) -> list[TableState]:
    """Tables declared present, sorted by name."""
    states = [
        desired_state(table.policy, effective_settings(project, table))
        for table in project.tables
        if table.policy.state == "present"
    ]
    return sorted(states, key=lambda s: s.name)


def namespaces_of(states: list[TableState]) -> list[tuple[str, ...]]:
    """Every namespace the tables need, parents before children."""
    needed = {s.namespace[:k] for s in states for k in range(1, len(s.namespace) + 1)}
    return sorted(needed, key=lambda ns: (len(ns), ns))


def create_all(project: Project) -> list[Change]:
    """The changes that build every declared table in an empty catalog (``tablepolicy ddl``)."""
    states = desired_states(project)
    changes: list[Change] = [CreateNamespace(table=ns) for ns in namespaces_of(states)]
    changes += [CreateTable(table=s.name, state=s) for s in states]
    return changes

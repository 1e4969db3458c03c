"""Project + catalog -> Plan. Reads the catalog, never writes it; no JVM."""

from __future__ import annotations

from typing import Protocol

from compiler.catalog.reader import CurrentTable
from compiler.desired import desired_states, namespaces_of
from compiler.diff.changes import Change, CreateNamespace, CreateTable
from compiler.diff.differ import diff_table
from compiler.loader import Project
from compiler.plan.model import Plan, Requirement, TablePlan


class StateSource(Protocol):
    def table(self, name: tuple[str, ...]) -> CurrentTable | None: ...

    def namespace_exists(self, namespace: tuple[str, ...]) -> bool: ...

    def tables_in(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]: ...


def make_plan(project: Project, source: StateSource, catalog: str, git_sha: str | None = None) -> Plan:
    desired = desired_states(project)
    declared = {t.name for t in project.tables}
    namespaces: list[Change] = [
        CreateNamespace(table=ns) for ns in namespaces_of(desired) if not source.namespace_exists(ns)
    ]
    tables: list[TablePlan] = []
    for state in desired:
        current = source.table(state.name)
        if current is None:
            tables.append(TablePlan(table=state.name, requirement=Requirement(exists=False),
                                    changes=[CreateTable(table=state.name, state=state)]))
            continue
        changes = diff_table(current.state, state)
        tables.append(TablePlan(table=state.name, requirement=requirement_of(current), changes=changes))
    unmanaged = sorted(
        {t for ns in namespaces_of(desired) for t in source.tables_in(ns) if t not in declared}
    )
    return Plan(catalog=catalog, git_sha=git_sha, namespaces=namespaces, tables=tables, unmanaged=unmanaged)


def requirement_of(current: CurrentTable) -> Requirement:
    return Requirement(
        exists=True,
        metadata_location=current.metadata_location,
        schema_id=current.schema_id,
        spec_id=current.spec_id,
        sort_order_id=current.sort_order_id,
    )

"""Semantic checks across a whole project; each returns findings, none prints or raises."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from compiler.checks.columns import check_columns
from compiler.checks.context import TableContext
from compiler.checks.layout import check_layout
from compiler.checks.lifecycle import check_lifecycle
from compiler.checks.properties import check_namespace, check_properties
from compiler.diagnostics import Diagnostic, Diagnostics, Severity
from compiler.effective import effective_settings
from compiler.loader import Project

TABLE_CHECKS: tuple[Callable[[TableContext], Iterator[Diagnostic]], ...] = (
    check_columns,
    check_layout,
    check_properties,
    check_lifecycle,
)


def check_project(project: Project) -> Diagnostics:
    diagnostics = Diagnostics()
    first_table: dict[tuple[str, ...], str] = {}
    for table in project.tables:
        where = table.source.value(("table",))
        if table.name in first_table:
            diagnostics.add(Diagnostic("TP401", Severity.ERROR, where,
                                       f"table '{table.policy.table}' is declared twice",
                                       f"first declared at {first_table[table.name]}"))
            continue
        first_table[table.name] = str(where)
        if table.policy.state == "absent":
            continue
        ctx = TableContext.of(table, effective_settings(project, table))
        for check in TABLE_CHECKS:
            diagnostics.extend(check(ctx))
    first_namespace: dict[tuple[str, ...], str] = {}
    for namespace in project.namespaces:
        where = namespace.source.value(("namespace",))
        if namespace.name in first_namespace:
            diagnostics.add(Diagnostic("TP402", Severity.ERROR, where,
                                       f"defaults for namespace '{namespace.defaults.namespace}' declared twice",
                                       f"first declared at {first_namespace[namespace.name]}"))
            continue
        first_namespace[namespace.name] = str(where)
        diagnostics.extend(check_namespace(namespace))
    return diagnostics

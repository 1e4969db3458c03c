"""Semantic checks across a whole project; each returns findings, none prints or raises."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .. import codes
from ..diagnostics import Diagnostic, Diagnostics, Severity
from ..effective import effective_settings, namespace_chain
from ..loader import LoadedNamespace, LoadedTable, Project
from ..modelcache import ModelCache
from .columns import check_columns
from .context import TableContext
from .layout import check_layout
from .lifecycle import check_lifecycle, declared_lifecycle
from .names import check_names
from .properties import check_namespace, check_properties
from .refs import check_refs
from .views import check_views

TABLE_CHECKS: tuple[Callable[[TableContext], Iterator[Diagnostic]], ...] = (
    check_names,
    check_columns,
    check_layout,
    check_properties,
    check_lifecycle,
    check_refs,
)


def findings_key(project: Project, table: LoadedTable) -> str:
    """A table's findings depend on its file, every namespace defaults file it inherits and the environment
    overlay in effect (its file, since findings name it)."""
    overlay = project.environment
    layers = [f"{overlay.file}\0{overlay.digest}"] if overlay is not None else []
    return "\n".join([table.source.file, *(ns.digest for ns in namespace_chain(project, table)), table.digest,
                      *layers])


def table_findings(project: Project, table: LoadedTable) -> list[Diagnostic]:
    ctx = TableContext(table, effective_settings(project, table))
    return [finding for check in TABLE_CHECKS for finding in check(ctx)]


def check_project(project: Project, cache: ModelCache | None = None) -> Diagnostics:
    """Every semantic finding; with a cache, a table whose files are unchanged replays its findings."""
    diagnostics = Diagnostics()
    first_table: dict[tuple[str, ...], LoadedTable] = {}
    for table in project.tables:
        if table.name in first_table:
            first = first_table[table.name].source.value(("table",))
            diagnostics.add(Diagnostic(codes.TP401, Severity.ERROR, table.source.value(("table",)),
                                       f"table '{table.declared}' is declared twice", f"first declared at {first}"))
            continue
        first_table[table.name] = table
        if table.state == "absent":
            continue
        key = findings_key(project, table)
        cached = cache.findings(key) if cache is not None else None
        if cached is None:
            cached = table_findings(project, table)
            if cache is not None:
                cache.put_findings(key, cached)
        diagnostics.extend(cached)
    first_namespace: dict[tuple[str, ...], LoadedNamespace] = {}
    for namespace in project.namespaces:
        if namespace.name in first_namespace:
            first = first_namespace[namespace.name].source.value(("namespace",))
            diagnostics.add(Diagnostic(codes.TP402, Severity.ERROR, namespace.source.value(("namespace",)),
                                       f"defaults for namespace '{namespace.defaults.namespace}' declared twice",
                                       f"first declared at {first}"))
            continue
        first_namespace[namespace.name] = namespace
        diagnostics.extend(check_namespace(namespace))
        diagnostics.extend(declared_lifecycle(namespace.defaults.lifecycle, namespace.source))
    diagnostics.extend(check_views(project))
    return diagnostics

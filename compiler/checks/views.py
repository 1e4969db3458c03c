"""Views across the project: each declared once (TP460), and no name both a table and a view (TP461)."""

from __future__ import annotations

from collections.abc import Iterator

from compiler import codes
from compiler.diagnostics import Diagnostic, Severity
from compiler.loader import LoadedView, Project


def check_views(project: Project) -> Iterator[Diagnostic]:
    tables = {t.name: t for t in project.tables}
    first: dict[tuple[str, ...], LoadedView] = {}
    for view in project.views:
        where = view.source.value(("view",))
        if view.name in first:
            yield Diagnostic(codes.TP460, Severity.ERROR, where, f"view '{view.declared}' is declared twice",
                             f"first declared at {first[view.name].source.value(('view',))}; keep one file")
            continue
        first[view.name] = view
        table = tables.get(view.name)
        if table is not None:
            yield Diagnostic(codes.TP461, Severity.ERROR, where,
                             f"'{view.declared}' is declared both as a view and as a table",
                             f"the table is declared at {table.source.value(('table',))}; rename one of them "
                             "(a catalog holds one table or view per name)")

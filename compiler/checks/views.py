"""Views across the project: each declared once (TP460), no name both a table and a view (TP461), no property
Spark, Iceberg or another key of the policy sets (TP501), SQL that sqlglot parses (TP464, a warning)."""

from __future__ import annotations

from collections.abc import Iterator

from .. import codes
from ..diagnostics import Diagnostic, Severity
from ..loader import LoadedView, Project
from ..model.view import OWNER_KEY
from .view_reads import check_view_sql

# view properties Spark or Iceberg set themselves, or that a key of the view policy owns, and what to write instead
VIEW_RESERVED = {
    "comment": "write the view's comment as top-level 'description:'",
    "owner": "Spark sets 'owner' itself; declare the team with top-level 'owner:'",
    OWNER_KEY: "declare the team with top-level 'owner:'",
    "create_engine_version": "Iceberg's Spark catalog sets it when the view is created",
    "engine_version": "Iceberg's Spark catalog sets it on every version",
    "spark.query-column-names": "Spark records the SELECT's column names itself",
}


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
        yield from check_view_sql(view)
        for key in view.policy.properties:
            if key in VIEW_RESERVED:
                yield Diagnostic(codes.TP501, Severity.ERROR, view.source.key(("properties", key)),
                                 f"'{key}' is a view property this policy cannot declare", VIEW_RESERVED[key])
        table = tables.get(view.name)
        if table is not None:
            yield Diagnostic(codes.TP461, Severity.ERROR, where,
                             f"'{view.declared}' is declared both as a view and as a table",
                             f"the table is declared at {table.source.value(('table',))}; rename one of them "
                             "(a catalog holds one table or view per name)")

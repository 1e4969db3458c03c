"""The catalog's views for ``health``: listed and read without a JVM (runtime/catalog/reader.py: a SQL catalog's
VIEW rows and their metadata files), in the namespaces the run selects, compared with git
(compiler/maintenance/view_health.py)."""

from __future__ import annotations

from datetime import datetime

from tablepolicy.compiler.errors import CatalogError
from tablepolicy.compiler.loader import Project
from tablepolicy.compiler.maintenance.view_health import (
    ViewHealth,
    ViewsHealth,
    health_namespaces,
    unreadable,
    views_health,
)
from tablepolicy.compiler.model.view import CurrentView

from .catalog.reader import CatalogReader


def read_views_health(reader: CatalogReader, project: Project, now: datetime) -> ViewsHealth:
    """The views of the selected namespaces; for a catalog whose views cannot be read, says so (``unread``)."""
    namespaces = health_namespaces(project)
    if not reader.reads_views:
        return ViewsHealth(namespaces=tuple(namespaces), unread="tablepolicy reads views from SQL catalogs "
                           f"(Iceberg's JDBC catalog) only, and {reader.config.describe()} is none")
    selected = set(namespaces)
    held: list[CurrentView | ViewHealth] = []
    for name in reader.view_names():
        if name[:-1] not in selected:
            continue
        try:
            view = reader.view(name)
        except CatalogError as exc:  # one view another engine wrote (no Spark SQL): listed as such, health goes on
            held.append(unreadable(name, str(exc)))
            continue
        if view is not None:
            held.append(view)
    return views_health(project, held, namespaces, now)

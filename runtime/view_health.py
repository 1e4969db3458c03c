"""The catalog's views for ``health``: listed and read without a JVM (runtime/catalog/reader.py: a SQL catalog's
VIEW rows and their metadata files), in the namespaces the run selects, compared with git
(compiler/maintenance/view_health.py)."""

from __future__ import annotations

from datetime import datetime

from compiler.loader import Project
from compiler.maintenance.view_health import ViewsHealth, health_namespaces, views_health
from runtime.catalog.reader import CatalogReader


def read_views_health(reader: CatalogReader, project: Project, now: datetime) -> ViewsHealth:
    """The views of the selected namespaces; for a catalog whose views cannot be read, says so (``unread``)."""
    namespaces = health_namespaces(project)
    if not reader.reads_views:
        return ViewsHealth(namespaces=tuple(namespaces), unread="tablepolicy reads views from SQL catalogs "
                           f"(Iceberg's JDBC catalog) only, and {reader.config.describe()} is none")
    selected = set(namespaces)
    held = [view for name in reader.view_names() if name[:-1] in selected
            if (view := reader.view(name)) is not None]
    return views_health(project, held, namespaces, now)

"""Which maintenance every declared table needs now: health read from the catalog, decided by policy.

Reads metadata and manifests through pyiceberg (no JVM); the runtime executes the result in Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from compiler.effective import effective_settings
from compiler.loader import Project
from compiler.maintenance.actions import Action
from compiler.maintenance.decide import compaction_window, expiry_cutoff, maintenance_for
from compiler.maintenance.health import TableHealth, read_health
from compiler.model.names import parse_name

if TYPE_CHECKING:
    from compiler.catalog.reader import CatalogReader


@dataclass(frozen=True)
class TableMaintenance:
    table: tuple[str, ...]
    health: TableHealth
    actions: list[Action]


@dataclass(frozen=True)
class MaintenancePlan:
    tables: list[TableMaintenance]
    missing: list[tuple[str, ...]] = field(default_factory=list)  # declared, not created yet: apply first

    @property
    def actions(self) -> list[Action]:
        return [a for t in self.tables for a in t.actions]


def maintenance_plan(project: Project, reader: CatalogReader, now: datetime) -> MaintenancePlan:
    tables, missing = [], []
    for loaded in sorted((t for t in project.tables if t.state == "present"), key=lambda t: t.name):
        current, table = reader.table(loaded.name), reader.pyiceberg_table(loaded.name)
        if current is None or table is None:
            missing.append(loaded.name)
            continue
        effective = effective_settings(project, loaded)
        cutoff = expiry_cutoff(effective, now)
        retention = effective.lifecycle.retention
        column = retention.column if retention is not None else None
        window = compaction_window(effective, current.state, now)
        health = read_health(loaded.name, table, (parse_name(column), cutoff) if column and cutoff else None,
                             (window.column, window.before) if window is not None else None)
        tables.append(TableMaintenance(loaded.name, health, maintenance_for(effective, current.state, health, now)))
    return MaintenancePlan(tables, missing)

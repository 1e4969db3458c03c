"""Which maintenance every declared table needs now: health read from the catalog, decided by policy.

Reads metadata and manifests through pyiceberg (no JVM); the runtime executes the result in Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from compiler.effective import Effective, effective_settings
from compiler.loader import Project
from compiler.maintenance.actions import Action
from compiler.maintenance.decide import DEFAULT_ORPHAN_AGE, Skip, compaction_window, decisions, expiry_cutoff
from compiler.maintenance.health import OrphanFigures, TableHealth, read_health
from compiler.maintenance.select import EVERYTHING, Selection
from compiler.model.names import parse_name
from compiler.model.table import TableState

if TYPE_CHECKING:
    from pyiceberg.table import Table

    from compiler.catalog.reader import CatalogReader


@dataclass(frozen=True)
class Basis:
    """What a table's decisions are made from besides its health, kept so that a run can decide again on the
    health it reads after each action (same policy, same ``now``: the dry run and the run agree)."""

    effective: Effective
    state: TableState
    now: datetime
    selection: Selection = EVERYTHING

    def health_of(self, name: tuple[str, ...], table: Table, scan_orphans: OrphanScanner | None) -> TableHealth:
        cutoff = expiry_cutoff(self.effective, self.now)
        retention = self.effective.lifecycle.retention
        column = retention.column if retention is not None else None
        window = compaction_window(self.effective, self.state, self.now)
        health = read_health(name, table, (parse_name(column), cutoff) if column and cutoff else None,
                             (window.column, window.before) if window is not None else None)
        orphans = self.effective.lifecycle.orphan_files
        if (scan_orphans is not None and orphans is not None and orphans.enabled is not False
                and self.selection.covers_action("remove_orphan_files")):
            guard = self.now - timedelta(milliseconds=(orphans.older_than or DEFAULT_ORPHAN_AGE).millis)
            health = health.model_copy(update={"orphans": scan_orphans(name, table, guard)})
        return health

    def decide(self, name: tuple[str, ...], health: TableHealth) -> TableMaintenance:
        found = [d for d in decisions(self.effective, self.state, health, self.now)
                 if self.selection.covers_action(d.action)]
        return TableMaintenance(name, health, [d for d in found if not isinstance(d, Skip)],
                                [d for d in found if isinstance(d, Skip)], self)


@dataclass(frozen=True)
class TableMaintenance:
    table: tuple[str, ...]
    health: TableHealth
    actions: list[Action]
    skips: list[Skip] = field(default_factory=list)  # declared actions not due now, each with its reason
    basis: Basis | None = None  # None for figures made by hand (tests, health views)


@dataclass(frozen=True)
class MaintenancePlan:
    tables: list[TableMaintenance]
    missing: list[tuple[str, ...]] = field(default_factory=list)  # declared, not created yet: apply first
    now: datetime | None = None

    @property
    def actions(self) -> list[Action]:
        return [a for t in self.tables for a in t.actions]


# (name, table, files older than this) -> orphan figures from a listing of the table location
# (runtime/orphans.py), or None where a listing cannot decide (the removal is then left to Spark's own checks)
OrphanScanner = Callable[[tuple[str, ...], "Table", datetime], OrphanFigures | None]


def maintenance_plan(
    project: Project, reader: CatalogReader, now: datetime, scan_orphans: OrphanScanner | None = None,
    selection: Selection = EVERYTHING,
) -> MaintenancePlan:
    """``scan_orphans``: lists a table's location when its policy declares orphan removal, so removal is due
    only when there are old unreferenced files (and Spark is not started to find there are none).
    ``selection``: the tables and actions of this run (``--table``, ``--only``); health is read for those only."""
    tables, missing = [], []
    for loaded in sorted((t for t in project.tables if t.state == "present"), key=lambda t: t.name):
        if not selection.covers_table(loaded.name):
            continue
        current, table = reader.table(loaded.name), reader.pyiceberg_table(loaded.name)
        if current is None or table is None:
            missing.append(loaded.name)
            continue
        basis = Basis(effective_settings(project, loaded), current.state, now, selection)
        tables.append(basis.decide(loaded.name, basis.health_of(loaded.name, table, scan_orphans)))
    return MaintenancePlan(tables, missing, now)

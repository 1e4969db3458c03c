"""Which maintenance every declared table needs now: health, decided by policy.

Health comes through a HealthSource (runtime/health.py reads metadata and manifests with pyiceberg, no JVM);
this module only asks for it and decides. The runtime executes the result: rewrites and retention deletes in
Spark, snapshot expiry and orphan removal without an engine (``needs_spark``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from ..catalog.current import CurrentTable
from ..effective import Effective, effective_settings
from ..iceberg.names import natural_key, parse_name
from ..loader import Project
from ..model.table import ColumnPath, TableState
from . import actions
from .actions import Action
from .decide import DEFAULT_ORPHAN_AGE, Skip, compaction_window, decisions, expiry_cutoff
from .health import TableHealth
from .select import EVERYTHING, Selection


@dataclass(frozen=True)
class HealthRequest:
    """What a table's health must hold for its decisions: ``retention``, the column and cutoff whose older rows
    are estimated; ``recent``, files wholly at or after it are left out of compaction; ``orphans_older_than``,
    list the table location for unreferenced files older than this (None: do not list)."""

    retention: tuple[ColumnPath, datetime] | None
    recent: tuple[ColumnPath, datetime] | None
    orphans_older_than: datetime | None


class HealthSource(Protocol):
    """The catalog as maintenance reads it (runtime/health.py: CatalogHealth)."""

    def table(self, name: tuple[str, ...]) -> CurrentTable | None: ...

    def health(self, name: tuple[str, ...], request: HealthRequest) -> TableHealth | None:
        """None: the table is not in the catalog."""
        ...


@dataclass(frozen=True)
class Basis:
    """What a table's decisions are made from besides its health, kept so that a run can decide again on the
    health it reads after each action (same policy, same ``now``: the dry run and the run agree)."""

    effective: Effective
    state: TableState
    now: datetime
    selection: Selection = EVERYTHING

    def request(self) -> HealthRequest:
        cutoff = expiry_cutoff(self.effective, self.now)
        retention = self.effective.lifecycle.retention
        column = retention.column if retention is not None else None
        window = compaction_window(self.effective, self.state, self.now)
        orphans = self.effective.lifecycle.orphan_files
        guard = None
        if orphans is not None and orphans.enabled is not False and self.selection.covers_action("remove_orphan_files"):
            guard = self.now - timedelta(milliseconds=(orphans.older_than or DEFAULT_ORPHAN_AGE).millis)
        return HealthRequest((parse_name(column), cutoff) if column and cutoff else None,
                             (window.column, window.before) if window is not None else None, guard)

    def health_of(self, name: tuple[str, ...], source: HealthSource) -> TableHealth | None:
        return source.health(name, self.request())

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

    @property
    def needs_spark(self) -> bool:
        """Whether a due action runs on Spark: rewrites and retention deletes do; snapshot expiry does not, nor
        orphan removal where this process listed the table location (its health holds the orphans found)."""
        return any(needs_spark(a, self.health) for a in self.actions)


def needs_spark(action: Action, health: TableHealth) -> bool:
    if isinstance(action, actions.RemoveOrphanFiles):
        return health.orphans is None
    return not isinstance(action, actions.ExpireSnapshots)


@dataclass(frozen=True)
class MaintenancePlan:
    tables: list[TableMaintenance]
    missing: list[tuple[str, ...]] = field(default_factory=list)  # declared, not created yet: apply first
    now: datetime | None = None

    @property
    def actions(self) -> list[Action]:
        return [a for t in self.tables for a in t.actions]


def maintenance_plan(
    project: Project, source: HealthSource, now: datetime, selection: Selection = EVERYTHING,
    on_work: Callable[[TableMaintenance], None] = lambda _t: None,
) -> MaintenancePlan:
    """``source`` lists a table's location when its policy declares orphan removal (if it can), so removal is
    due only when there are old unreferenced files (and Spark is not started to find there are none).
    ``selection``: the tables and actions of this run (``--table``, ``--only``); health is read for those only.
    ``on_work``: told of each table with due actions as soon as it is decided (a run starts Spark then, while
    the remaining tables are read, if the table ``needs_spark``)."""
    tables, missing = [], []
    for loaded in sorted((t for t in project.tables if t.state == "present"), key=lambda t: natural_key(t.name)):
        if not selection.covers_table(loaded.name):
            continue
        current = source.table(loaded.name)
        basis = Basis(effective_settings(project, loaded), current.state, now, selection) if current else None
        health = basis.health_of(loaded.name, source) if basis is not None else None
        if basis is None or health is None:
            missing.append(loaded.name)
            continue
        decided = basis.decide(loaded.name, health)
        if decided.actions:
            on_work(decided)
        tables.append(decided)
    return MaintenancePlan(tables, missing, now)

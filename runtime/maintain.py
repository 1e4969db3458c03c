"""maintain: run the maintenance each table needs now, one table at a time.

Rewrites and retention deletes run in Spark; snapshot expiry (runtime/expiry.py) and orphan removal
(runtime/orphans.py) run without an engine, through the FileIO and filesystem the decisions read with. Spark
is started once, on the first action that needs it (or earlier, on a thread, when the decisions found one):
a run whose due actions need no engine starts no JVM.

After each action the table's health is read again from its new metadata (pyiceberg, no JVM) and the
compiler decides again before the next action (compiler/maintenance/sequence.py): an action the one before
made unnecessary is reported as a skip with its reason instead of being run for nothing.

The tables are locked like an apply locks them, so maintenance never runs beside an apply of the same
table. A failed action stops the rest of that table's actions (their order matters) and the run goes
on with the next table; the caller exits 1 if anything failed. Maintenance is idempotent: the next
scheduled run decides again from the health it then reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.maintenance import actions
from tablepolicy.compiler.maintenance.actions import Action
from tablepolicy.compiler.maintenance.decide import Skip
from tablepolicy.compiler.maintenance.due import MaintenancePlan, TableMaintenance, needs_spark
from tablepolicy.compiler.maintenance.health import OrphanFigures
from tablepolicy.compiler.maintenance.measured import measured
from tablepolicy.compiler.maintenance.report import ActionRun, MaintenanceReport, Status, TableOutcome
from tablepolicy.compiler.maintenance.sequence import unchanged, work_table
from tablepolicy.compiler.render.maintenance import action_sql

from .catalog.reader import CatalogReader, read_metadata
from .executor import ExecutionError, query_sql, with_conflict_retries
from .expiry import ExpiryRefused, expire
from .health import CatalogHealth, OrphanScanner
from .lock import catalog_locks
from .manifests import damaged_in
from .orphans import normalize, orphan_figures, remove_orphans, stored_files
from .redaction import register
from .spark.session import SessionOnDemand, SparkOptions

if TYPE_CHECKING:
    from pyiceberg.table import Table


class _Refused(Exception):
    """An action not started because it would be unsafe (the step is reported refused)."""


class Progress(Protocol):
    """What a run reports while it works (tablepolicy/cli/progress.py shows it)."""

    def starting_spark(self) -> None: ...
    def table(self, number: int, total: int, name: tuple[str, ...]) -> None: ...
    def action(self, action: Action) -> None: ...
    def step(self, step: ActionRun | Skip) -> None: ...


class Silent:
    def starting_spark(self) -> None:
        pass

    def table(self, number: int, total: int, name: tuple[str, ...]) -> None:
        pass

    def action(self, action: Action) -> None:
        pass

    def step(self, step: ActionRun | Skip) -> None:
        pass


def _location(text: str) -> str:
    """A table location comparable across engines (``file:/x``, ``file:///x`` and ``/x`` are one place)."""
    return normalize(text).rstrip("/")


@dataclass(frozen=True)
class Located:
    catalog: str
    name: tuple[str, ...]
    location: str


class Locations:
    """Every table location of the SQL catalog database, read once per run (on first use) and reused for
    every table's decision and before every removal.

    Every table in the same SQL catalog database counts, whatever catalog name it was created under (a
    second catalog name over the same warehouse gives a same-named table the same location). Catalogs that
    are not SQL databases are asked only about the table itself.
    """

    def __init__(self) -> None:
        self._tables: tuple[Located, ...] | None = None

    def _read(self, reader: CatalogReader) -> tuple[Located, ...]:
        engine = getattr(reader.catalog, "engine", None)
        if engine is None:
            return ()
        from sqlalchemy import text

        with engine.connect() as connection:
            rows = connection.execute(text("SELECT catalog_name, table_namespace, table_name, metadata_location "
                                           "FROM iceberg_tables")).all()
        found = []
        for catalog, namespace, table_name, metadata_location in sorted(rows, key=lambda r: tuple(map(str, r))):
            if not metadata_location:
                continue
            try:
                where = _location(str(read_metadata(reader.catalog, str(metadata_location))["location"]))
            except Exception:  # unreadable metadata: its location is unknown, so it may be ours
                where = _location(str(metadata_location).rsplit("/metadata/", 1)[0])
            found.append(Located(str(catalog), (*str(namespace).split("."), str(table_name)), where))
        return tuple(found)

    def overlap(self, reader: CatalogReader, name: tuple[str, ...], location: str) -> str | None:
        """Why removing orphan files under ``location`` (table ``name``'s) would delete files another table
        owns, or None."""
        if self._tables is None:
            self._tables = self._read(reader)
        mine = _location(location)
        for other in self._tables:
            if other.catalog == reader.catalog.name and other.name == name:
                continue
            theirs = other.location
            if theirs == mine or theirs.startswith(mine + "/") or mine.startswith(theirs + "/"):
                return (f"table {format_name(other.name)} of catalog '{other.catalog}' (same catalog database) has "
                        f"its files at {theirs}, which overlaps this table's location {mine}: removing orphan files "
                        "here would delete its files; give the tables separate locations (or catalogs separate "
                        "warehouses)")
        return None


def orphan_scanner(reader: CatalogReader, locations: Locations) -> OrphanScanner:
    def scan(name: tuple[str, ...], table: Table, guard: datetime) -> OrphanFigures | None:
        # a location another table shares cannot be judged from this table's metadata: the removal stays
        # due and maintain refuses it, naming the other table
        try:
            return None if locations.overlap(reader, name, table.location()) else orphan_figures(table, guard)
        except Exception:  # storage this process cannot list (credentials, permissions): Spark lists it
            return None

    return scan


def run_maintenance(
    plan: MaintenancePlan,
    catalog: CatalogConfig,
    options: SparkOptions,
    *,
    lock_dir: Path,
    progress: Progress | None = None,
    locations: Locations | None = None,
    session: SessionOnDemand | None = None,
) -> MaintenanceReport:
    """Every table with due actions, in order; the others are reported unchanged. ``locations``: the map the
    decisions were made with (read on first use otherwise); ``session``: the run's Spark session, perhaps
    already starting since the first table needing it was decided (started here, on the first action that
    needs Spark, otherwise; never when none does)."""
    register(catalog)  # a step's error is masked with this catalog's secrets (runtime/redaction.py)
    progress = progress or Silent()
    locations = locations or Locations()
    outcomes = {t.table: unchanged(t) for t in plan.tables}
    due = [t for t in plan.tables if t.actions]
    if due:
        session = session or SessionOnDemand(catalog, options)
        with CatalogReader(catalog) as reader, catalog_locks(reader, [format_name(t.table) for t in due], lock_dir):
            run = _Run(session, reader, catalog.name, locations, progress)
            for number, planned in enumerate(due, 1):
                progress.table(number, len(due), planned.table)
                outcomes[planned.table] = run.table(planned)
    return MaintenanceReport(catalog.summary(), False, tuple(outcomes[t.table] for t in plan.tables),
                             tuple(plan.missing))


ENGINE_FREE = "-- without Spark (pyiceberg and the table's filesystem), to the effect of:\n"


@dataclass(frozen=True)
class _Run:
    session: SessionOnDemand
    reader: CatalogReader
    catalog: str
    locations: Locations
    progress: Progress
    filesystems: dict[tuple[str, str], Any] = field(default_factory=dict)  # one per scheme and bucket of the run

    @property
    def spark(self) -> Any:
        """The run's session, started on the first action that needs it."""
        if not self.session.ready:
            self.progress.starting_spark()
        return self.session.session()

    def sql(self, action: Action) -> str:
        return action_sql(action, self.catalog)

    def table(self, planned: TableMaintenance) -> TableOutcome:
        before = self._stored(planned.table)
        outcome = work_table(planned, self.execute, self.sql, self.progress.step)
        after = self._stored(planned.table) if before is not None else None
        if before is None or after is None:
            return outcome
        freed = sum(size for path, size in before.items() if path not in after)
        return replace(outcome, stored_bytes=(sum(before.values()), sum(after.values())), freed_bytes=freed)

    def execute(self, action: Action, current: TableMaintenance) -> tuple[ActionRun, TableMaintenance | None]:
        self.progress.action(action)
        sql, name = self.sql(action), action.table
        engine = needs_spark(action, current.health)
        if isinstance(action, actions.RemoveOrphanFiles):
            table = self.reader.pyiceberg_table(name, fresh=True)
            refusal = self.locations.overlap(self.reader, name, table.location()) if table is not None else None
            if refusal is not None:
                return ActionRun(action, sql, Status.REFUSED, error=refusal), None
        started = time.perf_counter()
        if not engine:
            sql = ENGINE_FREE + sql
            try:
                rows = self._without_engine(action)
            except (ExecutionError, ExpiryRefused, OSError) as exc:
                spent = time.perf_counter() - started
                return ActionRun(action, sql, Status.FAILED, seconds=spent, error=str(exc)), None
            except _Refused as refused:
                return ActionRun(action, sql, Status.REFUSED, error=str(refused)), None
            return self._done(action, current, sql, rows, time.perf_counter() - started)
        try:
            what = f"{format_name(name)}: {action.summary}"
            spark = self.spark
            rows = with_conflict_retries(spark, lambda: query_sql(spark, sql, what)) or []
        except ExecutionError as exc:  # on a torn file a snapshot reads: the finding names it and what to do
            table = self.reader.pyiceberg_table(name, fresh=True)
            try:
                error = (damaged_in(table, str(exc)) if table is not None else None) or str(exc)
            except ExecutionError as damage:  # a manifest the table reads is torn too
                error = str(damage)
            return ActionRun(action, sql, Status.FAILED, seconds=time.perf_counter() - started, error=error), None
        return self._done(action, current, sql, rows, time.perf_counter() - started)

    def _done(self, action: Action, current: TableMaintenance, sql: str, rows: list[dict[str, Any]],
              seconds: float) -> tuple[ActionRun, TableMaintenance | None]:
        name = action.table
        fresh = self._decide_again(current)
        if fresh is None:
            gone = f"{format_name(name)}: the table is no longer in the catalog after this action"
            return ActionRun(action, sql, Status.FAILED, seconds=seconds, error=gone), None
        effect = measured(action, rows, current.health, fresh.health)
        return ActionRun(action, sql, Status.DONE, effect, seconds, rows[0] if rows else {}), fresh

    def _without_engine(self, action: Action) -> list[dict[str, Any]]:
        """Run an expiry or orphan removal with no JVM; the rows Spark's procedure would return."""
        name = action.table
        table = self.reader.pyiceberg_table(name, fresh=True)
        if table is None:
            raise ExecutionError(f"{format_name(name)}: the table is no longer in the catalog")
        if isinstance(action, actions.ExpireSnapshots):
            def latest() -> Table:
                found = self.reader.pyiceberg_table(name, fresh=True)
                if found is None:
                    raise ExecutionError(f"{format_name(name)}: the table is no longer in the catalog")
                return found

            expired = expire(format_name(name), latest, older_than=action.older_than,
                             retain_last=action.retain_last, clock=lambda: datetime.now(UTC),
                             filesystems=self.filesystems)
            return [expired.output()]
        assert isinstance(action, actions.RemoveOrphanFiles), action.action
        removal = remove_orphans(table, action.older_than)
        if removal.scan.refused is not None:
            raise _Refused(f"{format_name(name)}: {removal.scan.refused}")
        return [{"orphan_file_location": path} for path in removal.deleted]

    def _decide_again(self, current: TableMaintenance) -> TableMaintenance | None:
        if current.basis is None:
            return None
        source = CatalogHealth(self.reader, orphan_scanner(self.reader, self.locations), fresh=True)
        health = current.basis.health_of(current.table, source)
        return current.basis.decide(current.table, health) if health is not None else None

    def _stored(self, name: tuple[str, ...]) -> dict[str, int] | None:
        """Every file under the table location with its size, or None where it cannot be listed."""
        table = self.reader.pyiceberg_table(name, fresh=True)
        try:
            return stored_files(table.location(), table.io.properties) if table is not None else None
        except Exception:  # storage this process cannot list: the report says "unknown"
            return None

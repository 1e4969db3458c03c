"""maintain: run the maintenance each table needs now, through Spark, one table at a time.

The tables are locked like an apply locks them, so maintenance never runs beside an apply of the same
table. A failed action stops the rest of that table's actions (their order matters) and the run goes
on with the next table; the caller exits 1 if anything failed. Maintenance is idempotent: the next
scheduled run decides again from the health it then reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.catalog.config import CatalogConfig
from compiler.catalog.reader import CatalogReader, read_metadata
from compiler.maintenance.actions import Action, RemoveOrphanFiles
from compiler.maintenance.due import MaintenancePlan
from compiler.model.names import format_name
from compiler.render.maintenance import action_sql
from runtime.executor import ExecutionError, query_sql, with_commit_retries
from runtime.lock import catalog_locks
from runtime.orphans import normalize
from runtime.spark.session import SparkOptions, start_session


@dataclass(frozen=True)
class ActionResult:
    action: Action
    sql: str
    status: str  # "done" | "failed" | "refused" | "skipped (an earlier action of the table failed)"
    seconds: float = 0.0
    output: dict[str, Any] = field(default_factory=dict)  # the procedure's result row
    error: str | None = None


@dataclass
class MaintainReport:
    results: list[ActionResult] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(r.status in ("failed", "refused") for r in self.results)


def run_maintenance(
    plan: MaintenancePlan,
    catalog: CatalogConfig,
    options: SparkOptions,
    *,
    lock_dir: Path,
    on_result: Callable[[ActionResult], None] = lambda _r: None,
) -> MaintainReport:
    report = MaintainReport()
    due = [t for t in plan.tables if t.actions]
    if not due:
        return report
    spark = start_session(catalog, options)
    with CatalogReader(catalog) as reader, catalog_locks(reader, [format_name(t.table) for t in due], lock_dir):
        for table in due:
            failed = False
            for action in table.actions:
                refusal = shared_location(reader, action.table) if isinstance(action, RemoveOrphanFiles) else None
                if failed:
                    result = _skipped(action, catalog.name)
                elif refusal is not None:
                    result = ActionResult(action, action_sql(action, catalog.name), "refused", error=refusal)
                else:
                    result = _run(spark, action, catalog.name)
                failed = failed or result.status in ("failed", "refused")
                report.results.append(result)
                on_result(result)
    return report


def _location(text: str) -> str:
    """A table location comparable across engines (``file:/x``, ``file:///x`` and ``/x`` are one place)."""
    return normalize(text).rstrip("/")


def shared_location(reader: CatalogReader, name: tuple[str, ...]) -> str | None:
    """Why removing orphan files under the table's location would delete files another table owns, or None.

    Every table in the same SQL catalog database counts, whatever catalog name it was created under (a
    second catalog name over the same warehouse gives a same-named table the same location). Catalogs that
    are not SQL databases are asked only about the table itself.
    """
    table = reader.pyiceberg_table(name, fresh=True)
    engine = getattr(reader.catalog, "engine", None)
    if table is None or engine is None:
        return None
    mine = _location(table.location())
    from sqlalchemy import text

    with engine.connect() as connection:
        rows = connection.execute(text("SELECT catalog_name, table_namespace, table_name, metadata_location "
                                       "FROM iceberg_tables")).all()
    for catalog, namespace, table_name, metadata_location in sorted(rows, key=lambda r: tuple(map(str, r))):
        other = (*str(namespace).split("."), str(table_name))
        if (str(catalog) == reader.catalog.name and other == name) or not metadata_location:
            continue
        try:
            theirs = _location(str(read_metadata(reader.catalog, str(metadata_location))["location"]))
        except Exception:  # unreadable metadata: its location is unknown, so it may be ours
            theirs = _location(str(metadata_location).rsplit("/metadata/", 1)[0])
        if theirs == mine or theirs.startswith(mine + "/") or mine.startswith(theirs + "/"):
            return (f"table {format_name(other)} of catalog '{catalog}' (same catalog database) has its files at "
                    f"{theirs}, which overlaps this table's location {mine}: removing orphan files here would "
                    "delete its files; give the tables separate locations (or catalogs separate warehouses)")
    return None


def _run(spark: Any, action: Action, catalog: str) -> ActionResult:
    sql = action_sql(action, catalog)
    started = time.perf_counter()
    try:
        what = f"{format_name(action.table)}: {action.summary}"
        rows = with_commit_retries(spark, lambda: query_sql(spark, sql, what))
    except ExecutionError as exc:
        return ActionResult(action, sql, "failed", time.perf_counter() - started, error=str(exc))
    return ActionResult(action, sql, "done", time.perf_counter() - started, output=rows[0] if rows else {})


def _skipped(action: Action, catalog: str) -> ActionResult:
    return ActionResult(action, action_sql(action, catalog), "skipped (an earlier action of the table failed)")

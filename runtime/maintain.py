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
from compiler.catalog.reader import CatalogReader
from compiler.maintenance.actions import Action
from compiler.maintenance.due import MaintenancePlan
from compiler.model.names import format_name
from compiler.render.maintenance import action_sql
from runtime.executor import ExecutionError, query_sql, with_commit_retries
from runtime.lock import catalog_locks
from runtime.spark.session import SparkOptions, start_session


@dataclass(frozen=True)
class ActionResult:
    action: Action
    sql: str
    status: str  # "done" | "failed" | "skipped (an earlier action of the table failed)"
    seconds: float = 0.0
    output: dict[str, Any] = field(default_factory=dict)  # the procedure's result row
    error: str | None = None


@dataclass
class MaintainReport:
    results: list[ActionResult] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(r.status == "failed" for r in self.results)


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
                result = _skipped(action, catalog.name) if failed else _run(spark, action, catalog.name)
                failed = failed or result.status == "failed"
                report.results.append(result)
                on_result(result)
    return report


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

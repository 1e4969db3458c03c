"""Run one Spark SQL statement; a failure becomes an ExecutionError naming the step, never a traceback."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

from compiler.errors import TablePolicyError

Result = TypeVar("Result")
COMMIT_ATTEMPTS = 8
# commit conflicts with concurrent writers that leave the table unchanged and are safe to retry
TRANSIENT = re.compile(r"SQLITE_BUSY|database is locked|CommitFailedException|could not serialize|deadlock")


class ExecutionError(TablePolicyError):
    """A step failed in Spark; the message names the change and the statement."""


def run_sql(spark: Any, sql: str, what: str) -> None:
    try:
        spark.sql(sql)
    except Exception as exc:
        raise ExecutionError(f"{what} failed: {_reason(exc)}\n  statement: {sql}") from None


def query_sql(spark: Any, sql: str, what: str) -> list[dict[str, Any]]:
    """Run a statement that returns rows (a stored procedure's result) and return them as dicts."""
    try:
        return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]
    except Exception as exc:
        raise ExecutionError(f"{what} failed: {_reason(exc)}\n  statement: {sql}") from None


def _reason(exc: Exception) -> str:
    """The JVM's own message (innermost cause) rather than py4j's 'An error occurred while calling'."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        cause = java
        while cause.getCause() is not None and cause.getCause() != cause:
            cause = cause.getCause()
        return f"{cause.getClass().getSimpleName()}: {cause.getMessage()}"
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def with_commit_retries(
    spark: Any, run: Callable[[], Result], landed: Callable[[], bool] = lambda: False
) -> Result | None:
    """Run one statement; a commit that lost a race with another writer changed nothing and is tried again.

    ``landed`` says whether the statement took effect although an error was reported (then None is
    returned). Before each retry Spark's catalog plugins are dropped: a JDBC catalog whose pooled SQLite
    connection failed a commit keeps a stale read snapshot (SQLITE_BUSY_SNAPSHOT on every retry).
    """
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        try:
            return run()
        except ExecutionError as exc:
            if attempt == COMMIT_ATTEMPTS or not TRANSIENT.search(str(exc)):
                raise
            time.sleep(min(0.1 * 2**attempt, 2.0))
            spark._jsparkSession.sessionState().catalogManager().reset()
            if landed():
                return None
    raise AssertionError("unreachable: the last attempt returns or raises")

"""Run one Spark SQL statement; a failure becomes an ExecutionError naming the step, never a traceback."""

from __future__ import annotations

from typing import Any

from compiler.errors import TablePolicyError


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

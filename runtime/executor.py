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
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExecutionError(f"{what} failed: {first}\n  statement: {sql}") from None

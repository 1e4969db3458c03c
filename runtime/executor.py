"""Run rendered statements through Spark, one at a time, reporting each step to a callback."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compiler.errors import TablePolicyError
from compiler.render.sql import Statement

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class ExecutionError(TablePolicyError):
    """A step failed in Spark; the message names the change and the statement."""


@dataclass(frozen=True)
class StepResult:
    index: int
    statement: Statement
    seconds: float


def execute(
    spark: SparkSession,
    steps: Sequence[Statement],
    on_step: Callable[[StepResult], None] = lambda _r: None,
) -> list[StepResult]:
    import time

    results = []
    for index, statement in enumerate(steps, start=1):
        started = time.perf_counter()
        try:
            spark.sql(statement.sql)
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ExecutionError(
                f"step {index} ({statement.change.summary}) failed: {first}\n  statement: {statement.sql}"
            ) from None
        result = StepResult(index, statement, time.perf_counter() - started)
        results.append(result)
        on_step(result)
    return results

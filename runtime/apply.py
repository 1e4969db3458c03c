"""apply: a plan -> Spark SQL executed step by step in one session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compiler.catalog.config import CatalogConfig
from compiler.catalog.reader import CatalogReader
from compiler.errors import TablePolicyError
from compiler.plan.model import Plan
from compiler.render.sql import Statement, statements
from runtime.executor import StepResult, execute
from runtime.spark.session import SparkOptions, start_session


@dataclass(frozen=True)
class ApplyReport:
    steps: list[StepResult]


def plan_statements(plan: Plan) -> list[Statement]:
    return [s for change in plan.changes for s in statements(change, plan.catalog)]


def apply_plan(
    plan: Plan,
    catalog: CatalogConfig,
    options: SparkOptions,
    on_step: Callable[[StepResult], None] = lambda _r: None,
) -> ApplyReport:
    steps = plan_statements(plan)
    if not steps:
        return ApplyReport([])
    spark = start_session(catalog, options)
    return ApplyReport(execute(spark, steps, on_step))


class StalePlanError(TablePolicyError):
    """The catalog changed since the plan was made: plan again and review."""


def check_requirements(plan: Plan, reader: CatalogReader) -> None:
    """Refuse the whole apply, before anything runs, if any table moved since planning."""
    stale = []
    for table in plan.tables:
        current = reader.table(table.table)
        want = table.requirement
        name = ".".join(table.table)
        if not want.exists and current is not None:
            stale.append(f"{name}: planned as new, but it exists now")
        elif want.exists and current is None:
            stale.append(f"{name}: it was dropped since the plan was made")
        elif current is not None and current.metadata_location != want.metadata_location:
            detail = ", ".join(
                f"{label} {old} -> {new}"
                for label, old, new in (("schema id", want.schema_id, current.schema_id),
                                        ("spec id", want.spec_id, current.spec_id),
                                        ("sort order id", want.sort_order_id, current.sort_order_id))
                if old != new
            ) or "metadata changed"
            stale.append(f"{name}: changed since the plan was made ({detail})")
    if stale:
        raise StalePlanError("plan is stale, nothing was applied:\n  " + "\n  ".join(stale)
                             + "\nrun tablepolicy plan again and review the new plan")

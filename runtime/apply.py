"""apply: a plan -> Spark SQL executed step by step in one session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compiler.catalog.config import CatalogConfig
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

"""Helpers for plan tests on real catalog tables: write a policy, plan it, run its SQL in Spark."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tablepolicy.compiler.checks import check_project
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.loader import Project, load_text
from tablepolicy.compiler.plan.codec import plan_from_json, plan_to_json
from tablepolicy.compiler.plan.planner import PlanResult, make_plan
from tablepolicy.compiler.plan.steps import Step
from tablepolicy.compiler.sql.statements import change_sql
from tablepolicy.runtime.catalog.reader import CatalogReader, open_catalog
from tablepolicy.runtime.executor import check_steps, execute
from tests.integration.conftest import Lake
from tests.metadata_oracle import pyiceberg_reading


def project_of(text: str) -> Project:
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(text, "policy.yaml", project, diagnostics)
    diagnostics.extend(check_project(project))
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    return project


def plan(lake: Lake, text: str, today: date = date(2026, 1, 15)) -> PlanResult:
    result = make_plan(project_of(text), CatalogReader(lake.config), lake.config.name, today=today)
    kept = result.plan.model_copy(update={"tables": [t for t in result.plan.tables if t.changes]})
    assert plan_from_json(plan_to_json(result.plan)) == kept  # every step's plan survives the plan file
    return result


def apply(lake: Lake, result: PlanResult) -> None:
    """Run the plan's steps as apply runs them (atomic creates and spec updates through the Iceberg API),
    each step checked by Spark's parser before any runs."""
    assert not result.refused, [d.render() for d in result.diagnostics]
    steps = [Step(sql, change, i) for i, (change, sql) in enumerate(
        ((c, s) for c in result.plan.changes for s in change_sql(c, lake.config.name)), start=1)]
    check_steps(lake.spark, lake.config.name, steps)
    for step in steps:
        execute(lake.spark, lake.config.name, step.change, step.sql, f"step {step.index} ({step.summary})")


def converge(lake: Lake, text: str) -> None:
    """Plan and apply ``text``; planning again must then find nothing to do.

    Each table Spark just changed is also read both ways: the planner's reading of the metadata JSON
    must equal pyiceberg's full parse of it.
    """
    result = plan(lake, text)
    apply(lake, result)
    again = plan(lake, text)
    assert again.plan.changes == [], [c.summary for c in again.plan.changes]
    catalog = open_catalog(lake.config)
    with CatalogReader(lake.config) as reader:
        for table in result.plan.tables:
            assert reader.table(table.table) == pyiceberg_reading(table.table, catalog.load_table(table.table))


def sql_of(result: PlanResult) -> list[str]:
    return [sql for change in result.plan.changes for sql in change_sql(change, "lake")]

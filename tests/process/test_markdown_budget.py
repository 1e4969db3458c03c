"""The PR comment always fits: header first, summary kept, details cut at the budget with a pointer."""

from __future__ import annotations

from pyiceberg.types import StringType

from tablepolicy.compiler.diff.changes import AddColumn
from tablepolicy.compiler.plan.codec import plan_id
from tablepolicy.compiler.plan.model import Plan, Requirement, TablePlan
from tablepolicy.compiler.render.markdown import BUDGET, render_markdown


def plan_of(tables: int, changes: int) -> Plan:
    return Plan.model_validate({
        "catalog_ref": {"name": "prod", "type": "sql", "uri": "postgresql://etl:***@db/lake"}, "git_sha": "a" * 40,
        "tables": [TablePlan(table=("sales", f"t{i:04}"), requirement=Requirement(exists=True, uuid="u"), changes=[
            AddColumn(table=("sales", f"t{i:04}"), path=(f"column_with_a_long_name_{c}",), type=StringType(),
                      doc="x" * 40) for c in range(changes)]) for i in range(tables)],
    })


def test_small_plan_shows_everything_with_the_header() -> None:
    plan = plan_of(2, 3)
    text = render_markdown(plan, catalog="Catalog: prod (sql, postgresql://etl:***@db/lake)")
    lines = text.splitlines()
    assert lines[0] == "### tablepolicy plan · Catalog: prod (sql, postgresql://etl:***@db/lake)"
    assert lines[2] == f"plan `{plan_id(plan)}` · policies `aaaaaaaaaaaa` · tablepolicy {plan.tool_version}"
    assert text.count("<details>") == 2 and "not shown in detail" not in text


def test_a_huge_plan_keeps_the_summary_and_points_at_the_artifact() -> None:
    plan = plan_of(300, 30)
    text = render_markdown(plan, catalog="Catalog: prod (sql, x)")
    assert len(text) <= BUDGET
    assert "| `sales.t0299` |" in text  # every table is in the summary table
    assert "more table(s) not shown in detail" in text and "artifact" in text

"""What apply runs, in order: one list that the runner (runtime/apply.py), ``apply --dry-run``, the plan's text
and markdown, and the JSON report all read, so what a reviewer sees is what runs.

Each changed table is first stamped with the plan id (created tables carry the stamp in their CREATE TABLE), so
a re-run recognises its own half-done work: those stamping commits are steps like any other, shown wherever
the plan is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..diff import changes
from ..diff.changes import Change, PropertyChange
from ..model.properties import APPLIED_BY, APPROVALS_KEY, DECLARED_KEYS, DECLARED_REFS, declared_stamp
from ..sql.statements import Statement, change_sql
from .approvals import consumed_stamp
from .codec import plan_id
from .model import Plan, TablePlan


@dataclass(frozen=True)
class Step(Statement):
    """A statement apply runs, numbered from 1 in the order it runs (the journal and the report name it so)."""

    index: int = 0


def plan_id_of(plan: Plan) -> str:
    return plan_id(plan)


def stamps(plan: Plan, plan_id: str, applied_by: str | None = None) -> dict[str, str]:
    """Which plan and commit change the table, and (``applied_by``, known to the run only) who ran it."""
    return {"tablepolicy.plan-id": plan_id, **({"tablepolicy.git-sha": plan.git_sha} if plan.git_sha else {}),
            **({APPLIED_BY: applied_by} if applied_by else {})}


def table_stamp(plan: Plan, table: TablePlan, plan_id: str, applied_by: str | None = None) -> dict[str, str] | None:
    """The properties apply sets on a changed table before its changes (None: a view, a drop, no changes)."""
    if not table.changes or table.kind == "view" or isinstance(table.changes[0], changes.DropTable):
        return None
    stamp = {**stamps(plan, plan_id, applied_by), DECLARED_KEYS: declared_stamp(table.declared_properties)}
    if table.declared_refs or any(isinstance(c, changes.DropRef) for c in table.changes):
        stamp[DECLARED_REFS] = declared_stamp(table.declared_refs)
    consumed = consumed_stamp(table.consumed_approvals, table.changes)
    if consumed is not None:  # the approvals this plan consumes now approve only what they approved
        stamp[APPROVALS_KEY] = consumed
    elif not table.requirement.exists and table.consumed_approvals:  # spent before the table existed
        stamp[APPROVALS_KEY] = json.dumps(list(table.consumed_approvals), separators=(",", ":"))
    return stamp


def table_changes(plan: Plan, table: TablePlan, plan_id: str, applied_by: str | None = None) -> list[Change]:
    """The table's changes as apply runs them: its stamp set first (in the CREATE TABLE of a new table, one
    SET TBLPROPERTIES commit before the changes of an existing one)."""
    stamp = table_stamp(plan, table, plan_id, applied_by)
    if stamp is None:  # a view's plan is its metadata file, a dropped table has nothing to stamp
        return list(table.changes)
    if not table.requirement.exists:
        first = table.changes[0]
        assert isinstance(first, changes.CreateTable)
        state = first.state.model_copy(update={"properties": {**first.state.properties, **stamp}})
        return [first.model_copy(update={"state": state}), *table.changes[1:]]
    marks = tuple(PropertyChange(key=k, old=None, new=v) for k, v in stamp.items())
    return [changes.SetProperties(table=table.table, changes=marks), *table.changes]


def plan_steps(plan: Plan, plan_id: str, applied_by: str | None = None) -> list[Step]:
    """Every statement apply runs, in order (``applied_by``: the run's user, stamped on each changed table)."""
    ordered: list[Change] = list(plan.namespaces)
    for table in plan.tables:
        ordered += table_changes(plan, table, plan_id, applied_by)
    numbered = enumerate(((c, s) for c in ordered for s in change_sql(c, plan.catalog)), start=1)
    return [Step(sql, change, index) for index, (change, sql) in numbered]

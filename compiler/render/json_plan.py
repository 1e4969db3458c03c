"""Plan -> the versioned JSON plan file CD applies, and back.

Deterministic: the same inputs give byte-identical JSON (no timestamps; keys in model order).
Each change carries what a reviewer reads (action, safety, code, summary) and the SQL it runs.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError

from compiler.diff.changes import Change
from compiler.errors import TablePolicyError
from compiler.plan.model import PLAN_FORMAT_VERSION, Plan
from compiler.render.sql import change_sql

CHANGE = TypeAdapter(Change)


class PlanFileError(TablePolicyError):
    """The plan file cannot be read: wrong version, edited into an invalid shape, not JSON."""


def _change_view(change: Change, catalog: str) -> dict[str, Any]:
    return {
        "action": change.action,
        "safety": str(change.safety),
        "code": change.code,
        "summary": change.summary,
        "approval": change.approval,
        "sql": change_sql(change, catalog),
        "change": CHANGE.dump_python(change, mode="json"),
    }


def plan_to_json(plan: Plan) -> str:
    document = {
        "format_version": plan.format_version,
        "tool_version": plan.tool_version,
        "catalog": plan.catalog,
        "git_sha": plan.git_sha,
        "safety": str(plan.safety),
        "namespaces": [_change_view(c, plan.catalog) for c in plan.namespaces],
        "tables": [
            {
                "table": ".".join(t.table),
                "name": list(t.table),
                "policy_file": t.policy_file,
                "requirement": t.requirement.model_dump(mode="json"),
                "declared_properties": list(t.declared_properties),
                "changes": [_change_view(c, plan.catalog) for c in t.changes],
            }
            for t in plan.tables
            if t.changes
        ],
        "unmanaged": [list(n) for n in plan.unmanaged],
        "blocked": [b.model_dump(mode="json") for b in plan.blocked],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def plan_from_json(text: str) -> Plan:
    """Read a plan file back; the changes are rebuilt from their full models, not from the views."""
    try:
        document = json.loads(text)
        if document.get("format_version") != PLAN_FORMAT_VERSION:
            raise PlanFileError(
                f"plan file format {document.get('format_version')!r} is not {PLAN_FORMAT_VERSION}: "
                "plan again with this version of tablepolicy"
            )
        return Plan.model_validate(
            {
                "format_version": document["format_version"],
                "tool_version": document["tool_version"],
                "catalog": document["catalog"],
                "git_sha": document.get("git_sha"),
                "namespaces": [c["change"] for c in document["namespaces"]],
                "tables": [
                    {"table": t["name"], "policy_file": t.get("policy_file"), "requirement": t["requirement"],
                     "declared_properties": t["declared_properties"], "changes": [c["change"] for c in t["changes"]]}
                    for t in document["tables"]
                ],
                "unmanaged": document.get("unmanaged", []),
                "blocked": document.get("blocked", []),
            }
        )
    except PlanFileError:
        raise
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise PlanFileError(f"not a valid plan file: {str(exc).splitlines()[0]}") from None

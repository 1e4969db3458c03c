"""Plan -> the versioned JSON plan file CD applies, and back; and the plan's identity (``plan_id``).

It lives with the plan model, not among the renderers: the file is the plan itself, the form a reviewed plan
travels in from the pull request to apply, and apply trusts nothing it cannot read back to the same model.

Deterministic: the same inputs give byte-identical JSON in any process (no timestamps, keys in model
order, sets sorted). Each change carries what a reviewer reads (action, safety, code, summary) and the
SQL it runs; reading the file back rebuilds each change from its full model and refuses the file if any
of those views is not what that change renders (an edited SQL, summary or approval).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .. import jsontext
from ..diff.changes import Change
from ..errors import TablePolicyError
from ..sql.statements import change_sql
from .model import PLAN_FORMAT_VERSION, Plan

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
    document: dict[str, Any] = {"catalog": plan.catalog_ref.model_dump(mode="json")}
    if plan.environment is not None:  # absent without --env: such plan files stay as they were
        document["environment"] = {
            "name": plan.environment.name,
            "file": plan.environment.file,
            "settings": [{"table": ".".join(s.table), "name": list(s.table), "setting": s.setting, "value": s.value,
                          "origin": s.origin} for s in plan.environment.settings],
        }
    document |= {
        "format_version": plan.format_version,
        "tool_version": plan.tool_version,
        "git_sha": plan.git_sha,
        "safety": str(plan.safety),
        "namespaces": [_change_view(c, plan.catalog) for c in plan.namespaces],
        "tables": [
            {
                "table": ".".join(t.table),
                "name": list(t.table),
                **({"kind": t.kind} if t.kind != "table" else {}),
                "policy_file": t.policy_file,
                "requirement": t.requirement.model_dump(mode="json"),
                "declared_properties": list(t.declared_properties),
                **({"declared_refs": list(t.declared_refs)} if t.declared_refs else {}),
                "consumed_approvals": list(t.consumed_approvals),
                "changes": [_change_view(c, plan.catalog) for c in t.changes],
            }
            for t in plan.tables
            if t.changes
        ],
        "unmanaged": [list(n) for n in plan.unmanaged],
        "blocked": [b.model_dump(mode="json") for b in plan.blocked],
        "selected": None if plan.selected is None else [list(n) for n in plan.selected],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def plan_from_json(text: str) -> Plan:
    """Read a plan file back; the changes are rebuilt from their full models, not from the views. Every refusal
    says what is wrong with the file in its own terms (truncated, not JSON, which part is missing, which format),
    never a decoder's internals."""
    try:
        document = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanFileError(f"not a valid plan file: {_json_problem(exc, text)}") from None
    if not isinstance(document, dict):
        raise PlanFileError(f"not a valid plan file: it holds a JSON {_json_kind(document)}, not a plan (an object "
                            "with format_version, catalog, namespaces and tables)")
    version = document.get("format_version")
    if version != PLAN_FORMAT_VERSION:
        raise PlanFileError(f"plan file format {_format_problem(version)}")
    problem = _shape_problem(document)
    if problem is not None:
        raise PlanFileError(f"not a valid plan file: {problem}")
    try:
        plan = Plan.model_validate(
            {
                "format_version": document["format_version"],
                "tool_version": document["tool_version"],
                "catalog_ref": document["catalog"],
                "git_sha": document.get("git_sha"),
                "environment": _environment(document.get("environment")),
                "namespaces": [c["change"] for c in document["namespaces"]],
                "tables": [
                    {"table": t["name"], "kind": t.get("kind", "table"), "policy_file": t.get("policy_file"),
                     "requirement": t["requirement"],
                     "declared_properties": t["declared_properties"], "declared_refs": t.get("declared_refs", []),
                     "consumed_approvals": t["consumed_approvals"], "changes": [c["change"] for c in t["changes"]]}
                    for t in document["tables"]
                ],
                "unmanaged": document.get("unmanaged", []),
                "blocked": document.get("blocked", []),
                "selected": document["selected"],
            }
        )
        views = [("namespaces", c) for c in document["namespaces"]]
        views += [(t["table"], c) for t in document["tables"] for c in t["changes"]]
    except ValidationError as exc:
        raise PlanFileError(f"not a valid plan file: {_validation_problem(exc)}") from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise PlanFileError("not a valid plan file: a part of it is not in the shape tablepolicy writes") from None
    _check_views(plan, views)
    moved = [f"{'.'.join(t.table)}: '{c.summary}' changes another table" for t in plan.tables for c in t.changes
             if c.table != t.table]
    moved += [f"{t['table']}: listed as table {'.'.join(t['name'])}" for t in document["tables"]
              if t["table"] != ".".join(t["name"])]
    if moved:
        raise PlanFileError("the plan file was edited after planning, nothing was applied:\n  " + "\n  ".join(moved))
    return plan


def _environment(recorded: Any) -> dict[str, Any] | None:
    if recorded is None:
        return None
    return {"name": recorded["name"], "file": recorded["file"],
            "settings": [{"table": s["name"], "setting": s["setting"], "value": s["value"], "origin": s["origin"]}
                         for s in recorded["settings"]]}


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    where = f"line {exc.lineno} column {exc.colno}"
    if exc.msg.startswith("nesting too deep"):
        return f"{exc.msg} at {where}"
    if not text.strip():
        return "it is empty"
    if exc.pos >= len(text.rstrip()):
        return f"it is truncated: it ends at {where} before the plan does"
    return f"it is not JSON (at {where})"


def _json_kind(value: Any) -> str:
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
             type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _format_problem(version: Any) -> str:
    """Why a plan file's format_version is not this tool's (the message goes on from "plan file format ")."""
    if version is None:
        return (f"is not recorded (no format_version): it is not a plan file tablepolicy wrote; this tablepolicy "
                f"reads format {PLAN_FORMAT_VERSION}")
    if isinstance(version, int) and not isinstance(version, bool) and version < PLAN_FORMAT_VERSION:
        return (f"{version} is older than {PLAN_FORMAT_VERSION}, the format this tablepolicy reads: an older "
                "tablepolicy wrote it")
    if isinstance(version, int) and not isinstance(version, bool):
        return (f"{version} is newer than {PLAN_FORMAT_VERSION}, the format this tablepolicy reads: a newer "
                "tablepolicy wrote it")
    return f"{json.dumps(version)[:40]} is not a format version; this tablepolicy reads format {PLAN_FORMAT_VERSION}"


# what every entry of a plan file holds, as plan_to_json writes it: key -> JSON type
_TOP = {"catalog": dict, "tool_version": str, "namespaces": list, "tables": list}
_TABLE = {"table": str, "name": list, "requirement": dict, "declared_properties": list, "consumed_approvals": list,
          "changes": list}


def _shape_problem(document: dict[str, Any]) -> str | None:
    """The first part of ``document`` that is missing or of another JSON type than a plan file's, named by its
    path (``tables[0].changes``), or None."""
    def wrong(where: str, value: Any, expected: type) -> str | None:
        if value is None:
            return f"it lacks '{where}', which every plan file holds"
        if not isinstance(value, expected):
            return f"'{where}' holds a JSON {_json_kind(value)} where a plan file holds a JSON {_json_kind(expected())}"
        return None

    checks: list[tuple[str, Any, type]] = [(key, document.get(key), kind) for key, kind in _TOP.items()]
    for i, entry in enumerate(document.get("namespaces") or []):
        checks.append((f"namespaces[{i}]", entry, dict))
        if isinstance(entry, dict):
            checks.append((f"namespaces[{i}].change", entry.get("change"), dict))
    for i, table in enumerate(document.get("tables") or []):
        checks.append((f"tables[{i}]", table, dict))
        if isinstance(table, dict):
            checks += [(f"tables[{i}].{key}", table.get(key), kind) for key, kind in _TABLE.items()]
            for j, change in enumerate(table.get("changes") or []):
                checks.append((f"tables[{i}].changes[{j}]", change, dict))
                if isinstance(change, dict):
                    checks.append((f"tables[{i}].changes[{j}].change", change.get("change"), dict))
    for where, value, kind in checks:
        problem = wrong(where, value, kind)
        if problem is not None:
            return problem
    return None


def _validation_problem(exc: ValidationError) -> str:
    """The first thing pydantic found, as ``where: what`` (a plan model's path, its message)."""
    [first, *_] = exc.errors()
    where = ".".join(str(part) for part in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _check_views(plan: Plan, views: list[tuple[str, Any]]) -> None:
    """Every view a reviewer read (summary, safety, approval, SQL) must be what its change renders: the SQL
    apply runs is the SQL stored in the file, and no edit of the file can reword what a change does."""
    edited = []
    for (where, stored), change in zip(views, plan.changes, strict=True):
        rendered = _change_view(change, plan.catalog)
        differs = [key for key in rendered if key != "change" and stored.get(key) != rendered[key]]
        if {*stored} != {*rendered}:
            differs.append("keys")
        if differs:
            edited.append(f"{where}: '{change.summary}': {', '.join(differs)} not what the change renders")
    if edited:
        raise PlanFileError("the plan file was edited after planning, nothing was applied:\n  " + "\n  ".join(edited)
                            + "\nplan again and review the new plan")


def plan_id(plan: Plan) -> str:
    """The plan's id: the first 16 hex digits of its plan file's sha256 (apply stamps it on the tables)."""
    return hashlib.sha256(plan_to_json(plan).encode()).hexdigest()[:16]

"""A saved plan against the plan derived now: apply runs a plan file only if it is exactly what the
reviewed policies and the catalog give today, so no edit of the file can add, retarget, reword or remove
a change, and a plan made by another tool version or against another catalog is refused.

Pure: both plans are given; the runtime reads the policies and the catalog.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..diff import changes
from ..diff.changes import Change, PropertyChange
from ..iceberg.names import format_name
from .model import CatalogRef, Plan, TablePlan


def check_origin(saved: Plan, target: CatalogRef, environment: str | None = None) -> list[str]:
    """The tool version that wrote the plan, the catalog and the environment it was made for."""
    problems = []
    if saved.tool_version != __version__:
        problems.append(f"the plan was written by tablepolicy {saved.tool_version}; this is {__version__}")
    if saved.catalog_ref != target:
        problems.append(f"the plan was made against {saved.catalog_ref.describe()}; this apply targets "
                        f"{target.describe()}")
    planned = saved.environment.name if saved.environment is not None else None
    if planned != environment:
        problems.append(f"the plan was made for {_environment(planned)}; this apply is for {_environment(environment)}")
    return problems


def _environment(name: str | None) -> str:
    return f"environment '{name}'" if name is not None else "no environment (no --env)"


def informational(change: Change) -> Change:
    """The change without what legitimately differs between planning and apply, so only what runs is
    compared: a retention estimate is computed from today's manifests and date, a property's origin names the
    file:line as the planning process spelled its path, and a new ref's current snapshot or a branch's head
    moves with every write (apply creates the ref where the reviewed plan says)."""
    if isinstance(change, changes.TightenRetention):
        return change.model_copy(update={"estimate": None, "properties": _no_origin(change.properties)})
    if isinstance(change, changes.SetProperties):
        return change.model_copy(update={"changes": _no_origin(change.changes)})
    if isinstance(change, changes.CreateRef) and not change.declared_start:  # writers move the current snapshot
        return change.model_copy(update={"snapshot_id": None})
    if isinstance(change, changes.SetRefRetention):  # writers move a branch: apply leaves it where it is then
        return change.model_copy(update={"snapshot_id": 0})
    return change


def _no_origin(changes: tuple[PropertyChange, ...]) -> tuple[PropertyChange, ...]:
    return tuple(c.model_copy(update={"origin": None}) for c in changes)


def compare(saved: Plan, derived: Plan, in_progress: set[tuple[str, ...]],
            existing_namespaces: set[tuple[str, ...]]) -> list[str]:
    """What differs between the saved plan and the one derived now, one line per table.

    Tables this very plan already started on (a killed run re-run) are skipped: the run that started them
    checked them, and the plan id stamped on them is the hash of this file. A namespace the saved plan
    creates may exist by now (created by such a run; CREATE NAMESPACE IF NOT EXISTS is harmless).
    """
    if saved.selected is not None:  # a plan of one file or subfolder: the derived plan restricted alike
        derived = restricted(derived, set(saved.selected))
    problems = []
    missing = [ns for ns in derived.namespaces if ns not in saved.namespaces]
    extra = [ns for ns in saved.namespaces if ns not in derived.namespaces and ns.table not in existing_namespaces]
    problems += [f"{format_name(c.table)}: the policies need '{c.summary}', which the plan file lacks" for c in missing]
    problems += [f"{format_name(c.table)}: the plan file holds '{c.summary}', which the policies do not give"
                 for c in extra]
    saved_tables = {t.table: t for t in saved.tables if t.changes}
    derived_tables = {t.table: t for t in derived.tables if t.changes}
    for name in sorted({*saved_tables, *derived_tables}):
        if name in in_progress:
            continue
        problem = _table_difference(saved_tables.get(name), derived_tables.get(name))
        if problem:
            problems.append(f"{format_name(name)}: {problem}")
    problems += [f"{format_name(b.table)}: {b.summary} is not approved by the policies "
                 f"(needs allow_destructive: [\"{b.approval}\"] in {b.policy_file})"
                 for b in derived.blocked if b.table not in in_progress]
    return problems + _settings_difference(saved, derived)


def _settings_difference(saved: Plan, derived: Plan) -> list[str]:
    """The environment's values the plan file shows must be the overlay's now (their origins may be spelled
    from another folder): a reviewer read them, and maintain and erase act on them."""
    def values(plan: Plan) -> dict[tuple[tuple[str, ...], str], Any]:
        settings = plan.environment.settings if plan.environment is not None else []
        return {(s.table, s.setting): s.value for s in settings}

    mine, now = values(saved), values(derived)
    problems = []
    for table, setting in sorted({*mine, *now}):
        if mine.get((table, setting)) != now.get((table, setting)):
            shown = {k: json.dumps(v[(table, setting)]) if (table, setting) in v else "unset"
                     for k, v in (("file", mine), ("now", now))}
            problems.append(f"{format_name(table)}: the plan file shows {setting} {shown['file']}, the environment "
                            f"overlay gives {shown['now']}")
    return problems


def restricted(plan: Plan, tables: set[tuple[str, ...]]) -> Plan:
    """The plan of only ``tables`` (and the namespaces they need)."""
    namespaces = {name[:k] for name in tables for k in range(1, len(name))}
    environment = plan.environment
    if environment is not None:
        environment = environment.model_copy(
            update={"settings": [s for s in environment.settings if s.table in tables]})
    return plan.model_copy(update={
        "environment": environment,
        "tables": [t for t in plan.tables if t.table in tables],
        "namespaces": [c for c in plan.namespaces if c.table in namespaces],
        "blocked": [b for b in plan.blocked if b.table in tables],
    })


def _table_difference(saved: TablePlan | None, derived: TablePlan | None) -> str | None:
    if saved is None:
        assert derived is not None
        return f"the policies now change this table ('{derived.changes[0].summary}'...), the plan file does not"
    if derived is None:
        return f"the plan file holds '{saved.changes[0].summary}', but the policies and catalog need no change"
    ours = [informational(c) for c in saved.changes]
    theirs = [informational(c) for c in derived.changes]
    for index, (mine, now) in enumerate(zip(ours, theirs, strict=False), start=1):
        if mine != now:
            detail = "" if mine.summary != now.summary else " (same summary, different details)"
            return f"change {index} of the plan file is '{mine.summary}'; the policies give '{now.summary}'{detail}"
    if len(ours) != len(theirs):
        more, which = (ours, "plan file") if len(ours) > len(theirs) else (theirs, "policies")
        return f"the {which} also hold(s) '{more[min(len(ours), len(theirs))].summary}'; the other does not"
    if saved.declared_properties != derived.declared_properties:
        return "the declared property keys differ from the policies"
    if saved.declared_refs != derived.declared_refs:
        return "the declared branches and tags differ from the policies"
    if saved.consumed_approvals != derived.consumed_approvals:
        return "the approvals recorded as consumed differ from the table's"
    return None

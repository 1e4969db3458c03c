"""Plan -> terminal text, Terraform style: ``+`` create, ``~`` change, ``!`` breaking, ``-`` destroy."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from ..diff.changes import Change, SetProperties
from ..iceberg.names import format_name
from ..plan.codec import plan_id
from ..plan.model import EnvironmentRef, Plan
from ..plan.steps import table_stamp
from ..safety import Safety

Painter = Callable[[str, str], str]

MARKERS = {Safety.SAFE: ("~", "yellow"), Safety.BREAKING: ("!", "magenta"), Safety.DESTRUCTIVE: ("-", "red")}


def no_color(text: str, _color: str) -> str:
    return text


def marker(change: Change) -> tuple[str, str]:
    if change.action.startswith(("create", "add")) and change.safety is Safety.SAFE:
        return "+", "green"
    return MARKERS[change.safety]


def change_lines(change: Change, paint: Painter, indent: str = "  ") -> list[str]:
    sign, color = marker(change)
    tag = "" if change.safety is Safety.SAFE else f"  [{change.safety} {change.code}]"
    lines = [paint(f"{indent}{sign} {change.summary}{tag}", color)]
    if isinstance(change, SetProperties):
        lines += [f"{indent}    {c.key}: from {c.origin}" for c in change.changes if c.origin]
    return lines


def summary_counts(plan: Plan) -> str:
    counts = Counter(c.safety for c in plan.changes)
    return (f"{len(plan.changes)} change(s): {counts[Safety.SAFE]} safe, {counts[Safety.BREAKING]} breaking, "
            f"{counts[Safety.DESTRUCTIVE]} destructive")


def overlay_groups(environment: EnvironmentRef) -> list[tuple[str, str, str, list[str]]]:
    """The overlay's values grouped for reading: (setting, value, origin, tables), in setting order. A value
    of ``defaults:`` reaches every table, so it is one line, not one per table."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for s in environment.settings:
        value = s.value if isinstance(s.value, str) else json.dumps(s.value)
        groups.setdefault((s.setting, value, s.origin or "?"), []).append(format_name(s.table))
    return [(setting, value, origin, tables) for (setting, value, origin), tables in sorted(groups.items())]


def environment_lines(environment: EnvironmentRef) -> list[str]:
    groups = overlay_groups(environment)
    lines = [f"Environment {environment.name} ({environment.file}) sets {len(groups)} value(s):"]
    lines += [f"  {setting} = {value}  from {origin}  ({', '.join(tables)})"
              for setting, value, origin, tables in groups]
    return lines


def render_text(plan: Plan, paint: Painter = no_color) -> str:
    lines: list[str] = []
    if plan.environment is not None:
        lines += [*environment_lines(plan.environment), ""]
    for change in plan.namespaces:
        lines += change_lines(change, paint, indent="")
    identity = plan_id(plan) if any(t.changes for t in plan.tables) else ""
    for table in plan.tables:
        if not table.changes:
            continue
        lines += ["", paint(f"{table.kind} {format_name(table.table)}", "cyan")]
        stamp = table_stamp(plan, table, identity)
        if stamp is not None and table.requirement.exists:  # apply's first commit on the table (steps.py)
            keys = ", ".join(k.removeprefix("tablepolicy.") for k in stamp)
            lines.append(f"  · stamp {keys} (apply's first commit: a re-run knows its own work)")
        for change in table.changes:
            lines += change_lines(change, paint)
    for name in plan.unmanaged:
        lines.append(paint(f"? unmanaged table {format_name(name)}: no policy declares it (left alone)", "yellow"))
    if plan.blocked:
        lines += ["", paint("Blocked: destructive changes git has not approved:", "red")]
        for blocked in plan.blocked:
            lines.append(paint(f"  - {format_name(blocked.table)}: {blocked.summary}", "red"))
            lines.append(f"    to approve, add to {blocked.policy_file}:  allow_destructive: [\"{blocked.approval}\"]")
    lines.append("")
    if not plan.has_changes:
        lines.append("No changes. The catalog matches the policies.")
    else:
        lines.append(f"Plan: {summary_counts(plan)}.")
    return "\n".join(lines).strip("\n") + "\n"

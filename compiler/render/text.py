"""Plan -> terminal text, Terraform style: ``+`` create, ``~`` change, ``-`` destroy, then counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from compiler.diff.safety import Safety
from compiler.model.names import format_name
from compiler.plan.model import Plan

Painter = Callable[[str, str], str]

MARKERS = {Safety.SAFE: ("~", "yellow"), Safety.BREAKING: ("!", "magenta"), Safety.DESTRUCTIVE: ("-", "red")}


def _plain(text: str, _color: str) -> str:
    return text


def marker(action: str, safety: Safety) -> tuple[str, str]:
    if action.startswith("create") or action.startswith("add"):
        return "+", "green"
    return MARKERS[safety]


def render_text(plan: Plan, paint: Painter = _plain) -> str:
    lines: list[str] = []
    for change in plan.namespaces:
        sign, color = marker(change.action, change.safety)
        lines.append(paint(f"{sign} {change.summary}", color))
    for table in plan.tables:
        if not table.changes:
            continue
        lines.append("")
        lines.append(paint(f"table {format_name(table.table)}", "cyan"))
        for change in table.changes:
            sign, color = marker(change.action, change.safety)
            tag = "" if change.safety is Safety.SAFE else f"  [{change.safety} {change.code}]"
            lines.append(paint(f"  {sign} {change.summary}{tag}", color))
    for name in plan.unmanaged:
        lines.append(paint(f"? unmanaged table {format_name(name)}: no policy declares it (left alone)", "yellow"))
    counts = Counter(c.safety for c in plan.changes)
    if not plan.has_changes:
        lines.append("No changes. The catalog matches the policies.")
    else:
        lines.append("")
        lines.append(
            f"Plan: {len(plan.changes)} change(s): {counts[Safety.SAFE]} safe, "
            f"{counts[Safety.BREAKING]} breaking, {counts[Safety.DESTRUCTIVE]} destructive."
        )
    return "\n".join(lines).strip("\n") + "\n"

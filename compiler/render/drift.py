"""The reverse view of a plan: what the catalog holds that git does not say."""

from __future__ import annotations

from typing import Protocol

from compiler.catalog.current import CurrentTable
from compiler.diff.properties import owned_keys
from compiler.model.names import format_name
from compiler.model.table import TableState
from compiler.plan.model import Plan


class TableSource(Protocol):
    def table(self, name: tuple[str, ...]) -> CurrentTable | None: ...


ENGINE_KEYS = frozenset({"owner", "write.parquet.compression-codec", "comment"})


def render_drift(plan: Plan, source: TableSource, desired: dict[tuple[str, ...], TableState]) -> tuple[str, bool]:
    """(text, whether any declared table drifted). Unowned properties are listed, not counted as drift."""
    lines: list[str] = []
    drifted = False
    for table in plan.tables:
        if not table.requirement.exists:
            lines.append(f"table {format_name(table.table)}: declared in git, missing from the catalog")
            drifted = True
            continue
        current = source.table(table.table)
        if current is None:
            continue
        block = [f"  catalog differs: apply would {c.summary}" for c in table.changes]
        drifted = drifted or bool(block)
        want = desired.get(table.table)
        owned = owned_keys(current.state, want) if want is not None else set(current.state.properties)
        unowned = sorted(set(current.state.properties) - owned - ENGINE_KEYS)
        block += [f"  not in git: property {k} = {current.state.properties[k]} (set by another tool?)"
                  for k in unowned if not k.startswith("tablepolicy.")]
        if block:
            lines += [f"table {format_name(table.table)}", *block]
    lines += [f"table {format_name(n)}: in a managed namespace, not declared in git" for n in plan.unmanaged]
    drifted = drifted or bool(plan.unmanaged)
    lines.append("No drift: the catalog holds what git declares." if not drifted else "")
    return "\n".join(lines).strip("\n") + "\n", drifted

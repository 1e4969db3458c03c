"""drift's output: text for the terminal, JSON for machines (the shape README's "Drift" section documents)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..drift import Drift, Name, Unmanaged
from ..iceberg.names import format_name

DRIFT_FORMAT = 1  # drift --format json's "drift_format": raised when a key changes meaning or goes away


def render_drift(drift: Drift) -> str:
    lines: list[str] = []
    for table in drift.tables:
        name = format_name(table.table)
        if table.missing:
            lines.append(f"{table.kind} {name}: declared in git, missing from the catalog")
            continue
        block = [f"  catalog differs: apply would {c.summary}" for c in table.changes]
        block += [f"  not in git: property {k} = {v} (set by another tool?)" for k, v in table.unowned]
        block += [f"  not in git: {kind} {ref} (made outside git; apply leaves it)" for kind, ref in table.unowned_refs]
        if block:
            lines += [f"{table.kind} {name}", *block]
    lines += [f"table {format_name(n)}: in a managed namespace, not declared in git" for n in drift.undeclared]
    if drift.unmanaged is not None and (drift.unmanaged.namespaces or drift.unmanaged.tables):
        lines += [*_unmanaged_lines(drift.unmanaged), "note: unmanaged is not drift; hide what the team does not "
                  "manage with rules.ignore_unmanaged (_rules.yaml)"]
    hidden = len(drift.ignored.namespaces), len(drift.ignored.tables)
    if any(hidden):
        lines.append(f"ignored by rules.ignore_unmanaged: {_count(hidden[0], 'namespace')}, "
                     f"{_count(hidden[1], 'table')}")
    if drift.unmanaged is None:
        lines.append("note: unmanaged namespaces and tables are looked for when drift runs on the whole project")
    if not drift.drifted:
        lines.append("No drift: the catalog holds what git declares.")
    return "\n".join(lines) + "\n"


def _unmanaged_lines(unmanaged: Unmanaged) -> list[str]:
    """A namespace git never mentions is one line with its table count; a table of it is not listed again."""
    lines = [f"namespace {format_name(ns)}: unmanaged, git never mentions it "
             f"({_count(unmanaged.tables_in(ns), 'table')})" for ns in unmanaged.namespaces]
    shown = set(unmanaged.namespaces)
    lines += [f"table {format_name(t)}: unmanaged, no policy declares a table of namespace {format_name(t[:-1])}"
              for t in unmanaged.tables if t[:-1] not in shown]
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _name(name: Name, key: str = "table") -> dict[str, Any]:
    return {key: format_name(name), "name": list(name)}


def drift_json(drift: Drift, catalog: Mapping[str, str], environment: str | None) -> str:
    """The same content as the text, for machines; every key always present, lists sorted by name."""
    def unmanaged(found: Unmanaged) -> dict[str, Any]:
        return {"namespaces": [_name(ns, "namespace") | {"tables": found.tables_in(ns)} for ns in found.namespaces],
                "tables": [_name(t) for t in found.tables]}

    return json.dumps({
        "drift_format": DRIFT_FORMAT,
        "catalog": dict(catalog),
        "environment": environment,
        "drift": drift.drifted,
        "tables": [_name(t.table) | ({"kind": "view"} if t.kind == "view" else {}) | {
            "status": t.status,
            "changes": [{"action": c.action, "safety": str(c.safety), "code": c.code, "summary": c.summary}
                        for c in t.changes],
            "unowned_properties": dict(t.unowned),
            "unowned_refs": [{"kind": kind, "name": ref} for kind, ref in t.unowned_refs],
        } for t in drift.tables],
        "undeclared": [_name(n) for n in drift.undeclared],
        "unmanaged": None if drift.unmanaged is None else unmanaged(drift.unmanaged),
        "ignored": {"patterns": list(drift.patterns), **unmanaged(drift.ignored)},
    }, indent=2, ensure_ascii=False) + "\n"

"""drift and views (no JVM: the view is Iceberg view metadata in memory): a declared view missing, or whose SQL,
comments or properties differ from git, is drift as what apply would do; a view as git declares it is not."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from tablepolicy.compiler.drift import find_drift
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.compiler.render.drift import drift_json, render_drift
from tests.memory_catalog import MemoryCatalog, applied, declared_state, project_of
from tests.memory_views import applied_view

TABLE = "table: u.t\ncolumns: [{name: id, type: long}]\n"
VIEW = "view: u.v\nsql: SELECT id FROM u.t\n"


def drift_of(view: str, held: str | None) -> tuple[list[str], list[dict[str, Any]]]:
    table = applied(declared_state(TABLE))
    source = MemoryCatalog.of(table)
    if held is not None:
        source.views[("u", "v")] = applied_view(held)
    project = project_of(TABLE, view)
    plan = make_plan(project, source, CatalogRef(name="lake"), today=date(2026, 1, 15)).plan
    drift = find_drift(plan, source, {table.state.name: declared_state(TABLE)}, project, None)
    note = "note: unmanaged namespaces and tables are looked for when drift runs on the whole project"
    lines = [line for line in render_drift(drift).splitlines() if line != note]
    return lines, json.loads(drift_json(drift, {"name": "lake"}, None))["tables"]


def test_a_view_as_declared_is_no_drift() -> None:
    text, tables = drift_of(VIEW, VIEW)
    assert text == ["No drift: the catalog holds what git declares."]
    assert [(t["table"], t.get("kind"), t["status"]) for t in tables] == [("u.t", None, "in_sync"),
                                                                         ("u.v", "view", "in_sync")]


def test_a_view_changed_or_missing_is_drift() -> None:
    text, tables = drift_of(VIEW, VIEW.replace("FROM u.t", "FROM u.t WHERE id > 0"))
    assert text == ["view u.v", "  catalog differs: apply would replace view u.v (version 1): new sql"]
    assert [t["status"] for t in tables] == ["in_sync", "differs"]
    text, tables = drift_of(VIEW, None)
    assert text == ["view u.v: declared in git, missing from the catalog"]
    assert tables[1] | {"name": None} == {"table": "u.v", "name": None, "kind": "view", "status": "missing",
                                          "changes": [], "unowned_properties": {}, "unowned_refs": []}

"""drift and branches and tags (no JVM: the table is Iceberg metadata in memory): a declared ref missing or
with other retention is drift (what apply would do); a ref git never declared is listed, not drift."""

from __future__ import annotations

import json
from datetime import date

from tablepolicy.compiler.drift import find_drift
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.compiler.render.drift import drift_json, render_drift
from tests.memory_catalog import MemoryCatalog, applied, declared_state, project_of

APPLIED = "table: u.t\ncolumns: [{name: id, type: long}]\nrefs: [{tag: month_end, max_ref_age: 400d}]\n"
BY_HAND = {"by_hand": {"snapshot-id": 102, "type": "tag"}}


def drift_of(policy: str, refs: dict[str, dict[str, object] | None]) -> tuple[str, dict[str, object]]:
    table = applied(declared_state(APPLIED), refs=refs)
    project = project_of(policy)
    source = MemoryCatalog.of(table)
    plan = make_plan(project, source, CatalogRef(name="lake"), today=date(2026, 1, 15)).plan
    drift = find_drift(plan, source, {table.state.name: declared_state(policy)}, project, None)
    return render_drift(drift), json.loads(drift_json(drift, {"name": "lake"}, None))["tables"][0]


def test_a_ref_made_by_hand_is_listed_not_drift() -> None:
    text, table = drift_of(APPLIED, BY_HAND)
    assert text.splitlines()[:2] == ["table u.t", "  not in git: tag by_hand (made outside git; apply leaves it)"]
    assert (table["status"], table["unowned_refs"]) == ("in_sync", [{"kind": "tag", "name": "by_hand"}])


def test_a_declared_ref_changed_or_missing_is_drift() -> None:
    git = APPLIED.replace("[{tag: month_end, max_ref_age: 400d}]", "[{tag: month_end, max_ref_age: 800d}, "
                          "{branch: audit}]")
    text, table = drift_of(git, {})
    assert text.splitlines()[:3] == [
        "table u.t",
        "  catalog differs: apply would create branch audit at snapshot 103 (the current one); max_ref_age the "
        "table's, min_snapshots_to_keep the table's, max_snapshot_age the table's",
        "  catalog differs: apply would set retention of tag month_end: max_ref_age 400d -> max_ref_age 800d"]
    assert table["status"] == "differs"

"""import writes the branches and tags a table has (not apply's safety tags), and the policy it writes plans
no change against that table (no JVM: the table is Iceberg metadata in memory)."""

from __future__ import annotations

from datetime import date

from tablepolicy.compiler.importer import policy_yaml
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tests.memory_catalog import MemoryCatalog, applied, declared_state, project_of

HAND_MADE = {
    "month_end": {"snapshot-id": 101, "type": "tag", "max-ref-age-ms": 34_560_000_000},
    "audit": {"snapshot-id": 103, "type": "branch", "min-snapshots-to-keep": 2, "max-snapshot-age-ms": 7_200_000},
    "tablepolicy-before-1a2b3c4d": {"snapshot-id": 102, "type": "tag", "max-ref-age-ms": 604_800_000},
}


def test_import_writes_the_refs_and_plans_nothing() -> None:
    table = applied(declared_state("table: u.t\ncolumns: [{name: id, type: long}]"), refs=HAND_MADE)
    text = policy_yaml(table.state)
    assert text.split("refs:\n", 1)[1] == ("  - {branch: audit, min_snapshots_to_keep: 2, max_snapshot_age: 2h}\n"
                                           "  - {tag: month_end, max_ref_age: 400d}\n")
    result = make_plan(project_of(text), MemoryCatalog.of(table), CatalogRef(name="lake"), today=date(2026, 1, 15))
    assert [c.summary for c in result.plan.changes] == []
    assert not result.diagnostics.items

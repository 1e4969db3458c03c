"""import writes the bloom filters a table holds on its erasure key as the erasure block's ``bloom_filter`` (never
as hand-written properties, which would be refused as managed), and the policy it writes plans no change against
that table; filters on other columns stay hand-written properties (no JVM: the table is Iceberg metadata in memory)."""

from __future__ import annotations

from datetime import date

import pytest

from tablepolicy.compiler.importer import policy_yaml
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tests.memory_catalog import MemoryCatalog, applied, declared_state, project_of

POLICY = ("table: u.t\ncolumns: [{name: id, type: long}, {name: account, type: string}, {name: s, type: {struct: "
          "[{name: x, type: int}]}}]\nlifecycle: {erasure: {key: [account, s.x], within: 30d}}")
ON, FPP = "write.parquet.bloom-filter-enabled.column.", "write.parquet.bloom-filter-fpp.column."
MAX = "write.parquet.bloom-filter-max-bytes"

CASES = [  # (id, edits of the table's properties since the apply, the erasure line import writes)
    ("the default: a filter on every key column", {},
     "erasure: {key: [account, s.x], within: 30d}"),
    ("sized apart", {FPP + "account": "0.02", FPP + "s.x": "0.001"},
     "erasure: {key: [account, s.x], within: 30d, bloom_filter: {columns: {account: {fpp: 0.02}, s.x: {fpp: "
     "0.001}}}}"),
    ("sized alike", {FPP + "account": "0.02", FPP + "s.x": "0.02", MAX: "65536"},
     "erasure: {key: [account, s.x], within: 30d, bloom_filter: {fpp: 0.02, max_bytes: 64KB}}"),
    ("one column sized, one without a filter", {FPP + "account": "0.001", ON + "s.x": None},
     "erasure: {key: [account, s.x], within: 30d, bloom_filter: {fpp: 0.001, columns: {s.x: {enabled: false}}}}"),
    ("no filter at all", {ON + "account": None, ON + "s.x": "false"},
     "erasure: {key: [account, s.x], within: 30d, bloom_filter: {enabled: false}}"),
    ("a filter on another column stays a property", {ON + "id": "true"},
     "erasure: {key: [account, s.x], within: 30d}"),
]


@pytest.mark.parametrize(("edits", "line"), [pytest.param(e, line, id=i) for i, e, line in CASES])
def test_import_writes_the_filters_and_plans_nothing(edits: dict[str, str | None], line: str) -> None:
    table = applied(declared_state(POLICY), properties=edits)
    text = policy_yaml(table.state)
    assert f"  {line}\n" in text, text
    hand_written = text.split("properties:\n", 1)[1].split("lifecycle:", 1)[0] if "properties:\n" in text else ""
    assert [k for k in (ON + "account", ON + "s.x", FPP + "account", MAX) if k in hand_written] == []
    assert (ON + "id" in hand_written) == (ON + "id" in edits)
    result = make_plan(project_of(text), MemoryCatalog.of(table), CatalogRef(name="lake"), today=date(2026, 1, 15))
    assert [c.summary for c in result.plan.changes] == []
    assert not result.diagnostics.items

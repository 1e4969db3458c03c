"""Properties a catalog server keeps itself (compiler/model/properties.py SERVER_PROPERTIES): SeaweedFS's REST
catalog sets ``schema.name-mapping.default`` on every table and rewrites it after every commit. import leaves it
out of git, plan never proposes to change it (which would put back a mapping without the new columns), drift does
not list it as set by another tool, and a policy declaring it is refused (TP505, tests/corpus). The REST server
itself: tests/integration/test_rest_loop.py."""

from __future__ import annotations

from datetime import date

import pytest

from tablepolicy.compiler.diff.properties import owned_keys
from tablepolicy.compiler.drift import ENGINE_KEYS
from tablepolicy.compiler.importer import policy_yaml
from tablepolicy.compiler.model.properties import SERVER_PROPERTIES
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tests.memory_catalog import MemoryCatalog, applied, declared_state, project_of

MAPPING = "schema.name-mapping.default"
OLD = '[{"names":["id"],"field-id":1}]'  # the server's mapping before a column was added
POLICY = "table: u.t\ncolumns: [{name: id, type: long}, {name: note, type: string}]\n"


def test_the_registry_names_the_name_mapping() -> None:
    assert MAPPING in SERVER_PROPERTIES and "SeaweedFS" in SERVER_PROPERTIES[MAPPING]


def test_import_leaves_the_server_property_out_and_plans_nothing() -> None:
    table = applied(declared_state(POLICY), properties={MAPPING: OLD, "write.parquet.compression-codec": "zstd"})
    text = policy_yaml(table.state)
    assert "name-mapping" not in text and "write.parquet.compression-codec: zstd" in text, text
    result = make_plan(project_of(text), MemoryCatalog.of(table), CatalogRef(name="lake"), today=date(2026, 1, 15))
    assert [c.summary for c in result.plan.changes] == []


@pytest.mark.parametrize("declared", [False, True], ids=["never-declared", "stamped-as-declared"])
def test_plan_never_touches_the_server_property(declared: bool) -> None:
    """Not even when an earlier apply stamped it as declared (an import before this release wrote it to git): the
    key is the server's, so removing it from git unsets nothing."""
    stamp = {"tablepolicy.declared-properties": f'["{MAPPING}"]'} if declared else {}
    table = applied(declared_state(POLICY), properties={MAPPING: OLD, **stamp})
    assert MAPPING not in owned_keys(table.state, declared_state(POLICY))
    result = make_plan(project_of(POLICY), MemoryCatalog.of(table), CatalogRef(name="lake"), today=date(2026, 1, 15))
    assert [c.summary for c in result.plan.changes] == []


def test_drift_does_not_list_it_as_another_tools() -> None:
    assert set(SERVER_PROPERTIES) <= ENGINE_KEYS

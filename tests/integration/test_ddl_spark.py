"""Every example policy's DDL runs in Spark 3.5 + Iceberg 1.10 and the catalog then holds exactly the policy."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.desired import create_all, desired_states
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.loader import Project, load_text
from tablepolicy.compiler.sql.statements import statements
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.reader import CatalogReader
from tests.integration.conftest import Lake, assert_table_matches, sqlite_catalog

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def test_examples_created_through_spark_equal_the_policies(lake: Lake) -> None:
    project, diagnostics = validate(ROOT / "policies")
    assert not diagnostics.has_errors
    steps = [s for change in create_all(project) for s in statements(change, lake.config.name)]
    for step in steps:
        lake.parse(step.sql)
    lake.run(steps)
    reader = lake.reader()
    desired = desired_states(project)
    assert [d.name for d in desired] == [("ads", "click_log"), ("logs", "app_events"),
                                         ("privacy", "erasure_requests"), ("security", "cloudtrail_mgmt")]
    for state in desired:
        current = reader.table(state.name)
        assert current is not None, state.name
        assert_table_matches(current.state, state)
    cloudtrail = reader.table(("security", "cloudtrail_mgmt"))
    assert cloudtrail is not None
    assert cloudtrail.state.properties["history.expire.max-snapshot-age-ms"] == "21600000"
    assert [str(p.transform) for p in cloudtrail.state.partition] == ["identity"] * 3 + ["day"]
    time_dt = cloudtrail.state.schema_.find_field("time_dt")
    assert str(time_dt.field_type) == "timestamptz" and time_dt.doc == "Event time; the partition source"
    events = reader.table(("logs", "app_events"))
    assert events is not None
    assert [p.name for p in events.state.partition] == ["event_time_hour", "service_shard"]
    assert events.state.properties["write.distribution-mode"] == "hash"


TRICKY = """
table: "`sales & ops`.`eu.west`.`orders ``v2`` ü`"
description: "it's a table with a \\\\ backslash"
columns:
  - {name: "order id", type: long, required: true, doc: "the key; it's unique"}
  - {name: "a.b", type: string}
  - {name: "we`ird", type: "decimal(10,2)"}
  - {name: 日本語, type: timestamp}
  - {name: "prix €", type: timestamptz}
  - name: "nested struct"
    type:
      struct:
        - {name: "inner.dot", type: int, doc: "x\\ny"}
        - {name: "tab\\tname", type: {list: {map: {key: string, value: "decimal(5,1)"}}}}
partition_by:
  - "`a.b`"
  - "bucket(4, `we``ird`)"
  - "day(`prix €`)"
  - {field: "truncate(3, `a.b`)", name: "short a.b"}
sort_by: ["`日本語` desc", "`nested struct`.`inner.dot`"]
identifier_fields: ["`order id`"]
properties:
  "custom.key with space": "value with 'quotes' and \\\\ backslash"
"""


def test_identifiers_that_need_quoting_round_trip(lake: Lake) -> None:
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(TRICKY, "tricky.yaml", project, diagnostics)
    from tablepolicy.compiler.checks import check_project

    diagnostics.extend(check_project(project))
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    [state] = desired_states(project)
    assert state.name == ("sales & ops", "eu.west", "orders `v2` ü")
    steps = [s for change in create_all(project) for s in statements(change, lake.config.name)]
    lake.run(steps)
    current = lake.reader().table(state.name)
    assert current is not None
    assert_table_matches(current.state, state)
    assert current.state.comment == "it's a table with a \\ backslash"
    assert current.state.properties["custom.key with space"] == "value with 'quotes' and \\ backslash"
    assert [f.name for f in current.state.schema_.fields][:5] == ["order id", "a.b", "we`ird", "日本語", "prix €"]


@pytest.mark.parametrize("first", ["spark", "pyiceberg"])
def test_catalog_created_by_either_engine_works_for_the_other(lake: Lake, tmp_path: Path, first: str) -> None:
    """Spark's JDBC catalog (schema V1) and pyiceberg's SQL catalog share iceberg_tables both ways."""
    if lake.config.properties["uri"].startswith("postgresql"):
        config = CatalogConfig(f"both_{first}", {**lake.config.properties})  # same database, a new catalog name
    else:
        config = sqlite_catalog(tmp_path, f"both_{first}")
        (tmp_path / "warehouse").mkdir()
    lake.register(config)
    if first == "pyiceberg":
        reader = CatalogReader(config)  # creates the catalog tables
        reader.catalog.create_namespace(("made_by_py",))
        reader.catalog.create_table(("made_by_py", "t"), schema=Schema(NestedField(1, "a", LongType(), required=False)))
        lake.spark.sql(f"INSERT INTO {config.name}.made_by_py.t VALUES (1), (2)")
        assert lake.spark.sql(f"SELECT count(*) FROM {config.name}.made_by_py.t").collect()[0][0] == 2
    else:
        lake.spark.sql(f"CREATE NAMESPACE {config.name}.made_by_spark")
        lake.spark.sql(f"CREATE TABLE {config.name}.made_by_spark.t (a bigint) USING iceberg")
        lake.spark.sql(f"INSERT INTO {config.name}.made_by_spark.t VALUES (1), (2), (3)")
        table = CatalogReader(config).catalog.load_table(("made_by_spark", "t"))
        assert table.scan().to_arrow().num_rows == 3

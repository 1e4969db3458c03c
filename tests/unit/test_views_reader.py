"""Views read without a JVM from a SQL catalog, as Iceberg's JDBC catalog (schema V1) keeps them: a row of
iceberg_tables with iceberg_type VIEW pointing at a gzipped view metadata file. A view is never read as a table
(not listed, not unmanaged, not loaded), a project's view plans against it (created, unchanged, replaced), and
import writes the view policy that plans nothing."""

from __future__ import annotations

import gzip
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from sqlalchemy import text

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.drift import Unmanaged, find_drift
from tablepolicy.compiler.errors import CatalogError
from tablepolicy.compiler.importer import parse_selector, select_tables, view_policy_yaml
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.runtime.catalog.reader import CatalogReader
from tests.memory_catalog import project_of
from tests.memory_views import view_metadata

TABLE = "table: ops.t\ncolumns: [{name: id, type: long}]\n"
VIEW = "view: ops.v\nsql: SELECT id FROM ops.t\ncolumns: {id: the key}\n"


@pytest.fixture
def lake(tmp_path: Path) -> CatalogConfig:
    """A SQL catalog holding table ops.t and view ops.v (as Spark's CREATE VIEW leaves them)."""
    config = CatalogConfig("lake", {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
                                    "warehouse": (tmp_path / "wh").as_uri()})
    catalog = SqlCatalog("lake", **config.properties)
    catalog.create_namespace("ops")
    catalog.create_table("ops.t", Schema(NestedField(1, "id", LongType(), required=False)))
    write_view(config, VIEW, tmp_path / "v1.gz.metadata.json")
    return config


def write_view(config: CatalogConfig, policy: str, file: Path, **kwargs: Any) -> None:
    file.write_bytes(gzip.compress(json.dumps(view_metadata(policy, **kwargs)).encode()))
    engine = SqlCatalog("lake", **config.properties).engine
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM iceberg_tables WHERE table_name = 'v'"))
        connection.execute(text("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                                "metadata_location, previous_metadata_location, iceberg_type) VALUES "
                                "('lake', 'ops', 'v', :loc, NULL, 'VIEW')"), {"loc": file.as_uri()})


def summaries(config: CatalogConfig, *policies: str) -> list[str]:
    with CatalogReader(config) as reader:
        result = make_plan(project_of(*policies), reader, CatalogRef.of(config), today=date(2026, 1, 15))
    assert not result.refused, [d.render() for d in result.diagnostics]
    return [c.summary for c in result.plan.changes] + [f"unmanaged {'.'.join(n)}" for n in result.plan.unmanaged]


def test_a_view_is_no_table(lake: CatalogConfig) -> None:
    with CatalogReader(lake) as reader:
        assert reader.tables_in(("ops",)) == [("ops", "t")]
        assert reader.table(("ops", "v")) is None
        assert reader.table(("ops", "v"), fresh=True) is None
        view = reader.view(("ops", "v"))
        assert reader.view(("ops", "t")) is None
    assert view is not None
    assert (view.state.sql, view.state.columns, view.version_id) == ("SELECT id FROM ops.t", (("id", "the key"),), 1)
    assert summaries(lake, TABLE) == []  # the view is not an unmanaged table


def test_a_view_plans_against_what_the_catalog_holds(lake: CatalogConfig, tmp_path: Path) -> None:
    assert summaries(lake, TABLE, VIEW) == []
    assert summaries(lake, TABLE, VIEW.replace("ops.v", "ops.w")) == ["create view ops.w"]
    assert summaries(lake, TABLE, VIEW.replace("the key", "the id") + "owner: data\n") == [
        "replace view ops.v (version 1): new columns, properties"]
    write_view(lake, VIEW.replace("ops.t", "ops.t WHERE id > 0"), tmp_path / "v2.gz.metadata.json", version_id=2)
    assert summaries(lake, TABLE, VIEW) == ["replace view ops.v (version 2): new sql"]


def test_a_view_whose_metadata_has_no_spark_sql_is_an_error(lake: CatalogConfig, tmp_path: Path) -> None:
    file = tmp_path / "trino.gz.metadata.json"
    write_view(lake, VIEW, file)
    document = json.loads(gzip.decompress(file.read_bytes()))
    document["versions"][0]["representations"][0]["dialect"] = "trino"
    file.write_bytes(gzip.compress(json.dumps(document).encode()))
    with CatalogReader(lake) as reader, pytest.raises(CatalogError, match=r"cannot read view ops.v from catalog "
                                                      r".*: its current version has no SQL for dialect 'spark' "
                                                      r"\(it has: trino\)"):
        reader.view(("ops", "v"))


def test_import_writes_a_view_policy_that_plans_nothing(lake: CatalogConfig, tmp_path: Path) -> None:
    held = VIEW.replace("sql: SELECT id FROM ops.t", "sql: |\n  SELECT id\n  FROM ops.t") + (
        "description: ids\nowner: data\nproperties: {review: yearly}\n")
    write_view(lake, held, tmp_path / "v3.gz.metadata.json", properties={"by.hand": "x"})
    with CatalogReader(lake) as reader:
        inventory = reader.inventory()
        view = reader.view(("ops", "v"))
    assert (inventory.tables, inventory.views) == ({("ops", "t")}, {("ops", "v")})
    assert select_tables([parse_selector("ops.*")], inventory).tables == (("ops", "t"), ("ops", "v"))
    assert view is not None
    text = view_policy_yaml(view)
    assert text == ("# Imported from the catalog by `tablepolicy import ops.v`.\nview: ops.v\nsql: |\n  SELECT id\n"
                    "  FROM ops.t\ncolumns: {id: the key}\ndescription: ids\nowner: data\nproperties:\n"
                    "  review: yearly\n")
    assert summaries(lake, TABLE, text) == []


def test_a_namespace_holding_only_declared_views_is_managed(lake: CatalogConfig, tmp_path: Path) -> None:
    """drift on the whole project: git mentions namespace rep through its view, so it is not unmanaged."""
    SqlCatalog("lake", **lake.properties).create_namespace("rep")
    view = VIEW.replace("ops.v", "rep.v")
    file = tmp_path / "rep.gz.metadata.json"
    file.write_bytes(gzip.compress(json.dumps(view_metadata(view)).encode()))
    with SqlCatalog("lake", **lake.properties).engine.begin() as connection:
        connection.execute(text("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                                "metadata_location, previous_metadata_location, iceberg_type) VALUES "
                                "('lake', 'rep', 'v', :loc, NULL, 'VIEW')"), {"loc": file.as_uri()})
    project = project_of(TABLE, VIEW, view)
    with CatalogReader(lake) as reader:
        plan = make_plan(project, reader, CatalogRef.of(lake), today=date(2026, 1, 15)).plan
        drift = find_drift(plan, reader, {}, project, reader.inventory())
    assert (plan.changes, drift.unmanaged, drift.drifted) == ([], Unmanaged(), False)

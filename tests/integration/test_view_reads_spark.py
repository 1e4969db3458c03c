"""Real Spark agrees with plan's check of the tables a view reads (TP463, compiler/checks/view_reads.py), on the
embedded SQLite catalog and on PostgreSQL (conftest's ``lake``): a view apply creates records an empty default
namespace, so a name without a namespace is not found by Spark either; a metadata table (``ns.t.snapshots``) is
read through its table; a table nobody has fails Spark's CREATE VIEW as plan said it would; and a view reading
another new view is created after it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.reader import CatalogReader, read_metadata
from tests.integration.conftest import Lake
from tests.integration.test_apply import apply_dir

pytestmark = pytest.mark.spark
TABLE = "table: ops.vt\ncolumns: [{name: id, type: long}]\n"


def plan_findings(lake: Lake, policies: Path) -> list[str]:
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    with CatalogReader(lake.config) as reader:
        result = make_plan(project, reader, CatalogRef.of(lake.config), today=date(2026, 1, 15))
    return [f"{d.code} {d.message}" for d in result.diagnostics]


def spark_refusal(lake: Lake, sql: str) -> str:
    """Spark's error for ``sql`` run as apply runs a view's statement: the plan's catalog current."""
    previous = lake.spark.catalog.currentCatalog()
    lake.spark.catalog.setCurrentCatalog(lake.config.name)
    try:
        with pytest.raises(Exception) as raised:  # Spark's AnalysisException, through py4j
            lake.spark.sql(sql)
    finally:
        lake.spark.catalog.setCurrentCatalog(previous)
    return str(raised.value)


def test_spark_resolves_a_views_names_as_plan_does(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(TABLE)
    (policies / "v.yaml").write_text("view: ops.v\nsql: SELECT s.snapshot_id FROM ops.vt.snapshots s JOIN "
                                     "ops.vt t ON s.snapshot_id = t.id\n")
    assert plan_findings(lake, policies) == []
    apply_dir(lake, policies, tmp_path)  # Spark creates it: the metadata table is read through ops.vt
    with CatalogReader(lake.config) as reader:
        made = reader.view(("ops", "v"))
        assert made is not None
        [version] = read_metadata(reader.catalog, made.metadata_location)["versions"]
    assert version["default-namespace"] == []  # what plan resolves a name without a namespace in

    (policies / "v.yaml").write_text("view: ops.v\nsql: SELECT id FROM vt\n")
    assert plan_findings(lake, policies) == [
        "TP463 view ops.v reads table vt without a namespace: Spark looks for it in the root of catalog 'lake' "
        "(the view's default namespace is empty), where git declares no table"]
    assert "TABLE_OR_VIEW_NOT_FOUND" in spark_refusal(lake, "CREATE OR REPLACE VIEW ops.v AS SELECT id FROM vt")

    (policies / "v.yaml").write_text("view: ops.v\nsql: SELECT id FROM ops.gone\n")
    assert plan_findings(lake, policies) == [
        "TP463 view ops.v reads table ops.gone, which git does not declare and catalog 'lake' does not hold"]
    assert "TABLE_OR_VIEW_NOT_FOUND" in spark_refusal(lake, "CREATE OR REPLACE VIEW ops.v AS SELECT id FROM ops.gone")


def test_a_view_reading_another_new_view_is_created_after_it(lake: Lake, tmp_path: Path) -> None:
    """ops.a reads ops.b, both new: plan creates b first (by name a would come first and Spark would refuse it)."""
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(TABLE.replace("ops.vt", "ops.wt"))
    (policies / "a.yaml").write_text("view: ops.a\nsql: SELECT id FROM ops.b WHERE id > 1\n")
    (policies / "b.yaml").write_text("view: ops.b\nsql: SELECT id FROM ops.wt\n")
    # the module's lake holds ops.vt, applied by an earlier test and declared by none here: TP470 names it
    assert [f for f in plan_findings(lake, policies) if not f.startswith("TP470")] == []
    apply_dir(lake, policies, tmp_path)
    lake.spark.sql("INSERT INTO lake.ops.wt VALUES (1), (2), (3)")
    assert [r.id for r in lake.spark.sql("SELECT id FROM lake.ops.a ORDER BY id").collect()] == [2, 3]

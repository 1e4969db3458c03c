"""Catalogs on real Spark: a namespace named like its catalog is maintained and erased (the procedures'
``table`` argument names the catalog), and orphan removal never deletes files another table owns, even a
table of another catalog name over the same catalog database and warehouse."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.maintenance.due import maintenance_plan
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.health import CatalogHealth
from tablepolicy.runtime.maintain import run_maintenance
from tablepolicy.runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake
from tests.integration.evolve import converge

pytestmark = pytest.mark.spark

PLAIN = """
table: lake.plain
columns:
  - {name: id, type: long, required: true}
  - {name: user_id, type: string}
  - {name: ts, type: timestamptz}
partition_by: [day(ts)]
write_modes: {delete: merge-on-read}
lifecycle:
  snapshots: {max_age: 1d, min_keep: 1}
  compaction: {min_input_files: 3, target_file_size: 128MB}
  manifests: {min_manifests: 3}
  orphan_files: {older_than: 3d}
  erasure: {key: [user_id], within: 30d}
"""
SHARED = """
table: shared.t
columns:
  - {name: id, type: long}
lifecycle:
  orphan_files: {older_than: 3d}
"""


def env_for(*configs: CatalogConfig) -> dict[str, str]:
    return {f"PYICEBERG_CATALOG__{c.name.upper()}__{key.upper()}": value
            for c in configs for key, value in c.properties.items()}


def test_a_namespace_named_like_its_catalog_is_maintained_and_erased(lake: Lake, tmp_path: Path) -> None:
    converge(lake, PLAIN)  # catalog lake, namespace lake: `lake`.`lake`.`plain`
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "plain.yaml").write_text(PLAIN)
    for i in range(4):
        lake.spark.sql(f"INSERT INTO lake.lake.plain VALUES ({i}, 'u{i % 2}', TIMESTAMP '2026-11-01 1{i}:00:00Z')")
    project, _ = validate(policies)
    with CatalogReader(lake.config) as reader:
        plan = maintenance_plan(project, CatalogHealth(reader), datetime.now(UTC) + timedelta(days=2))
    assert [a.action for a in plan.actions] == ["rewrite_data_files", "rewrite_manifests", "expire_snapshots",
                                                "remove_orphan_files"]
    report = run_maintenance(plan, lake.config, SparkOptions(), lock_dir=tmp_path)
    # maintain decides again after each action: what an earlier one made unnecessary is skipped, not failed
    assert all(s.status == "done" for s in report.steps), [s.error for s in report.steps]
    assert {"rewrite_data_files", "expire_snapshots"} <= {s.action.action for s in report.steps}

    requests = tmp_path / "requests.yaml"
    requests.write_text("requests:\n  - {id: R1, received: '2026-11-02', keys: {user_id: u1}}\n")
    proof = tmp_path / "proof.json"
    result = CliRunner(env=env_for(lake.config)).invoke(
        app, ["erase", str(policies), "-c", "lake", "--requests", str(requests), "--proof", str(proof)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Catalog: lake (sql, ")
    document = json.loads(proof.read_text())
    assert next(iter(document)) == "catalog" and document["catalog"]["name"] == "lake"
    (table,) = document["tables"]
    assert table["table"] == "lake.plain" and table["complete"] and table["rows_before"] == 2
    assert sorted(r.id for r in lake.spark.sql("SELECT id FROM lake.lake.plain").collect()) == [0, 2]


def test_orphan_removal_is_refused_where_another_catalog_name_owns_the_files(lake: Lake, tmp_path: Path) -> None:
    other = CatalogConfig("other", dict(lake.config.properties))  # a second name over the same database
    lake.register(other)
    converge(lake, SHARED)
    lake.spark.sql("INSERT INTO lake.shared.t VALUES (1), (2)")
    lake.spark.sql("CREATE NAMESPACE IF NOT EXISTS other.shared")
    lake.spark.sql("CREATE TABLE other.shared.t (id BIGINT) USING iceberg")  # the same default location
    lake.spark.sql("INSERT INTO other.shared.t VALUES (3)")
    with CatalogReader(lake.config) as mine, CatalogReader(other) as theirs:
        first, second = mine.pyiceberg_table(("shared", "t")), theirs.pyiceberg_table(("shared", "t"))
        assert first is not None and second is not None and first.location() == second.location()
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(SHARED)
    for name, owner in (("other", "lake"), ("lake", "other")):
        report = tmp_path / f"{name}.json"
        result = CliRunner(env=env_for(lake.config, other)).invoke(
            app, ["maintain", str(policies), "-c", name, "--json-report", str(report)])
        assert result.exit_code == 1, result.output
        assert result.output.startswith(f"Catalog: {name} (sql, ")
        assert (f"[1/1] shared.t: orphan_files ... refused: table shared.t of catalog '{owner}' (same catalog "
                "database) has its files at ") in result.output
        document = json.loads(report.read_text())
        assert document["catalog"]["name"] == name and document["failed"]
        assert [s["status"] for s in document["tables"][0]["steps"]] == ["refused"]
    assert sorted(r.id for r in lake.spark.sql("SELECT id FROM lake.shared.t").collect()) == [1, 2]
    assert [r.id for r in lake.spark.sql("SELECT id FROM other.shared.t").collect()] == [3]

"""maintain on real tables: only the due actions run, in order, and the table is healthier after.

A table written by six separate commits (small files, one manifest each, six snapshots), with rows
older than its retention and two stray files in its data directory, one old and one fresh.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from compiler.catalog.reader import CatalogReader
from compiler.maintenance.due import MaintenancePlan, maintenance_plan
from compiler.maintenance.health import read_health
from compiler.render.maintenance import action_sql
from compiler.validate import validate
from runtime.maintain import run_maintenance
from runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake
from tests.integration.evolve import converge

pytestmark = pytest.mark.spark

POLICY = """
table: maint.{name}
columns:
  - {{name: id, type: long, required: true}}
  - {{name: ts, type: timestamptz}}
  - {{name: payload, type: string}}
partition_by: [day(ts)]
lifecycle:
{lifecycle}
"""
LIFECYCLE = """  snapshots: {max_age: 1d, min_keep: 2}
  retention: {column: ts, keep: 30d}
  compaction: {min_input_files: 3, target_file_size: 128MB}
  manifests: {min_manifests: 3}
  orphan_files: {older_than: 3d}"""


def make_table(lake: Lake, tmp_path: Path, name: str, lifecycle: str) -> tuple[Path, Path]:
    """The table with six commits; ids 1xx are 60 days old, 2xx a day old. Returns (policies, data dir)."""
    text = POLICY.format(name=name, lifecycle=lifecycle)
    converge(lake, text)
    policies = tmp_path / name
    policies.mkdir()
    (policies / "t.yaml").write_text(text)
    now = datetime.now(UTC)
    for i in range(6):
        old, recent = now - timedelta(days=60, hours=i), now - timedelta(days=1, hours=i)
        lake.spark.sql(f"INSERT INTO lake.maint.{name} VALUES "
                       f"({100 + i}, TIMESTAMP '{old.isoformat(' ')}', 'old'), "
                       f"({200 + i}, TIMESTAMP '{recent.isoformat(' ')}', 'recent')")
    with CatalogReader(lake.config) as reader:
        current = reader.table(("maint", name))
    assert current is not None and current.state.location is not None
    return policies, Path(current.state.location.removeprefix("file:")) / "data"


def plan_for(lake: Lake, policies: Path, now: datetime) -> MaintenancePlan:
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    with CatalogReader(lake.config) as reader:
        return maintenance_plan(project, reader, now)


def ids(lake: Lake, name: str) -> list[int]:
    return sorted(r.id for r in lake.spark.sql(f"SELECT id FROM lake.maint.{name}").collect())


def test_due_actions_run_and_the_table_is_healthier(lake: Lake, tmp_path: Path) -> None:
    policies, data = make_table(lake, tmp_path, "events", LIFECYCLE)
    stale, fresh = data / "stray-old.parquet", data / "stray-new.parquet"
    for stray in (stale, fresh):
        stray.write_bytes(b"not referenced by any snapshot")
    five_days_ago = time.time() - 5 * 86400
    os.utime(stale, (five_days_ago, five_days_ago))
    now = datetime.now(UTC) + timedelta(days=1)  # a day on: every snapshot so far is older than max_age

    before = plan_for(lake, policies, now)
    (table,) = before.tables
    health = table.health
    assert (health.snapshots, health.rows, health.manifests) == (6, 12, 6)
    assert health.small_files == health.data_files >= 6
    assert health.expired is not None and health.expired.rows == 6
    assert [a.action for a in table.actions] == ["delete_expired_rows", "rewrite_data_files", "rewrite_manifests",
                                                 "expire_snapshots", "remove_orphan_files"]
    cutoff = datetime(now.year, now.month, now.day, tzinfo=UTC) - timedelta(days=30)
    delete, _, _, expire, _ = (action_sql(a, "lake") for a in table.actions)
    assert delete == f"DELETE FROM `lake`.`maint`.`events` WHERE `ts` < TIMESTAMP '{cutoff.isoformat(' ')}'"
    assert expire == ("CALL `lake`.system.`expire_snapshots`(\n  table => '`lake`.`maint`.`events`',\n"
                      f"  older_than => TIMESTAMP '{(now - timedelta(days=1)).isoformat(' ')}',\n  retain_last => 2\n)")

    report = run_maintenance(before, lake.config, SparkOptions(), lock_dir=tmp_path)
    assert [r.status for r in report.results] == ["done"] * 5, [r.error for r in report.results]
    # the DELETE dropped the six files that held only old rows; compaction rewrote the other six
    assert report.results[1].output["rewritten_data_files_count"] == health.data_files - health.expired.files

    assert ids(lake, "events") == list(range(200, 206))  # the old rows are gone, every recent one is there
    with CatalogReader(lake.config) as reader:
        pyiceberg_table = reader.pyiceberg_table(("maint", "events"))
        assert pyiceberg_table is not None
        after = read_health(("maint", "events"), pyiceberg_table)
    assert after.data_files < health.data_files and after.manifests < health.manifests
    assert after.snapshots <= 3 and after.rows == 6  # the six write snapshots expired; maintenance's own stay
    assert not stale.exists() and fresh.exists()  # only files older than orphan_files.older_than go

    again = plan_for(lake, policies, now)  # nothing left to do but the orphan sweep, which lists storage
    assert [a.action for a in again.actions] == ["remove_orphan_files"]


def test_nothing_runs_unless_git_declares_it(lake: Lake, tmp_path: Path) -> None:
    policies, _ = make_table(lake, tmp_path, "undeclared", "  metadata: {delete_after_commit: true}")
    plan = plan_for(lake, policies, datetime.now(UTC) + timedelta(days=1))
    (table,) = plan.tables
    assert table.health.small_files >= 6 and table.health.snapshots == 6
    assert table.actions == []


def test_every_action_parses_in_spark_for_awkward_names(lake: Lake) -> None:
    from compiler.maintenance.actions import (
        DeleteExpiredRows,
        ExpireSnapshots,
        RemoveOrphanFiles,
        RewriteDataFiles,
        RewriteManifests,
        RewritePositionDeletes,
        TimeCutoff,
    )

    table, now = ("we'ird ns", "t`x"), datetime(2026, 11, 22, tzinfo=UTC)
    column = TimeCutoff(column=("event time",), kind="timestamp", before=now)
    actions = [
        DeleteExpiredRows(table=table, reason="r", cutoff=column, keep="30d"),
        RewriteDataFiles(table=table, reason="r", strategy="zorder", zorder_by=(("a b",), ("d'e",)),
                         target_file_size=1, min_input_files=2, only_before=column),
        RewritePositionDeletes(table=table, reason="r", min_input_files=1),
        RewriteManifests(table=table, reason="r"),
        ExpireSnapshots(table=table, reason="r", older_than=now, retain_last=1),
        RemoveOrphanFiles(table=table, reason="r", older_than=now),
    ]
    for action in actions:
        lake.parse(action_sql(action, "lake"))  # Spark's parser with Iceberg's extensions: CALL included

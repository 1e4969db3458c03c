"""maintain on real tables: only the due actions run, in order, and the table is healthier after.

A table written by six separate commits (small files, one manifest each, six snapshots), with rows
older than its retention and two stray files in its data directory, one old and one fresh.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tablepolicy.compiler.maintenance.due import MaintenancePlan, maintenance_plan
from tablepolicy.compiler.maintenance.report import ActionRun
from tablepolicy.compiler.maintenance.sequence import estimated
from tablepolicy.compiler.render.maintenance import action_sql
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.health import CatalogHealth, read_health
from tablepolicy.runtime.maintain import Locations, orphan_scanner, run_maintenance
from tablepolicy.runtime.spark.session import SparkOptions
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
    """The table with six commits; ids 1xx are 60 days old, 2xx from yesterday. Returns (policies, data dir)."""
    text = POLICY.format(name=name, lifecycle=lifecycle)
    converge(lake, text)
    policies = tmp_path / name
    policies.mkdir()
    (policies / "t.yaml").write_text(text)
    # yesterday's noon, whatever the hour now: the six recent rows fall in one day partition (an hourly spread
    # back from now split them across two days before 06:00 UTC, and compaction then left a partition alone)
    noon = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=1)
    for i in range(6):
        old, recent = noon - timedelta(days=60, hours=i), noon - timedelta(hours=i)
        lake.spark.sql(f"INSERT INTO lake.maint.{name} VALUES "
                       f"({100 + i}, TIMESTAMP '{old.isoformat(' ')}', 'old'), "
                       f"({200 + i}, TIMESTAMP '{recent.isoformat(' ')}', 'recent')")
    with CatalogReader(lake.config) as reader:
        current = reader.table(("maint", name))
    assert current is not None and current.state.location is not None
    return policies, Path(current.state.location.removeprefix("file:")) / "data"


def plan_for(lake: Lake, policies: Path, now: datetime, *, list_locations: bool = False) -> MaintenancePlan:
    """``list_locations``: orphan removal decided from a listing of the location (as the CLI does)."""
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    with CatalogReader(lake.config) as reader:
        scan = orphan_scanner(reader, Locations()) if list_locations else None
        return maintenance_plan(project, CatalogHealth(reader, scan), now)


def ids(lake: Lake, name: str) -> list[int]:
    return sorted(r.id for r in lake.spark.sql(f"SELECT id FROM lake.maint.{name}").collect())


def checksum(lake: Lake, query: str) -> str:
    rows = sorted(tuple(str(v) for v in r) for r in lake.spark.sql(query).collect())
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def effects(steps: Iterable[ActionRun]) -> dict[str, dict[str, int]]:
    """Each step's effect, but the bytes compaction wrote: a dry run cannot know them (it says so)."""
    return {s.action.action: {k: v for k, v in s.effect.as_json().items() if k != "bytes_written"} for s in steps}


def test_due_actions_run_the_table_is_healthier_and_the_dry_run_counted_right(lake: Lake, tmp_path: Path) -> None:
    policies, data = make_table(lake, tmp_path, "events", LIFECYCLE)
    stale, fresh = data / "stray-old.parquet", data / "stray-new.parquet"
    for stray in (stale, fresh):
        stray.write_bytes(b"not referenced by any snapshot")
    five_days_ago = time.time() - 5 * 86400
    os.utime(stale, (five_days_ago, five_days_ago))
    now = datetime.now(UTC) + timedelta(days=1)  # a day on: every snapshot so far is older than max_age
    recent = checksum(lake, "SELECT * FROM lake.maint.events WHERE payload = 'recent'")

    before = plan_for(lake, policies, now, list_locations=True)
    (table,) = before.tables
    health = table.health
    assert (health.snapshots, health.rows, health.manifests) == (6, 12, 6)
    assert health.small_files == health.data_files >= 6
    assert health.expired is not None and health.expired.rows == 6
    assert health.orphans is not None and (health.orphans.files, health.orphans.bytes) == (1, 30)
    assert [a.action for a in table.actions] == ["delete_expired_rows", "rewrite_data_files", "rewrite_manifests",
                                                 "expire_snapshots", "remove_orphan_files"]
    cutoff = datetime(now.year, now.month, now.day, tzinfo=UTC) - timedelta(days=30)
    delete, _, _, expire, _ = (action_sql(a, "lake") for a in table.actions)
    assert delete == f"DELETE FROM `lake`.`maint`.`events` WHERE `ts` < TIMESTAMP '{cutoff.isoformat(' ')}'"
    assert expire == ("CALL `lake`.system.`expire_snapshots`(\n  table => '`lake`.`maint`.`events`',\n"
                      f"  older_than => TIMESTAMP '{(now - timedelta(days=1)).isoformat(' ')}',\n  retain_last => 2\n)")

    dry = estimated(before, lambda a: action_sql(a, "lake"), lake.config.summary())
    report = run_maintenance(before, lake.config, SparkOptions(), lock_dir=tmp_path)
    (outcome,) = report.tables
    assert not report.failed, [s.error for s in report.steps]
    # the dry run's counts are what the run did: rows deleted, files compacted, snapshots expired, orphans removed
    counted = ("delete_expired_rows", "rewrite_data_files", "expire_snapshots", "remove_orphan_files")
    ran = {k: v for k, v in effects(outcome.steps).items() if k in counted}
    assert ran == {k: v for k, v in effects(dry.tables[0].steps).items() if k in counted}, (outcome, dry)
    assert set(ran) == set(counted)
    # rewrite_manifests was due before the run; decided again on the health compaction left, it is a skip
    assert "rewrite_manifests" not in {s.action.action for s in outcome.steps}
    assert [s.reason.split(" (")[0] for s in outcome.skips if s.action == "rewrite_manifests"] == [
        "manifests already merged by compaction"]
    assert ran["delete_expired_rows"] == {"rows_deleted": 6}
    # compaction took the recent files left in partitions with at least min_input_files (the DELETE removed the
    # old ones): one file written per such partition
    assert ran["rewrite_data_files"]["rewritten"] == sum(n for n in health.retained_small_file_groups or () if n >= 3)
    assert ran["expire_snapshots"] == {"snapshots_expired": 6}
    assert ran["remove_orphan_files"] == {"files_removed": 1, "bytes_removed": 30}
    assert (outcome.after.rows, outcome.rows_deleted) == (dry.tables[0].after.rows, dry.tables[0].rows_deleted)
    assert (outcome.after.data_files, outcome.after.snapshots) == (
        dry.tables[0].after.data_files, dry.tables[0].after.snapshots), (outcome, dry)

    # read back from the catalog: the old rows are gone, every recent one is there, unchanged
    assert ids(lake, "events") == list(range(200, 206))
    assert checksum(lake, "SELECT * FROM lake.maint.events") == recent
    with CatalogReader(lake.config) as reader:
        pyiceberg_table = reader.pyiceberg_table(("maint", "events"))
        assert pyiceberg_table is not None
        after = read_health(("maint", "events"), pyiceberg_table)
    assert (after.data_files, after.rows, after.snapshots) == (
        outcome.after.data_files, outcome.after.rows, outcome.after.snapshots)
    assert after.data_files < health.data_files and after.manifests < health.manifests
    assert after.snapshots == health.snapshots - 6 + sum(s.status == "done" for s in outcome.steps
                                                         if s.action.action != "expire_snapshots"
                                                         and s.action.action != "remove_orphan_files")
    assert not stale.exists() and fresh.exists()  # only files older than orphan_files.older_than go
    assert outcome.bytes_reclaimed is not None and outcome.bytes_reclaimed > 0

    again = plan_for(lake, policies, now, list_locations=True)  # nothing left: the next run starts no Spark
    assert again.actions == []


def test_a_tag_keeps_its_files_and_time_travel_to_it_works(lake: Lake, tmp_path: Path) -> None:
    text = POLICY.format(name="tagged", lifecycle="  snapshots: {max_age: 1d, min_keep: 1}")
    converge(lake, text)
    policies = tmp_path / "tagged"
    policies.mkdir()
    (policies / "t.yaml").write_text(text)
    for i in range(6):
        lake.spark.sql(f"INSERT INTO lake.maint.tagged VALUES ({i}, TIMESTAMP '2026-01-0{i + 1} 00:00:00Z', 'p{i}')")
        if i == 1:
            lake.spark.sql("ALTER TABLE lake.maint.tagged CREATE TAG `audit-2026`")
            tagged = checksum(lake, "SELECT * FROM lake.maint.tagged")
    everything = checksum(lake, "SELECT * FROM lake.maint.tagged")
    with CatalogReader(lake.config) as reader:
        table = reader.pyiceberg_table(("maint", "tagged"))
        assert table is not None
        tag = table.metadata.refs["audit-2026"].snapshot_id
        tag_files = [task.file.file_path for task in table.scan(snapshot_id=tag).plan_files()]
    assert len(tag_files) == 2

    plan = plan_for(lake, policies, datetime.now(UTC) + timedelta(days=1))
    (expire,) = plan.actions
    assert expire.reason == ("4 of 6 snapshots expire: older than 1d beyond the newest 1 (min_keep); "
                             "audit-2026 keeps 1")
    dry = estimated(plan, lambda a: action_sql(a, "lake"), lake.config.summary())
    report = run_maintenance(plan, lake.config, SparkOptions(), lock_dir=tmp_path)
    assert not report.failed, [s.error for s in report.steps]
    assert effects(report.steps) == effects(dry.steps) == {"expire_snapshots": {"snapshots_expired": 4}}

    with CatalogReader(lake.config) as reader:
        table = reader.pyiceberg_table(("maint", "tagged"))
        assert table is not None
        assert table.metadata.refs["audit-2026"].snapshot_id == tag
        assert len(table.metadata.snapshots) == 2  # the tag's and main's
    assert all(Path(f.removeprefix("file:")).exists() for f in tag_files)
    assert checksum(lake, "SELECT * FROM lake.maint.tagged VERSION AS OF 'audit-2026'") == tagged
    assert checksum(lake, "SELECT * FROM lake.maint.tagged") == everything


def test_nothing_runs_unless_git_declares_it(lake: Lake, tmp_path: Path) -> None:
    policies, _ = make_table(lake, tmp_path, "undeclared", "  metadata: {delete_after_commit: true}")
    plan = plan_for(lake, policies, datetime.now(UTC) + timedelta(days=1))
    (table,) = plan.tables
    assert table.health.small_files >= 6 and table.health.snapshots == 6
    assert table.actions == []


def test_every_action_parses_in_spark_for_awkward_names(lake: Lake) -> None:
    from tablepolicy.compiler.maintenance.actions import (
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

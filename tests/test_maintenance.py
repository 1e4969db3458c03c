"""Maintenance decisions (pure), their SQL, and `health` / `maintain --dry-run` through the real CLI on
tables written with pyiceberg (no JVM: a dry run never starts Spark)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from compiler.desired import desired_table
from compiler.diff.changes import RetentionEstimate
from compiler.maintenance.actions import ExpireSnapshots, RewriteDataFiles, TimeCutoff
from compiler.maintenance.decide import maintenance_for
from compiler.maintenance.health import TableHealth
from compiler.render.maintenance import action_sql
from runtime.cli.app import app
from tests.integration.evolve import project_of
from tests.test_plan_cli import policies as example_policies  # noqa: F401  (fixture)

NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)
POLICY = """
table: sales.orders
columns:
  - {{name: id, type: long}}
  - {{name: ordered_at, type: timestamptz}}
partition_by: [day(ordered_at)]
lifecycle:
{lifecycle}
"""


def health(**figures: object) -> TableHealth:
    """Figures for a test; snapshot times become one line of history with main at the newest."""
    times = tuple(figures.get("snapshot_times", ()))  # type: ignore[call-overload]
    lineage = [{"id": i + 1, "parent_id": i or None, "timestamp_ms": t} for i, t in enumerate(times)]
    base: dict[str, object] = dict(
        table=("sales", "orders"), snapshot_times=(), current_snapshot_id=None, data_files=0, data_bytes=0,
        rows=0, small_files=0, target_file_size=512 * 2**20, position_delete_files=0, equality_delete_files=0,
        manifests=1, metadata_files=1, snapshot_log=lineage,
        refs=[{"name": "main", "snapshot_id": len(times), "branch": True}] if times else [])
    return TableHealth.model_validate({**base, **figures})


def decide(lifecycle: str, figures: TableHealth) -> list[str]:
    project = project_of(POLICY.format(lifecycle=lifecycle))
    desired = desired_table(project, project.tables[0])
    return [a.action for a in maintenance_for(desired.effective, desired.state, figures, NOW)]


def hours_ago(*hours: int) -> tuple[int, ...]:
    return tuple(int((NOW - timedelta(hours=h)).timestamp() * 1000) for h in sorted(hours, reverse=True))


def test_nothing_is_due_unless_its_section_is_declared() -> None:
    unhealthy = health(small_files=50, small_file_groups=(50,), snapshot_times=hours_ago(900, 800, 1),
                       manifests=500, position_delete_files=9)
    assert decide("  metadata: {delete_after_commit: true}", unhealthy) == []
    assert decide("  compaction: {enabled: false}\n  manifests: {enabled: false}", unhealthy) == []


def test_compaction_needs_enough_small_files_in_one_partition() -> None:
    spread = health(data_files=40, small_files=40, small_file_groups=(4,) * 10)
    assert decide("  compaction: {min_input_files: 5}", spread) == []
    assert decide("  compaction: {min_input_files: 4}", spread) == ["rewrite_data_files"]


def test_snapshot_expiry_keeps_min_keep_and_young_snapshots() -> None:
    figures = health(snapshot_times=hours_ago(72, 48, 30, 2))
    assert decide("  snapshots: {max_age: 1d, min_keep: 1}", figures) == ["expire_snapshots"]
    assert decide("  snapshots: {max_age: 1d, min_keep: 3}", figures) == ["expire_snapshots"]  # the 72h one
    assert decide("  snapshots: {max_age: 1d, min_keep: 4}", figures) == []
    assert decide("  snapshots: {max_age: 4d, min_keep: 1}", figures) == []


def test_retention_is_due_only_when_metadata_shows_older_rows() -> None:
    lifecycle = "  retention: {column: ordered_at, keep: 30d}"
    none = RetentionEstimate(files=0, partial_files=0, rows=0, rows_upper=0, bytes=0)
    some = RetentionEstimate(files=0, partial_files=2, rows=0, rows_upper=10, bytes=0)
    assert decide(lifecycle, health(expired=none)) == []
    assert decide(lifecycle, health(expired=some)) == ["delete_expired_rows"]


def test_order_rows_then_files_then_history_then_orphans() -> None:
    lifecycle = """  snapshots: {max_age: 1d}
  retention: {column: ordered_at, keep: 30d}
  orphan_files: {older_than: 3d}
  compaction: {min_input_files: 2}
  manifests: {min_manifests: 2}
  delete_files: {min_input_files: 1}"""
    figures = health(snapshot_times=hours_ago(48, 1), small_files=2, small_file_groups=(2,), manifests=2,
                     position_delete_files=1,
                     expired=RetentionEstimate(files=1, partial_files=0, rows=5, rows_upper=5, bytes=9))
    assert decide(lifecycle, figures) == ["delete_expired_rows", "rewrite_data_files",
                                          "rewrite_position_delete_files", "rewrite_manifests", "expire_snapshots",
                                          "remove_orphan_files"]


def test_sql_quotes_names_inside_procedure_arguments() -> None:
    table = ("we'ird", "t`x")
    expire = ExpireSnapshots(table=table, reason="r", older_than=NOW, retain_last=3)
    assert action_sql(expire, "lake") == (
        "CALL `lake`.system.`expire_snapshots`(\n  table => '`lake`.`we\\'ird`.`t``x`',\n"
        "  older_than => TIMESTAMP '2026-11-22 12:30:00+00:00',\n  retain_last => 3\n)")
    window = TimeCutoff(column=("event time",), kind="timestamp", before=NOW)
    compact = RewriteDataFiles(table=table, reason="r", strategy="zorder", zorder_by=(("a",), ("b", "c")),
                               target_file_size=100, min_input_files=5, only_before=window)
    assert action_sql(compact, "lake") == (
        "CALL `lake`.system.`rewrite_data_files`(\n  table => '`lake`.`we\\'ird`.`t``x`',\n  strategy => 'sort',\n"
        "  sort_order => 'zorder(`a`, `b`.`c`)',\n"
        "  where => '`event time` < TIMESTAMP_NTZ \\'2026-11-22 12:30:00\\'',\n"
        "  options => map('min-input-files', '5', 'target-file-size-bytes', '100')\n)")


@pytest.fixture
def written(example_policies: Path, tmp_path: Path) -> Path:  # noqa: F811
    """The examples in the catalog; logs.app_events written in five commits into one five-hour-old partition."""
    from tests.catalog_fixtures import embedded_catalog

    events = embedded_catalog(example_policies).load_table(("logs", "app_events"))
    old = (datetime.now(UTC) - timedelta(hours=5)).replace(minute=0, second=0, microsecond=0)  # one hour partition
    for batch in range(5):
        rows = [{"event_time": old + timedelta(minutes=batch), "service": "api", "host": "h", "level": "INFO",
                 "message": "m", "attributes": None, "trace": None, "tags": None}]
        events.append(pa.Table.from_pylist(rows, schema=events.schema().as_arrow()))
    return example_policies


def healths(document: dict[str, Any]) -> list[Any]:
    """The figures only: the due actions carry times computed from "now"."""
    return [t["health"] for t in document["tables"]]


def test_health_and_dry_run_through_the_cli(written: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["health", str(written), "--format", "json"])
    assert result.exit_code == 0, result.output
    tables = {".".join(t["table"]): t for t in json.loads(result.output)["tables"]}
    events = tables["logs.app_events"]
    assert (events["health"]["data_files"], len(events["health"]["snapshot_times"])) == (5, 5)
    assert events["health"]["small_file_groups"] == [5]
    assert [a["action"] for a in events["actions"]] == ["rewrite_data_files"]
    # orphan removal is declared by the namespace defaults, but the location holds no unreferenced file
    assert {"code": "TM302", "action": "remove_orphan_files",
            "reason": "no unreferenced file older than 3d"} in events["skipped"]
    assert events["health"]["orphans"] == {"files": 0, "bytes": 0, "young": 0, "refused": None}
    assert tables["security.cloudtrail_mgmt"]["health"]["data_files"] == 0

    dry = runner.invoke(app, ["maintain", str(written), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "CALL `lake`.system.`rewrite_data_files`(\n        table => '`lake`.`logs`.`app_events`'," in dry.output
    assert "5 small data files in 1 partition(s) with at least 5 each" in dry.output
    again = json.loads(runner.invoke(app, ["health", str(written), "--format", "json"]).output)
    assert healths(again) == healths(json.loads(result.output))  # a dry run changes nothing


def test_tables_not_created_yet_are_named(tmp_path: Path) -> None:
    policies = shutil.copytree(Path(__file__).resolve().parents[1] / "policies", tmp_path / "policies")
    result = CliRunner().invoke(app, ["maintain", str(policies), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "Not in the catalog yet (run tablepolicy apply first): ads.click_log, logs.app_events" in result.output


def test_orphan_removal_is_due_only_when_the_listing_found_old_orphans() -> None:
    from compiler.maintenance.health import OrphanFigures

    lifecycle = "  orphan_files: {older_than: 3d}"
    assert decide(lifecycle, health(orphans=OrphanFigures(files=0, bytes=0, young=2))) == []
    assert decide(lifecycle, health(orphans=OrphanFigures(files=1, bytes=10, refused="most of the bytes"))) == []
    assert decide(lifecycle, health(orphans=OrphanFigures(files=1, bytes=10))) == ["remove_orphan_files"]


@pytest.mark.parametrize(("lifecycle", "figures", "code", "reason"), [
    ("  compaction: {min_input_files: 5}", dict(small_file_groups=(3, 2)), "TM201",
     "3 small file(s) in the fullest partition, below min_input_files 5"),
    ("  delete_files: {min_input_files: 2}", dict(position_delete_files=1), "TM202",
     "1 position delete file(s), below min_input_files 2"),
    ("  manifests: {min_manifests: 10}", dict(manifests=4), "TM203", "4 manifest(s), below min_manifests 10"),
    ("  snapshots: {max_age: 4d, min_keep: 1}", dict(snapshot_times=hours_ago(30, 2)), "TM301",
     "none of 2 snapshot(s) is older than 4d beyond the newest 1 (min_keep)"),
    ("  orphan_files: {older_than: 3d}", dict(orphans={"files": 0, "bytes": 0, "young": 1}), "TM302",
     "no unreferenced file older than 3d (1 newer unreferenced file(s) wait for the 3d guard)"),
], ids=lambda v: v if isinstance(v, str) and v.startswith("TM") else None)
def test_every_declared_action_not_due_is_a_skip_with_its_reason(
    lifecycle: str, figures: dict[str, object], code: str, reason: str
) -> None:
    from compiler.maintenance.decide import Skip, decisions

    project = project_of(POLICY.format(lifecycle=lifecycle))
    desired = desired_table(project, project.tables[0])
    found = decisions(desired.effective, desired.state, health(**figures), NOW)
    assert [(d.code, d.reason) for d in found if isinstance(d, Skip)] == [(code, reason)]

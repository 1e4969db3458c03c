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

from tablepolicy.cli.app import app
from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.diff.changes import RetentionEstimate
from tablepolicy.compiler.maintenance.actions import ExpireSnapshots, RewriteDataFiles, TimeCutoff
from tablepolicy.compiler.maintenance.decide import maintenance_for
from tablepolicy.compiler.maintenance.health import TableHealth
from tablepolicy.compiler.render.maintenance import action_sql
from tests.integration.evolve import project_of
from tests.unit.test_plan_cli import policies as example_policies  # noqa: F401  (fixture)

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
    """The examples in the catalog; logs.app_events written in five commits into one hour partition, 07:00 on
    NOW's day: the CLI decides with the machine's clock, which is past it whatever the hour (skip_recent is 2h)."""
    from tests.catalog_fixtures import embedded_catalog

    events = embedded_catalog(example_policies).load_table(("logs", "app_events"))
    old = NOW.replace(hour=7, minute=0)
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
    policies = shutil.copytree(Path(__file__).resolve().parents[2] / "policies", tmp_path / "policies")
    result = CliRunner().invoke(app, ["maintain", str(policies), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "Not in the catalog yet (run tablepolicy apply first): ads.click_log, logs.app_events" in result.output


def test_orphan_removal_is_due_only_when_the_listing_found_old_orphans() -> None:
    from tablepolicy.compiler.maintenance.health import OrphanFigures

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
    from tablepolicy.compiler.maintenance.decide import Skip, decisions

    project = project_of(POLICY.format(lifecycle=lifecycle))
    desired = desired_table(project, project.tables[0])
    found = decisions(desired.effective, desired.state, health(**figures), NOW)
    assert [(d.code, d.reason) for d in found if isinstance(d, Skip)] == [(code, reason)]


def basis(lifecycle: str) -> Any:
    from tablepolicy.compiler.maintenance.due import Basis

    project = project_of(POLICY.format(lifecycle=lifecycle))
    desired = desired_table(project, project.tables[0])
    return Basis(desired.effective, desired.state, NOW)


def test_a_dry_run_decides_each_action_on_the_health_the_one_before_leaves() -> None:
    """Retention deletes the old small files (compaction is then below min_input_files); the DELETE's commit
    makes one more snapshot, so expiry removes two, not the one it would remove before."""
    from tablepolicy.compiler.maintenance.due import MaintenancePlan
    from tablepolicy.compiler.maintenance.sequence import estimated

    lifecycle = """  snapshots: {max_age: 1d, min_keep: 2}
  retention: {column: ordered_at, keep: 30d}
  compaction: {min_input_files: 3}"""
    figures = health(snapshot_times=hours_ago(72, 60, 50), data_files=8, data_bytes=800, rows=80, small_files=8,
                     small_file_groups=(5, 3), retained_small_file_groups=(2,),
                     expired=RetentionEstimate(files=6, partial_files=0, rows=60, rows_upper=60, bytes=600))
    table = basis(lifecycle).decide(("sales", "orders"), figures)
    assert [a.action for a in table.actions] == ["delete_expired_rows", "rewrite_data_files", "expire_snapshots"]
    assert "1 of 3 snapshots expire" in table.actions[-1].reason

    report = estimated(MaintenancePlan([table], now=NOW), lambda a: a.action, {"name": "lake"})
    (outcome,) = report.tables
    assert [(s.action.action, s.status, s.effect.as_json()) for s in outcome.steps] == [
        ("delete_expired_rows", "estimated", {"rows_deleted": 60}),
        ("expire_snapshots", "estimated", {"snapshots_expired": 2}),
    ]
    assert [(k.action, k.reason) for k in outcome.skips] == [
        ("rewrite_data_files", "retention deleted the small files compaction would take (2 small file(s) in the "
                               "fullest partition, below min_input_files 3)")]
    assert (outcome.after.data_files, outcome.after.rows, outcome.after.snapshots) == (2, 20, 2)
    assert outcome.rows_deleted == 60


def test_a_run_skips_what_the_action_before_made_unnecessary_and_stops_a_table_at_a_failure() -> None:
    from tablepolicy.compiler.maintenance.report import ActionRun, Effect, Status
    from tablepolicy.compiler.maintenance.sequence import work_table

    planner = basis("  compaction: {min_input_files: 3}\n  manifests: {min_manifests: 3}\n"
                    "  snapshots: {max_age: 1d, min_keep: 1}")
    before = health(snapshot_times=hours_ago(72, 60), data_files=6, small_files=6, small_file_groups=(6,),
                    manifests=6)
    planned = planner.decide(("sales", "orders"), before)
    assert [a.action for a in planned.actions] == ["rewrite_data_files", "rewrite_manifests", "expire_snapshots"]
    merged = before.model_copy(update={"data_files": 1, "small_files": 1, "small_file_groups": (1,), "manifests": 1})

    def compacts(action: Any, current: Any) -> Any:  # what Spark and the re-read report, scripted
        if action.action == "expire_snapshots":
            return ActionRun(action, "sql", Status.FAILED, error="ValidationException: boom\n  statement: ..."), None
        done = ActionRun(action, "sql", Status.DONE, Effect(rewritten=6, written=1))
        return done, planner.decide(current.table, merged)

    outcome = work_table(planned, compacts, lambda a: a.action)
    assert [(s.action.action, s.status) for s in outcome.steps] == [("rewrite_data_files", "done"),
                                                                     ("expire_snapshots", "failed")]
    assert [(k.action, k.reason) for k in outcome.skips] == [
        ("rewrite_manifests", "manifests already merged by compaction (1 manifest(s), below min_manifests 3)")]
    assert outcome.failed and outcome.after.manifests == 1


@pytest.mark.parametrize(("tables", "only", "message"), [
    ([], ["orphans"], "TM401 --only 'orphans': not a lifecycle action; did you mean 'orphan_files'? use one of: "
                      "retention, compaction, delete_files, manifests, snapshots, orphan_files"),
    ([], ["rewrite_data_files"], "TM401 --only 'rewrite_data_files': not a lifecycle action; did you mean "
                                 "'compaction'? use one of: retention, compaction, delete_files, manifests, "
                                 "snapshots, orphan_files"),
    ([], ["speed"], "TM401 --only 'speed': not a lifecycle action; use one of: retention, compaction, delete_files, "
                    "manifests, snapshots, orphan_files"),
    (["logs.app_event"], [], "TM402 --table 'logs.app_event': no policy under this path declares it; close "
                             "declared names: logs.app_events"),
    (["nowhere.at_all"], [], "TM402 --table 'nowhere.at_all': no policy under this path declares it; declared "
                             "tables: ads.click_log, logs.app_events, security.cloudtrail_mgmt"),
], ids=["close-section", "procedure-name", "unknown-section", "close-table", "unknown-table"])
def test_a_selection_that_selects_nothing_names_what_exists(tables: list[str], only: list[str], message: str) -> None:
    from tablepolicy.compiler.maintenance.select import SelectionError, selection

    declared = [("logs", "app_events"), ("ads", "click_log"), ("security", "cloudtrail_mgmt")]
    with pytest.raises(SelectionError) as raised:
        selection(declared, tables, only)
    assert str(raised.value) == message
    chosen = selection(declared, ["logs.app_events"], ["compaction", "snapshots"])
    assert chosen.covers_table(("logs", "app_events")) and not chosen.covers_table(("ads", "click_log"))
    assert chosen.covers_action("expire_snapshots") and not chosen.covers_action("remove_orphan_files")


def test_dry_run_reports_through_the_cli(written: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    report = tmp_path / "report.json"
    result = runner.invoke(app, ["maintain", str(written), "--dry-run", "--format", "json", "--json-report",
                                 str(report)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert report.read_text() == result.output  # the file and stdout hold the same report
    assert document["catalog"]["name"] == "lake" and document["dry_run"] is True
    events = next(t for t in document["tables"] if t["table"] == ["logs", "app_events"])
    assert (events["before"]["data_files"], events["after"]["data_files"], events["after_is_estimate"]) == (5, 1, True)
    assert [(s["section"], s["status"], s["effect"]) for s in events["steps"]] == [
        ("compaction", "estimated", {"rewritten": 5, "written": 1, "bytes_rewritten": events["before"]["data_bytes"]})]
    # the bytes compaction writes are unknown until the run: the average after is a range with no lower bound
    assert events["after_range"]["average_file_size"] == [0, events["before"]["data_bytes"]]
    assert {"section": "orphan_files", "action": "remove_orphan_files", "code": "TM302",
            "reason": "no unreferenced file older than 3d"} in events["skipped"]

    markdown = runner.invoke(app, ["maintain", str(written), "--dry-run", "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.output
    assert "### Maintenance dry run — catalog `lake`" in markdown.output
    assert "| `logs.app_events` | 5 → 1 |" in markdown.output
    assert "- **compaction** (TM201, safe): compact small data files" in markdown.output

    selected = runner.invoke(app, ["maintain", str(written), "--dry-run", "--format", "json",
                                   "--table", "logs.app_events", "--only", "orphan_files"])
    assert selected.exit_code == 0, selected.output
    (only,) = json.loads(selected.output)["tables"]
    assert (only["table"], only["steps"]) == (["logs", "app_events"], [])
    assert [k["section"] for k in only["skipped"]] == ["orphan_files"]

    wrong = runner.invoke(app, ["maintain", str(written), "--dry-run", "--only", "orphans"])
    assert wrong.exit_code == 1
    assert "did you mean 'orphan_files'?" in wrong.output and "Traceback" not in wrong.output

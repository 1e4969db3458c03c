"""health's line per branch and tag: where it points, how old that is, what it alone keeps from expiry, and
whether the next expiry drops it (the expiry model maintain's dry run uses; no JVM)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.maintenance.decide import maintenance_for
from tablepolicy.compiler.maintenance.health import TableHealth
from tablepolicy.compiler.maintenance.refs import ref_health, ref_lines
from tests.memory_catalog import project_of

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DAY = 86_400_000


def ms(days_ago: float) -> int:
    return int((NOW - timedelta(days=days_ago)).timestamp() * 1000)


def figures() -> TableHealth:
    # main: 1 <- 2 <- 3 <- 4 (head, today); audit branches off 1 with 5 and 6; month_end tags 2; old tags 1
    log = [{"id": 1, "timestamp_ms": ms(40)}, {"id": 2, "parent_id": 1, "timestamp_ms": ms(30)},
           {"id": 3, "parent_id": 2, "timestamp_ms": ms(20)}, {"id": 4, "parent_id": 3, "timestamp_ms": ms(0)},
           {"id": 5, "parent_id": 1, "timestamp_ms": ms(12)}, {"id": 6, "parent_id": 5, "timestamp_ms": ms(11)}]
    refs = [{"name": "main", "snapshot_id": 4, "branch": True},
            {"name": "audit", "snapshot_id": 6, "branch": True, "min_snapshots_to_keep": 2},
            {"name": "month_end", "snapshot_id": 2, "branch": False, "max_ref_age_ms": 400 * DAY},
            {"name": "old", "snapshot_id": 1, "branch": False, "max_ref_age_ms": 7 * DAY}]
    return TableHealth.model_validate(dict(
        table=("u", "t"), snapshot_times=tuple(s["timestamp_ms"] for s in log), current_snapshot_id=4, data_files=0,
        data_bytes=0, rows=0, small_files=0, target_file_size=1, position_delete_files=0, equality_delete_files=0,
        manifests=1, metadata_files=1, snapshot_log=log, refs=refs))


def test_each_ref_its_age_and_what_it_keeps() -> None:
    health = figures()
    project = project_of("table: u.t\ncolumns: [{name: id, type: long}]\nlifecycle: {snapshots: {max_age: 7d}}")
    effective = desired_table(project, project.tables[0]).effective
    assert ref_lines(ref_health(health, effective, NOW)) == [
        "  refs          branch audit: snapshot 6, 11d old, alone keeps 2 snapshot(s) from expiry",
        "                tag month_end: snapshot 2, 30d old, alone keeps 1 snapshot(s) from expiry",
        "                tag old: snapshot 1, 40d old, alone keeps 0 snapshot(s) from expiry; the next expiry drops it "
        "(older than its max_ref_age)"]


def test_maintain_expires_what_each_ref_lets_go_and_drops_a_tag_past_its_max_ref_age() -> None:
    project = project_of("table: u.t\ncolumns: [{name: id, type: long}]\nlifecycle: {snapshots: {max_age: 7d}}")
    desired = desired_table(project, project.tables[0])
    [expire] = maintenance_for(desired.effective, desired.state, figures(), NOW)
    assert expire.reason == ("2 of 6 snapshots expire: older than 7d beyond the newest 1 (min_keep); audit keeps 2, "
                             "month_end keeps 1; old is dropped (older than its max_ref_age)")

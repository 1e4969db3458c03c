"""maintenance_plan asks its HealthSource for exactly what the policy needs, and nothing for a table the
catalog lacks (a recording source: the catalog side is runtime/health.py, tested against real tables)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from compiler.catalog.current import CurrentTable
from compiler.desired import desired_table
from compiler.maintenance.due import HealthRequest, maintenance_plan
from compiler.maintenance.health import TableHealth
from compiler.maintenance.select import selection
from tests.integration.evolve import project_of
from tests.test_maintenance import NOW, POLICY

MIDNIGHT = datetime(2026, 11, 22, tzinfo=UTC)  # of NOW: the retention cutoff is taken at midnight UTC


class Recording:
    def __init__(self, current: CurrentTable | None) -> None:
        self.current, self.requests = current, list[HealthRequest]()

    def table(self, name: tuple[str, ...]) -> CurrentTable | None:
        return self.current

    def health(self, name: tuple[str, ...], request: HealthRequest) -> TableHealth | None:
        self.requests.append(request)
        return TableHealth(table=name, snapshot_times=(), current_snapshot_id=None, data_files=0, data_bytes=0,
                           rows=0, small_files=0, target_file_size=1, position_delete_files=0,
                           equality_delete_files=0, manifests=0, metadata_files=1)


CASES = {
    "nothing_declared": ("  metadata: {delete_after_commit: true}", [], HealthRequest(None, None, None)),
    "retention": ("  retention: {column: ordered_at, keep: 30d}", [],
                  HealthRequest((("ordered_at",), MIDNIGHT - timedelta(days=30)), None, None)),
    "orphans_default_age": ("  orphan_files: {}", [], HealthRequest(None, None, NOW - timedelta(days=3))),
    "orphans_own_age": ("  orphan_files: {older_than: 2d}", [], HealthRequest(None, None, NOW - timedelta(days=2))),
    "orphans_not_selected": ("  orphan_files: {older_than: 2d}", ["snapshots"],
                             HealthRequest(None, None, None)),
    "orphans_disabled": ("  orphan_files: {enabled: false}", [], HealthRequest(None, None, None)),
}


@pytest.mark.parametrize(("lifecycle", "only", "request_"), CASES.values(), ids=list(CASES))
def test_the_request_holds_what_the_policy_needs(lifecycle: str, only: list[str], request_: HealthRequest) -> None:
    project = project_of(POLICY.format(lifecycle=lifecycle))
    state = desired_table(project, project.tables[0]).state
    source = Recording(CurrentTable(state=state, metadata_location="m.json", schema_id=0, spec_id=0, sort_order_id=0))
    plan = maintenance_plan(project, source, NOW, selection([("sales", "orders")], [], only))
    assert source.requests == [request_]
    assert [t.table for t in plan.tables] == [("sales", "orders")] and plan.missing == []


def test_a_table_the_catalog_lacks_is_missing_and_its_health_never_asked() -> None:
    project = project_of(POLICY.format(lifecycle="  orphan_files: {}"))
    source = Recording(None)
    plan = maintenance_plan(project, source, NOW)
    assert plan.tables == [] and plan.missing == [("sales", "orders")] and source.requests == []

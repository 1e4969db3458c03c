"""maintenance_plan asks its HealthSource for exactly what the policy needs, and nothing for a table the
catalog lacks (a recording source: the catalog side is runtime/health.py, tested against real tables)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tablepolicy.compiler.catalog.current import CurrentTable
from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.loader import Project, load_text
from tablepolicy.compiler.maintenance.due import HealthRequest, maintenance_plan
from tablepolicy.compiler.maintenance.health import OrphanFigures, TableHealth
from tablepolicy.compiler.maintenance.select import selection
from tests.integration.evolve import project_of
from tests.unit.test_maintenance import NOW, POLICY

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


class Dirty(Recording):
    """Orphan files in ``dirty`` tables only; records the order in which health is read."""

    def __init__(self, current: CurrentTable, dirty: set[tuple[str, ...]], events: list[str]) -> None:
        super().__init__(current)
        self.dirty, self.events = dirty, events

    def health(self, name: tuple[str, ...], request: HealthRequest) -> TableHealth | None:
        self.events.append(f"health {'.'.join(name)}")
        found = super().health(name, request)
        assert found is not None
        orphans = OrphanFigures(files=1 if name in self.dirty else 0, bytes=10 if name in self.dirty else 0)
        return found.model_copy(update={"orphans": orphans})


@pytest.mark.parametrize(("dirty", "heard"), [
    ({("sales", "b")}, ["health sales.a", "health sales.b", "work sales.b", "health sales.c"]),
    (set(), ["health sales.a", "health sales.b", "health sales.c"]),
], ids=["one_table_with_work", "idle"])
def test_a_run_hears_of_each_table_with_work_as_soon_as_it_is_decided(
    dirty: set[tuple[str, ...]], heard: list[str]
) -> None:
    """maintain starts Spark on the first table with due work, while the later tables' health is read; a
    run where no table has work never hears of one (and starts no JVM)."""
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    for name in ("sales.a", "sales.b", "sales.c"):
        load_text(POLICY.format(lifecycle="  orphan_files: {}").replace("sales.orders", name), f"{name}.yaml",
                  project, diagnostics)
    assert not diagnostics.has_errors
    state = desired_table(project, project.tables[0]).state
    current = CurrentTable(state=state, metadata_location="m.json", schema_id=0, spec_id=0, sort_order_id=0)
    events: list[str] = []
    plan = maintenance_plan(project, Dirty(current, dirty, events), NOW,
                            on_work=lambda t: events.append(f"work {'.'.join(t.table)}"))
    assert events == heard
    assert [t.table for t in plan.tables if t.actions] == sorted(dirty)

"""One table's maintenance as a sequence: run the first due action, read the table's health again, decide
again, run the next one that is still due, and so on.

An action decided before the run can stop being due because of the one before it (compaction merges
manifests; retention deletes the files compaction would take): it is then reported as a skip with the
reason, not run for nothing. The same loop drives a dry run on projected health and a run on health re-read
from the new metadata, so both decide alike. IO comes in through ``execute``; this module only sequences.
"""

from __future__ import annotations

from collections.abc import Callable

from .actions import RANK, SECTIONS, Action
from .decide import Skip
from .due import MaintenancePlan, TableMaintenance
from .projection import projected
from .report import ActionRun, MaintenanceReport, Status, TableOutcome

# (the action, the table as decided before it) -> what happened, and the table decided again on its health
# afterwards (None when the action did not complete: the rest of the table's actions do not run)
Execute = Callable[[Action, TableMaintenance], tuple[ActionRun, TableMaintenance | None]]

# (earlier action, later action) -> why the earlier one made the later one unnecessary, in words users know
BECAUSE: dict[tuple[str, str], str] = {
    ("rewrite_data_files", "rewrite_manifests"): "manifests already merged by compaction",
    ("delete_expired_rows", "rewrite_data_files"): "retention deleted the small files compaction would take",
    ("rewrite_data_files", "rewrite_position_delete_files"): "compaction applied the delete files",
}


def changed_reason(earlier: str, later: str, fresh: Skip | None) -> str:
    cause = BECAUSE.get((earlier, later), f"no longer due after {SECTIONS[earlier]}")
    return f"{cause} ({fresh.reason})" if fresh is not None else cause


def work_table(
    planned: TableMaintenance, execute: Execute, sql_of: Callable[[Action], str],
    on_step: Callable[[ActionRun | Skip], None] = lambda _s: None,
) -> TableOutcome:
    """``planned``: the table as decided before the run; ``sql_of``: an action's statement (for the report of
    actions that did not run); ``on_step``: called as each step or changed decision is known (progress)."""
    current, pending = planned, list(planned.actions)
    steps: list[ActionRun] = []
    changed: list[Skip] = []
    while pending:
        action = pending.pop(0)
        step, fresh = execute(action, current)
        steps.append(step)
        on_step(step)
        if fresh is None:
            for left in pending:
                not_run = ActionRun(left, sql_of(left), Status.NOT_RUN,
                               error=f"not run: {SECTIONS[action.action]} ({action.action}) did not complete")
                steps.append(not_run)
                on_step(not_run)
            break
        later = [a for a in fresh.actions if RANK[a.action] > RANK[action.action]]
        due_later = {a.action for a in later}
        for dropped in (a for a in pending if a.action not in due_later):
            skip = next((s for s in fresh.skips if s.action == dropped.action), None)
            note = Skip(dropped.code, dropped.action, changed_reason(action.action, dropped.action, skip))
            changed.append(note)
            on_step(note)
        pending, current = later, fresh
    ran = {s.action.action for s in steps} | {s.action for s in changed}
    # the declared actions that never ran, with the reason the last decision gave
    skips = tuple(s for s in current.skips if s.action not in ran) + tuple(changed)
    return TableOutcome(planned.table, planned.health, current.health, tuple(steps), skips)


def unchanged(table: TableMaintenance) -> TableOutcome:
    """A table with nothing due: its figures before are its figures after."""
    return TableOutcome(table.table, table.health, table.health, (), tuple(table.skips))


def estimated(plan: MaintenancePlan, sql_of: Callable[[Action], str], catalog: dict[str, str]) -> MaintenanceReport:
    """A dry run: every table's actions sequenced on projected health (the run re-reads real health)."""
    assert plan.now is not None, "a dry run estimates at the decisions' time"
    now = plan.now

    def execute(action: Action, current: TableMaintenance) -> tuple[ActionRun, TableMaintenance | None]:
        health, effect = projected(current.health, action, now)
        fresh = current.basis.decide(current.table, health) if current.basis is not None else None
        return ActionRun(action, sql_of(action), Status.ESTIMATED, effect), fresh

    outcomes = tuple(work_table(t, execute, sql_of) if t.actions else unchanged(t) for t in plan.tables)
    return MaintenanceReport(catalog, True, outcomes, tuple(plan.missing))

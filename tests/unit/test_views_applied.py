"""Resume after a crash, for views: each view change of the differ's case table is not in effect on the view it
was planned against, is in effect once applied (in memory, as Spark's CREATE OR REPLACE, ALTER VIEW UNSET and
DROP VIEW leave the view: a replace keeps the properties it had), and the differ then plans nothing for the view
(the plan converges)."""

from __future__ import annotations

from typing import assert_never

import pytest

from compiler.diff import changes
from compiler.diff.views import diff_view
from compiler.model.view import CurrentView, ViewState, desired_view
from compiler.plan.applied import is_applied
from tests.memory_catalog import project_of
from tests.memory_views import applied_view
from tests.unit.test_differ import CASES, Case, plan_case

ViewChange = changes.CreateView | changes.ReplaceView | changes.UnsetViewProperties | changes.DropView
VIEW_KINDS = (changes.CreateView, changes.ReplaceView, changes.UnsetViewProperties, changes.DropView)
ACTIONS = {kind.model_fields["action"].default for kind in VIEW_KINDS}
VIEW_CASES = [c for c in CASES if any(a in ACTIONS for a, *_ in c.changes)]


def after(current: ViewState | None, change: ViewChange) -> ViewState | None:
    match change:
        case changes.CreateView():
            return change.state
        case changes.ReplaceView():  # Iceberg keeps the properties it had and sets the new ones
            assert current is not None
            return change.state.model_copy(update={"properties": {**current.properties, **change.state.properties}})
        case changes.UnsetViewProperties():
            assert current is not None
            kept = {k: v for k, v in current.properties.items() if k not in change.keys}
            return current.model_copy(update={"properties": kept})
        case changes.DropView():
            return None
        case _:
            assert_never(change)


def test_every_view_kind_has_a_case() -> None:
    assert {a for c in VIEW_CASES for a, *_ in c.changes if a in ACTIONS} == ACTIONS


@pytest.mark.parametrize("case", VIEW_CASES, ids=[c.id for c in VIEW_CASES])
def test_a_view_change_is_applied_once_and_the_plan_converges(case: Case) -> None:
    current = (applied_view("view: u.v\n" + case.view_current, properties=case.view_properties)
               if case.view_current is not None else None)
    state = current.state if current is not None else None
    planned = [c for c in plan_case(case).plan.changes if isinstance(c, VIEW_KINDS)]
    assert planned
    for change in planned:
        assert not is_applied(change, state)
        state = after(state, change)
        assert is_applied(change, state)
    if state is not None:
        assert case.view is not None
        [view] = project_of("view: u.v\n" + case.view).views
        now = CurrentView(metadata_location="m", uuid="u", version_id=2, state=state)
        assert diff_view(now, desired_view(view.policy, view.name)) == []

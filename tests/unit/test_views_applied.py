"""Resume after a crash, for views: each view change of the differ's case table is not in effect on the view it
was planned against, is in effect once applied (in memory, as Spark's CREATE OR REPLACE / DROP VIEW leave the
view: properties merged, other keys kept), and the differ then plans nothing for the view (the plan converges)."""

from __future__ import annotations

from typing import assert_never

import pytest

from compiler.diff import changes
from compiler.diff.views import diff_view
from compiler.model.view import CurrentView, ViewState
from compiler.plan.applied import is_applied
from tests.memory_views import applied_view
from tests.unit.test_differ import CASES, Case, plan_case

VIEW_KINDS = (changes.CreateView, changes.ReplaceView, changes.DropView)
VIEW_CASES = [c for c in CASES if any(a.endswith("_view") for a, *_ in c.changes)]


def after(current: ViewState | None, change: changes.CreateView | changes.ReplaceView | changes.DropView
          ) -> ViewState | None:
    match change:
        case changes.CreateView():
            return change.state
        case changes.ReplaceView():  # Iceberg keeps the properties it had and sets the new ones
            assert current is not None
            properties = {**current.properties, **change.state.properties}
            return change.state.model_copy(update={"properties": properties})
        case changes.DropView():
            return None
        case _:
            assert_never(change)


def test_every_view_kind_has_a_case() -> None:
    assert {a for c in VIEW_CASES for a, *_ in c.changes if a.endswith("_view")} == {
        "create_view", "replace_view", "drop_view"}


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
        assert isinstance(planned[0], changes.CreateView | changes.ReplaceView)
        now = CurrentView(metadata_location="m", uuid="u", version_id=2, state=state)
        assert diff_view(now, planned[0].state) == []

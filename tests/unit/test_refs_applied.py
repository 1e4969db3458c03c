"""Resume after a crash, for branches and tags: each ref change of the differ's case table is not in effect on
the table it was planned against, is in effect once applied (in memory, as Iceberg would leave the table), and
then the differ plans no ref change any more (the plan converges)."""

from __future__ import annotations

from typing import assert_never

import pytest

from compiler.catalog.current import CurrentTable
from compiler.diff import changes
from compiler.diff.changes import Change
from compiler.diff.refs import diff_refs
from compiler.model.properties import DECLARED_REFS, declared_stamp
from compiler.model.table import RefState, TableState
from compiler.plan.applied import is_applied
from tests.memory_catalog import applied, declared_state
from tests.unit.test_differ import CASES, Case, plan_case

REF_KINDS = (changes.CreateRef, changes.SetRefRetention, changes.DropRef)
REF_CASES = [c for c in CASES if any(a in ("create_ref", "set_ref_retention", "drop_ref") for a, *_ in c.changes)]


def applied_ref(state: TableState, change: changes.CreateRef | changes.SetRefRetention | changes.DropRef) -> TableState:
    refs = {r.name: r for r in state.refs}
    match change:
        case changes.CreateRef():
            refs[change.name] = RefState(name=change.name, kind=change.kind, snapshot_id=change.snapshot_id or 1,
                                         retention=change.retention)
        case changes.SetRefRetention():
            refs[change.name] = refs[change.name].model_copy(update={"retention": change.new})
        case changes.DropRef():
            del refs[change.name]
        case _:
            assert_never(change)
    return state.model_copy(update={"refs": tuple(sorted(refs.values(), key=lambda r: r.name))})


def current_of(case: Case) -> CurrentTable | None:
    """The table the case plans against, as the planner reads it (None: the plan creates it)."""
    if case.current is None:
        return None
    return applied(declared_state("table: u.t\n" + case.current), properties=case.properties,
                   snapshots=case.snapshots, refs=case.refs)


@pytest.mark.parametrize("case", REF_CASES, ids=[c.id for c in REF_CASES])
def test_a_ref_change_is_applied_once_and_the_plan_converges(case: Case) -> None:
    current = current_of(case)
    result = plan_case(case)
    planned: list[Change] = [c for c in result.plan.changes if isinstance(c, REF_KINDS)]
    assert planned
    state = current.state if current is not None else declared_state("table: u.t\n" + case.desired).model_copy(
        update={"refs": ()})
    history = current.history if current is not None else None
    for change in planned:
        assert isinstance(change, REF_KINDS)
        assert not is_applied(change, state)
        state = applied_ref(state, change)
        assert is_applied(change, state)
    desired = declared_state("table: u.t\n" + case.desired)
    stamped = state.model_copy(update={"properties": {**state.properties,
                                                      DECLARED_REFS: declared_stamp(r.name for r in desired.refs)}})
    assert history is None or diff_refs(stamped, history, desired)[0] == []

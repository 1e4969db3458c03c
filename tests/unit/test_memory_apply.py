"""compiler/plan/memory/apply.py against what Spark and Iceberg do: the evolution sequence that
tests/integration/test_object_storage_evolve.py runs through Spark (on disk, SQLite/PostgreSQL catalogs, S3) ends
with the same field ids in memory, each step converging; and a change Iceberg refuses is refused in memory with
the reason, so a plan in the wrong order cannot converge there either."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest
from pyiceberg.types import IntegerType

from tablepolicy.compiler.diff import changes
from tablepolicy.compiler.diff.changes import Change
from tablepolicy.compiler.iceberg.transforms import parse_expression
from tablepolicy.compiler.model.table import PartitionFieldState
from tablepolicy.compiler.plan.memory.apply import Lake, MemoryTable, apply_change, created
from tablepolicy.compiler.plan.memory.error import MemoryApplyError
from tablepolicy.compiler.plan.planner import make_plan
from tests.integration.test_object_storage_evolve import FIELD_IDS, SEQUENCE
from tests.integration.test_plan_evolution import BASE
from tests.memory_catalog import declared_state, project_of

TODAY = date(2026, 1, 15)


def plan_and_apply(lake: Lake, text: str) -> Lake:
    for change in make_plan(project_of(text), lake, "lake", today=TODAY).plan.changes:
        lake = apply_change(lake, change)
    again = make_plan(project_of(text), lake, "lake", today=TODAY).plan.changes
    assert [c.summary for c in again] == []
    return lake


def test_the_evolution_sequence_spark_runs_lands_the_same_field_ids() -> None:
    text = BASE.format(name="seq", extra="")
    lake = plan_and_apply(Lake(), text)
    for step, edits in SEQUENCE:
        for old, new in edits.items():
            assert text.count(old) == 1, (step, old)
            text = text.replace(old, new)
        lake = plan_and_apply(lake, text)
    table = lake.tables[("evo", "seq")]
    assert table.current.state.ids_by_path == FIELD_IDS
    assert table.last_column_id == 18  # the dropped ratio's id 5 is not given again
    assert ("ratio",) in table.current.history.dropped_paths


def test_a_new_nested_column_numbers_its_fields_as_iceberg_does() -> None:
    """The column takes last_column_id + 1, then each struct's fields before their own types."""
    table = held("columns: [{name: id, type: long}, {name: gone, type: int}]")
    table = MemoryTable(table.current, last_column_id=5)  # ids up to 5 were used (and dropped) before
    text = ("columns: [{name: id, type: long}, {name: gone, type: int}, {name: s, type: {struct: ["
            "{name: a, type: {list: {struct: [{name: x, type: int}]}}}, {name: m, type: {map: {key: string, "
            "value: int}}}]}}]")
    [add] = [c for c in make_plan(project_of("table: u.t\n" + text), lake_with(table), "lake",
                                  today=TODAY).plan.changes]
    after = apply_change(lake_with(table), add).tables[("u", "t")]
    ids = after.current.state.ids_by_path
    assert [ids[p] for p in [("s",), ("s", "a"), ("s", "m"), ("s", "a", "element"), ("s", "a", "element", "x"),
                             ("s", "m", "key"), ("s", "m", "value")]] == [6, 7, 8, 9, 10, 11, 12]
    assert after.last_column_id == 12


def held(columns: str, extra: str = "") -> MemoryTable:
    return created(declared_state("table: u.t\n" + columns + "\n" + extra))


def lake_with(table: MemoryTable) -> Lake:
    return Lake(frozenset({("u",)}), {("u", "t"): table})


def field(expression: str, name: str | None = None) -> PartitionFieldState:
    transform, source = parse_expression(expression)
    return PartitionFieldState(source=source, transform=transform, name=name)


T = ("u", "t")
TWO = "columns: [{name: id, type: long, required: true}, {name: r, type: int}]"
# (case, the table's policy, the change, what Iceberg says)
REFUSED: list[tuple[str, str, Callable[[], Change], str]] = [
    ("drop a sort source", TWO + "\nsort_by: [r]", lambda: changes.DropColumn(table=T, path=("r",), field_id=2),
     "cannot drop r: it is a sort source of u.t"),
    ("drop a partition source", TWO + "\npartition_by: ['bucket(4, r)']",
     lambda: changes.DropColumn(table=T, path=("r",), field_id=2), "cannot drop r: it is a partition source"),
    ("drop an identifier field", TWO + "\nidentifier_fields: [id]",
     lambda: changes.DropColumn(table=T, path=("id",), field_id=1), "cannot drop id: it is an identifier field"),
    ("add a name twice", TWO, lambda: changes.AddColumn(table=T, path=("r",), type=IntegerType()),
     "cannot add column r: the name exists"),
    ("rename onto a name", TWO, lambda: changes.RenameColumn(table=T, path=("r",), new_name="id", field_id=2),
     "cannot rename r to id: the name exists"),
    ("an optional identifier field", TWO, lambda: changes.SetIdentifierFields(table=T, fields=(("r",),)),
     "r cannot be an identifier field: it is optional or not a primitive"),
    ("a partition field twice", TWO + "\npartition_by: ['bucket(4, r)']",
     lambda: changes.AddPartitionField(table=T, field=field("bucket(4, r)")),
     "cannot add partition field bucket(4, r): the spec has it"),
    ("drop a partition field the spec does not have", TWO,
     lambda: changes.DropPartitionField(table=T, field=field("bucket(4, r)", "r_bucket_4")),
     "cannot drop partition field bucket(4, r): the spec does not have it"),
    ("sort by a column the table does not have", TWO,
     lambda: changes.SetSortOrder(table=T, sort=(declared_state(
         "table: u.t\ncolumns: [{name: z, type: int}]\nsort_by: [z]").sort)), "cannot sort by z: no such column"),
    ("a downgrade", TWO, lambda: changes.UpgradeFormat(table=T, old=2, new=1),
     "format version 2 cannot go down to 1"),
    ("drop a ref the table does not have", TWO, lambda: changes.DropRef(
        table=T, name="nope", kind="tag", snapshot_id=1), "tag nope does not exist"),
]


@pytest.mark.parametrize(("text", "change", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_what_iceberg_refuses_is_refused(text: str, change: Callable[[], Change], message: str) -> None:
    with pytest.raises(MemoryApplyError) as refused:
        apply_change(lake_with(held(text)), change())
    assert str(refused.value).startswith(message), str(refused.value)


def test_a_table_in_a_namespace_that_does_not_exist_is_refused() -> None:
    create = changes.CreateTable(table=T, state=declared_state("table: u.t\n" + TWO))
    with pytest.raises(MemoryApplyError, match="namespace u does not exist"):
        apply_change(Lake(), create)
    assert T in apply_change(apply_change(Lake(), changes.CreateNamespace(table=("u",))), create).tables

"""The plan file, engine-free: every change kind written and read back equal, edited views refused, the
saved plan compared with the plan derived now, and approvals bound to what they approved."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from pyiceberg.types import DecimalType, IntegerType, LongType, NestedField, StringType, StructType

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.diff.changes import (
    AddColumn,
    AddColumns,
    AddPartitionField,
    Change,
    ColumnAdd,
    CreateNamespace,
    CreateTable,
    DropColumn,
    DropIdentifierFields,
    DropPartitionField,
    DropTable,
    MakeOptional,
    MoveColumn,
    PartitionRename,
    PropertyChange,
    RenameColumn,
    RenamePartitionField,
    ReplacePartitionField,
    RetentionEstimate,
    SetComment,
    SetIdentifierFields,
    SetProperties,
    SetSortOrder,
    TightenRetention,
    UnsetProperties,
    UpdateDoc,
    UpdatePartitionSpec,
    UpgradeFormat,
    WidenType,
)
from tablepolicy.compiler.iceberg.transforms import parse_iceberg_transform
from tablepolicy.compiler.model.table import PartitionFieldState, SortFieldState
from tablepolicy.compiler.plan.approvals import consumed_stamp, judge, unused
from tablepolicy.compiler.plan.codec import PlanFileError, plan_from_json, plan_to_json
from tablepolicy.compiler.plan.model import CatalogRef, Plan, Requirement, TablePlan
from tablepolicy.compiler.plan.verify import compare
from tests.integration.evolve import project_of
from tests.unit.test_differ import CASES as DIFFER_CASES
from tests.unit.test_differ import plan_case

T = ("shop", "orders")
DAY = PartitionFieldState(source=("placed_at",), transform=parse_iceberg_transform("day"), name="placed_day")
HOUR = PartitionFieldState(source=("placed_at",), transform=parse_iceberg_transform("hour"))
SORT = SortFieldState(source=("id",), transform=parse_iceberg_transform("identity"), direction="desc", nulls="last")
PROPS = (PropertyChange(key="write.x", old=None, new="1", setting="x", origin="policies/shop/orders.yaml:3:5"),)
CREATED = desired_states(project_of("""table: shop.orders
columns:
  - {name: id, type: long, id: 1, required: true}
  - {name: total, type: "decimal(10,2)", renamed_from: amount}
  - {name: api, type: {struct: [{name: uid, type: string, renamed_from: user}]}}
  - {name: tags, type: {list: string}}
  - {name: placed_at, type: timestamptz}
partition_by:
  - {field: day(placed_at), name: placed_day}
  - bucket(16, id)
sort_by: [id desc]
identifier_fields: [id]
properties: {write.b: "2", write.a: "1", write.c: "3"}
ignore_properties: [z.key, a.key, m.key]
"""))[0]

# changes built by hand to set their optional fields; a kind without one here is taken as the differ table
# (tests/unit/test_differ.py) first plans it, so a new kind needs no entry in this file
HAND_BUILT: dict[str, Change] = {
    "create_namespace": CreateNamespace(table=("shop",)),
    "create_table": CreateTable(table=T, state=CREATED),
    "drop_table": DropTable(table=T),
    "add_column": AddColumn(table=T, path=("api", "ip"), type=StringType(), doc="d", position="after", after="uid",
                            readded=True, code="TC207"),
    "add_columns": AddColumns(table=T, columns=(ColumnAdd(path=("a",), type=StringType(), doc="x"),
                                                ColumnAdd(path=("api", "b"), type=LongType(), position="first"))),
    "drop_column": DropColumn(table=T, path=("api", "uid"), field_id=7),
    "rename_column": RenameColumn(table=T, path=("amount",), new_name="total", field_id=2),
    "widen_type": WidenType(table=T, path=("qty",), old=IntegerType(), new=LongType()),
    "make_optional": MakeOptional(table=T, path=("id",)),
    "update_doc": UpdateDoc(table=T, path=("id",), doc="the id"),
    "move_column": MoveColumn(table=T, path=("id",), position="first"),
    "add_partition_field": AddPartitionField(table=T, field=DAY),
    "drop_partition_field": DropPartitionField(table=T, field=HOUR),
    "rename_partition_field": RenamePartitionField(table=T, field=DAY, old_name="placed_at_day"),
    "replace_partition_field": ReplacePartitionField(table=T, old=DAY, field=HOUR),
    "update_partition_spec": UpdatePartitionSpec(table=T, remove=(HOUR,), add=(DAY,), rename=(
        PartitionRename(old_name="id_bucket", field=PartitionFieldState(
            source=("id",), transform=parse_iceberg_transform("bucket[16]"), name="by_id")),)),
    "set_sort_order": SetSortOrder(table=T, sort=(SORT,), distribution_mode="range"),
    "set_identifier_fields": SetIdentifierFields(table=T, fields=(("id",),)),
    "drop_identifier_fields": DropIdentifierFields(table=T, fields=(("id",),)),
    "upgrade_format": UpgradeFormat(table=T, old=1, new=2),
    "set_comment": SetComment(table=T, comment="it's orders"),
    "set_properties": SetProperties(table=T, changes=PROPS),
    "unset_properties": UnsetProperties(table=T, changes=(PropertyChange(key="write.y", old="2", new=None),)),
    "tighten_retention": TightenRetention(table=T, column="placed_at", old=None, new="30d", properties=PROPS,
                                          estimate=RetentionEstimate(files=1, partial_files=2, rows=3, rows_upper=4,
                                                                     bytes=5)),
}


def first_planned(kinds: set[str]) -> dict[str, Change]:
    """For each of ``kinds``, the first change of that kind the differ table plans (a case neither refused nor
    marked wrong), moved onto the table of this file's plans."""
    found: dict[str, Change] = {}
    for case in DIFFER_CASES:
        if kinds <= set(found):
            break
        if case.xfail or any(" error " in r for r in case.refused) or not {a for a, *_ in case.changes} & kinds:
            continue
        for change in plan_case(case).plan.changes:
            if change.action in kinds:
                found.setdefault(change.action, change.model_copy(update={"table": T}))
    return found


KINDS = {member.model_fields["action"].default for member in get_args(get_args(Change)[0])}
CASES: dict[str, Change] = {**first_planned(KINDS - set(HAND_BUILT)), **HAND_BUILT}
TARGET = CatalogRef(name="lake", type="sql", uri="postgresql://u:***@db/cat")
EXISTING = Requirement(exists=True, metadata_location="s3://m/1.json", uuid="5f1e", schema_id=1, spec_id=0,
                       sort_order_id=0, format_version=2, properties_digest="ab")


def plan_of(*changes: Change, table: tuple[str, ...] = T, consumed: tuple[str, ...] = ()) -> Plan:
    namespaces = [c for c in changes if isinstance(c, CreateNamespace)]
    others = [c for c in changes if not isinstance(c, CreateNamespace)]
    requirement = Requirement(exists=False) if any(isinstance(c, CreateTable) for c in others) else EXISTING
    tables = [TablePlan(table=table, policy_file="policies/shop/orders.yaml", requirement=requirement,
                        changes=others, declared_properties=("write.a", "write.b"), consumed_approvals=consumed)]
    return Plan(catalog_ref=TARGET, git_sha="abc", namespaces=namespaces, tables=tables if others else [])


def test_every_change_kind_has_a_case() -> None:
    """Built here or planned by the differ table: a kind neither plans is not round-tripped."""
    assert set(CASES) == KINDS


@pytest.mark.parametrize("kind", sorted(CASES))
def test_every_change_kind_round_trips_through_the_plan_file(kind: str) -> None:
    plan = plan_of(CASES[kind])
    text = plan_to_json(plan)
    assert plan_from_json(text) == plan
    assert plan_to_json(plan_from_json(text)) == text


def test_a_create_keeps_renames_pinned_ids_named_partition_fields_and_sorted_sets() -> None:
    [table] = json.loads(plan_to_json(plan_of(CASES["create_table"])))["tables"]
    state = table["changes"][0]["change"]["state"]
    assert state["renamed_from"] == [[["api", "uid"], "user"], [["total"], "amount"]]
    assert state["pinned_ids"] == [[["id"], 1]]
    assert [f["name"] for f in state["partition"]] == ["placed_day", None]
    assert state["ignore_properties"] == ["a.key", "m.key", "z.key"]
    assert state["declared_properties"] == ["write.a", "write.b", "write.c"]
    assert plan_from_json(plan_to_json(plan_of(CASES["create_table"]))).tables[0].changes[0] == CASES["create_table"]


def test_the_plan_file_records_the_catalog_and_each_tables_uuid() -> None:
    document = json.loads(plan_to_json(plan_of(CASES["drop_column"])))
    assert next(iter(document)) == "catalog"
    assert document["catalog"] == {"name": "lake", "type": "sql", "uri": "postgresql://u:***@db/cat"}
    assert document["format_version"] == 3
    assert document["tables"][0]["requirement"]["uuid"] == "5f1e"
    assert document["selected"] is None
    selected = plan_of(CASES["drop_column"]).model_copy(update={"selected": [T]})
    assert plan_from_json(plan_to_json(selected)) == selected


def edit_drop(document: dict[str, object], key: str, value: object) -> None:
    [table] = document["tables"]  # type: ignore[misc]
    [view] = table["changes"]
    view[key] = value


EDITS = {
    "sql": ("sql", ["ALTER TABLE `lake`.`shop`.`orders` DROP COLUMN `id`"], "sql"),
    "summary": ("summary", "add a harmless column", "summary"),
    "safety": ("safety", "safe", "safety"),
    "approval": ("approval", "drop_column id", "approval"),
}


@pytest.mark.parametrize("key", sorted(EDITS))
def test_an_edited_view_is_refused_naming_the_table_and_what_differs(key: str) -> None:
    field, value, named = EDITS[key]
    document = json.loads(plan_to_json(plan_of(CASES["drop_column"])))
    edit_drop(document, field, value)
    with pytest.raises(PlanFileError, match=rf"shop\.orders: 'drop column api\.uid .*': {named} not what"):
        plan_from_json(json.dumps(document))


def test_a_change_whose_model_claims_another_safety_is_refused() -> None:
    """The full model's safety, too, is its code's: an edit that marks a drop safe is not read back."""
    document = json.loads(plan_to_json(plan_of(CASES["drop_column"])))
    [table] = document["tables"]
    [view] = table["changes"]
    view["change"]["safety"] = 0
    with pytest.raises(PlanFileError, match=r"not a valid plan file: .*TC301 is destructive, not safe"):
        plan_from_json(json.dumps(document))


def test_a_change_listed_under_another_table_is_refused() -> None:
    document = json.loads(plan_to_json(plan_of(CASES["drop_column"])))
    document["tables"][0]["name"] = ["shop", "customers"]
    document["tables"][0]["table"] = "shop.customers"
    with pytest.raises(PlanFileError, match=r"shop\.customers: 'drop column api\.uid .*' changes another table"):
        plan_from_json(json.dumps(document))


DROP = DropColumn(table=T, path=("api", "uid"), field_id=7)
COMPARE = {
    "same": (plan_of(DROP), plan_of(DROP), []),
    "moved onto another column": (
        plan_of(DropColumn(table=T, path=("id",), field_id=1)), plan_of(DROP),
        ["shop.orders: change 1 of the plan file is 'drop column id (field id 1; its data is no longer readable)'; "
         "the policies give 'drop column api.uid (field id 7; its data is no longer readable)'"]),
    "retargeted table": (
        plan_of(DropColumn(table=("shop", "other"), path=("api", "uid"), field_id=7), table=("shop", "other")),
        plan_of(DROP),
        ["shop.orders: the policies now change this table ('drop column api.uid (field id 7; its data is no longer "
         "readable)'...), the plan file does not",
         "shop.other: the plan file holds 'drop column api.uid (field id 7; its data is no longer readable)', but "
         "the policies and catalog need no change"]),
    "added change": (plan_of(DROP, CASES["set_comment"]), plan_of(DROP),
                     ["shop.orders: the plan file also hold(s) 'update the table comment'; the other does not"]),
    "removed change": (plan_of(DROP), plan_of(DROP, CASES["set_comment"]),
                       ["shop.orders: the policies also hold(s) 'update the table comment'; the other does not"]),
    "same summary, other details": (
        plan_of(CASES["add_column"]), plan_of(CASES["add_column"].model_copy(update={"doc": "other"})),
        ["shop.orders: change 1 of the plan file is 'add column api.ip string (re-added: the dropped column's old "
         "values do not come back)'; the policies give 'add column api.ip string (re-added: the dropped column's "
         "old values do not come back)' (same summary, different details)"]),
    "estimate and origin are informational": (
        plan_of(CASES["tighten_retention"]),
        plan_of(CASES["tighten_retention"].model_copy(update={"estimate": None, "properties": (
            PROPS[0].model_copy(update={"origin": "/abs/orders.yaml:3:5"}),)})), []),
    "consumed approvals differ": (plan_of(DROP), plan_of(DROP, consumed=("drop_column api.uid (field id 3)",)),
                                  ["shop.orders: the approvals recorded as consumed differ from the table's"]),
    "a plan of one file compares only its tables": (
        plan_of(DROP).model_copy(update={"selected": [T]}),
        plan_of(DROP).model_copy(update={"tables": [*plan_of(DROP).tables, *plan_of(
            CASES["set_comment"], table=("shop", "other")).tables]}), []),
    "a table outside the selection is still refused": (
        plan_of(DROP).model_copy(update={"selected": [("shop", "other")]}), plan_of(DROP),
        ["shop.orders: the plan file holds 'drop column api.uid (field id 7; its data is no longer readable)', but "
         "the policies and catalog need no change"]),
    "namespace added": (plan_of(CreateNamespace(table=("x",)), DROP), plan_of(DROP),
                        ["x: the plan file holds 'create namespace x', which the policies do not give"]),
}


@pytest.mark.parametrize("case", sorted(COMPARE))
def test_the_saved_plan_must_be_the_plan_derived_now(case: str) -> None:
    saved, derived, problems = COMPARE[case]
    assert compare(saved, derived, set(), set()) == problems


def test_a_table_this_plan_already_started_on_and_a_namespace_it_created_are_not_compared() -> None:
    saved = plan_of(CreateNamespace(table=("x",)), DROP)
    assert compare(saved, plan_of(CASES["set_comment"]), {T}, {("x",)}) == []


OLD = DropColumn(table=T, path=("order_id",), field_id=3)
NEW = DropColumn(table=T, path=("order_id",), field_id=9)
PLAIN, QUALIFIED = "drop_column order_id", "drop_column order_id (field id 9)"
JUDGE = {
    "not in git": (NEW, [], (), False, PLAIN),
    "plain entry, never consumed": (NEW, [PLAIN], (), True, PLAIN),
    "plain entry consumed for this very field (a resumed apply)": (
        OLD, [PLAIN], ("drop_column order_id (field id 3)",), True, PLAIN),
    "plain entry consumed for an earlier field": (NEW, [PLAIN], ("drop_column order_id (field id 3)",), False,
                                                  QUALIFIED),
    "qualified entry for the new field": (NEW, [QUALIFIED], ("drop_column order_id (field id 3)",), True, QUALIFIED),
    "qualified entry for another field": (NEW, ["drop_column order_id (field id 3)"], (), False, PLAIN),
}


@pytest.mark.parametrize("case", sorted(JUDGE))
def test_an_approval_approves_one_change_of_one_field(case: str) -> None:
    change, allowed, consumed, approved, entry = JUDGE[case]
    verdict = judge(change, allowed, consumed)
    assert (verdict.approved, verdict.entry) == (approved, entry)


def test_a_consumed_approval_says_why_and_entries_approving_nothing_are_found() -> None:
    verdict = judge(NEW, [PLAIN], ("drop_column order_id (field id 3)",))
    assert verdict.reason == ("the entry 'drop_column order_id' in git was consumed by an earlier apply "
                              "(field id 3); it does not approve this change (field id 9)")
    assert unused([PLAIN, "drop_table", QUALIFIED], [NEW], ()) == [0, 1]
    assert unused([PLAIN], [], ()) == [0]
    assert consumed_stamp(("drop_column a (field id 1)",), [NEW, CASES["set_comment"]]) == \
        '["drop_column a (field id 1)","drop_column order_id (field id 9)"]'
    assert consumed_stamp((), [CASES["set_comment"]]) is None


def test_struct_type_fixture_is_nested() -> None:  # guards the CREATED fixture against a silent edit
    assert isinstance(CREATED.columns.field_by_name("api").field_type, StructType)
    assert CREATED.columns.fields[1].field_type == DecimalType(10, 2)
    assert isinstance(CREATED.columns.fields[0], NestedField)


def _valid() -> dict[str, object]:
    return json.loads(plan_to_json(plan_of(CreateNamespace(table=("shop",)), DROP)))  # type: ignore[no-any-return]


MALFORMED = {
    "not json": "{",
    "a list": "[]",
    "old format": json.dumps({**_valid(), "format_version": 2}),
    "catalog as a bare name": json.dumps({**_valid(), "catalog": "lake"}),
    "a change view that is a list": json.dumps({**_valid(), "namespaces": [[]]}),
    "a table without its name": json.dumps({**_valid(), "tables": [{"changes": []}]}),
    "a table entry without 'table'": json.dumps(
        {**_valid(), "tables": [{k: v for k, v in _valid()["tables"][0].items() if k != "table"}]}),  # type: ignore[index]
    "an unknown action": json.dumps({**_valid(), "namespaces": [{"change": {"action": "rm_rf", "table": ["x"]}}]}),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_plan_file_is_one_clear_error(case: str) -> None:
    with pytest.raises(PlanFileError, match=r"^(not a valid plan file: |plan file format )"):
        plan_from_json(MALFORMED[case])


def test_a_drop_table_entry_in_git_before_a_table_existed_does_not_approve_dropping_it() -> None:
    from tablepolicy.compiler.diff.changes import DropTable
    from tablepolicy.compiler.plan.approvals import BEFORE_CREATE, spent_at_create

    assert spent_at_create(["drop_table"]) == (BEFORE_CREATE,) and spent_at_create(["drop_column x"]) == ()
    drop = DropTable(table=("shop", "orders"), uuid="u-2")
    assert judge(drop, ["drop_table"], ()).approved  # the first table's drop, approved as before
    verdict = judge(drop, ["drop_table"], (BEFORE_CREATE,))
    assert not verdict.approved and verdict.entry == "drop_table (table uuid u-2)"
    assert verdict.reason is not None and "before this table was created" in verdict.reason
    assert judge(drop, ["drop_table (table uuid u-2)"], (BEFORE_CREATE,)).approved

"""The differ and planner without an engine: (the table in the catalog, the policy in git) -> the exact
changes with their safety, code and SQL, and what the plan refuses or blocks.

Each case writes the current table as the policy it was last applied from (tests/memory_catalog.py
turns it into Iceberg table metadata and reads it back as the planner reads a catalog), plus history
and property edits where a case needs them. The Spark suite (tests/integration/test_plan_evolution.py)
proves that such SQL runs and converges; this table proves, in milliseconds, which SQL is planned,
and that it converges without Spark: every row's plan is applied in memory as Iceberg commits each change
(compiler/plan/memory/apply.py), which must give the declared table and view, after which planning again
finds nothing; on the way, resume's ``is_applied`` is checked before and after each change.
Every change kind and every change and refusal code the differ can emit has a case: a new kind or
code without one fails ``test_every_change_kind_and_code_has_a_case``, and a kind no applied row plans fails
``test_every_change_kind_is_resumed_and_converges_in_memory``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, get_args

import pytest

from tablepolicy.compiler import codes
from tablepolicy.compiler.catalog.current import CurrentTable, current_table
from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.diff import changes as changes_
from tablepolicy.compiler.diff.changes import Change, RetentionEstimate
from tablepolicy.compiler.diff.views import view_differences
from tablepolicy.compiler.loader import Project
from tablepolicy.compiler.model.table import TableState
from tablepolicy.compiler.model.view import CurrentView, ViewState, desired_view
from tablepolicy.compiler.plan.applied import is_applied
from tablepolicy.compiler.plan.memory.apply import Lake, MemoryTable, apply_change
from tablepolicy.compiler.plan.memory.differences import differences
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import PlanResult, make_plan
from tablepolicy.compiler.sql.statements import change_sql
from tests.memory_catalog import MemoryCatalog, declared_state, project_of, table_metadata
from tests.memory_views import applied_view

T = "`lake`.`u`.`t`"
TODAY = date(2026, 1, 15)
GIT_SHA = "0123456789abcdef0123456789abcdef01234567"
CATALOG = CatalogRef(name="lake", type="sql", uri="sqlite:////lake/catalog.db")
APPROVALS = "tablepolicy.approvals"
ESTIMATE = RetentionEstimate(files=3, partial_files=1, rows=1200, rows_upper=1500, bytes=4096)
ATOMIC = ("-- one atomic create through the Iceberg catalog API: spec 0, sort order and identifier fields as "
          "declared\n")
SPEC_COMMIT = "-- one commit through Iceberg's UpdatePartitionSpec API; as Spark SQL (one commit per statement):\n"


@dataclass(frozen=True)
class Case:
    id: str
    current: str | None  # the policy the table was last applied from (after "table: u.t"); None: no table
    desired: str  # the policy in git now (after "table: u.t")
    changes: list[tuple[str, str, str, str]]  # (action, safety, code, SQL) in plan order
    refused: list[str] = field(default_factory=list)  # first line of each finding; an error: nothing else shown
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (code, the allow_destructive line to add)
    properties: dict[str, str | None] = field(default_factory=dict)  # edits of the table's properties since
    dropped: tuple[str, ...] = ()  # columns an older schema had
    older_partition_sources: tuple[tuple[str, ...], ...] = ()  # columns an older spec partitioned by
    namespace_exists: bool = False  # for a table not in the catalog: whether its namespace is
    snapshots: bool = False  # the table holds snapshots 101-103 (103 current); so does a table with refs
    refs: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # its refs changed since (None: dropped)
    xfail: str | None = None  # why the planner is wrong here (the expectation is what is right)
    view: str | None = None  # a view policy in git (after "view: u.v")
    view_current: str | None = None  # the view policy it was last applied from (None: no view)
    view_properties: dict[str, str] = field(default_factory=dict)  # properties set on the view since


def current_of(case: Case) -> tuple[CurrentTable, int] | None:
    """The table ``case`` plans against as the planner reads it, with its metadata's last-column-id."""
    if case.current is None:
        return None
    metadata = table_metadata(declared_state("table: u.t\n" + case.current), properties=case.properties,
                              dropped=case.dropped, older_partition_sources=case.older_partition_sources,
                              snapshots=case.snapshots, refs=case.refs)
    location = f"{metadata['location']}/metadata/00001-{metadata['table-uuid']}.metadata.json"
    return current_table(("u", "t"), location, metadata), metadata["last-column-id"]


def project_case(case: Case) -> Project:
    views = ["view: u.v\n" + case.view] if case.view is not None else []
    return project_of("table: u.t\n" + case.desired, *views)


def plan_case(case: Case, catalog: CatalogRef = CATALOG) -> PlanResult:
    """The plan of ``case``: its current table in an in-memory catalog, its desired policy as the project."""
    held = current_of(case)
    if held is None:
        source = MemoryCatalog(namespaces={("u",)} if case.namespace_exists else set())
    else:
        source = MemoryCatalog.of(held[0], estimate=ESTIMATE)
    if case.view_current is not None:
        source.views[("u", "v")] = applied_view("view: u.v\n" + case.view_current, properties=case.view_properties)
    return make_plan(project_case(case), source, catalog, git_sha=GIT_SHA, today=TODAY)


def outcome(result: PlanResult) -> tuple[list[tuple[str, str, str, str]], list[str], list[tuple[str, str]]]:
    changes = []
    for change in result.plan.changes:
        [sql] = change_sql(change, CATALOG.name)  # every change kind is one step
        changes.append((change.action, str(change.safety), change.code, sql))
    refused = [d.render().splitlines()[0] for d in result.diagnostics]
    return changes, refused, [(b.code, b.approval) for b in result.plan.blocked]


def add(column: str, sql: str, *, code: str = "TC201", safety: str = "safe") -> tuple[str, str, str, str]:
    return ("add_column", safety, code, f"ALTER TABLE {T} ADD COLUMN {column}{sql}")


def alter(action: str, safety: str, code: str, sql: str) -> tuple[str, str, str, str]:
    return (action, safety, code, f"ALTER TABLE {T} {sql}")


def props(action: str, safety: str, code: str, *pairs: tuple[str, str]) -> tuple[str, str, str, str]:
    body = ",\n".join(f"  '{k}' = '{v}'" for k, v in pairs)
    return (action, safety, code, f"ALTER TABLE {T} SET TBLPROPERTIES (\n{body}\n)")


def ref_retention(safety: str, code: str, kind: str, sql: str, unset: str = "") -> tuple[str, str, str, str]:
    note = f"; {unset} unset on the ref (the table's value applies)" if unset else ""
    return ("set_ref_retention", safety, code, f"-- retention only, one commit through Iceberg's API: the {kind} "
            f"stays where it is at apply{note}. As Spark SQL:\nALTER TABLE {T} REPLACE {sql}")


ID = "columns: [{name: id, type: long}]"
ACCOUNT = ("columns: [{name: id, type: long}, {name: account, type: string}, "
           "{name: s, type: {struct: [{name: x, type: int}]}}]")
ERASE = "\nlifecycle: {erasure: {key: [account], within: 30d}}"
BLOOM, FPP = "write.parquet.bloom-filter-enabled.column.", "write.parquet.bloom-filter-fpp.column."
V = "`lake`.`u`.`v`"
VIEW = "sql: SELECT id FROM u.t"
ID_R = "columns: [{name: id, type: long}, {name: r, type: float}]"
TS = "columns: [{name: id, type: long}, {name: ts, type: timestamptz}]"
STRUCT = "columns: [{name: id, type: long}, {name: s, type: {struct: [{name: x, type: int}, {name: y, type: int}]}}]"
NESTED = """columns:
  - {name: id, type: long}
  - {name: items, type: {list: {struct: [{name: sku, type: string}]}}}
  - {name: attrs, type: {map: {key: string, value: {struct: [{name: v, type: string}]}}}}
  - {name: xs, type: {list: int}}
  - {name: m, type: {map: {key: int, value: float}}}
"""
S_LINE = "  - {name: s, type: {struct: [{name: x, type: int}]}}\n"
REQUIRED_ID = "columns: [{name: id, type: long, required: true}, {name: k, type: long, required: true}]"

CASES = [
    # --- a table from nothing
    Case("create in a new namespace", None, REQUIRED_ID + "\npartition_by: ['bucket(4, id)']\nsort_by: [id desc]\n"
         "identifier_fields: [id]", [
             ("create_namespace", "safe", "TC101", "CREATE NAMESPACE IF NOT EXISTS `lake`.`u`"),
             ("create_table", "safe", "TC102", f"{ATOMIC}CREATE TABLE {T} (\n  `id` BIGINT NOT NULL,\n"
              "  `k` BIGINT NOT NULL\n)\nUSING iceberg\nPARTITIONED BY (bucket(4, `id`))\nTBLPROPERTIES (\n"
              "  'format-version' = '2'\n)\n-- write order: `id` DESC NULLS LAST\n-- identifier fields: `id`")]),
    Case("create in an existing namespace, named partition field, comment and properties", None,
         "description: it's t\n" + TS + "\npartition_by: [{field: day(ts), name: d}]\n"
         "properties: {commit.retry.num-retries: 3}", [
             ("create_table", "safe", "TC102", f"{ATOMIC}CREATE TABLE {T} (\n  `id` BIGINT,\n  `ts` TIMESTAMP\n)\n"
              "USING iceberg\nPARTITIONED BY (days(`ts`))\nCOMMENT 'it\\'s t'\nTBLPROPERTIES (\n"
              "  'format-version' = '2',\n  'commit.retry.num-retries' = '3'\n)\n"
              "-- partition field names: days(`ts`) AS `d`")], namespace_exists=True),
    # --- a table to drop: state absent
    Case("drop table without approval", ID, "state: absent\n" + ID,
         [("drop_table", "destructive", "TC302", f"DROP TABLE {T}")], blocked=[("TC302", "drop_table")]),
    Case("drop table approved", ID, "state: absent\nallow_destructive: [drop_table]\n" + ID,
         [("drop_table", "destructive", "TC302", f"DROP TABLE {T}")]),
    Case("a tombstone of a table not in the catalog plans nothing", None, "state: absent\n" + ID, []),
    # --- columns added
    Case("add last", ID, "columns: [{name: id, type: long}, {name: n, type: string}]", [add("`n`", " STRING")]),
    Case("add first", ID, "columns: [{name: n, type: string}, {name: id, type: long}]",
         [add("`n`", " STRING FIRST")]),
    Case("add between", ID_R, "columns: [{name: id, type: long}, {name: n, type: int}, {name: r, type: float}]",
         [add("`n`", " INT AFTER `id`")]),
    Case("add with a doc, quoted", ID, "columns: [{name: id, type: long}, {name: n, type: string, doc: \"it's\"}]",
         [add("`n`", " STRING COMMENT 'it\\'s'")]),
    Case("add a struct, a list and a map in one commit", ID, """columns:
  - {name: id, type: long}
  - {name: p, type: {struct: [{name: x, type: double, required: true}, {name: y, type: "decimal(9,2)"}]}}
  - {name: tags, type: {list: string}}
  - {name: kv, type: {map: {key: string, value: long}}}""",
         [("add_columns", "safe", "TC201", f"ALTER TABLE {T} ADD COLUMNS (\n"
           "  `p` STRUCT<`x`: DOUBLE NOT NULL, `y`: DECIMAL(9,2)>,\n  `tags` ARRAY<STRING>,\n"
           "  `kv` MAP<STRING, BIGINT>\n)")]),
    Case("add inside a struct", STRUCT, STRUCT.replace("{name: y, type: int}", "{name: y, type: int}, "
                                                       "{name: z, type: timestamp}"),
         [add("`s`.`z`", " TIMESTAMP_NTZ")]),
    Case("add inside a list of structs and a map of structs", NESTED,
         NESTED.replace("{name: sku, type: string}", "{name: sku, type: string}, {name: n, type: int}")
         .replace("{name: v, type: string}", "{name: v, type: string}, {name: w, type: long}"),
         [("add_columns", "safe", "TC201", f"ALTER TABLE {T} ADD COLUMNS (\n  `items`.`element`.`n` INT,\n"
           "  `attrs`.`value`.`w` BIGINT\n)")]),
    Case("a re-added name is breaking and stays on its own", ID,
         "columns: [{name: id, type: long}, {name: a, type: int}, {name: gone, type: string}]",
         [add("`a`", " INT"), add("`gone`", " STRING", code="TC207", safety="breaking")], dropped=("gone",)),
    Case("a name that differs only by case, on a case-sensitive table", "case_sensitive: true\n"
         "columns: [{name: Name, type: string}]",
         "case_sensitive: true\ncolumns: [{name: Name, type: string}, {name: name, type: string}]",
         [add("`name`", " STRING")]),
    # --- columns dropped
    Case("drop without approval", ID_R, ID, [alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`")],
         blocked=[("TC301", "drop_column r")]),
    Case("drop approved", ID_R, "allow_destructive: [drop_column r]\n" + ID,
         [alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`")]),
    Case("drop inside a struct", STRUCT, "allow_destructive: [drop_column s.y]\n" +
         STRUCT.replace(", {name: y, type: int}", ""),
         [alter("drop_column", "destructive", "TC301", "DROP COLUMN `s`.`y`")]),
    Case("an approval an earlier apply consumed approves no later drop of that name", ID_R,
         "allow_destructive: [drop_column r]\n" + ID,
         [alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`")],
         refused=["policies/u/t.yaml:2:21: warning TA101: allow_destructive entry 'drop_column r' approves no "
                  "change in this plan; an earlier apply consumed it for field id 9"],
         blocked=[("TC301", "drop_column r (field id 2)")],
         properties={APPROVALS: '["drop_column r (field id 9)"]'}),
    Case("the id-qualified approval approves it", ID_R, "allow_destructive: ['drop_column r (field id 2)']\n" + ID,
         [alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`")],
         properties={APPROVALS: '["drop_column r (field id 9)"]'}),
    Case("an approval that approves nothing is a warning", ID, "allow_destructive: [drop_column r]\n" + ID, [],
         refused=["policies/u/t.yaml:2:21: warning TA101: allow_destructive entry 'drop_column r' approves no "
                  "change in this plan"]),
    Case("an undeclared rename is a drop and an add, never a guess", "columns: [{name: amount, type: int}]",
         "columns: [{name: total, type: int}]",
         [alter("drop_column", "destructive", "TC301", "DROP COLUMN `amount`"), add("`total`", " INT")],
         blocked=[("TC301", "drop_column amount")]),
    Case("a sort order on a dropped column is replaced first", ID_R + "\nsort_by: [r]",
         "allow_destructive: [drop_column r]\n" + ID + "\nsort_by: [id]",
         [alter("set_sort_order", "safe", "TC404", "WRITE ORDERED BY `id` ASC NULLS FIRST"),
          alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`")]),
    Case("a sort order on a dropped column, and none declared", ID_R + "\nsort_by: [r]",
         "allow_destructive: [drop_column r]\n" + ID,
         [alter("set_sort_order", "safe", "TC404", "WRITE UNORDERED"),
          alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`")]),
    Case("identifier fields on a dropped column are dropped first", REQUIRED_ID + "\nidentifier_fields: [id, k]",
         "allow_destructive: [drop_column k]\ncolumns: [{name: id, type: long, required: true}]\n"
         "identifier_fields: [id]",
         [alter("drop_identifier_fields", "breaking", "TC405", "DROP IDENTIFIER FIELDS `id`, `k`"),
          alter("drop_column", "destructive", "TC301", "DROP COLUMN `k`"),
          alter("set_identifier_fields", "breaking", "TC405", "SET IDENTIFIER FIELDS `id`")]),
    # --- renames: declared, never guessed; field ids kept
    Case("declared rename", "columns: [{name: amount, type: \"decimal(10,2)\"}]",
         "columns: [{name: total, type: \"decimal(10,2)\", renamed_from: amount}]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `amount` TO `total`")]),
    Case("rename inside a struct", STRUCT, STRUCT.replace("{name: x, type: int}", "{name: lon, type: int, "
                                                          "renamed_from: x}"),
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `s`.`x` TO `lon`")]),
    Case("rename by pinned field id", ID, "columns: [{name: key, type: long, id: 1}]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `id` TO `key`")]),
    Case("rename to another case", "columns: [{name: qty, type: int}]",
         "columns: [{name: QTY, type: int, renamed_from: qty}]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `qty` TO `QTY`")]),
    Case("rename then widen, by the new name", "columns: [{name: qty, type: int}]",
         "columns: [{name: quantity, type: long, renamed_from: qty}]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `qty` TO `quantity`"),
          alter("widen_type", "safe", "TC203", "ALTER COLUMN `quantity` TYPE BIGINT")]),
    Case("rename a struct and add inside it", STRUCT,
         "columns: [{name: id, type: long}, {name: p, renamed_from: s, type: {struct: [{name: x, type: int}, "
         "{name: y, type: int}, {name: z, type: int}]}}]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `s` TO `p`"), add("`p`.`z`", " INT")]),
    Case("rename a partition source: the spec follows by field id", TS + "\npartition_by: [day(ts)]",
         "columns: [{name: id, type: long}, {name: event_ts, type: timestamptz, renamed_from: ts}]\n"
         "partition_by: [day(event_ts)]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `ts` TO `event_ts`")]),
    Case("rename a partition source and drop its partition field", TS + "\npartition_by: [day(ts)]",
         "columns: [{name: id, type: long}, {name: event_ts, type: timestamptz, renamed_from: ts}]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `ts` TO `event_ts`"),
          alter("drop_partition_field", "breaking", "TC402", "DROP PARTITION FIELD `ts_day`")]),
    # --- types
    Case("widen int, float and decimal", "columns: [{name: q, type: int}, {name: f, type: float}, "
         "{name: p, type: \"decimal(10,2)\"}]",
         "columns: [{name: q, type: long}, {name: f, type: double}, {name: p, type: \"decimal(12,2)\"}]",
         [alter("widen_type", "safe", "TC203", "ALTER COLUMN `q` TYPE BIGINT"),
          alter("widen_type", "safe", "TC203", "ALTER COLUMN `f` TYPE DOUBLE"),
          alter("widen_type", "safe", "TC203", "ALTER COLUMN `p` TYPE DECIMAL(12,2)")]),
    Case("widen a struct field, a list element and a map value", NESTED + S_LINE,
         (NESTED + S_LINE).replace("{list: int}", "{list: long}")
         .replace("value: float", "value: double").replace("{name: x, type: int}", "{name: x, type: long}"),
         [alter("widen_type", "safe", "TC203", "ALTER COLUMN `xs`.`element` TYPE BIGINT"),
          alter("widen_type", "safe", "TC203", "ALTER COLUMN `m`.`value` TYPE DOUBLE"),
          alter("widen_type", "safe", "TC203", "ALTER COLUMN `s`.`x` TYPE BIGINT")]),
    Case("narrowing is refused", "columns: [{name: id, type: long}]", "columns: [{name: id, type: int}]", [],
         refused=["policies/u/t.yaml:2:11: error TR101: id cannot change from long to int"]),
    Case("a decimal scale change is refused", "columns: [{name: p, type: \"decimal(10,2)\"}]",
         "columns: [{name: p, type: \"decimal(12,3)\"}]", [],
         refused=["policies/u/t.yaml:2:11: error TR101: p cannot change from decimal(10, 2) to decimal(12, 3)"]),
    Case("string to int is refused", "columns: [{name: s, type: string}]", "columns: [{name: s, type: int}]", [],
         refused=["policies/u/t.yaml:2:11: error TR101: s cannot change from string to int"]),
    Case("date to timestamp is refused on a v2 table", "columns: [{name: d, type: date}]",
         "columns: [{name: d, type: timestamp}]", [],
         refused=["policies/u/t.yaml:2:11: error TR101: d cannot change from date to timestamp"]),
    Case("date to timestamp is refused on a v3 table too", "format_version: 3\ncolumns: [{name: d, type: date}]",
         "format_version: 3\ncolumns: [{name: d, type: timestamp}]", [],
         refused=["policies/u/t.yaml:3:11: error TR101: d cannot change from date to timestamp"]),
    Case("a primitive cannot become a struct", "columns: [{name: s, type: string}]",
         "columns: [{name: s, type: {struct: [{name: a, type: string}]}}]", [],
         refused=["policies/u/t.yaml:2:11: error TR106: s cannot change from string to struct<2: a: optional "
                  "string>"]),
    Case("a list cannot become a map", "columns: [{name: xs, type: {list: string}}]",
         "columns: [{name: xs, type: {map: {key: string, value: string}}}]", [],
         refused=["policies/u/t.yaml:2:11: error TR106: xs cannot change from list<string> to map<string, "
                  "string>"]),
    Case("a map key type cannot change, not even widened", "columns: [{name: m, type: {map: {key: int, "
         "value: string}}}]", "columns: [{name: m, type: {map: {key: long, value: string}}}]", [],
         refused=["policies/u/t.yaml:2:11: error TR107: the key type of map m cannot change (int -> long)"]),
    # --- nullability and docs
    Case("required to optional, top level", "columns: [{name: id, type: long, required: true}]", ID,
         [alter("make_optional", "safe", "TC204", "ALTER COLUMN `id` DROP NOT NULL")]),
    Case("required to optional, inside a struct",
         "columns: [{name: s, type: {struct: [{name: x, type: int, required: true}]}}]",
         "columns: [{name: s, type: {struct: [{name: x, type: int}]}}]",
         [alter("make_optional", "safe", "TC204", "ALTER COLUMN `s`.`x` DROP NOT NULL")]),
    Case("optional to required is refused", ID, "columns: [{name: id, type: long, required: true}]", [],
         refused=["policies/u/t.yaml:2:11: error TR102: id cannot become required"]),
    Case("optional to required inside a struct is refused", STRUCT,
         STRUCT.replace("{name: y, type: int}", "{name: y, type: int, required: true}"), [],
         refused=["policies/u/t.yaml:2:83: error TR102: s.y cannot become required"]),
    Case("a required column cannot be added", ID, "columns: [{name: id, type: long}, "
         "{name: n, type: int, required: true}]", [],
         refused=["policies/u/t.yaml:2:35: error TR103: cannot add required column n to an existing table"]),
    Case("a required field cannot be added inside a struct", STRUCT,
         STRUCT.replace("{name: y, type: int}", "{name: y, type: int}, {name: z, type: int, required: true}"), [],
         refused=["policies/u/t.yaml:2:105: error TR103: cannot add required column s.z to an existing table"]),
    Case("update a doc", ID, "columns: [{name: id, type: long, doc: the id}]",
         [alter("update_doc", "safe", "TC205", "ALTER COLUMN `id` COMMENT 'the id'")]),
    Case("a doc removed from git is left on the table (undeclared docs are not owned)",
         "columns: [{name: id, type: long, doc: x}]", ID, []),
    # --- order
    Case("move a column first", "columns: [{name: a, type: int}, {name: b, type: int}, {name: c, type: int}]",
         "columns: [{name: c, type: int}, {name: a, type: int}, {name: b, type: int}]",
         [alter("move_column", "safe", "TC206", "ALTER COLUMN `c` FIRST")]),
    Case("move a column after another", "columns: [{name: a, type: int}, {name: b, type: int}, {name: c, "
         "type: int}]", "columns: [{name: b, type: int}, {name: c, type: int}, {name: a, type: int}]",
         [alter("move_column", "safe", "TC206", "ALTER COLUMN `a` AFTER `c`")]),
    # --- field matching that cannot be planned
    Case("a pinned id the table does not have", ID, "columns: [{name: id, type: long, id: 42}]", [],
         refused=["policies/u/t.yaml:2:11: error TR108: pinned field id 42 of id is not in the table here"]),
    Case("a name that differs only by case is not a rename", "columns: [{name: qty, type: int}]",
         "columns: [{name: QTY, type: int}]", [],
         refused=["policies/u/t.yaml:2:11: error TR109: QTY differs only by case from the existing column 'qty'"]),
    Case("a pinned id and a name claim one field", "columns: [{name: a, type: int}]",
         "columns: [{name: b, type: int, id: 1}, {name: a, type: int}]", [],
         refused=["policies/u/t.yaml:2:40: error TR110: a and another column both claim field 'a'"]),
    Case("a name and then a pinned id claim one field", "columns: [{name: a, type: int}]",
         "columns: [{name: a, type: int}, {name: b, type: int, id: 1}]", [],
         refused=["policies/u/t.yaml:2:33: error TR110: b and another column both claim field 'a'"]),
    Case("two columns renamed from one", "columns: [{name: a, type: int}]",
         "columns: [{name: b, type: int, renamed_from: a}, {name: c, type: int, renamed_from: a}]", [],
         refused=["policies/u/t.yaml:2:50: error TR110: c and another column both claim field 'a'"]),
    # --- partitions: future writes only
    Case("add a partition field", TS, TS + "\npartition_by: [day(ts)]",
         [alter("add_partition_field", "safe", "TC401", "ADD PARTITION FIELD days(`ts`)")]),
    Case("add a named partition field", TS, TS + "\npartition_by: [{field: 'bucket(16, id)', name: shard}]",
         [alter("add_partition_field", "safe", "TC401", "ADD PARTITION FIELD bucket(16, `id`) AS `shard`")]),
    Case("drop a partition field", TS + "\npartition_by: [day(ts)]", TS,
         [alter("drop_partition_field", "breaking", "TC402", "DROP PARTITION FIELD `ts_day`")]),
    Case("name a partition field", TS + "\npartition_by: [day(ts)]", TS + "\npartition_by: [{field: day(ts), "
         "name: event_day}]",
         [alter("rename_partition_field", "breaking", "TC403",
                "REPLACE PARTITION FIELD `ts_day` WITH days(`ts`) AS `event_day`")]),
    Case("an undeclared name is not compared", TS + "\npartition_by: [{field: day(ts), name: d}]",
         TS + "\npartition_by: [day(ts)]", []),
    Case("replace a partition field", TS + "\npartition_by: [day(ts)]", TS + "\npartition_by: [hour(ts)]",
         [alter("replace_partition_field", "breaking", "TC407", "REPLACE PARTITION FIELD `ts_day` WITH hours(`ts`)")]),
    Case("two partition fields added in one commit", TS, TS + "\npartition_by: [day(ts), 'truncate(4, id)']",
         [("update_partition_spec", "safe", "TC408", f"{SPEC_COMMIT}ALTER TABLE {T} ADD PARTITION FIELD days(`ts`);"
           f"\nALTER TABLE {T} ADD PARTITION FIELD truncate(4, `id`)")]),
    Case("a spec evolution with a drop and a rename in one commit",
         TS + "\npartition_by: [day(ts), 'bucket(4, id)']",
         TS + "\npartition_by: [{field: 'bucket(4, id)', name: shard}, hour(ts)]",
         [("update_partition_spec", "breaking", "TC409", f"{SPEC_COMMIT}ALTER TABLE {T} DROP PARTITION FIELD "
           f"`ts_day`;\nALTER TABLE {T} REPLACE PARTITION FIELD `id_bucket_4` WITH bucket(4, `id`) AS `shard`;\n"
           f"ALTER TABLE {T} ADD PARTITION FIELD hours(`ts`)")]),
    Case("a current partition source cannot be dropped", TS + "\npartition_by: [day(ts)]", ID, [],
         refused=["policies/u/t.yaml:2:10: error TR104: column ts is a partition source (now or in an older spec) "
                  "and cannot be dropped"]),
    Case("nor a source of an older spec", TS, "allow_destructive: [drop_column ts]\n" + ID, [],
         refused=["policies/u/t.yaml:2:21: warning TA101: allow_destructive entry 'drop_column ts' approves no "
                  "change in this plan",
                  "policies/u/t.yaml:3:10: error TR104: column ts is a partition source (now or in an older spec) "
                  "and cannot be dropped"], older_partition_sources=(("ts",),)),
    # --- sort order: future writes only
    Case("set a sort order", TS, TS + "\nsort_by: [day(ts) desc, id]",
         [alter("set_sort_order", "safe", "TC404", "WRITE ORDERED BY days(`ts`) DESC NULLS LAST, `id` ASC "
                "NULLS FIRST")]),
    Case("a sort order with hash distribution", ID, ID + "\nsort_by: [id]\ndistribution_mode: hash",
         [alter("set_sort_order", "safe", "TC404", "WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY `id` ASC "
                "NULLS FIRST"),
          props("set_properties", "safe", "TC501", ("write.distribution-mode", "hash"))]),
    Case("a sort order with no distribution", ID, ID + "\nsort_by: [id]\ndistribution_mode: none",
         [alter("set_sort_order", "safe", "TC404", "WRITE LOCALLY ORDERED BY `id` ASC NULLS FIRST"),
          props("set_properties", "safe", "TC501", ("write.distribution-mode", "none"))]),
    Case("remove the sort order", ID + "\nsort_by: [id]", ID, [alter("set_sort_order", "safe", "TC404",
                                                                     "WRITE UNORDERED")]),
    # --- identifier fields
    Case("set identifier fields", REQUIRED_ID, REQUIRED_ID + "\nidentifier_fields: [id]",
         [alter("set_identifier_fields", "breaking", "TC405", "SET IDENTIFIER FIELDS `id`")]),
    Case("change identifier fields", REQUIRED_ID + "\nidentifier_fields: [id]",
         REQUIRED_ID + "\nidentifier_fields: [id, k]",
         [alter("set_identifier_fields", "breaking", "TC405", "SET IDENTIFIER FIELDS `id`, `k`")]),
    Case("drop identifier fields", REQUIRED_ID + "\nidentifier_fields: [id]", REQUIRED_ID,
         [alter("drop_identifier_fields", "breaking", "TC405", "DROP IDENTIFIER FIELDS `id`")]),
    Case("a renamed identifier column stays the identifier", REQUIRED_ID + "\nidentifier_fields: [id]",
         REQUIRED_ID.replace("{name: id, type: long, required: true}",
                             "{name: key, type: long, required: true, renamed_from: id}") +
         "\nidentifier_fields: [key]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `id` TO `key`")]),
    # --- format version
    Case("upgrade the format", "format_version: 1\n" + ID, ID,
         [props("upgrade_format", "breaking", "TC406", ("format-version", "2"))]),
    Case("a format cannot be downgraded", ID, "format_version: 1\n" + ID, [],
         refused=["policies/u/t.yaml:2:17: error TR105: format version 2 cannot be downgraded to 1"],
         xfail="the finding points at the columns (3:10), not at the format_version line that causes it"),
    # --- comment and properties: only keys the policy owns
    Case("set the table comment", ID, "description: it's t\n" + ID,
         [("set_comment", "safe", "TC503", f"COMMENT ON TABLE {T} IS 'it\\'s t'")]),
    Case("a comment removed from git is left on the table", "description: x\n" + ID, ID, []),
    Case("set a property, the owner and a write mode", "owner: a\n" + ID,
         "owner: b\nwrite_modes: {delete: merge-on-read}\nproperties: {commit.retry.num-retries: 10}\n" + ID,
         [props("set_properties", "safe", "TC501", ("commit.retry.num-retries", "10"), ("tablepolicy.owner", "b"),
                ("write.delete.mode", "merge-on-read"))]),
    Case("properties engines and other tools set are left alone", ID, ID, [],
         properties={"write.parquet.compression-codec": "snappy", "x.other": "1", "owner": "root"}),
    Case("a declared property removed from git is unset", ID + "\nproperties: {commit.retry.num-retries: 10}", ID,
         [("unset_properties", "safe", "TC502", f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS "
           "('commit.retry.num-retries')")]),
    Case("an ignored property is never compared", ID + "\nproperties: {commit.retry.num-retries: 10}",
         ID + "\nignore_properties: [commit.retry.num-retries]", []),
    Case("a lifecycle setting removed from git is unset", ID + "\nlifecycle: {snapshots: {max_age: 7d}}", ID,
         [("unset_properties", "safe", "TC502", f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS "
           "('history.expire.max-snapshot-age-ms')")]),
    Case("a longer snapshot history is safe", ID + "\nlifecycle: {snapshots: {max_age: 6h}}",
         ID + "\nlifecycle: {snapshots: {max_age: 7d}}",
         [props("set_properties", "safe", "TC501", ("history.expire.max-snapshot-age-ms", "604800000"))]),
    Case("a shorter snapshot history is breaking", ID + "\nlifecycle: {snapshots: {max_age: 7d}}",
         ID + "\nlifecycle: {snapshots: {max_age: 6h, min_keep: 2}}",
         [props("set_properties", "safe", "TC501", ("history.expire.min-snapshots-to-keep", "2")),
          props("set_properties", "breaking", "TC505", ("history.expire.max-snapshot-age-ms", "21600000"))]),
    # --- bloom filters on the erasure key: derived from the key, one owner, unset when erasure no longer owns them
    Case("an erasure key gets a bloom filter by default", ACCOUNT, ACCOUNT + ERASE,
         [props("set_properties", "safe", "TC501", ("tablepolicy.erasure.key", "account"),
                ("tablepolicy.erasure.within", "30d"), (BLOOM + "account", "true"))]),
    Case("bloom filters sized: fpp per column, max bytes for the table", ACCOUNT + ERASE,
         ACCOUNT + "\nlifecycle: {erasure: {key: [account, s.x], within: 30d, bloom_filter: {fpp: 0.02, "
         "max_bytes: 64KB, columns: {s.x: {fpp: 0.001}}}}}",
         [props("set_properties", "safe", "TC501", ("tablepolicy.erasure.key", "account,s.x"),
                (BLOOM + "s.x", "true"), (FPP + "account", "0.02"), (FPP + "s.x", "0.001"),
                ("write.parquet.bloom-filter-max-bytes", "65536"))]),
    Case("bloom filters turned off are unset", ACCOUNT + ERASE,
         ACCOUNT + "\nlifecycle: {erasure: {key: [account], within: 30d, bloom_filter: {enabled: false}}}",
         [("unset_properties", "safe", "TC502", f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS "
           "('write.parquet.bloom-filter-enabled.column.account')")]),
    Case("one key column's filter turned off", ACCOUNT + ERASE.replace("[account]", "[account, id]"),
         ACCOUNT + "\nlifecycle: {erasure: {key: [account, id], within: 30d, bloom_filter: "
         "{columns: {id: {enabled: false}}}}}",
         [("unset_properties", "safe", "TC502", f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS "
           "('write.parquet.bloom-filter-enabled.column.id')")]),
    Case("erasure removed unsets the filters it owned, a filter by hand stays", ACCOUNT + ERASE, ACCOUNT, [
        ("unset_properties", "safe", "TC502", f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS "
         "('tablepolicy.erasure.key', 'tablepolicy.erasure.within', "
         "'write.parquet.bloom-filter-enabled.column.account', "
         "'write.parquet.bloom-filter-max-bytes')")],
        properties={"write.parquet.bloom-filter-max-bytes": "1024", BLOOM + "id": "true"}),
    Case("the filter follows a renamed key column", ACCOUNT + ERASE,
         "columns: [{name: id, type: long}, {name: subject, type: string, renamed_from: account}, "
         "{name: s, type: {struct: [{name: x, type: int}]}}]\nlifecycle: {erasure: {key: [subject], within: 30d}}",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `account` TO `subject`"),
          props("set_properties", "safe", "TC501", ("tablepolicy.erasure.key", "subject"),
                (BLOOM + "subject", "true")),
          ("unset_properties", "safe", "TC502", f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS "
           "('write.parquet.bloom-filter-enabled.column.account')")]),
    # --- retention: a tighter one deletes rows at the next maintain
    Case("a new retention is destructive", TS, TS + "\nlifecycle: {retention: {column: ts, keep: 30d}}",
         [props("tighten_retention", "destructive", "TC504", ("tablepolicy.retention.column", "ts"),
                ("tablepolicy.retention.keep", "30d"))], blocked=[("TC504", "tighten_retention")]),
    Case("a shorter retention, approved", TS + "\nlifecycle: {retention: {column: ts, keep: 60d}}",
         "allow_destructive: [tighten_retention]\n" + TS + "\nlifecycle: {retention: {column: ts, keep: 30d}}",
         [props("tighten_retention", "destructive", "TC504", ("tablepolicy.retention.keep", "30d"))]),
    Case("a longer retention is safe", TS + "\nlifecycle: {retention: {column: ts, keep: 30d}}",
         TS + "\nlifecycle: {retention: {column: ts, keep: 60d}}",
         [props("set_properties", "safe", "TC501", ("tablepolicy.retention.keep", "60d"))]),
    Case("a retention removed keeps rows from now on", TS + "\nlifecycle: {retention: {column: ts, keep: 30d}}", TS,
         [("unset_properties", "safe", "TC502", f"ALTER TABLE {T} UNSET TBLPROPERTIES IF EXISTS "
           "('tablepolicy.retention.column', 'tablepolicy.retention.keep')")]),
    # --- branches and tags: created where the plan says, retention compared as expiry reads it, never moved
    Case("create a tag and a branch at the current snapshot", ID,
         ID + "\nrefs:\n  - {tag: month_end, max_ref_age: 400d}\n  - {branch: audit, max_ref_age: 30d, "
         "min_snapshots_to_keep: 2, max_snapshot_age: 36h}", [
             alter("create_ref", "safe", "TC601", "CREATE BRANCH `audit` AS OF VERSION 103 RETAIN 30 DAYS WITH "
                   "SNAPSHOT RETENTION 2 SNAPSHOTS 36 HOURS"),
             alter("create_ref", "safe", "TC601", "CREATE TAG `month_end` AS OF VERSION 103 RETAIN 400 DAYS")],
         snapshots=True),
    Case("a tag at a declared snapshot", ID, ID + "\nrefs: [{tag: q3, snapshot_id: 101}]",
         [alter("create_ref", "safe", "TC601", "CREATE TAG `q3` AS OF VERSION 101")], snapshots=True),
    Case("a snapshot id the table does not have is refused", ID, ID + "\nrefs: [{tag: q3, snapshot_id: 7}]", [],
         refused=["policies/u/t.yaml:3:8: error TR112: tag q3 starts at snapshot 7, which the table does not "
                  "have"], snapshots=True),
    Case("a branch of a table without a snapshot starts empty", ID, ID + "\nrefs: [{branch: audit}]",
         [alter("create_ref", "safe", "TC601", "CREATE BRANCH `audit`")]),
    Case("a tag of a table without a snapshot waits for one", ID, ID + "\nrefs: [{tag: first}]", [],
         refused=["policies/u/t.yaml:3:8: warning TP452: tag first waits for the table's first snapshot: there is "
                  "nothing to tag yet"]),
    Case("a new table's branch is made after it", None, ID + "\nrefs: [{branch: audit, max_ref_age: 7d}]", [
        ("create_table", "safe", "TC102", f"{ATOMIC}CREATE TABLE {T} (\n  `id` BIGINT\n)\nUSING iceberg\n"
         "TBLPROPERTIES (\n  'format-version' = '2'\n)"),
        alter("create_ref", "safe", "TC601", "CREATE BRANCH `audit` RETAIN 7 DAYS")], namespace_exists=True),
    Case("a tag kept longer is safe", ID + "\nrefs: [{tag: m, max_ref_age: 7d}]",
         ID + "\nrefs: [{tag: m, max_ref_age: 30d}]", 
         [ref_retention("safe", "TC602", "tag", "TAG `m` AS OF VERSION 103 RETAIN 30 DAYS")]),
    Case("a branch keeping fewer snapshots is destructive",
         ID + "\nrefs: [{branch: audit, min_snapshots_to_keep: 5}]",
         ID + "\nrefs: [{branch: audit, min_snapshots_to_keep: 2}]",
         [ref_retention("destructive", "TC603", "branch", "BRANCH `audit` AS OF VERSION 103 WITH SNAPSHOT "
                        "RETENTION 2 SNAPSHOTS")], blocked=[("TC603", "shorten_ref audit")]),
    Case("a shorter ref retention, approved", ID + "\nrefs: [{branch: audit, max_snapshot_age: 7d}]",
         "allow_destructive: [shorten_ref audit]\n" + ID + "\nrefs: [{branch: audit, max_snapshot_age: 1d}]",
         [ref_retention("destructive", "TC603", "branch", "BRANCH `audit` AS OF VERSION 103 WITH SNAPSHOT "
                        "RETENTION 1 DAYS")]),
    Case("a value unset on the ref takes the table's: longer is safe",
         ID + "\nrefs: [{branch: audit, min_snapshots_to_keep: 2}]",
         ID + "\nlifecycle: {snapshots: {min_keep: 5}}\nrefs: [{branch: audit}]",
         [props("set_properties", "safe", "TC501", ("history.expire.min-snapshots-to-keep", "5")),
          ref_retention("safe", "TC602", "branch", "BRANCH `audit` AS OF VERSION 103", "min_snapshots_to_keep")]),
    Case("a tag unset to the table's forever is safe", ID + "\nrefs: [{tag: m, max_ref_age: 7d}]",
         ID + "\nrefs: [{tag: m}]", 
         [ref_retention("safe", "TC602", "tag", "TAG `m` AS OF VERSION 103", "max_ref_age")]),
    Case("a ref removed from git is dropped, with approval", ID + "\nrefs: [{tag: m}, {branch: audit}]",
         ID + "\nrefs: [{branch: audit}]", [alter("drop_ref", "destructive", "TC604", "DROP TAG `m`")],
         blocked=[("TC604", "drop_tag m")]),
    Case("a ref drop approved", ID + "\nrefs: [{branch: audit}]", "allow_destructive: [drop_branch audit]\n" + ID,
         [alter("drop_ref", "destructive", "TC604", "DROP BRANCH `audit`")]),
    Case("refs git never declared are left alone (made by hand, safety tags)", ID, ID, [],
         refs={"tablepolicy-before-1a2b3c4d": {"snapshot-id": 102, "type": "tag", "max-ref-age-ms": 604800000}}),
    Case("a tag declared where the table has a branch is refused", ID + "\nrefs: [{branch: x}]",
         ID + "\nrefs: [{tag: x}]", [],
         refused=["policies/u/t.yaml:3:8: error TR111: x is a branch of the table, the policy declares a tag"]),
    Case("refs as applied: no changes", ID + "\nrefs: [{tag: m, max_ref_age: 400d}, {branch: audit, "
         "min_snapshots_to_keep: 2}]", ID + "\nrefs: [{branch: audit, min_snapshots_to_keep: 2}, "
         "{tag: m, max_ref_age: 400d}]", [], refs={"audit": {"snapshot-id": 101, "type": "branch",
                                                             "min-snapshots-to-keep": 2}}),
    # --- views (a view policy beside the table u.t)
    Case("a new view is created after the tables", ID, ID, [
        ("create_view", "safe", "TC701", f"CREATE VIEW {V}\n(\n  `id` COMMENT 'the key'\n)\nCOMMENT 'ids'\n"
         "TBLPROPERTIES (\n  'tablepolicy.declared-properties' = '[\"tablepolicy.owner\"]',\n"
         "  'tablepolicy.owner' = 'data'\n)\nAS\nSELECT id FROM u.t")],
         view=VIEW + "\ncolumns: {id: the key}\ndescription: ids\nowner: data"),
    Case("a view whose SQL differs is replaced in one commit", ID, ID, [
        ("replace_view", "safe", "TC702", f"CREATE OR REPLACE VIEW {V}\nAS\nSELECT id FROM u.t WHERE id > 0")],
         view=VIEW + " WHERE id > 0", view_current=VIEW),
    Case("a view whose column comment or property differs is replaced", ID, ID, [
        ("replace_view", "safe", "TC702", f"CREATE OR REPLACE VIEW {V}\n(\n  `id` COMMENT 'new'\n)\n"
         "TBLPROPERTIES (\n  'k' = 'v',\n  'tablepolicy.declared-properties' = '[\"k\"]'\n)\nAS\nSELECT id FROM u.t")],
         view=VIEW + "\ncolumns: {id: new}\nproperties: {k: v}", view_current=VIEW + "\ncolumns: {id: old}"),
    Case("a view as applied: no changes (Spark's own properties and other keys left alone)", ID, ID, [],
         view=VIEW + "\n\n\ncolumns: {id: the key}", view_current=VIEW + "\ncolumns: {id: the key}",
         view_properties={"other.tool": "x"}),
    Case("a property removed from git is unset on the view (Iceberg's replace keeps it)", ID, ID, [
        ("replace_view", "safe", "TC702", f"CREATE OR REPLACE VIEW {V}\nTBLPROPERTIES (\n  'k' = 'v',\n"
         "  'tablepolicy.declared-properties' = '[\"k\"]'\n)\nAS\nSELECT id FROM u.t"),
        ("unset_view_properties", "safe", "TC704", f"ALTER VIEW {V} UNSET TBLPROPERTIES ('gone')")],
         view=VIEW + "\nproperties: {k: v}", view_current=VIEW + "\nproperties: {k: v, gone: x}"),
    Case("the last property removed from git: it and the record are unset", ID, ID, [
        ("unset_view_properties", "safe", "TC704", f"ALTER VIEW {V} UNSET TBLPROPERTIES ('gone', "
         "'tablepolicy.declared-properties')")], view=VIEW, view_current=VIEW + "\nproperties: {gone: x}"),
    Case("a view with state absent is dropped, with approval", ID, ID,
         [("drop_view", "destructive", "TC703", f"DROP VIEW {V}")], blocked=[("TC703", "drop_view")],
         view="state: absent", view_current=VIEW),
    Case("a view drop approved", ID, ID, [("drop_view", "destructive", "TC703", f"DROP VIEW {V}")],
         view="state: absent\nallow_destructive: [drop_view]", view_current=VIEW),
    Case("a view with state absent the catalog does not hold: nothing", ID, ID, [], view="state: absent"),
    Case("a view reading a column the plan drops breaks: a warning at its SQL", ID_R,
         "allow_destructive: [drop_column r]\n" + ID,
         [alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`")],
         refused=["policies/u/v.yaml:2:6: warning TP462: view u.v reads column r of u.t, which this plan drops: "
                  "the view breaks"], view="sql: SELECT `id`, R FROM lake.u.t",
         view_current="sql: SELECT `id`, R FROM lake.u.t"),
    Case("a view reading a column the plan renames breaks", "columns: [{name: amount, type: long}]",
         "columns: [{name: total, type: long, renamed_from: amount}]",
         [alter("rename_column", "breaking", "TC202", "RENAME COLUMN `amount` TO `total`")],
         refused=["policies/u/v.yaml:2:6: warning TP462: view u.v reads column amount of u.t, which this plan "
                  "renames to total: the view breaks"], view="sql: SELECT * FROM u . `t`",
         view_current="sql: SELECT * FROM u . `t`"),
    Case("a view reading a table the plan drops breaks", ID, "state: absent\nallow_destructive: [drop_table]",
         [("drop_table", "destructive", "TC302", f"DROP TABLE {T}")],
         refused=["policies/u/v.yaml:2:6: warning TP462: view u.v reads table u.t, which this plan drops: the view "
                  "breaks"], view=VIEW, view_current=VIEW),
    Case("a view whose SQL no longer reads the dropped column: no warning", ID_R,
         "allow_destructive: [drop_column r]\n" + ID,
         [alter("drop_column", "destructive", "TC301", "DROP COLUMN `r`"),
          ("replace_view", "safe", "TC702", f"CREATE OR REPLACE VIEW {V}\nAS\nSELECT id, rr FROM u.t")],
         view="sql: SELECT id, rr FROM u.t", view_current="sql: SELECT id, r FROM u.t"),
    # --- nothing to do
    Case("the table as applied: no changes", NESTED + "partition_by: ['bucket(8, id)']\nsort_by: [id]\n"
         "lifecycle: {snapshots: {max_age: 1d}}", NESTED + "partition_by: ['bucket(8, id)']\nsort_by: [id]\n"
         "lifecycle: {snapshots: {max_age: 1d}}", []),
]


def marks(case: Case) -> list[pytest.MarkDecorator]:
    return [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=marks(c)) for c in CASES])
def test_plan(case: Case) -> None:
    result = plan_case(case)
    changes, refused, blocked = outcome(result)
    assert refused == case.refused
    if any(" error " in r for r in case.refused):  # a refused plan is shown as findings only, never applied
        assert (case.changes, case.blocked) == ([], [])
        return
    assert changes == case.changes
    assert blocked == case.blocked
    assert_converges(case, result)


def lake_of(case: Case) -> Lake:
    """The catalog ``case`` plans against, as memory_apply holds it."""
    held = current_of(case)
    tables: dict[tuple[str, ...], MemoryTable] = {("u", "t"): MemoryTable.of(*held)} if held is not None else {}
    views: dict[tuple[str, ...], CurrentView] = {}
    if case.view_current is not None:
        views[("u", "v")] = applied_view("view: u.v\n" + case.view_current, properties=case.view_properties)
    return Lake(frozenset({("u",)} if held is not None or case.namespace_exists else set()), tables, views)


def held_state(lake: Lake, change: Change) -> TableState | ViewState | None:
    """What resume compares a change with: the view for a view's change, else the table."""
    if isinstance(change, VIEW_KINDS):
        view = lake.view(change.table)
        return view.state if view is not None else None
    table = lake.table(change.table)
    return table.state if table is not None else None


def assert_converges(case: Case, result: PlanResult) -> None:
    """Apply the plan in memory, as Iceberg commits each change (compiler/plan/memory/apply.py): each change is not
    in effect before its commit and is after it (resume after a crash skips it, compiler/plan/applied.py); then
    the table and the view are as git declares them, and planning again finds nothing (destructive changes are
    applied as if approved: approval is the planner's business, not the commit's)."""
    lake = lake_of(case)
    for change in result.plan.changes:
        before, existed = held_state(lake, change), lake.namespace_exists(change.table)
        lake = apply_change(lake, change)
        after, exists = held_state(lake, change), lake.namespace_exists(change.table)
        # in effect before its commit exactly when the commit changes nothing (WRITE DISTRIBUTED BY sets the
        # distribution mode that the plan's next change sets again)
        assert is_applied(change, before, existed) == ((before, existed) == (after, exists)), change.summary
        assert is_applied(change, after, exists), change.summary
    project = project_case(case)
    [table] = project.tables
    held = lake.table(table.name)
    if table.state == "absent":
        assert held is None
    else:
        assert held is not None
        assert differences(held.state, desired_table(project, table).state, held.history) == []
    for view in project.views:
        now = lake.view(view.name)
        if view.state == "absent":
            assert now is None
        else:
            assert now is not None and view_differences(now.state, desired_view(view.policy, view.name)) == ()
    again = make_plan(project, lake, CATALOG, git_sha=GIT_SHA, today=TODAY)
    assert [c.summary for c in again.plan.changes] == []


KINDS = get_args(get_args(Change)[0])
VIEW_KINDS = (changes_.CreateView, changes_.ReplaceView, changes_.UnsetViewProperties, changes_.DropView)


def test_every_change_kind_and_code_has_a_case() -> None:
    """Every kind of the union, and every change, refusal and approval code of the registry."""
    kinds = {action for c in CASES for action, *_ in c.changes}
    assert kinds == {kind.model_fields["action"].default for kind in KINDS}
    found = {code for c in CASES for _, _, code, _ in c.changes}
    found |= {r.split(" ")[2].rstrip(":") for c in CASES for r in c.refused}
    assert sorted(c for c in found if c[:2] in ("TC", "TR", "TA")) == codes.codes_of(["TC", "TR", "TA"])


def test_every_change_kind_is_resumed_and_converges_in_memory() -> None:
    """test_plan applies the plan of every row that is not refused in memory (assert_converges): resume's
    is_applied is checked before and after each change, and the plan converges. A kind no such row plans has
    neither check: name it here."""
    applied_rows = [c for c in CASES if c.xfail is None and not any(" error " in r for r in c.refused)]
    covered = {action for c in applied_rows for action, *_ in c.changes}
    missing = sorted({kind.model_fields["action"].default for kind in KINDS} - covered)
    assert missing == [], f"no row of CASES that plans without an error plans {missing}: add one"


def test_a_downgrade_is_refused_whatever_line_the_finding_names() -> None:
    """The xfail case above pins the right line; this proves the code (TR105) while it is wrong."""
    case = next(c for c in CASES if c.id == "a format cannot be downgraded")
    result = plan_case(case)
    assert [(d.code, str(d.severity)) for d in result.diagnostics] == [("TR105", "error")]


def test_set_properties_lists_owned_keys_sorted() -> None:
    case = next(c for c in CASES if c.id == "set a property, the owner and a write mode")
    more = Case(case.id, case.current, case.desired.replace(
        "properties: {commit.retry.num-retries: 10}", "properties: {commit.retry.num-retries: 10, a.b: x}"),
        [], properties={"z.other": "1", "a.other": "2"})
    [(*_, sql)] = outcome(plan_case(more))[0]
    assert sql.splitlines()[1:] == ["  'a.b' = 'x',", "  'commit.retry.num-retries' = '10',",
                                    "  'tablepolicy.owner' = 'b',", "  'write.delete.mode' = 'merge-on-read'", ")"]

"""The differ without an engine: which changes partition, sort and column-add evolutions become, and that
each new change kind survives the plan file. Spark runs them in tests/integration/test_plan_evolution.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import TypeAdapter

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.diff.changes import Change
from tablepolicy.compiler.diff.create import creation_changes
from tablepolicy.compiler.diff.differ import diff_table
from tablepolicy.compiler.loader import Project, load_text
from tablepolicy.compiler.model.table import TableHistory, TableState, iceberg_json
from tablepolicy.compiler.plan.applied import is_applied
from tablepolicy.compiler.sql.statements import change_sql, statements

BASE = """table: u.t
allow_destructive: [drop_column r]
columns:
  - {name: id, type: long, required: true}
  - {name: ts, type: timestamptz}
  - {name: r, type: float}
  - name: s
    type: {struct: [{name: x, type: int}]}
partition_by: [day(ts)]
sort_by: [r]
"""


def state(text: str) -> TableState:
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(text, "t.yaml", project, diagnostics)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    [desired] = desired_states(project)
    return desired


CASES = [
    ("one add stays one statement", {"  - name: s": "  - {name: a, type: int}\n  - name: s"}, ["add_column"]),
    ("adds batch", {"  - name: s": "  - {name: a, type: int}\n  - {name: b, type: int}\n  - name: s",
                    "{name: x, type: int}": "{name: x, type: int}, {name: y, type: int}"}, ["add_columns"]),
    ("a re-added name is not batched", {"  - name: s": "  - {name: a, type: int}\n  - {name: gone, type: int}\n"
                                        "  - name: s"}, ["add_column", "add_column"]),
    ("replace", {"[day(ts)]": "[hour(ts)]"}, ["replace_partition_field"]),
    ("two fields", {"[day(ts)]": "[day(ts), 'bucket(4, id)', 'truncate(2, r)']"}, ["update_partition_spec"]),
    ("replace and rename", {"[day(ts)]": "[hour(ts), {field: 'bucket(4, id)', name: b}]"},
     ["update_partition_spec"]),
    ("drop of the sort source", {"  - {name: r, type: float}\n": "", "sort_by: [r]": "sort_by: [id]"},
     ["set_sort_order", "drop_column"]),
    # the new order names a column only the rename creates: no order until the rename has run
    ("drop of the sort source, order by a renamed column", {
        "  - {name: r, type: float}\n": "", "sort_by: [r]": "sort_by: [key]",
        "{name: id, type: long, required: true}": "{name: key, type: long, required: true, renamed_from: id}"},
     ["set_sort_order", "drop_column", "rename_column", "set_sort_order"]),
]


@pytest.mark.parametrize(("edit", "kinds"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_differ(edit: dict[str, str], kinds: list[str]) -> None:
    current = state(BASE)
    text = BASE
    for old, new in edit.items():
        assert old in text
        text = text.replace(old, new)
    history = TableHistory(dropped_paths=frozenset({("gone",)}))
    result = diff_table(current, state(text), history)
    assert result.refusals == []
    assert [c.action for c in result.changes] == kinds
    adapter: TypeAdapter[Change] = TypeAdapter(Change)
    for change in result.changes:  # the plan file round trip of every new kind
        assert adapter.validate_python(adapter.dump_python(change, mode="json")) == change
        assert not is_applied(change, current)
        assert change_sql(change, "c") and statements(change, "c")


def test_a_create_is_one_change_with_the_whole_table() -> None:
    desired = state(BASE.replace("[day(ts)]", "[{field: day(ts), name: d}, 'bucket(4, id)']"))
    [create] = creation_changes(desired)
    [sql] = change_sql(create, "c")
    assert sql.splitlines()[0].startswith("-- one atomic create through the Iceberg catalog API")
    assert "PARTITIONED BY (days(`ts`), bucket(4, `id`))" in sql and "AS `d`" in sql
    plain = [s.sql for s in statements(create, "c")]  # tablepolicy ddl: Spark SQL a user can run
    assert [s.split(" (")[0].split("\n")[0] for s in plain] == [
        "CREATE TABLE `c`.`u`.`t`", "ALTER TABLE `c`.`u`.`t` ADD PARTITION FIELD days(`ts`) AS `d`",
        "ALTER TABLE `c`.`u`.`t` ADD PARTITION FIELD bucket(4, `id`)",
        "ALTER TABLE `c`.`u`.`t` WRITE ORDERED BY `r` ASC NULLS FIRST"]
    _, spec, order = iceberg_json(desired)
    assert '"name": "d"' in spec and '"name": "id_bucket_4"' in spec and '"null-order": "nulls-first"' in order

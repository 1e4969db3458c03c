"""Changes -> Spark SQL statements; every statement remembers the change that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from compiler.diff.changes import Change, CreateNamespace, CreateTable
from compiler.model.table import TableState
from compiler.render.env import render

# write.distribution-mode -> the WRITE clause that sets it together with the sort order
WRITE_CLAUSES = {
    None: "ORDERED BY",
    "range": "ORDERED BY",
    "none": "LOCALLY ORDERED BY",
    "hash": "DISTRIBUTED BY PARTITION LOCALLY ORDERED BY",
}


@dataclass(frozen=True)
class Statement:
    sql: str
    change: Change


def statements(change: Change, catalog: str) -> list[Statement]:
    match change:
        case CreateNamespace():
            return [Statement(render("create_namespace", namespace=(catalog, *change.table)), change)]
        case CreateTable():
            return [Statement(sql, change) for sql in create_table_sql(change.state, catalog)]
        case _:
            assert_never(change)


def create_table_sql(state: TableState, catalog: str) -> list[str]:
    """CREATE TABLE, then what Spark's CREATE cannot say: named partition fields, sort, identifiers.

    Spark's PARTITIONED BY cannot name a field, so from the first named field on the spec is built
    with ADD PARTITION FIELD ... AS (on the still empty table, keeping the declared order).
    """
    table = (catalog, *state.name)
    first_named = next((i for i, f in enumerate(state.partition) if f.name), len(state.partition))
    sql = [
        render(
            "create_table",
            table=table,
            columns=state.schema_.fields,
            partition=state.partition[:first_named],
            location=state.location,
            comment=state.comment,
            properties={"format-version": str(state.format_version), **state.properties},
        )
    ]
    sql += [render("add_partition_field", table=table, field=f) for f in state.partition[first_named:]]
    if state.sort:
        clause = WRITE_CLAUSES[state.properties.get("write.distribution-mode")]
        sql.append(render("write_order", table=table, clause=clause, sort=state.sort))
    if state.identifier_fields:
        sql.append(render("set_identifier_fields", table=table, fields=state.identifier_fields))
    return sql

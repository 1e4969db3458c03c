"""Changes -> Spark SQL statements; every statement remembers the change that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from compiler.diff.changes import (
    AddColumn,
    AddPartitionField,
    Change,
    CreateNamespace,
    CreateTable,
    DropColumn,
    DropIdentifierFields,
    DropPartitionField,
    DropTable,
    MakeOptional,
    MoveColumn,
    PropertyChange,
    RenameColumn,
    RenamePartitionField,
    SetComment,
    SetIdentifierFields,
    SetProperties,
    SetSortOrder,
    TightenRetention,
    UnsetProperties,
    UpdateDoc,
    UpgradeFormat,
    WidenType,
)
from compiler.diff.create import first_named_partition
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
    return [Statement(sql, change) for sql in change_sql(change, catalog)]


def change_sql(change: Change, catalog: str) -> list[str]:
    table = (catalog, *change.table)
    match change:
        case CreateNamespace():
            return [render("create_namespace", namespace=table)]
        case CreateTable():
            return create_table_sql(change.state, catalog)
        case DropTable():
            return [render("drop_table", table=table)]
        case AddColumn():
            return [render("add_column", table=table, path=change.path, type=change.type, doc=change.doc,
                           position=change.position, after=change.after)]
        case DropColumn():
            return [render("drop_column", table=table, path=change.path)]
        case RenameColumn():
            return [render("rename_column", table=table, path=change.path, new_name=change.new_name)]
        case WidenType():
            return [render("widen_type", table=table, path=change.path, type=change.new)]
        case MakeOptional():
            return [render("make_optional", table=table, path=change.path)]
        case UpdateDoc():
            return [render("update_doc", table=table, path=change.path, doc=change.doc)]
        case MoveColumn():
            return [render("move_column", table=table, path=change.path, position=change.position,
                           after=change.after)]
        case AddPartitionField():
            return [render("add_partition_field", table=table, field=change.field)]
        case DropPartitionField():
            return [render("drop_partition_field", table=table, field=change.field)]
        case RenamePartitionField():
            return [render("rename_partition_field", table=table, old_name=change.old_name, field=change.field)]
        case SetSortOrder():
            if not change.sort:
                return [render("write_unordered", table=table)]
            clause = WRITE_CLAUSES[change.distribution_mode]
            return [render("write_order", table=table, clause=clause, sort=change.sort)]
        case SetIdentifierFields():
            return [render("set_identifier_fields", table=table, fields=change.fields)]
        case DropIdentifierFields():
            return [render("drop_identifier_fields", table=table, fields=change.fields)]
        case UpgradeFormat():
            return [render("set_properties", table=table, properties={"format-version": str(change.new)})]
        case SetComment():
            return [render("set_comment", table=table, comment=change.comment)]
        case SetProperties() | TightenRetention():
            return [render("set_properties", table=table, properties=_values(change_properties(change)))]
        case UnsetProperties():
            return [render("unset_properties", table=table, keys=[c.key for c in change.changes])]
        case _:
            assert_never(change)


def change_properties(change: SetProperties | TightenRetention) -> tuple[PropertyChange, ...]:
    return change.changes if isinstance(change, SetProperties) else change.properties


def _values(changes: tuple[PropertyChange, ...]) -> dict[str, str]:
    return {c.key: c.new for c in changes if c.new is not None}


def create_table_sql(state: TableState, catalog: str) -> list[str]:
    """CREATE TABLE with the partition fields Spark can declare; ``creation_changes`` adds the rest."""
    return [
        render(
            "create_table",
            table=(catalog, *state.name),
            columns=state.columns.fields,
            partition=state.partition[: first_named_partition(state)],
            location=state.location,
            comment=state.comment,
            properties={"format-version": str(state.format_version), **state.properties},
        )
    ]

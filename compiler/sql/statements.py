"""Changes -> Spark SQL statements; every statement remembers the change that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from ..diff import changes
from ..diff.changes import Change, PropertyChange
from ..diff.create import first_named_partition
from ..model.table import TableState
from .templating import render

# write.distribution-mode -> the WRITE clause that sets it together with the sort order
WRITE_CLAUSES = {
    None: "ORDERED BY",
    "range": "ORDERED BY",
    "none": "LOCALLY ORDERED BY",
    "hash": "DISTRIBUTED BY PARTITION LOCALLY ORDERED BY",
}


@dataclass(frozen=True)
class Statement:
    """A statement and the change it came from (``tablepolicy ddl`` prints these; apply runs them as Steps)."""

    sql: str
    change: Change

    @property
    def summary(self) -> str:
        return self.change.summary


def statements(change: Change, catalog: str) -> list[Statement]:
    """Plain Spark SQL, one statement each, as ``tablepolicy ddl`` prints it and a user could run it by hand.

    Apply does better where Spark SQL cannot say it in one statement (see ``change_sql``): a create is one
    atomic commit through the catalog API, a multi-step partition evolution one UpdatePartitionSpec commit.
    """
    match change:
        case changes.CreateTable():
            return [Statement(sql, change) for sql in plain_create_sql(change.state, catalog)]
        case changes.UpdatePartitionSpec():
            return [Statement(sql, change) for sql in partition_spec_statements(change, catalog)]
        case _:
            return [Statement(sql, change) for sql in change_sql(change, catalog)]


def change_sql(change: Change, catalog: str) -> list[str]:
    """The SQL a plan shows and apply runs: one string per step. A create and a partition-spec update run
    through Iceberg's API in one commit; their string is the equivalent Spark SQL under a comment line
    that says so."""
    table = (catalog, *change.table)
    match change:
        case changes.CreateNamespace():
            return [render("create_namespace", namespace=table)]
        case changes.CreateTable():
            return [atomic_create_sql(change.state, catalog)]
        case changes.DropTable():
            return [render("drop_table", table=table)]
        case changes.AddColumn():
            return [render("add_column", table=table, path=change.path, type=change.type, doc=change.doc,
                           position=change.position, after=change.after)]
        case changes.AddColumns():
            return [render("add_columns", table=table, columns=change.columns)]
        case changes.DropColumn():
            return [render("drop_column", table=table, path=change.path)]
        case changes.RenameColumn():
            return [render("rename_column", table=table, path=change.path, new_name=change.new_name)]
        case changes.WidenType():
            return [render("widen_type", table=table, path=change.path, type=change.new)]
        case changes.MakeOptional():
            return [render("make_optional", table=table, path=change.path)]
        case changes.UpdateDoc():
            return [render("update_doc", table=table, path=change.path, doc=change.doc)]
        case changes.MoveColumn():
            return [render("move_column", table=table, path=change.path, position=change.position,
                           after=change.after)]
        case changes.AddPartitionField():
            return [render("add_partition_field", table=table, field=change.field)]
        case changes.DropPartitionField():
            return [render("drop_partition_field", table=table, field=change.field)]
        case changes.RenamePartitionField():
            return [render("rename_partition_field", table=table, old_name=change.old_name, field=change.field)]
        case changes.ReplacePartitionField():
            return [render("replace_partition_field", table=table, old=change.old, field=change.field)]
        case changes.UpdatePartitionSpec():
            return [render("update_partition_spec", statements=partition_spec_statements(change, catalog))]
        case changes.SetSortOrder():
            if not change.sort:
                return [render("write_unordered", table=table)]
            clause = WRITE_CLAUSES[change.distribution_mode]
            return [render("write_order", table=table, clause=clause, sort=change.sort)]
        case changes.SetIdentifierFields():
            return [render("set_identifier_fields", table=table, fields=change.fields)]
        case changes.DropIdentifierFields():
            return [render("drop_identifier_fields", table=table, fields=change.fields)]
        case changes.UpgradeFormat():
            return [render("set_properties", table=table, properties={"format-version": str(change.new)})]
        case changes.SetComment():
            return [render("set_comment", table=table, comment=change.comment)]
        case changes.SetProperties() | changes.TightenRetention():
            return [render("set_properties", table=table, properties=_values(change_properties(change)))]
        case changes.UnsetProperties():
            return [render("unset_properties", table=table, keys=[c.key for c in change.changes])]
        case changes.CreateRef():
            return [render("create_ref", table=table, kind=change.kind, name=change.name,
                           snapshot_id=change.snapshot_id, retention=change.retention)]
        case changes.SetRefRetention():
            return [render("replace_ref", table=table, kind=change.kind, name=change.name, retention=change.new,
                           snapshot_id=change.snapshot_id, unset=", ".join(unset_retention(change)))]
        case changes.DropRef():
            return [render("drop_ref", table=table, kind=change.kind, name=change.name)]
        case changes.CreateView() | changes.ReplaceView():
            state = change.state
            return [render("create_view", view=table, replace=isinstance(change, changes.ReplaceView),
                           columns=state.columns, comment=state.comment, properties=state.properties, sql=state.sql)]
        case changes.UnsetViewProperties():
            return [render("unset_view_properties", view=table, keys=change.keys)]
        case changes.DropView():
            return [render("drop_view", view=table)]
        case _:
            assert_never(change)


def unset_retention(change: changes.SetRefRetention) -> list[str]:
    """The retention values the change unsets on the ref, which Spark's REPLACE cannot say."""
    new, old = change.new, change.old
    pairs = [("max_ref_age", old.max_ref_age_ms, new.max_ref_age_ms),
             ("min_snapshots_to_keep", old.min_snapshots_to_keep, new.min_snapshots_to_keep),
             ("max_snapshot_age", old.max_snapshot_age_ms, new.max_snapshot_age_ms)]
    return [key for key, was, now in pairs if was is not None and now is None]


def replace_ref_statement(sql: str) -> str:
    """The Spark SQL of a retention change, without the comment line above it."""
    return sql.split("\n", 1)[1]


def change_properties(change: changes.SetProperties | changes.TightenRetention) -> tuple[PropertyChange, ...]:
    return change.changes if isinstance(change, changes.SetProperties) else change.properties


def _values(properties: tuple[PropertyChange, ...]) -> dict[str, str]:
    return {c.key: c.new for c in properties if c.new is not None}


def partition_spec_statements(change: changes.UpdatePartitionSpec, catalog: str) -> list[str]:
    """The Spark SQL equivalent of one UpdatePartitionSpec commit, one statement per field."""
    table = (catalog, *change.table)
    return [
        *(render("drop_partition_field", table=table, field=f) for f in change.remove),
        *(render("rename_partition_field", table=table, old_name=r.old_name, field=r.field) for r in change.rename),
        *(render("add_partition_field", table=table, field=f) for f in change.add),
    ]


def _create_context(state: TableState, catalog: str) -> dict[str, object]:
    return {
        "table": (catalog, *state.name),
        "columns": state.columns.fields,
        "location": state.location,
        "comment": state.comment,
        "properties": {"format-version": str(state.format_version), **state.properties},
    }


def atomic_create_sql(state: TableState, catalog: str) -> str:
    """CREATE TABLE with every partition field, then comment lines for what Spark's CREATE cannot say."""
    return render("create_table_atomic", **_create_context(state, catalog), partition=state.partition,
                  named=[f for f in state.partition if f.name], sort=state.sort,
                  identifier_fields=state.identifier_fields)


def plain_create_sql(state: TableState, catalog: str) -> list[str]:
    """CREATE TABLE with the partition fields Spark can declare, then the ALTER statements for the rest."""
    create = render("create_table", **_create_context(state, catalog),
                    partition=state.partition[: first_named_partition(state)])
    later: list[Change] = [changes.AddPartitionField(table=state.name, field=f)
                           for f in state.partition[first_named_partition(state):]]
    if state.sort:
        later.append(changes.SetSortOrder(table=state.name, sort=state.sort,
                                  distribution_mode=state.properties.get("write.distribution-mode")))
    if state.identifier_fields:
        later.append(changes.SetIdentifierFields(table=state.name, fields=state.identifier_fields))
    return [create, *(sql for change in later for sql in change_sql(change, catalog))]

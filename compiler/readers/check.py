"""The readers check: on the declared state (validate), on the changes of a plan (plan), each finding where the
policy declares what the reader cannot read."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..desired import desired_table
from ..diagnostics import Diagnostic, Location
from ..diff import changes
from ..diff.changes import Change
from ..iceberg.names import format_name
from ..iceberg.readers import FEATURES
from ..loader import LoadedTable, Project
from ..model.table import ColumnPath, TableState
from ..policy.columns import Column
from ..yamlsource import Path
from .declared import any_declared, conflicting_readers, readers_for
from .findings import Locate, reader_findings
from .uses import Use, held_uses, new_uses, uses_of

ColumnLocator = Callable[[list[Column], ColumnPath], Path]  # tablepolicy.compiler.plan.locate.column_yaml_path


def check_readers(project: Project, column_path: ColumnLocator) -> Iterator[Diagnostic]:
    """Every reader finding of the declared state: TP122, then TG112 and TG113 table by table."""
    if not any_declared(project):
        return
    yield from conflicting_readers(project)
    for table in project.tables:
        readers = readers_for(project, table) if table.state == "present" else []
        if readers:
            state = desired_table(project, table).state
            yield from reader_findings(readers, uses_of(state), table.declared, locator(table, column_path))


def check_changes(project: Project, table: LoadedTable, current: TableState | None, desired: TableState,
                  summaries: Callable[[Use], str | None], column_path: ColumnLocator) -> list[Diagnostic]:
    """The findings of what a plan brings into one table (everything, for a table it creates)."""
    readers = readers_for(project, table)
    if not readers:
        return []
    return reader_findings(readers, new_uses(current, desired), format_name(desired.name),
                           locator(table, column_path), summaries)


def unreadable_now(project: Project, table: LoadedTable, current: TableState, position_delete_files: int,
                   equality_delete_files: int, column_path: ColumnLocator) -> list[Diagnostic]:
    """What a declared reader of a live table already cannot read (health): its format, types and transforms as
    the catalog holds them, and the delete files its current snapshot reads."""
    readers = readers_for(project, table)
    if not readers:
        return []
    uses = held_uses(current, position_delete_files, equality_delete_files)
    return reader_findings(readers, uses, format_name(current.name), locator(table, column_path))


def locator(table: LoadedTable, column_path: ColumnLocator) -> Locate:
    def locate(use: Use) -> Location | None:
        policy = table.policy
        if use.column is not None:
            path = column_path(policy.columns, use.column)
            return table.source.value((*path, "name" if use.feature == "names-case-only" else "type"))
        if use.key == ("format_version",) and "format_version" not in policy.model_fields_set:
            return table.source.value(("table",))
        return table.source.value(use.key)
    return locate


def change_of(planned: list[Change]) -> Callable[[Use], str | None]:
    """The summary of the change that brings a use into the table: the table's creation, else the change of its
    kind (a column's, the format's, the partition spec's, the write modes')."""
    def summary(use: Use) -> str | None:
        for change in planned:
            if isinstance(change, changes.CreateTable) or _brings(change, use):
                return change.summary
        return None
    return summary


def _brings(change: Change, use: Use) -> bool:
    group = FEATURES[use.feature].group
    if group == "format":
        return isinstance(change, changes.UpgradeFormat)
    if group == "transform":
        return isinstance(change, changes.AddPartitionField | changes.ReplacePartitionField |
                          changes.UpdatePartitionSpec)
    if group == "deletes":
        return isinstance(change, changes.UpgradeFormat) or (isinstance(change, changes.SetProperties) and any(
            c.key.endswith(".mode") for c in change.changes))
    paths = [change.path] if isinstance(change, changes.AddColumn | changes.WidenType | changes.RenameColumn) else \
        [c.path for c in change.columns] if isinstance(change, changes.AddColumns) else []
    if isinstance(change, changes.RenameColumn):
        paths = [(*change.path[:-1], change.new_name)]
    return use.column is not None and any(use.column[:len(p)] == p for p in paths)

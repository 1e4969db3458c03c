"""Whether a change is already in effect on a table: lets a re-run apply skip work a killed run did
between executing a statement and journaling it, so no step runs twice in a way that changes the result.

Engine-free cases: every row of the differ's case table (tests/unit/test_differ.py) applies its plan in memory
(compiler/plan/memory/apply.py) and checks each change against the table before its commit (in effect only when
the commit changes nothing) and after it (in effect); a change kind no row plans fails a test there."""

from __future__ import annotations

from typing import assert_never

from ..diff import changes
from ..diff.changes import Change, PartitionRename
from ..diff.views import view_differences
from ..model.table import ColumnPath, PartitionFieldState, TableState
from ..model.view import ViewState
from .memory.partition_spec import spec_index


def is_applied(change: Change, current: TableState | ViewState | None, namespace_exists: bool = False) -> bool:
    """``current`` is the table (for a view's change, the view) as the catalog holds it now (None: it does not
    exist)."""
    if isinstance(change, changes.CreateNamespace):
        return namespace_exists
    if isinstance(change, changes.CreateView | changes.ReplaceView | changes.UnsetViewProperties | changes.DropView):
        return _view_applied(change, current if isinstance(current, ViewState) else None)
    if isinstance(current, ViewState):
        raise TypeError(f"a table's change ({change.summary}) compared with a view")
    if isinstance(change, changes.CreateTable | changes.DropTable):
        return (current is not None) == isinstance(change, changes.CreateTable)
    if current is None:
        return False
    paths = current.ids_by_path
    match change:
        case changes.AddColumn():
            return change.path in paths
        case changes.AddColumns():  # one commit: all of them or none
            return all(c.path in paths for c in change.columns)
        case changes.DropColumn():
            return change.path not in paths
        case changes.RenameColumn():
            return (*change.path[:-1], change.new_name) in paths and change.path not in paths
        case changes.WidenType():
            found = current.field_at(change.path)
            return found is not None and found.field_type == change.new
        case changes.MakeOptional():
            found = current.field_at(change.path)
            return found is not None and not found.required
        case changes.UpdateDoc():
            found = current.field_at(change.path)
            return found is not None and found.doc == change.doc
        case changes.MoveColumn():
            siblings = [p[-1] for p in paths if p[:-1] == change.path[:-1]]
            name = change.path[-1]
            if name not in siblings:
                return False
            if change.position == "first":
                return siblings.index(name) == 0
            return change.after in siblings and siblings.index(name) == siblings.index(change.after) + 1
        case changes.AddPartitionField():
            return (change.field.source, change.field.transform) in _spec(current)
        case changes.DropPartitionField():  # by name: after a rename of its source, the field keeps its name
            return spec_index(current.partition, change.field) is None
        case changes.RenamePartitionField():
            return _renamed(current, PartitionRename(old_name=change.old_name, field=change.field))
        case changes.ReplacePartitionField():
            return spec_index(current.partition, change.old) is None and _has(current, change.field)
        case changes.UpdatePartitionSpec():  # one commit: all of it or none
            return (all(spec_index(current.partition, f) is None for f in change.remove)
                    and all(_renamed(current, r) for r in change.rename)
                    and all(_has(current, f) for f in change.add))
        case changes.SetSortOrder():
            return current.sort == change.sort
        case changes.SetIdentifierFields():
            return set(current.identifier_fields) == set(change.fields)
        case changes.DropIdentifierFields():
            return not set(change.fields) & set(current.identifier_fields)
        case changes.UpgradeFormat():
            return current.format_version >= change.new
        case changes.SetComment():
            return current.comment == change.comment
        case changes.SetProperties():
            return all(current.properties.get(c.key) == c.new for c in change.changes)
        case changes.TightenRetention():
            return all(current.properties.get(c.key) == c.new for c in change.properties)
        case changes.UnsetProperties():
            return all(c.key not in current.properties for c in change.changes)
        case changes.CreateRef():
            return any(r.name == change.name and r.kind == change.kind for r in current.refs)
        case changes.SetRefRetention():
            return any(r.name == change.name and r.retention == change.new for r in current.refs)
        case changes.DropRef():
            return all(r.name != change.name for r in current.refs)
        case changes.CreateView() | changes.ReplaceView() | changes.UnsetViewProperties() | changes.DropView():
            raise AssertionError("unreachable: a view's change is decided above")
        case _:
            assert_never(change)


def _view_applied(change: changes.CreateView | changes.ReplaceView | changes.UnsetViewProperties | changes.DropView,
                  current: ViewState | None) -> bool:
    if isinstance(change, changes.DropView):
        return current is None
    if isinstance(change, changes.UnsetViewProperties):
        return current is not None and not set(change.keys) & set(current.properties)
    if isinstance(change, changes.CreateView):
        return current is not None
    return current is not None and not view_differences(current, change.state)


def _spec(current: TableState) -> set[tuple[ColumnPath, object]]:
    return {(f.source, f.transform) for f in current.partition if f.transform.kind != "void"}


def _has(current: TableState, wanted: PartitionFieldState) -> bool:
    """The field is in the current spec (with its name, where one is declared)."""
    return any((f.source, f.transform) == (wanted.source, wanted.transform)
               and wanted.name in (None, f.name) for f in current.partition if f.transform.kind != "void")


def _renamed(current: TableState, rename: PartitionRename) -> bool:
    wanted = rename.field
    return any((f.source, f.transform, f.name) == (wanted.source, wanted.transform, wanted.name)
               for f in current.partition)

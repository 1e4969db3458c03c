"""One view: git's declaration against the catalog's current version -> create, replace or nothing.

Only what git declares is compared: the SQL text (outer whitespace aside), the columns and their comments when
git lists them, the comment when git writes a description, and the property keys git declares (owner
included); other keys on the view (Spark's own, another tool's) are left alone.
"""

from __future__ import annotations

from typing import Literal

from compiler.diff.changes import Change, CreateView, ReplaceView
from compiler.model.view import CurrentView, ViewState

Differ = Literal["sql", "columns", "comment", "properties"]


def view_differences(current: ViewState, desired: ViewState) -> tuple[Differ, ...]:
    found: list[Differ] = []
    if current.sql != desired.sql:
        found.append("sql")
    if desired.columns and current.columns != desired.columns:
        found.append("columns")
    if desired.comment is not None and current.comment != desired.comment:
        found.append("comment")
    if any(current.properties.get(k) != v for k, v in desired.properties.items()):
        found.append("properties")
    return tuple(found)


def diff_view(current: CurrentView | None, desired: ViewState) -> list[Change]:
    if current is None:
        return [CreateView(table=desired.name, state=desired)]
    differs = view_differences(current.state, desired)
    if not differs:
        return []
    return [ReplaceView(table=desired.name, state=desired, differs=differs, version_id=current.version_id)]

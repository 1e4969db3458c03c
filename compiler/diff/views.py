"""One view: git's declaration against the catalog's current version -> create, replace or nothing.

Only what git declares is compared: the SQL text (outer whitespace aside), the columns and their comments when
git lists them, the comment when git writes a description, and the property keys git declares (owner
included); other keys on the view (Spark's own, another tool's) are left alone. Apply records the declared keys
on the view (``tablepolicy.declared-properties``), so a key git drops later is unset.
"""

from __future__ import annotations

import re
from typing import Literal

from ..iceberg.names import format_name
from ..model.properties import DECLARED_KEYS, declared_in, declared_stamp
from ..model.view import CurrentView, ViewState
from . import changes
from .changes import Change

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
    """Create, or replace and then unset the keys an apply recorded as declared that git dropped since."""
    desired = stamped(desired)
    if current is None:
        return [changes.CreateView(table=desired.name, state=desired)]
    differs = view_differences(current.state, desired)
    found: list[Change] = []
    if differs:
        found.append(changes.ReplaceView(table=desired.name, state=desired, differs=differs,
                                         version_id=current.version_id))
    held = current.state.properties
    removed = {k for k in declared_in(held) - set(desired.properties) if k in held}
    if DECLARED_KEYS in held and DECLARED_KEYS not in desired.properties:  # git declares none any more
        removed.add(DECLARED_KEYS)
    if removed:
        found.append(changes.UnsetViewProperties(table=desired.name, keys=tuple(sorted(removed))))
    return found


def stamped(state: ViewState) -> ViewState:
    """The view as git declares it with its declared keys recorded (``tablepolicy.declared-properties``), so a
    key git drops later is unset."""
    keys = [k for k in state.properties if k != DECLARED_KEYS]
    stamp = {DECLARED_KEYS: declared_stamp(keys)} if keys else {}
    return state.model_copy(update={"properties": dict(sorted({**state.properties, **stamp}.items()))})


def _words(parts: tuple[str, ...]) -> re.Pattern[str]:
    """The dotted name as SQL may write it: each part bare or backquoted, any case, not inside a longer name."""
    dotted = r"\s*\.\s*".join(rf"`?{re.escape(part)}`?" for part in parts)
    return re.compile(rf"(?<![\w`]){dotted}(?![\w`])", re.IGNORECASE)


_STAR = re.compile(r"select\s+(distinct\s+)?\*|\.\s*\*", re.IGNORECASE)


def reads_column(sql: str, table: tuple[str, ...], column: tuple[str, ...]) -> bool:
    """Whether a view's SQL may read ``column`` of ``table``: it names the table, and the column's own name
    or a ``*``. A text match, not a parse (Spark parses the SQL at apply): a name that only looks alike counts
    too, so a warning may be one too many, never one too few for a view naming the table."""
    if not _words(table).search(sql):
        return False
    return bool(_words(column[-1:]).search(sql) or _STAR.search(sql))


def broken_views(views: list[ViewState], table: tuple[str, ...], planned: list[Change]) -> list[tuple[ViewState, str]]:
    """Each view (as git declares it) that reads a column this plan drops or renames on ``table``, or the table
    this plan drops, with what happens to it."""
    found = []
    for change in planned:
        if isinstance(change, changes.DropColumn):
            what = f"column {format_name(change.path)} of {format_name(table)}, which this plan drops"
        elif isinstance(change, changes.RenameColumn):
            what = (f"column {format_name(change.path)} of {format_name(table)}, which this plan renames to "
                    f"{format_name((change.new_name,))}")
        elif isinstance(change, changes.DropTable):
            found += [(view, f"table {format_name(table)}, which this plan drops") for view in views
                      if _words(table).search(view.sql)]
            continue
        else:
            continue
        found += [(view, what) for view in views if reads_column(view.sql, table, change.path)]
    return found

"""The catalog's views as ``health`` shows them: in the namespaces the run selects, each view's current version,
how old it is, and whether it is what git declares (same), not (differs: what apply would change), or a view no
policy file declares (unmanaged). Compared as plan compares (tablepolicy.compiler.diff.views), so health says ``same``
exactly when plan has nothing to do for the view.

Only the models and the comparison live here; runtime/view_health.py reads the catalog.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..diff import changes
from ..diff.views import diff_view
from ..iceberg.names import format_name
from ..loader import LoadedView, Project
from ..model.view import CurrentView, desired_view
from .refs import age_text

Status = Literal["same", "differs", "unmanaged", "unreadable"]


class ViewHealth(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    view: tuple[str, ...]
    version_id: int | None = Field(description="The view's current version (None: unreadable).")
    version_timestamp_ms: int | None = Field(description="When that version was made.")
    version_age_ms: int | None = Field(description="How old that version is at the run's moment.")
    status: Status = Field(description="same: as git declares it; differs: apply would change it; unmanaged: no "
                                       "policy file declares it; unreadable: its metadata holds no view this tool "
                                       "reads (reason).")
    differs: tuple[str, ...] = Field((), description="What differs from git: sql, columns, comment, properties, "
                                                     "'properties to unset', or 'absent in git' (state: absent).")
    reason: str | None = Field(None, description="Why the view could not be read (status unreadable).")


class ViewsHealth(BaseModel):
    """The views of the selected namespaces, by name; ``unread`` says why none were read (a catalog whose views
    tablepolicy cannot read)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    namespaces: tuple[tuple[str, ...], ...]
    views: tuple[ViewHealth, ...] = ()
    unread: str | None = None


def health_namespaces(project: Project) -> list[tuple[str, ...]]:
    """The namespaces a run selects: where its tables, views and namespace defaults are."""
    managed = getattr(project, "managed", None)  # a selection (compiler.project.SelectedProject) knows its own
    if managed is None:
        managed = ({t.name[:-1] for t in project.tables} | {v.name[:-1] for v in project.views}
                   | {ns.name for ns in project.namespaces})
    return sorted(managed)


def view_health(current: CurrentView, declared: LoadedView | None, now: datetime) -> ViewHealth:
    if declared is None:
        status: Status = "unmanaged"
        differs: tuple[str, ...] = ()
    elif declared.state == "absent":
        status, differs = "differs", ("absent in git",)
    else:
        found = diff_view(current, desired_view(declared.policy, declared.name))
        differs = tuple([*(d for c in found if isinstance(c, changes.ReplaceView) for d in c.differs),
                         *("properties to unset" for c in found if isinstance(c, changes.UnsetViewProperties))])
        status = "differs" if found else "same"
    stamp = current.timestamp_ms
    age = int(now.timestamp() * 1000) - stamp if stamp is not None else None
    return ViewHealth(view=current.state.name, version_id=current.version_id, version_timestamp_ms=stamp,
                      version_age_ms=age, status=status, differs=differs)


def views_health(project: Project, held: Iterable[CurrentView | ViewHealth], namespaces: list[tuple[str, ...]],
                 now: datetime) -> ViewsHealth:
    """``held``: each view as read, or already judged (an unreadable one)."""
    declared = {v.name: v for v in project.views}
    found = sorted((v if isinstance(v, ViewHealth) else view_health(v, declared.get(v.state.name), now)
                    for v in held), key=lambda h: h.view)
    return ViewsHealth(namespaces=tuple(namespaces), views=tuple(found))


def unreadable(name: tuple[str, ...], reason: str) -> ViewHealth:
    return ViewHealth(view=name, version_id=None, version_timestamp_ms=None, version_age_ms=None,
                      status="unreadable", reason=reason)


def version_age(view: ViewHealth) -> str:
    """How old the current version is, as ``health`` says a ref's age: ``2d old``."""
    return age_text(view.version_age_ms) if view.version_age_ms is not None else "age unknown"


def status_text(view: ViewHealth) -> str:
    if view.status == "same":
        return "same as git"
    if view.status == "differs":
        return f"differs from git: {', '.join(view.differs)}"
    if view.status == "unreadable":
        return f"unreadable: {view.reason}"
    return f"unmanaged (no policy file declares view {format_name(view.view)})"


def view_lines(views: ViewsHealth) -> list[str]:
    """``view ns.v  version 3, 2d old, same as git``, one line per view, under a heading naming the namespaces."""
    spaces = ", ".join(format_name(n) for n in views.namespaces) or "none"
    if views.unread is not None:
        return [f"views in {spaces}: not read ({views.unread})"]
    if not views.views:
        return [f"views in {spaces}: none"]
    width = max(len(format_name(v.view)) for v in views.views)
    return [f"views in {spaces}:", *(f"  {format_name(v.view):<{width}}  {status_text(v)}" if v.version_id is None
                                     else f"  {format_name(v.view):<{width}}  version {v.version_id}, "
                                     f"{version_age(v)}, {status_text(v)}" for v in views.views)]

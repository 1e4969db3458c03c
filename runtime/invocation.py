"""One command's front door, resolved once at the edge: the project, the catalog and environment it targets (and
how the environment was asked for), and the run's instant. The API builds one (or takes the one a caller built)
and hands it to every step after; nothing below resolves any of it again, so one run never reads the
environment, the catalog configuration or the clock twice and never sees two answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.paths import ProjectPath, ProjectPaths, find_project

from .target import Target, requested_environment, resolve_target

SAVED_PLAN = "the plan's environment"  # how an environment recorded in a saved plan was asked for


@dataclass(frozen=True)
class Invocation:
    project: ProjectPaths
    target: Target
    now: datetime  # the run's instant: a retention window, a deadline and a snapshot's age count from it

    @property
    def today(self) -> date:
        return self.now.date()

    @property
    def catalog(self) -> CatalogConfig:
        return self.target.catalog

    @property
    def environment(self) -> str | None:
        return self.target.environment_name


def resolve_invocation(path: ProjectPath | ProjectPaths, catalog: str | CatalogConfig | Target | None,
                       environment: str | None, *, now: datetime | None = None,
                       saved_environment: str | None = None, saved_catalog: str | None = None) -> Invocation:
    """``catalog``, ``environment``: the flags (None when not given; a CatalogConfig or Target: already
    chosen by the caller). ``saved_environment``, ``saved_catalog``: a saved plan's, used when none is asked
    for (an environment asked for brings its own catalog; apply then refuses the plan of another one)."""
    project = path if isinstance(path, ProjectPaths) else find_project(path)
    moment = now or datetime.now(UTC)
    if isinstance(catalog, Target):
        return Invocation(project, catalog, moment)
    requested = requested_environment(environment)
    if requested[0] is None and saved_environment is not None:
        requested = (saved_environment, SAVED_PLAN)
    if catalog is None and saved_catalog is not None and (requested[0] is None or requested[1] == SAVED_PLAN):
        catalog = saved_catalog
    if isinstance(catalog, CatalogConfig):  # the caller's catalog, with the environment's overlay if one is asked
        found = resolve_target(project, catalog.name, requested=requested) if requested[0] is not None else None
        chosen = Target(catalog, found.environment if found is not None else None, requested[1],
                        found.overlay_read if found is not None else None)
        return Invocation(project, chosen, moment)
    return Invocation(project, resolve_target(project, catalog, requested=requested), moment)

"""Which catalog and environment a command targets: ``--env`` (or ``TABLEPOLICY_ENV``) selects an overlay,
whose ``catalog:`` is used when neither ``--catalog`` nor ``TABLEPOLICY_CATALOG`` names one. An explicit
catalog that is not the environment's is refused, naming both: never silently one of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tablepolicy.compiler.catalog.config import EMBEDDED_NAME, CatalogConfig, CatalogNotDefinedError
from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics, Location
from tablepolicy.compiler.errors import CatalogError, PolicyError
from tablepolicy.compiler.paths import ProjectPath, environment_files, find_project

if TYPE_CHECKING:  # the overlay models and the catalog config load when a target is resolved: validate needs neither
    from tablepolicy.compiler.environment import LoadedEnvironment
    from tablepolicy.compiler.overlay import OverlayFile


def requested_environment(name: str | None) -> tuple[str | None, str]:
    """The environment asked for and how: the flag, else TABLEPOLICY_ENV (an empty value is no request). Read
    here, at the edge: the compiler is handed the name, never reads the process environment."""
    if name is not None:
        return name, "--env"
    return os.environ.get("TABLEPOLICY_ENV") or None, "TABLEPOLICY_ENV"


class CatalogConflictError(CatalogError):
    """--catalog (or TABLEPOLICY_CATALOG) names another catalog than the selected environment's."""


class EnvironmentRequiredError(CatalogError):
    """The catalog targeted is the one an environment is bound to, and that environment was not selected: its
    values would silently not apply (measured: the base 5d snapshot age reaching the prod catalog, not prod's 7d)."""


@dataclass(frozen=True)
class Target:
    catalog: CatalogConfig
    environment: LoadedEnvironment | None
    environment_flag: str  # how the environment was asked for: --env or TABLEPOLICY_ENV
    # the overlay file as read and its findings (warnings): loading the project takes them, not a second read
    overlay_read: tuple[OverlayFile, Diagnostics] | None = None

    @property
    def environment_name(self) -> str | None:
        return self.environment.name if self.environment is not None else None

    def header(self) -> str:
        """``Catalog: prod (sql, ...) · environment prod (environments/prod.yaml)``."""
        overlay = self.environment
        where = f" · environment {overlay.name} ({overlay.file})" if overlay is not None else ""
        return self.catalog.header() + where


def resolve_target(path: ProjectPath, catalog: str | None, environment: str | None = None, *,
                   requested: tuple[str | None, str] | None = None) -> Target:
    """``path``: any path of the project; ``catalog``, ``environment``: the flags (None when not given).
    ``requested``: the environment already asked for and how (requested_environment's answer), read once."""
    from tablepolicy.compiler.project import read_environment

    from .catalog.config import configured_catalogs, resolve_catalog

    name, flag = requested if requested is not None else requested_environment(environment)
    if name is None:
        resolved = resolve_catalog(catalog, path)
        refuse_without_bound_environment(path, resolved)
        return Target(resolved, None, flag)
    findings = Diagnostics()
    found = read_environment(find_project(path), name, findings, flag)
    overlay = found.loaded if found is not None else None
    if overlay is None:
        raise PolicyError(findings)
    wanted = overlay.overlay.catalog
    explicit, given_by = (catalog, "--catalog") if catalog else (os.environ.get("TABLEPOLICY_CATALOG") or None,
                                                                 "TABLEPOLICY_CATALOG")
    read = (found, findings) if found is not None else None
    if wanted is None or (explicit is not None and explicit.lower() == wanted.lower()):
        return Target(resolve_catalog(explicit, path), overlay, flag, read)
    if explicit is not None:
        raise CatalogConflictError(
            f"{given_by} {explicit} conflicts with environment '{name}', which targets catalog '{wanted}' "
            f"({overlay.catalog_origin()}); drop {given_by}, or select the environment of catalog '{explicit}'")
    catalogs, _ = configured_catalogs()
    embedded = not catalogs and wanted == EMBEDDED_NAME
    if wanted.lower() not in catalogs and not embedded:  # resolve_catalog would blame --catalog, which nobody gave
        defined = f"defined catalogs: {', '.join(catalogs)}" if catalogs else "no catalog is configured"
        raise CatalogNotDefinedError(
            f"catalog '{wanted}' of environment '{name}' ({overlay.catalog_origin()}) is not defined ({defined}); "
            f"define it in .pyiceberg.yaml or with PYICEBERG_CATALOG__{wanted.upper()}__URI, or change the "
            "environment's catalog")
    return Target(resolve_catalog(wanted, path), overlay, flag, read)


def bound_environments(path: ProjectPath, catalog: str) -> list[tuple[str, Location]]:
    """The project's overlays whose ``catalog:`` is ``catalog``, with where each says so. Read as YAML only: an
    overlay with wrong values is still bound (selecting it reports them)."""
    from tablepolicy.compiler.loader import display_path
    from tablepolicy.compiler.yamlsource import parse_yaml

    bound = []
    for env_name, file in environment_files(find_project(path)).items():
        try:
            parsed = parse_yaml(file.read_text(encoding="utf-8"), display_path(file))
        except (OSError, UnicodeDecodeError):
            continue  # --env with it reports what is wrong; nobody can tell which catalog it meant
        if isinstance(parsed, Diagnostic) or not isinstance(parsed.data, dict):
            continue
        wanted = parsed.data.get("catalog")
        if isinstance(wanted, str) and wanted.lower() == catalog.lower():
            bound.append((env_name, parsed.source.value(("catalog",))))
    return bound


def refuse_without_bound_environment(path: ProjectPath, catalog: CatalogConfig) -> None:
    """A catalog some environment is bound to is used only with that environment: without it the run would
    plan or change the catalog with the policies' bare values, and nobody would see it."""
    bound = bound_environments(path, catalog.name)
    if not bound:
        return
    where = ", ".join(f"'{name}' ({location})" for name, location in bound)
    choice = " or ".join(f"--env {name}" for name, _ in bound)
    raise EnvironmentRequiredError(
        f"catalog '{catalog.name}' is the catalog of environment {where}, and no environment is selected: the run "
        f"would use the policies' values without the environment's; pass {choice} (or set TABLEPOLICY_ENV), or "
        "target another catalog")

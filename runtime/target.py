"""Which catalog and environment a command targets: ``--env`` (or ``TABLEPOLICY_ENV``) selects an overlay,
whose ``catalog:`` is used when neither ``--catalog`` nor ``TABLEPOLICY_CATALOG`` names one. An explicit
catalog that is not the environment's is refused, naming both: never silently one of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from compiler.catalog.config import EMBEDDED_NAME, CatalogConfig, CatalogNotDefinedError
from compiler.diagnostics import Diagnostics
from compiler.environment import LoadedEnvironment
from compiler.errors import CatalogError, PolicyError
from compiler.project import find_project, read_environment, requested_environment
from runtime.catalog.config import configured_catalogs, resolve_catalog


class CatalogConflictError(CatalogError):
    """--catalog (or TABLEPOLICY_CATALOG) names another catalog than the selected environment's."""


@dataclass(frozen=True)
class Target:
    catalog: CatalogConfig
    environment: LoadedEnvironment | None
    environment_flag: str  # how the environment was asked for: --env or TABLEPOLICY_ENV

    @property
    def environment_name(self) -> str | None:
        return self.environment.name if self.environment is not None else None

    def header(self) -> str:
        """``Catalog: prod (sql, ...) · environment prod (environments/prod.yaml)``."""
        overlay = self.environment
        where = f" · environment {overlay.name} ({overlay.file})" if overlay is not None else ""
        return self.catalog.header() + where


def resolve_target(path: Path, catalog: str | None, environment: str | None) -> Target:
    """``path``: any path of the project; ``catalog``, ``environment``: the flags (None when not given)."""
    name, flag = requested_environment(environment)
    if name is None:
        return Target(resolve_catalog(catalog, path), None, flag)
    findings = Diagnostics()
    found = read_environment(find_project(path), name, findings, flag)
    overlay = found.loaded if found is not None else None
    if overlay is None:
        raise PolicyError(findings)
    wanted = overlay.overlay.catalog
    explicit, given_by = (catalog, "--catalog") if catalog else (os.environ.get("TABLEPOLICY_CATALOG") or None,
                                                                 "TABLEPOLICY_CATALOG")
    if wanted is None or (explicit is not None and explicit.lower() == wanted.lower()):
        return Target(resolve_catalog(explicit, path), overlay, flag)
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
    return Target(resolve_catalog(wanted, path), overlay, flag)

"""Reading the catalog configuration: ``.pyiceberg.yaml`` and ``PYICEBERG_*`` (through pyiceberg's own Config)
and ``TABLEPOLICY_CATALOG``; compiler/catalog/config.py holds the rules it hands them to."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from tablepolicy.compiler.catalog.config import (
    AWS_SECRET_VARIABLES,
    CatalogConfig,
    CatalogNotDefinedError,
    choose_catalog,
    redact_uri,
)
from tablepolicy.compiler.errors import CatalogError
from tablepolicy.compiler.paths import ProjectPath

from ..redaction import register

SHAPE = ("it must be a YAML mapping whose 'catalog' maps each catalog name to its properties (uri, warehouse, "
         "type), e.g. 'catalog: {prod: {uri: ..., warehouse: ...}}'")


def config_file() -> Path | None:
    """The ``.pyiceberg.yaml`` pyiceberg reads: the first in PYICEBERG_HOME, the home folder, the working folder."""
    for folder in (os.environ.get("PYICEBERG_HOME"), os.path.expanduser("~"), os.getcwd()):
        if folder and (Path(folder) / ".pyiceberg.yaml").is_file():
            return Path(folder) / ".pyiceberg.yaml"
    return None


def configuration_given() -> bool:
    """Whether pyiceberg has any configuration to read (a file or a variable): none cannot be broken."""
    return config_file() is not None or any(name.startswith("PYICEBERG_") for name in os.environ)


def configured_catalogs() -> tuple[dict[str, dict[str, str]], str]:
    """Every catalog pyiceberg's configuration defines, by name, and pyiceberg's default name."""
    from pyiceberg.utils.config import Config

    try:
        config = Config()
        catalogs: Any = config.config.get("catalog", {})
        default = config.get_default_catalog_name()
        if not isinstance(catalogs, dict) or not all(isinstance(v, dict) for v in catalogs.values()):
            raise ValueError(SHAPE)
    except Exception as exc:
        file = config_file()
        where = str(file) if file is not None else "the PYICEBERG_* environment variables"
        problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
        if problem and mark is not None and file is not None:
            where, first = f"{file}:{mark.line + 1}:{mark.column + 1}", str(problem)
        else:
            first = SHAPE
        raise CatalogError(f"cannot read the catalog configuration in {where}: {redact_uri(first)}; fix it, or "
                           "remove it to use the embedded catalog") from None
    return {str(name): {k: str(v) for k, v in props.items()} for name, props in sorted(catalogs.items())}, default


def resolve_catalog(name: str | None, policies: ProjectPath, given_by: str | None = None) -> CatalogConfig:
    """The catalog a command targets; ``policies`` is any path of the project (locates the embedded catalog).
    ``given_by``: where ``name`` was written, for messages (default: --catalog)."""
    catalogs, default = configured_catalogs()
    flag = given_by or ("--catalog" if name else "TABLEPOLICY_CATALOG")
    requested = name or os.environ.get("TABLEPOLICY_CATALOG") or None
    try:
        config = choose_catalog(requested, flag, catalogs, default, policies)
    except CatalogNotDefinedError as exc:
        if requested is None or not catalogs:
            raise
        raise CatalogNotDefinedError(  # the rules name what is defined; the user needs what to do about it too
            f"{exc}; name one of them with {flag}, or define '{requested}' in .pyiceberg.yaml or with "
            f"PYICEBERG_CATALOG__{requested.upper()}__URI") from None
    aws = tuple(os.environ[v] for v in AWS_SECRET_VARIABLES if os.environ.get(v))
    return register(replace(config, outside_secrets=aws) if aws else config)  # its secrets masked in every error

"""Which catalog to talk to, in pyiceberg's conventions, shared by the planner and Spark.

``.pyiceberg.yaml`` and ``PYICEBERG_CATALOG__<NAME>__URI`` / ``__WAREHOUSE`` / ``__TYPE`` configure a
catalog by name. With nothing configured for the name, an embedded SQLite catalog is used:
``.lake/catalog.db`` and ``.lake/warehouse/`` beside ``policies/``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyiceberg.utils.config import Config

EMBEDDED_NAME = "lake"
SECRET_KEYS = re.compile(r"(password|secret|token|credential|key)", re.IGNORECASE)


@dataclass(frozen=True)
class CatalogConfig:
    name: str
    properties: dict[str, str] = field(repr=False)
    embedded: bool = False

    @property
    def kind(self) -> str:
        declared = self.properties.get("type")
        if declared:
            return declared.lower()
        uri = self.properties.get("uri", "")
        if uri.startswith(("http://", "https://")):
            return "rest"
        if uri.startswith("thrift://"):
            return "hive"
        return "sql"

    def redacted(self) -> dict[str, str]:
        """Properties safe to print: secrets masked, passwords in URIs masked."""
        return {k: ("***" if SECRET_KEYS.search(k) else redact_uri(v)) for k, v in self.properties.items()}

    def describe(self) -> str:
        where = self.redacted().get("uri", "?")
        return f"catalog '{self.name}' ({self.kind}, {where})"


def redact_uri(value: str) -> str:
    """``postgresql://u:secret@h/db`` -> ``postgresql://u:***@h/db``."""
    return re.sub(r"(://[^:/@]+:)[^@]+@", r"\1***@", value)


def default_catalog_name() -> str:
    configured = os.environ.get("TABLEPOLICY_CATALOG")
    if configured:
        return configured
    config = Config()
    name = config.get_default_catalog_name()
    return name if config.get_catalog_config(name) else EMBEDDED_NAME


def resolve_catalog(name: str | None, policies: Path) -> CatalogConfig:
    """The named catalog's configuration, or the embedded catalog beside ``policies``."""
    name = name or default_catalog_name()
    found: Any = Config().get_catalog_config(name)
    if found:
        return CatalogConfig(name, {k: str(v) for k, v in found.items()})
    root = policies_dir(policies).resolve().parent / ".lake"
    return CatalogConfig(
        name,
        {
            "type": "sql",
            "uri": f"sqlite:///{root / 'catalog.db'}",
            "warehouse": (root / "warehouse").as_uri(),
        },
        embedded=True,
    )


def policies_dir(path: Path) -> Path:
    """The policies directory of a path naming it or one file in it (which need not exist yet)."""
    return path.parent if path.is_file() or path.suffix in (".yaml", ".yml", ".json") else path


def embedded_root(config: CatalogConfig) -> Path | None:
    """The ``.lake`` directory of an embedded catalog (created on first use)."""
    if not config.embedded:
        return None
    return Path(config.properties["uri"].removeprefix("sqlite:///")).parent

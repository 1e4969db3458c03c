"""The redaction every error message of a run goes through: the masking of each catalog this process has
used (its secret properties, passwords in its URIs, the AWS credential variables it was resolved with) and of
credentials in any URI.

Spark and Py4J messages carry whatever the JVM saw: a location with keys in it, a JDBC URL, a path. The
catalogs register here when they are resolved for a command or a Spark session starts for them, and
``tablepolicy.runtime.executor.ExecutionError`` masks its message when it is built: every step's error (apply's, a
maintenance report's and journal's, an erasure proof's) is masked before anything stores or prints it.
Masking the secrets of a catalog not in use as well is harmless: a secret is never what a message is for.
"""

from __future__ import annotations

import threading

from tablepolicy.compiler.catalog.config import CatalogConfig, redact_uri

_LOCK = threading.Lock()
_CATALOGS: dict[tuple[object, ...], CatalogConfig] = {}


def register(config: CatalogConfig) -> CatalogConfig:
    """Mask ``config``'s secrets in every error message this process builds from now on; returns it."""
    key = (config.name, tuple(sorted(config.properties.items())), config.outside_secrets)
    with _LOCK:
        _CATALOGS.setdefault(key, config)
    return config


def redact(text: str) -> str:
    """``text`` with URI credentials and the secrets of every registered catalog masked."""
    text = redact_uri(text)
    with _LOCK:
        configs = list(_CATALOGS.values())
    for config in configs:
        text = config.redact(text)
    return text

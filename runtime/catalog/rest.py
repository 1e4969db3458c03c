"""pyiceberg's REST catalog with every HTTP request bounded in time: pyiceberg 0.12 sends its requests (the config,
the OAuth2 token, every catalog call) without a timeout, so a server that accepts connections and never answers
would hold ``plan`` forever. The bounds are the ones Spark's RESTCatalog gets (runtime/spark/catalog_conf.py
REST_DEFAULTS), from the same settings: ``rest.client.connection-timeout-ms`` and ``rest.client.socket-timeout-ms``.

open_catalog (reader.py) opens a REST definition with this class unless the definition names its own
``py-catalog-impl``.
"""

from __future__ import annotations

import threading
from typing import Any

import pyiceberg.catalog.rest as rest_module
from pyiceberg.catalog.rest import RestCatalog
from requests import Session

CONNECT_MS, READ_MS = "5000", "30000"  # as REST_DEFAULTS
_SWAP = threading.Lock()  # the session class is swapped in pyiceberg's module while one is created


def timeouts(properties: dict[str, str]) -> tuple[float, float]:
    """(connect, read) seconds from the definition's ``rest.client.*`` settings, else the defaults."""
    connect = float(properties.get("rest.client.connection-timeout-ms", CONNECT_MS)) / 1000
    read = float(properties.get("rest.client.socket-timeout-ms", READ_MS)) / 1000
    return connect, read


def bounded_session(bound: tuple[float, float]) -> type[Session]:
    class BoundedSession(Session):
        def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("timeout") is None and len(args) < 7:  # timeout is request()'s 8th parameter after url
                kwargs["timeout"] = bound
            return super().request(method, url, *args, **kwargs)

    return BoundedSession


class BoundedRestCatalog(RestCatalog):
    """RestCatalog whose sessions (the config fetch's, the token's, the catalog's) bound every request."""

    def _create_session(self) -> Session:
        with _SWAP:
            original = getattr(rest_module, "Session")  # noqa: B009 - pyiceberg imports it without re-exporting
            setattr(rest_module, "Session", bounded_session(timeouts(dict(self.properties))))  # noqa: B010
            try:
                return super()._create_session()
            finally:
                setattr(rest_module, "Session", original)  # noqa: B010

"""pyiceberg's REST catalog with every HTTP request bounded in time: pyiceberg 0.12 sends its requests (the config,
the OAuth2 token, every catalog call) without a timeout, so a server that accepts connections and never answers
would hold ``plan`` forever; and it sends each once, so one 503 from a busy server ends the run. The bounds and the
retries are the ones Spark's RESTCatalog gets (runtime/spark/catalog_conf.py REST_DEFAULTS), from the same settings:
``rest.client.connection-timeout-ms`` and ``rest.client.socket-timeout-ms`` bound each request (a timeout is not
retried, as Iceberg Java's ExponentialHttpRequestRetryStrategy does not retry one), ``rest.client.max-retries``
counts the retries of an idempotent request (GET, HEAD, PUT, DELETE) answered 408, 429, 500, 502, 503 or 504,
after 0, 2, 4 ... seconds (at most 64, a Retry-After header's wait likewise). A POST (a commit, a create, a token)
is never sent again: a commit answered 5xx may have been applied.

open_catalog (reader.py) opens a REST definition with this class unless the definition names its own
``py-catalog-impl``.
"""

from __future__ import annotations

import threading
from typing import Any

import pyiceberg.catalog.rest as rest_module
from pyiceberg.catalog.rest import RestCatalog
from requests import Session
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

CONNECT_MS, READ_MS, MAX_RETRIES = "5000", "30000", "3"  # as REST_DEFAULTS
RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})  # Iceberg Java's, for idempotent requests
BACKOFF_MAX_S = 64  # Iceberg Java's cap on one wait
_SWAP = threading.Lock()  # the session class is swapped in pyiceberg's module while one is created


def timeouts(properties: dict[str, str]) -> tuple[float, float]:
    """(connect, read) seconds from the definition's ``rest.client.*`` settings, else the defaults."""
    connect = float(properties.get("rest.client.connection-timeout-ms", CONNECT_MS)) / 1000
    read = float(properties.get("rest.client.socket-timeout-ms", READ_MS)) / 1000
    return connect, read


def retries(properties: dict[str, str]) -> Retry:
    """The retries of an idempotent request answered with a status a busy server gives, as Iceberg Java's client."""
    count = int(properties.get("rest.client.max-retries", MAX_RETRIES))
    # never sent again: a refused or timed-out connection (0: requests names it as ever), a timed-out read (False:
    # raised as itself, not as "max retries exceeded")
    return Retry(total=count, connect=0, read=False, redirect=0, other=0, status=count,
                 allowed_methods=Retry.DEFAULT_ALLOWED_METHODS, status_forcelist=RETRIED_STATUSES, backoff_factor=1,
                 backoff_max=BACKOFF_MAX_S, retry_after_max=BACKOFF_MAX_S, raise_on_status=False)


def bounded_session(bound: tuple[float, float], retry: Retry) -> type[Session]:
    class BoundedSession(Session):
        def __init__(self) -> None:
            super().__init__()
            for scheme in ("http://", "https://"):  # after the retries the last answer is pyiceberg's to explain
                self.mount(scheme, HTTPAdapter(max_retries=retry))

        def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("timeout") is None and len(args) < 7:  # timeout is request()'s 8th parameter after url
                kwargs["timeout"] = bound
            return super().request(method, url, *args, **kwargs)

    return BoundedSession


class BoundedRestCatalog(RestCatalog):
    """RestCatalog whose sessions (the config fetch's, the token's, the catalog's) bound every request."""

    def _create_session(self) -> Session:
        props = dict(self.properties)
        with _SWAP:
            original = getattr(rest_module, "Session")  # noqa: B009 - pyiceberg imports it without re-exporting
            setattr(rest_module, "Session", bounded_session(timeouts(props), retries(props)))  # noqa: B010
            try:
                return super()._create_session()
            finally:
                setattr(rest_module, "Session", original)  # noqa: B010

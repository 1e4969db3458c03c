"""A REST catalog's errors in the user's terms, naming the setting to fix (no server: the exceptions pyiceberg raises
for the answers SeaweedFS gives, as tests/integration/test_rest_errors.py sees them on the server)."""

from __future__ import annotations

import pytest
from pyiceberg.exceptions import NoSuchNamespaceError, OAuthError, RESTError, UnauthorizedError

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.runtime.catalog.reader import explain_catalog_error

REST = CatalogConfig("prod", {"type": "rest", "uri": "http://rest:8181", "credential": "client:s3cret-value",
                              "warehouse": "warehouse"})
CREDENTIAL = ("the REST server refused the catalog's credentials", "check 'credential' of catalog 'prod' "
              "(.pyiceberg.yaml, or PYICEBERG_CATALOG__PROD__CREDENTIAL)")

CASES = [
    ("wrong-credential", OAuthError("invalid_client: Invalid client credentials"), CREDENTIAL),
    ("no-credential", RESTError("NotAuthorizedException: Bearer token is invalid or expired"), CREDENTIAL),
    ("unauthorized", UnauthorizedError("401: unauthorized"), CREDENTIAL),
    ("forbidden", RESTError("ForbiddenException: 403 not allowed"), CREDENTIAL),
    ("unknown-warehouse", NoSuchNamespaceError("NoSuchNamespaceException: table bucket nosuch not found: select one "
                                               "with warehouse=s3://<table-bucket>/"),
     ("table bucket nosuch not found", "set 'warehouse' of catalog 'prod' (.pyiceberg.yaml, or "
      "PYICEBERG_CATALOG__PROD__WAREHOUSE) to a warehouse the REST server serves")),
]


@pytest.mark.parametrize(("error", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_rest_error_names_the_setting(error: Exception, said: tuple[str, str]) -> None:
    text = explain_catalog_error(error, REST)
    assert all(part in text for part in said), text
    assert "s3cret-value" not in text



def test_a_rest_server_that_never_answers_ends_the_open_with_an_error() -> None:
    """A socket that accepts connections (its backlog) and never answers: pyiceberg alone would wait forever on the
    config request; through runtime/catalog/rest.py every request is bounded by the definition's rest.client.*
    settings (Spark's names), and the open fails saying the catalog cannot be reached."""
    import socket

    from tablepolicy.compiler.errors import CatalogError
    from tablepolicy.runtime.catalog.reader import open_catalog

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
        config = CatalogConfig("prod", {"type": "rest", "uri": uri, "token": "t0ken-value",
                                        "rest.client.connection-timeout-ms": "500",
                                        "rest.client.socket-timeout-ms": "300"})
        with pytest.raises(CatalogError) as failed:
            open_catalog(config)
    assert f"cannot open catalog 'prod' (rest, {uri})" in str(failed.value), failed.value
    assert "cannot be reached" in str(failed.value) and "timed out" in str(failed.value).lower(), failed.value

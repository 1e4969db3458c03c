"""A REST catalog's errors in the user's terms, naming the setting to fix (no server: the exceptions pyiceberg raises
for the answers SeaweedFS gives, as tests/integration/test_rest_errors.py sees them on the server)."""

from __future__ import annotations

import pytest
from pyiceberg.exceptions import (
    NoSuchNamespaceError,
    OAuthError,
    RESTError,
    ServerError,
    ServiceUnavailableError,
    UnauthorizedError,
)
from requests.exceptions import ConnectTimeout, ReadTimeout

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
    # a server that accepts and never answers, or answers 5xx after the retries (runtime/catalog/rest.py)
    ("hung", ReadTimeout("HTTPConnectionPool(host='rest', port=8181): Read timed out. (read timeout=30.0)"),
     ("the REST server did not answer within rest.client.socket-timeout-ms (", "raise 'rest.client.socket-timeout-ms'"
      " of catalog 'prod'")),
    ("connect-timeout", ConnectTimeout("Connection to rest timed out. (connect timeout=5.0)"),
     ("did not answer within rest.client.connection-timeout-ms", "'uri' of catalog 'prod'")),
    ("503", ServiceUnavailableError("ServiceUnavailableException: Slow down"),
     ("the REST server answered with an error (ServiceUnavailableException: Slow down), still after the retries of "
      "'rest.client.max-retries' of catalog 'prod'", "try again once it recovers")),
    ("500", ServerError("ServerError: boom"), ("answered with an error (ServerError: boom)",)),
]


@pytest.mark.parametrize(("error", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_rest_error_names_the_setting(error: Exception, said: tuple[str, str]) -> None:
    text = explain_catalog_error(error, REST)
    assert all(part in text for part in said), text
    assert "s3cret-value" not in text



def test_a_rest_server_that_never_answers_ends_the_open_with_an_error() -> None:
    """A socket that accepts connections (its backlog) and never answers: pyiceberg alone would wait forever on the
    config request; through runtime/catalog/rest.py every request is bounded by the definition's rest.client.*
    settings (Spark's names), and the open fails naming the setting that bounded the wait."""
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
    assert "the REST server did not answer within rest.client.socket-timeout-ms" in str(failed.value), failed.value
    assert "timed out" in str(failed.value).lower(), failed.value


def test_a_rest_session_retries_an_idempotent_request_answered_503_and_never_a_post() -> None:
    """pyiceberg's requests through runtime/catalog/rest.py: a GET answered 503 is sent again (with backoff, at most
    rest.client.max-retries times); a POST (a commit, whose outcome a 5xx leaves unknown) is sent once."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tablepolicy.runtime.catalog import rest

    seen: list[str] = []

    class Busy(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self) -> None:
            seen.append(self.command)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status = 503 if self.command == "POST" or seen.count("GET") <= 2 else 200
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    props = {"rest.client.max-retries": "2"}
    retry = rest.retries(props)
    retry.backoff_factor = 0  # no waits in the unit tier; the waits are urllib3's own backoff
    session = rest.bounded_session(rest.timeouts(props), retry)()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/config"
    try:
        assert session.get(url).status_code == 200
        assert session.post(url, data=b"{}").status_code == 503
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["GET", "GET", "GET", "POST"]


POST = ("RESTException", "Error occurred while processing POST request")
GET = ("RESTException", "Error occurred while processing GET request")
TIMEOUT = ("SocketTimeoutException", "Read timed out")
OUTCOME_CASES = [  # (id, the Java exception chain (class, message), outermost first, what the step's error adds)
    ("commit-answered-5xx", [("CommitStateUnknownException", "Service failed: 503"),
                             ("ServiceFailureException", "Service failed: 503")],
     " (the catalog server answered the commit with an error: the commit's outcome is unknown; run plan again once "
     "the server answers)"),
    ("commit-never-answered", [POST, TIMEOUT],
     " (the catalog server did not answer within rest.client.socket-timeout-ms: the commit's outcome is unknown; "
     "run plan again once the server answers)"),
    ("read-never-answered", [GET, TIMEOUT],
     " (the catalog server did not answer within rest.client.socket-timeout-ms)"),
    ("s3-read-timed-out", [("SdkClientException", "Unable to execute HTTP request"), TIMEOUT], ""),  # the store's
    ("conflict", [("CommitFailedException", "Requirement failed")], ""),
]


@pytest.mark.parametrize(("chain", "said"), [c[1:] for c in OUTCOME_CASES], ids=[c[0] for c in OUTCOME_CASES])
def test_a_step_the_rest_server_left_unanswered_says_its_outcome_is_unknown(chain: list[tuple[str, str]],
                                                                             said: str) -> None:
    from tablepolicy.runtime.executor import unknown_outcome

    assert unknown_outcome(chain) == said

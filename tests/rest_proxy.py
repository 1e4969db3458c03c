"""A fault-injecting HTTP proxy in front of the REST server (tests/seaweed.py) for the REST fault tests: the test
points the catalog's ``uri`` and ``oauth2-server-uri`` at it and switches what it does between requests.

- pass: every request goes to the server and its answer comes back;
- ``hang(match, forward=..., then_all=...)``: a matching request is read and never answered (the connection stays
  open until the proxy is released or closed): not sent on (a server that accepts and never answers), or sent on
  and its answer dropped (a commit whose outcome the client cannot know); with ``then_all`` every request after it
  hangs too (a server that hangs mid-run);
- ``fail(status, count, match)``: the next ``count`` matching requests (every one when None) are answered
  ``status`` without reaching the server;
- tokens: the proxy hands the client tokens of its own (opaque, so a client cannot read a lifetime out of a JWT's
  ``exp``), each standing for the server's, with the ``expires_in`` the test chooses; one used ``token_uses``
  times, or older than ``token_life`` seconds, is refused 401 as SeaweedFS refuses an expired token.

Every request is counted by ``(method, path)``; ``requests`` lists them in order.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlparse

Match = Callable[[str, str], bool]  # (method, path) -> does the fault apply
TOKEN_PATH = "/v1/oauth/tokens"
EXPIRED = json.dumps({"error": {"message": "Bearer token is invalid or expired", "type": "NotAuthorizedException",
                                "code": 401}}).encode()  # SeaweedFS 4.48's answer to an expired token, word for word
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "accept-encoding",
        "proxy-connection", "te", "trailer", "upgrade"}


def every(_method: str, _path: str) -> bool:
    return True


def reads(method: str, _path: str) -> bool:
    return method in ("GET", "HEAD")


def commits(method: str, path: str) -> bool:
    """A table commit (POST .../namespaces/NS/tables/TABLE), not a create (POST .../tables) or a token."""
    return method == "POST" and re.search(r"/namespaces/[^/]+/tables/[^/]+$", path) is not None


@dataclass
class _Token:
    real: str
    issued: float
    uses: int = 0


@dataclass
class RestProxy:
    upstream: str  # http://127.0.0.1:PORT of the REST server
    port: int = 0
    requests: list[tuple[str, str]] = field(default_factory=list)
    refused: list[tuple[str, str, int]] = field(default_factory=list)  # (method, path, status) answered by the proxy
    tokens_issued: int = 0
    exchanges: int = 0  # token requests exchanging a token (Iceberg Java's refresh)
    expires_in: int | None = None  # the lifetime told to the client (None: the server's)
    token_uses: int | None = None  # a token is refused after this many requests carrying it
    token_life: float | None = None  # ... or once it is older than this many seconds
    _hang: tuple[Match, bool, bool] | None = None
    _fail: tuple[int, int | None, Match] | None = None
    _tokens: dict[str, _Token] = field(default_factory=dict)
    _names: Iterator[int] = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _release: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def properties(self, props: dict[str, str]) -> dict[str, str]:
        """A catalog definition of the server, sent through the proxy."""
        return {**props, "uri": self.uri, "oauth2-server-uri": f"{self.uri}{TOKEN_PATH}"}

    def passing(self) -> None:
        with self._lock:
            self._hang, self._fail = None, None
            self._release.set()  # requests held by a hang end (unanswered)
            self._release = threading.Event()

    def hang(self, match: Match = every, *, forward: bool = False, then_all: bool = False) -> None:
        """Hold the requests ``match`` picks; ``then_all``: from the first of them on, every request (the server
        hangs mid-run)."""
        with self._lock:
            self._hang = (match, forward, then_all)

    def fail(self, status: int, count: int | None = None, match: Match = every) -> None:
        with self._lock:
            self._fail = (status, count, match)

    def count(self, match: Match) -> int:
        with self._lock:
            return sum(1 for method, path in self.requests if match(method, path))

    # the server side

    def start(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the clients' connection pools expect

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _any(self) -> None:
                proxy._serve(self)

            do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.passing()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        method, path = handler.command, handler.path
        body = _read_body(handler)
        with self._lock:
            self.requests.append((method, path))
            hang, release = self._hang, self._release
            if hang is not None and hang[2] and hang[0](method, path):
                self._hang = (every, False, False)  # everything after this request hangs, before the server
            fail = self._fail
            if fail is not None and fail[2](method, path):
                status, left, match = fail
                self._fail = None if left == 1 else (status, None if left is None else left - 1, match)
            else:
                fail = None
        if hang is not None and hang[0](method, path):
            if hang[1]:
                self._forward(method, path, handler, body)
            release.wait()
            handler.close_connection = True  # never answered
            return
        if fail is not None:
            self._answer(handler, method, path, fail[0], json.dumps(
                {"error": {"message": "injected by the test's proxy", "type": "ServiceUnavailableException",
                           "code": fail[0]}}).encode())
            return
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP}
        auth = headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            real = self._real_token(auth.removeprefix("Bearer "))
            if real is not None:
                headers["Authorization"] = f"Bearer {real}"
            elif path.endswith(TOKEN_PATH):  # the token endpoint authenticates by the form's client credential
                del headers["Authorization"]
            else:
                self._answer(handler, method, path, 401, EXPIRED)
                return
        if path.endswith(TOKEN_PATH):  # a token exchange names the token it exchanges in the form
            body = self._real_subject(body)
        status, answer_headers, answer = self._forward(method, path, handler, body, headers)
        if path.endswith(TOKEN_PATH) and status == 200:
            answer = self._issue(answer)
        handler.send_response(status)
        for key, value in answer_headers:
            if key.lower() not in _HOP:
                handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(answer)))
        handler.end_headers()
        handler.wfile.write(answer)

    def _forward(self, method: str, path: str, handler: BaseHTTPRequestHandler, body: bytes,
                 headers: dict[str, str] | None = None) -> tuple[int, list[tuple[str, str]], bytes]:
        if headers is None:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP}
            auth = headers.get("Authorization", "")
            if auth.startswith("Bearer ") and (real := self._real_token(auth.removeprefix("Bearer "))):
                headers["Authorization"] = f"Bearer {real}"
        target = urlparse(self.upstream)
        connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
        try:
            connection.request(method, path, body=body or None, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    def _answer(self, handler: BaseHTTPRequestHandler, method: str, path: str, status: int, body: bytes) -> None:
        with self._lock:
            self.refused.append((method, path, status))
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _issue(self, answer: bytes) -> bytes:
        """The server's token answer with the proxy's own token in it (and the chosen lifetime)."""
        data = json.loads(answer)
        with self._lock:
            name = f"tp-proxy-token-{next(self._names)}"
            self._tokens[name] = _Token(data["access_token"], time.monotonic())
            self.tokens_issued += 1
            data["access_token"] = name
            if self.expires_in is not None:
                data["expires_in"] = self.expires_in
        return json.dumps(data).encode()

    def _real_subject(self, body: bytes) -> bytes:
        form = parse_qsl(body.decode(), keep_blank_values=True)
        with self._lock:
            known = {k: t.real for k, t in self._tokens.items()}
            self.exchanges += any(k == "subject_token" for k, _ in form)
        return urlencode([(k, known.get(v, v) if k in ("subject_token", "actor_token") else v)
                          for k, v in form]).encode()

    def _real_token(self, name: str) -> str | None:
        """The server's token behind one of the proxy's, None once it has expired (one not the proxy's passes)."""
        with self._lock:
            token = self._tokens.get(name)
            if token is None:
                return name
            token.uses += 1
            if self.token_uses is not None and token.uses > self.token_uses:
                return None
            if self.token_life is not None and time.monotonic() - token.issued > self.token_life:
                return None
            return token.real


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


@contextlib.contextmanager
def rest_proxy(upstream: str) -> Iterator[RestProxy]:
    proxy = RestProxy(upstream)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()

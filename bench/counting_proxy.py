"""An HTTP proxy in front of an S3 server that counts what the store serves: the body bytes of every GET response
(objects and listings), read by a benchmark in its own process or, from another process, at GET COUNTER.

Each client connection gets its own upstream connection; a response is read whole (the objects of a benchmark are
small); a chunked request body is decoded and sent with a Content-Length. Signatures name the proxy's host, which
moto does not check.
"""

from __future__ import annotations

import http.client
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COUNTER = "/__bench_get_bytes__"


class CountingProxy(ThreadingHTTPServer):
    """Forwards HTTP to the S3 server; sums the body bytes of GET responses (objects and listings)."""

    daemon_threads = True
    request_queue_size = 128  # the default 5 would refuse connections when a reader opens many at once

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.upstream, self.served, self.gets, self.lock = upstream.removeprefix("http://"), 0, 0, threading.Lock()
        self.endpoint = f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: CountingProxy

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes: without this, Nagle's algorithm and the client's delayed ack held
        # each response ~27 ms (a 200-file read: 38 ms a file through the proxy against 10 ms direct)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # one upstream connection per client connection, kept alive as the client keeps its own: a new one per
        # request would leave tens of thousands of sockets in TIME_WAIT over a 5,000-file survey
        self.upstream = http.client.HTTPConnection(self.server.upstream, timeout=120)

    def finish(self) -> None:
        self.upstream.close()
        super().finish()

    def log_message(self, *_: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == COUNTER:
            self._answer(200, "OK", [], str(self.server.served).encode())
        else:
            self.forward()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b""
        while size := int(self.rfile.readline().split(b";")[0], 16):
            body += self.rfile.read(size + 2)[:-2]
        while self.rfile.readline().strip():  # trailers
            pass
        return body

    def _answer(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response_only(status, reason)
        for name, value in headers:
            self.send_header(name, value)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def forward(self) -> None:
        body = self._body()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("transfer-encoding", "connection")}
        for attempt in range(2):  # a kept connection the server closed meanwhile: once more on a new one
            try:
                self.upstream.request(self.command, self.path, headers=headers,
                                      body=body if body or self.command in ("PUT", "POST") else None)
                response = self.upstream.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.upstream.close()
                if attempt:
                    raise
        if self.command == "GET":
            with self.server.lock:
                self.server.served, self.server.gets = self.server.served + len(data), self.server.gets + 1
        dropped = ("transfer-encoding", "connection", "keep-alive") + (("content-length",) if self.command != "HEAD"
                                                                         else ())
        self._answer(response.status, response.reason,
                     [(k, v) for k, v in response.getheaders() if k.lower() not in dropped], data)

    do_PUT = do_POST = do_HEAD = do_DELETE = forward

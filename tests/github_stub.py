"""A stand-in for the part of GitHub's REST API the policy workflows call, on 127.0.0.1; it records
every request so tests can assert what reached "GitHub" (one comment created, then updated)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    authorization: str


@dataclass
class GitHubState:
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # pr -> comments
    merges: dict[str, dict[str, Any]] = field(default_factory=dict)  # merge sha -> pull request
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # head sha -> successful plan runs
    artifacts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # run id -> its artifacts (name, expired)
    requests: list[Recorded] = field(default_factory=list)
    next_id: int = 1000

    def writes(self) -> list[Recorded]:
        return [r for r in self.requests if r.method in ("POST", "PATCH")]


def _handler(state: GitHubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _answer(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            url = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            state.requests.append(Recorded(self.command, url.path, body, self.headers.get("Authorization", "")))
            path, query = url.path, parse_qs(url.query)
            if m := re.fullmatch(r"/repos/[^/]+/[^/]+/issues/(\d+)/comments", path):
                comments = state.comments.setdefault(int(m.group(1)), [])
                if self.command == "GET":
                    page, size = int(query.get("page", ["1"])[0]), int(query.get("per_page", ["30"])[0])
                    return self._answer(200, comments[(page - 1) * size: page * size])
                state.next_id += 1
                comments.append({"id": state.next_id, "body": body["body"]})
                return self._answer(201, comments[-1])
            if m := re.fullmatch(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)", path):
                for comment in (c for cs in state.comments.values() for c in cs):
                    if comment["id"] == int(m.group(1)):
                        comment["body"] = body["body"]
                        return self._answer(200, comment)
                return self._answer(404, {"message": "Not Found"})
            if m := re.fullmatch(r"/repos/[^/]+/[^/]+/commits/([0-9a-f]+)/pulls", path):
                pull = state.merges.get(m.group(1))
                return self._answer(200, [pull] if pull else [])
            if re.fullmatch(r"/repos/[^/]+/[^/]+/actions/workflows/[^/]+/runs", path):
                runs = state.runs.get(query.get("head_sha", [""])[0], [])
                return self._answer(200, {"total_count": len(runs), "workflow_runs": runs})
            if m := re.fullmatch(r"/repos/[^/]+/[^/]+/actions/runs/(\d+)/artifacts", path):
                wanted = query.get("name", [None])[0]
                found = [a for a in state.artifacts.get(int(m.group(1)), []) if wanted in (None, a["name"])]
                return self._answer(200, {"total_count": len(found), "artifacts": found})
            return self._answer(404, {"message": "Not Found"})

        do_GET = do_POST = do_PATCH = _handle

    return Handler


@contextmanager
def github_stub() -> Iterator[tuple[str, GitHubState]]:
    """(API base URL on 127.0.0.1, the recorded state); the server stops on exit."""
    state = GitHubState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

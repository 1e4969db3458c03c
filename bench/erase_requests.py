"""Loading an erasure requests file of 10,000 requests, per format, against the floor of bare parsing.

The floors are the standard library's C parsers on the same text with no checks and no positions:
``csv.reader`` for CSV, ``json.loads`` per line for JSON lines, and ``yaml.load(CSafeLoader)`` for YAML.
Values hold commas, quotes and unicode, as real exports do. Target: CSV and JSON lines well under a second
(a few times their floor); YAML of one request per line (as here) is read without composing it, under its floor
(YAML of any other shape is bound by composing it with positions, compiler/yamlsource.py: 0.6 s).
Run: .venv/bin/python bench/erase_requests.py [N]
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import yaml

from tablepolicy.compiler.erasure.requests import load_requests


def texts(n: int) -> dict[str, str]:
    values = [f'o\'neil, "jr" ü{i}' for i in range(n)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "received", "user_id"])
    writer.writerows([f"REQ-{i}", "2026-11-02", v] for i, v in enumerate(values))
    return {
        "r.csv": out.getvalue(),
        "r.jsonl": "".join(json.dumps({"id": f"REQ-{i}", "received": "2026-11-02", "keys": {"user_id": v}},
                                      ensure_ascii=False) + "\n" for i, v in enumerate(values)),
        "r.yaml": "requests:\n" + "".join(
            f"  - {{id: REQ-{i}, received: '2026-11-02', keys: {{user_id: {json.dumps(v, ensure_ascii=False)}}}}}\n"
            for i, v in enumerate(values)),
    }


FLOORS: dict[str, Callable[[str], Any]] = {
    "r.csv": lambda text: list(csv.reader(io.StringIO(text))),
    "r.jsonl": lambda text: [json.loads(line) for line in text.splitlines() if line],
    "r.yaml": lambda text: yaml.load(text, Loader=yaml.CSafeLoader),
}


def best(action: Callable[[], Any], rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    print(f"{n} requests per file; best of 3")
    for file, text in texts(n).items():
        requests, diagnostics = load_requests(text, file)
        assert requests is not None and len(requests.model.requests) == n, [d.render() for d in diagnostics][:3]
        ours = best(lambda file=file, text=text: load_requests(text, file))  # type: ignore[misc]
        floor = best(lambda file=file, text=text: FLOORS[file](text))  # type: ignore[misc]
        print(f"  {file:8} load_requests {ours * 1000:7.1f} ms   bare parse {floor * 1000:7.1f} ms   "
              f"ratio {ours / floor:5.1f}x")


if __name__ == "__main__":
    main()

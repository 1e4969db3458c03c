"""Tables for erasure tests and the independent check: every parquet file under the table location read
with plain pyarrow, by column name, sharing no code with the engine."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import Table

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog

# key `user.uid` (nested); erased subjects hold a quote, a comma and a newline in their keys
ERASED = {"REQ-1": "u'1", "REQ-2": "u,2\n"}
KEPT = ["u3", "u4"]
DAYS = 3  # every append writes one file per day partition


def policy(name: str, mode: str, *, holds: str = "") -> str:
    return f"""table: privacy.{name}
columns:
  - {{name: event_id, type: long}}
  - name: user
    type: {{struct: [{{name: uid, type: string}}, {{name: name, type: string}}]}}
  - {{name: ts, type: timestamptz}}
partition_by: [day(ts)]
write_modes: {{delete: {mode}, update: {mode}, merge: {mode}}}
lifecycle:
  erasure: {{key: [user.uid], within: 30d{holds}}}
"""


def batch(first_id: int, users: list[str], days: int = DAYS) -> pa.Table:
    rows = [(first_id + i * days + d, u, d) for i, u in enumerate(users) for d in range(days)]
    return pa.table({
        "event_id": pa.array([r[0] for r in rows], pa.int64()),
        "user": pa.array([{"uid": u, "name": f"name of {u}"} for _, u, _ in rows],
                         pa.struct([("uid", pa.string()), ("name", pa.string())])),
        "ts": pa.array([1_793_534_400_000_000 + d * 86_400_000_000 for *_, d in rows], pa.timestamp("us", "UTC")),
    })


def fill(table: Table) -> int:
    """Two snapshots of history without any erased key, then three with every user in every partition.
    Returns the last snapshot id before the first file holding a key."""
    for i in range(2):
        table.append(batch(1000 * (i + 1), [f"old{i}"]))
    table = table.refresh()
    before = table.metadata.current_snapshot_id
    assert before is not None
    for i in range(3):
        table.append(batch(10_000 * (i + 1), [*ERASED.values(), *KEPT]))
    return before


def requests_yaml(erased: dict[str, str] = ERASED) -> str:
    lines = ["requests:"]
    for request, uid in erased.items():
        escaped = uid.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'  - {{id: {request}, received: "2026-11-02", keys: {{user.uid: "{escaped}"}}}}')
    return "\n".join(lines) + "\n"


def keys_in_storage(location: str, keys: set[str], column: str = "user.uid") -> dict[str, int]:
    """Every parquet file under the location that holds one of ``keys`` in ``column`` (by name, flattened), with how
    many rows; a file that does not read as parquet (torn by a killed writer) counts with -1: it cannot be shown to
    hold no key. Every file's column is read: no metadata excludes any."""
    found = {}
    root = location.removeprefix("file:").removeprefix("//")
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".parquet"):
                continue
            try:
                data = pq.read_table(os.path.join(folder, name)).flatten()
            except (pa.ArrowInvalid, OSError):
                found[str(Path(folder, name))] = -1
                continue
            if column not in data.column_names:
                continue  # a position delete file: paths and positions only
            hits = sum(1 for uid in data.column(column).to_pylist() if uid in keys)
            if hits:
                found[str(Path(folder, name))] = hits
    return found


def checksum(table: Table, snapshot_id: int | None = None, *, without: set[str] | None = None) -> str:
    """A digest of every row the snapshot returns, erased subjects (by default ERASED) left out, in a stable
    order."""
    without = set(ERASED.values()) if without is None else without
    rows = table.scan(snapshot_id=snapshot_id).to_arrow().to_pylist()
    kept = sorted((r["event_id"], r["user"]["uid"], r["user"]["name"], r["ts"].isoformat()) for r in rows
                  if r["user"]["uid"] not in without)
    return hashlib.sha256(repr(kept).encode()).hexdigest() + f" ({len(kept)} rows)"


def erasure_project(root: Path, mode: str = "copy-on-write") -> tuple[Path, Path, int]:
    """A project with privacy.events (``mode``: its write modes) filled on the embedded catalog, and a requests
    file erasing ERASED's subjects: (policies, requests, rows before)."""
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "events.yaml").write_text(policy("events", mode))
    project, _ = validate(policies)
    catalog = embedded_catalog(policies)
    for state in desired_states(project):
        create_like(catalog, state)
    before = fill(catalog.load_table(("privacy", "events")))
    requests = root / "requests.yaml"
    requests.write_text(requests_yaml())
    return policies, requests, before


def events_table(policies: Path) -> Table:
    return embedded_catalog(policies).load_table(("privacy", "events"))

"""Object storage overhead: `tablepolicy maintain` (compaction, snapshot expiry, orphan removal) and
`tablepolicy erase` on a table whose warehouse is on an S3 server (moto on 127.0.0.1, the store the tests use)
against the same table on local disk. Same catalog kind on both sides (an embedded SQLite file on local disk):
only where the files live differs.

The table: partitioned by day over 3 days, APPENDS pyiceberg appends of ROWS rows each (one small file per day
partition per append); SUBJECTS erasure subjects in the first two appends; STRAYS files in the data folder that
no snapshot references, older than the orphan guard (on local disk back-dated with os.utime; S3 objects cannot
be back-dated, so the moto server's clock runs ten days behind, as in tests/integration/test_object_storage.py:
every object there looks ten days old, which changes nothing but the number of files the orphan scan may
consider). Each side runs the same commands, each its own CLI process (Python, and for maintain Spark, started
in each): erase first (pyarrow and pyiceberg, no JVM), then one maintain doing all three actions. The time of
each action is the step's own (maintain's JSON report); the process wall time includes interpreter and Spark
start. Both sides are checked to reach the same end state (rows, data files, no key rows, strays gone), read
through pyiceberg.

Run: .venv/bin/python bench/object_storage.py [ROUNDS]   (each side ROUNDS times on a fresh copy of the table,
the best taken; default 1: a few minutes on 2 cores)
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like  # noqa: E402
from tests.s3server import SECRET_KEY, s3_server  # noqa: E402

BUCKET = "bench"
APPENDS, ROWS, DAYS, SUBJECTS, STRAYS = 24, 3_000, 3, 50, 10
MAX_AGE_SECONDS = 10
POLICY = f"""table: bench.events
columns:
  - {{name: event_id, type: long}}
  - {{name: user_id, type: string}}
  - {{name: payload, type: string}}
  - {{name: ts, type: timestamptz}}
partition_by: [day(ts)]
lifecycle:
  snapshots: {{max_age: {MAX_AGE_SECONDS}s, min_keep: 1}}
  compaction: {{min_input_files: 5, target_file_size: 128MB}}
  orphan_files: {{older_than: 3d}}
  erasure: {{key: [user_id], within: 30d}}
"""
STRAY = pa.BufferOutputStream()  # a stray is a whole parquet file of rows no snapshot references, no subject's
pq.write_table(pa.table({"event_id": pa.array([-1], pa.int64()), "user_id": ["not-a-subject"]}), STRAY)
STRAY_BYTES = STRAY.getvalue().to_pybytes()
FIRST_DAY = 1_790_000_000_000_000 // 86_400_000_000 * 86_400_000_000  # microseconds, midnight UTC
MOTO_CLOCK = """import datetime
import moto.core.utils as utils
_now = utils.utcnow
utils.utcnow = lambda: _now() - datetime.timedelta(days=10)
"""
ACTIONS = ["rewrite_data_files", "expire_snapshots", "remove_orphan_files"]
CLI = [sys.executable, "-c", "from tablepolicy.cli.app import main; main()"]


@dataclass
class Side:
    label: str
    seconds: dict[str, float] = field(default_factory=dict)  # action -> the step's own seconds
    wall: dict[str, float] = field(default_factory=dict)  # command -> the process's wall seconds
    end: dict[str, object] = field(default_factory=dict)


def cli(project: Path, *args: str) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run([*CLI, *args, "--catalog", "bench"], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", "HOME": str(project)}, check=False)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"tablepolicy {' '.join(args[:2])} failed in {project}:\n{done.stdout[-3000:]}\n"
                         f"{done.stderr[-3000:]}")
    assert SECRET_KEY not in done.stdout + done.stderr
    return seconds, done.stdout


def user(i: int) -> str:
    return f"user-{i:06d}"


def batch(append: int) -> pa.Table:
    """ROWS rows over DAYS days; the first two appends hold the subjects' rows (user ids below SUBJECTS)."""
    ids = pa.array(range(append * ROWS, (append + 1) * ROWS), pa.int64())
    users = [user(i % SUBJECTS) if append < 2 else user(SUBJECTS + i % 997) for i in range(ROWS)]
    days = pa.array([i % DAYS for i in range(ROWS)], pa.int64())
    return pa.table({
        "event_id": ids, "user_id": pa.array(users, pa.string()),
        "payload": pa.array([f"event payload {i % 9973:05d}" for i in range(ROWS)], pa.string()),
        "ts": pc.cast(pc.add(pc.multiply(days, 86_400_000_000), FIRST_DAY + append * 1_000_000),
                      pa.timestamp("us", "UTC")),
    })


def project(root: Path, properties: dict[str, str]) -> Path:
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "events.yaml").write_text(POLICY)
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {"bench": properties}}))
    return root


def catalog(root: Path) -> Any:
    from pyiceberg.catalog import load_catalog

    return load_catalog("bench", **yaml.safe_load((root / ".pyiceberg.yaml").read_text())["catalog"]["bench"])


def build(root: Path, put_stray: Any) -> Any:
    model, diagnostics = validate(root / "policies")
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    create_like(catalog(root), desired_states(model)[0])
    table = catalog(root).load_table("bench.events")
    for append in range(APPENDS):
        table.append(batch(append))
    for i in range(STRAYS):
        put_stray(f"{table.location()}/data/stray-from-a-failed-write-{i}.parquet")
    return table


def end_state(root: Path) -> dict[str, object]:
    table = catalog(root).load_table("bench.events")
    rows = table.scan().to_arrow()
    subjects = pa.array([user(i) for i in range(SUBJECTS)])
    return {"rows": rows.num_rows, "data_files": len(table.inspect.files()),
            "snapshots": len(table.metadata.snapshots),
            "subject_rows": pc.sum(pc.is_in(rows.column("user_id"), value_set=subjects)).as_py() or 0}


def run_side(side: Side, root: Path, stored: Any) -> None:
    """erase, then one maintain of all three actions; the end state and what storage still holds."""
    requests = root / "requests.csv"
    requests.write_text("id,received,user_id\n" + "".join(f"REQ-{i:04d},2026-11-02,{user(i)}\n"
                                                           for i in range(SUBJECTS)))
    proof = root / "proof.json"
    side.wall["erase"], _ = cli(root, "erase", "policies", "--requests", str(requests), "--proof", str(proof))
    (table_proof,) = json.loads(proof.read_text())["tables"]
    assert table_proof["state"] == "complete", table_proof
    side.seconds["erase"] = table_proof["seconds"]  # the table's erasure itself, as maintain's step times are
    time.sleep(MAX_AGE_SECONDS + 1)  # every snapshot but the newest past max_age
    report = root / "maintain.json"
    side.wall["maintain"], out = cli(root, "maintain", "policies", "--json-report", str(report))
    (table,) = json.loads(report.read_text())["tables"]
    for step in table["steps"]:
        assert step["status"] == "done", step
        side.seconds[step["action"]] = step["seconds"]
    assert set(ACTIONS) <= set(side.seconds), out
    side.end = end_state(root) | {"strays_left": stored()}


@contextlib.contextmanager
def moto(tmp: Path) -> Iterator[Any]:
    clock = tmp / "moto-clock"
    clock.mkdir()
    (clock / "sitecustomize.py").write_text(MOTO_CLOCK)
    with contextlib.ExitStack() as stack:
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = str(clock)  # the environment moto_server starts with
        try:
            s3 = stack.enter_context(s3_server())
        finally:
            if saved is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = saved
        s3.bucket(BUCKET)
        yield s3


def local_side(base: Path) -> Side:
    root = project(base, {"type": "sql", "uri": f"sqlite:///{base / 'catalog.db'}",
                          "warehouse": (base / "warehouse").as_uri()})
    (base / "warehouse").mkdir()

    def put(location: str) -> None:
        path = Path(location.removeprefix("file:").removeprefix("//"))
        path.write_bytes(STRAY_BYTES)
        five_days_ago = time.time() - 5 * 86400
        os.utime(path, (five_days_ago, five_days_ago))

    build(root, put)
    side = Side("local disk")
    run_side(side, root, lambda: sum(1 for _ in (base / "warehouse").rglob("stray-*")))
    return side


def s3_side(base: Path, s3: Any, prefix: str) -> Side:
    root = project(base, {"type": "sql", "uri": f"sqlite:///{base / 'catalog.db'}",
                          "warehouse": f"s3://{BUCKET}/{prefix}", **s3.pyiceberg_properties()})
    client = s3.client()

    def put(location: str) -> None:
        client.put_object(Bucket=BUCKET, Key=location.split(f"{BUCKET}/", 1)[1], Body=STRAY_BYTES)

    def strays() -> int:
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/")
        return sum(1 for page in pages for o in page.get("Contents", []) if "/stray-" in o["Key"])

    build(root, put)
    side = Side("moto S3")
    run_side(side, root, strays)
    return side


def best(sides: list[Side]) -> Side:
    """Per action, the best of the rounds."""
    result = Side(sides[0].label, end=sides[0].end)
    for key in sides[0].seconds:
        result.seconds[key] = min(s.seconds[key] for s in sides)
    for key in sides[0].wall:
        result.wall[key] = min(s.wall[key] for s in sides)
    return result


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    began = time.perf_counter()
    print(f"load before: {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; best of {rounds} round(s) per side",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="tp-bench-s3-") as tmp, moto(Path(tmp)) as s3:
        local_rounds, s3_rounds = [], []
        for i in range(rounds):  # interleaved, so a load change hits both sides alike
            local_rounds.append(local_side(Path(tmp, f"local-{i}")))
            s3_rounds.append(s3_side(Path(tmp, f"s3-{i}"), s3, f"wh-{i}"))
        local, remote = best(local_rounds), best(s3_rounds)
    same = local.end == remote.end
    print(f"table: {APPENDS} appends x {ROWS:,} rows over {DAYS} day partitions ({APPENDS * DAYS} files), "
          f"{SUBJECTS} subjects in the first two appends, {STRAYS} stray files")
    print(f"{'action':<22} {'local disk':>11} {'moto S3':>11} {'S3 / local':>11}")
    for key in ["erase", *ACTIONS]:
        print(f"{key:<22} {local.seconds[key]:10.2f}s {remote.seconds[key]:10.2f}s "
              f"{remote.seconds[key] / local.seconds[key]:10.2f}x")
    for key in local.wall:
        print(f"{key + ' (process wall)':<22} {local.wall[key]:10.2f}s {remote.wall[key]:10.2f}s "
              f"{remote.wall[key] / local.wall[key]:10.2f}x")
    print(f"end state (rows, data files, snapshots, subject rows, strays left): local {local.end}; "
          f"S3 {remote.end}; same: {'yes' if same else 'NO'}")
    print(f"action times: the table's own (erase's proof, maintain's JSON report); process wall: with Python's "
          f"start (and, for maintain, Spark's). generated {datetime.now(UTC).replace(microsecond=0).isoformat()}; "
          f"load after: {os.getloadavg()[0]:.1f}; total {time.perf_counter() - began:.0f}s")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

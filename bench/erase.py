"""Erasure cost: `tablepolicy erase` of 1,000 subjects from a table of a few million rows, against the
blunt way, a full-table rewrite that filters the keys out and then expires every older snapshot.

Each side is its own process (Python and Spark start counted once on each side) on its own copy of the
same table, built identically; both results are verified by the same pyarrow scan of every parquet file
under the table location, and every other row must still be there. The table is laid out as an erasure
policy should lay it out: files clustered by the key (written sorted by user_id), so the 1,000 subjects,
one block of accounts, live in a few files. Targets: erase >= 3x faster, <= 0.1x the bytes rewritten.
Run: .venv/bin/python bench/erase.py [MILLION_ROWS]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compiler.desired import desired_states  # noqa: E402
from compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

POLICY = """table: bench.events
columns:
  - {name: event_id, type: long}
  - {name: user_id, type: string}
  - {name: payload, type: string}
  - {name: ts, type: timestamptz}
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""
ROWS_PER_USER = 10
ROWS_PER_FILE = 50_000
SUBJECTS = 1_000

BASELINE = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from runtime.catalog.config import resolve_catalog
from runtime.spark.session import SparkOptions, start_session
policies = Path(sys.argv[1])
spark = start_session(resolve_catalog(None, policies), SparkOptions())
keys = [line for line in Path(sys.argv[2]).read_text().splitlines() if line]
spark.createDataFrame([(k,) for k in keys], "k string").createOrReplaceTempView("erased")
spark.sql("INSERT OVERWRITE lake.bench.events SELECT * FROM lake.bench.events "
          "WHERE user_id NOT IN (SELECT k FROM erased)")
now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
spark.sql(f"CALL lake.system.expire_snapshots(table => 'bench.events', older_than => TIMESTAMP '{now}+00:00', "
          "retain_last => 1)").collect()
"""


def user(i: int) -> str:
    return f"user-{i:07d}"


def build(root: Path, rows: int) -> tuple[Path, list[str]]:
    """The table, appended file by file in user_id order; the subjects: one block of accounts mid-table."""
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "events.yaml").write_text(POLICY)
    project, _ = validate(policies)
    catalog = embedded_catalog(policies)
    create_like(catalog, desired_states(project)[0])
    table = catalog.load_table(("bench", "events"))
    for start in range(0, rows, ROWS_PER_FILE):
        ids = pa.array(range(start, min(start + ROWS_PER_FILE, rows)), pa.int64())
        users = pc.cast(pc.divide(ids, ROWS_PER_USER), pa.int64()).to_pylist()
        table.append(pa.table({
            "event_id": ids, "user_id": pa.array([user(u) for u in users], pa.string()),
            "payload": pa.array([f"event payload {i % 9973:05d}" for i in ids.to_pylist()], pa.string()),
            "ts": pa.array([1_790_000_000_000_000 + i * 1_000_000 for i in ids.to_pylist()], pa.timestamp("us", "UTC")),
        }))
    users_total = rows // ROWS_PER_USER
    first = users_total // 2
    subjects = [user(u) for u in range(first, first + SUBJECTS)]
    requests = root / "requests.yaml"
    requests.write_text("requests:\n" + "".join(
        f'  - {{id: REQ-{i:04d}, received: "2026-11-02", keys: {{user_id: {s}}}}}\n' for i, s in enumerate(subjects)))
    (root / "keys.txt").write_text("\n".join(subjects) + "\n")
    return policies, subjects


def current_files(policies: Path) -> dict[str, int]:
    table = embedded_catalog(policies).load_table(("bench", "events"))
    return {task.file.file_path: task.file.file_size_in_bytes for task in table.scan().plan_files()}


def scan(policies: Path, subjects: set[str]) -> tuple[int, int]:
    """(rows holding a subject's key, rows in total) over every parquet file under the table location."""
    location = embedded_catalog(policies).load_table(("bench", "events")).location().removeprefix("file://")
    held = 0
    for path in Path(location).rglob("*.parquet"):
        column = pq.read_table(path, columns=["user_id"]).column("user_id")
        held += pc.sum(pc.is_in(column, value_set=pa.array(sorted(subjects)))).as_py() or 0
    total = embedded_catalog(policies).load_table(("bench", "events")).scan().to_arrow().num_rows
    return held, total


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode:
        raise SystemExit(f"{command[:4]} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return time.perf_counter() - start


def measure(root: Path, rows: int, command: list[str]) -> tuple[float, int, int]:
    """(seconds, bytes of data files written, rows left) for one side."""
    policies, subjects = build(root, rows)
    held_before, total = scan(policies, set(subjects))
    assert held_before == SUBJECTS * ROWS_PER_USER, held_before
    before = current_files(policies)
    seconds = timed([part.format(policies=policies, root=root) if part.startswith("{") else part for part in command])
    held_after, left = scan(policies, set(subjects))
    assert held_after == 0, f"{held_after} rows with a key still in storage"
    assert left == total - held_before, (left, total, held_before)
    written = sum(size for path, size in current_files(policies).items() if path not in before)
    return seconds, written, left


def main() -> None:
    rows = int(float(sys.argv[1]) * 1_000_000) if len(sys.argv) > 1 else 3_000_000
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        full = measure(base / "full", rows, [sys.executable, "-c", BASELINE, "{policies}", "{root}/keys.txt"])
        erase = measure(base / "erase", rows, [sys.executable, "-c", "from runtime.cli.app import main; main()",
                                               "erase", "{policies}", "--requests", "{root}/requests.yaml"])
    files = -(-rows // ROWS_PER_FILE)
    print(f"table: {rows:,} rows in {files} files (sorted by user_id); {SUBJECTS:,} subjects, "
          f"{SUBJECTS * ROWS_PER_USER:,} rows; both verified: no parquet file under the location holds a key")
    print(f"full rewrite + expire:  {full[0]:7.2f}s  {full[1] / 2**20:9.1f} MiB written")
    print(f"tablepolicy erase:      {erase[0]:7.2f}s  {erase[1] / 2**20:9.1f} MiB written")
    print(f"speed-up: {full[0] / erase[0]:.2f}x (target >= 3x); bytes rewritten: {erase[1] / full[1]:.3f}x "
          "(target <= 0.1x)")


if __name__ == "__main__":
    main()

"""Erasure cost: `tablepolicy erase` of 1,000 subjects from a table of a few million rows, against the
blunt way: a full-table rewrite that anti-joins the keys out, a manifest rewrite (the overwrite's manifest
keeps the replaced files' column bounds, keys among them), then expiry of every older snapshot and removal of
orphan files.

The table has the shape of seed 001's ad data lake: partitioned by day (30 days), 8 commits a day of one file
each (an hourly-ish ingest), rows sorted by user_id within a file. User ids are issued when a browser is first
seen and each id is active for three days (ad-tech cookies churn), so the 1,000 subjects (one block of ids,
mid-month) sit in a few files of three days; subjects scattered at random over the whole id space would touch
most files, and erase would then rewrite nearly as much as the baseline.

Each side is its own process (Python and Spark start counted once on each side) on its own copy of the same
table, built identically; both results are verified by the same pyarrow scan of every parquet file under the
table location (and of the key column's bounds in every avro manifest there), and every other row must still
be there. Targets: erase >= 3x faster, <= 0.1x the bytes rewritten.
Run: .venv/bin/python bench/erase.py [MILLION_ROWS]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402
from tests.integration.manifest_scan import manifest_bounds  # noqa: E402

POLICY = """table: bench.events
columns:
  - {name: event_id, type: long}
  - {name: user_id, type: string}
  - {name: payload, type: string}
  - {name: ts, type: timestamptz}
partition_by: [day(ts)]
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""
DAYS = 30
COMMITS_PER_DAY = 8  # one file each
ROWS_PER_USER = 10
ACTIVE_DAYS = 3  # a user id's events fall on the day it was first seen and the two after
SUBJECTS = 1_000
FIRST_DAY = 1_790_000_000_000_000 // 86_400_000_000 * 86_400_000_000  # microseconds, midnight UTC

BASELINE = """
import sys, time
from datetime import UTC, datetime
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
started = time.perf_counter()
policies = Path(sys.argv[1])
spark = start_session(resolve_catalog(None, policies), SparkOptions())
print(f"baseline: spark started: {time.perf_counter() - started:.1f}s", flush=True)
keys = [line for line in Path(sys.argv[2]).read_text().splitlines() if line]
spark.createDataFrame([(k,) for k in keys], "k string").createOrReplaceTempView("erased")
spark.sql("INSERT OVERWRITE lake.bench.events SELECT e.* FROM lake.bench.events e "
          "LEFT ANTI JOIN erased ON e.user_id = erased.k")
print(f"baseline: table rewritten: {time.perf_counter() - started:.1f}s", flush=True)
# the overwrite's manifest lists the replaced files as deleted entries with their column bounds, keys among
# them: every manifest rewritten in one cluster with live entries only (the rewrite_manifests procedure skips
# a snapshot of one manifest); the cluster function is a JDK method handle (py4j passes no Python callable)
jvm, session = spark._jvm, spark._jsparkSession
table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(session, "lake.bench.events")
handles, anything = jvm.java.lang.invoke.MethodHandles, jvm.java.lang.Class.forName("java.lang.Object")
dropped = spark.sparkContext._gateway.new_array(jvm.java.lang.Class, 1)
dropped[0] = anything
constant = jvm.java.lang.invoke.MethodHandleProxies.asInterfaceInstance(
    jvm.java.lang.Class.forName("java.util.function.Function"),
    handles.dropArguments(handles.constant(anything, ""), 0, dropped))
table.rewriteManifests().clusterBy(constant).commit()
print(f"baseline: manifests rewritten: {time.perf_counter() - started:.1f}s", flush=True)
now = int(time.time() * 1000)
cutoff = datetime.fromtimestamp(now / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
spark.sql(f"CALL lake.system.expire_snapshots(table => 'bench.events', older_than => TIMESTAMP '{cutoff}+00:00', "
          "retain_last => 1)").collect()
print(f"baseline: snapshots expired: {time.perf_counter() - started:.1f}s", flush=True)
# the procedure refuses an age under 24 hours; the action it wraps does not
table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(session, "lake.bench.events")
jvm.org.apache.iceberg.spark.actions.SparkActions.get(session).deleteOrphanFiles(table).olderThan(now).execute()
print(f"baseline: orphan files removed: {time.perf_counter() - started:.1f}s", flush=True)
"""


def user(i: int) -> str:
    return f"user-{i:07d}"


def events(rows: int) -> pa.Table:
    """Every event, sorted by (day, user_id): user u is first seen on day u * DAYS // users and its
    ROWS_PER_USER events spread over that day and the ACTIVE_DAYS - 1 after it (the month's last day keeps
    the overflow)."""
    index = pa.array(range(rows), pa.int64())
    uid = pc.divide(index, ROWS_PER_USER)  # integer division
    nth = pc.subtract(index, pc.multiply(uid, ROWS_PER_USER))
    first_seen = pc.divide(pc.multiply(uid, DAYS), rows // ROWS_PER_USER)
    day = pc.min_element_wise(pc.add(first_seen, pc.divide(pc.multiply(nth, ACTIVE_DAYS), ROWS_PER_USER)), DAYS - 1)
    seconds = pc.multiply(pc.add(pc.multiply(day, 86_400), pc.bit_wise_and(index, 0xFFFF)), 1_000_000)
    table = pa.table({
        "event_id": index, "day": day,
        "user_id": pa.array([user(u) for u in uid.to_pylist()], pa.string()),
        "payload": pa.array([f"event payload {i % 9973:05d}" for i in range(rows)], pa.string()),
        "ts": pc.cast(pc.add(seconds, FIRST_DAY), pa.timestamp("us", "UTC")),
    })
    return table.sort_by([("day", "ascending"), ("user_id", "ascending")])


def build(root: Path, rows: int) -> tuple[Path, list[str]]:
    """The table, one commit per file; the subjects: a block of ids first seen mid-month."""
    policies = build_table(root, rows)
    subjects = [user(u) for u in block(rows, SUBJECTS)]
    write_requests(root, subjects)
    return policies, subjects


def build_table(root: Path, rows: int, policy: str = POLICY) -> Path:
    """The table of ``events(rows)`` under ``root`` as ``policy`` declares it, one commit per file (COMMITS_PER_DAY
    a day); returns its policies directory."""
    policies = create(root, policy)
    table = embedded_catalog(policies).load_table(("bench", "events"))
    for rows_of_file in commits(rows):
        table.append(rows_of_file)
    return policies


def create(root: Path, policy: str = POLICY) -> Path:
    """The empty table ``policy`` declares, in the embedded catalog of ``root / "policies"`` (returned)."""
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "events.yaml").write_text(policy)
    project, findings = validate(policies)
    assert not findings.has_errors, [f.render() for f in findings]
    create_like(embedded_catalog(policies), desired_states(project)[0])
    return policies


def commits(rows: int) -> Iterator[pa.Table]:
    """The rows of each commit (one file each), in order: each day's events in COMMITS_PER_DAY slices."""
    data = events(rows)
    for day in range(DAYS):
        of_day = data.filter(pc.equal(data.column("day"), day)).select(["event_id", "user_id", "payload", "ts"])
        size = -(-of_day.num_rows // COMMITS_PER_DAY)
        for start in range(0, of_day.num_rows, size):
            yield of_day.slice(start, size)


def block(rows: int, count: int) -> range:
    """``count`` consecutive user numbers first seen mid-month: their rows sit in a few files of three days."""
    first = rows // ROWS_PER_USER // 2
    return range(first, first + count)


def write_requests(root: Path, subjects: list[str]) -> None:
    """One erasure request per subject (requests.yaml) and the bare keys (keys.txt), under ``root``."""
    (root / "requests.yaml").write_text("requests:\n" + "".join(
        f'  - {{id: REQ-{i:04d}, received: "2026-11-02", keys: {{user_id: {s}}}}}\n' for i, s in enumerate(subjects)))
    (root / "keys.txt").write_text("\n".join(subjects) + "\n")


def current_files(policies: Path) -> dict[str, int]:
    table = embedded_catalog(policies).load_table(("bench", "events"))
    return {task.file.file_path: task.file.file_size_in_bytes for task in table.scan().plan_files()}


def scan(policies: Path, subjects: set[str]) -> tuple[int, int, int, int]:
    """(rows holding a subject's key in any parquet file under the table location, key bounds equal to a
    subject's key in any avro manifest there, rows the table returns, rows the table returns with a key)."""
    table = embedded_catalog(policies).load_table(("bench", "events"))
    location = table.location().removeprefix("file://")
    keys = pa.array(sorted(subjects))
    held = 0
    for path in Path(location).rglob("*.parquet"):
        if "user_id" not in pq.read_schema(path).names:  # a position delete file
            continue
        column = pq.read_table(path, columns=["user_id"]).column("user_id")
        held += pc.sum(pc.is_in(column, value_set=keys)).as_py() or 0
    field_id = table.schema().find_field("user_id").field_id
    bounds = sum(1 for path in Path(location).rglob("*.avro")
                 for value in manifest_bounds(path).get(field_id, []) if value in subjects)
    returned = table.scan(selected_fields=("user_id",)).to_arrow().column("user_id")
    return held, bounds, len(returned), pc.sum(pc.is_in(returned, value_set=keys)).as_py() or 0


def timed(command: list[str]) -> tuple[float, list[tuple[float, str]]]:
    """Seconds the command took, and each line it printed with the second it appeared at."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert process.stdout is not None
    lines = [(time.perf_counter() - start, line.rstrip()) for line in process.stdout]
    if process.wait():
        raise SystemExit(f"{command[:4]} failed:\n" + "\n".join(line for _, line in lines[-40:]))
    return time.perf_counter() - start, lines


def measure(root: Path, rows: int, command: list[str]) -> tuple[float, int, list[tuple[float, str]]]:
    """(seconds, bytes of data files written, the lines it printed, timed) for one side."""
    started = time.perf_counter()
    policies, subjects = build(root, rows)
    print(f"  built {root.name} ({time.perf_counter() - started:.0f}s)", flush=True)
    return verified(root, policies, subjects, command)


def verified(root: Path, policies: Path, subjects: list[str], command: list[str]
             ) -> tuple[float, int, list[tuple[float, str]]]:
    """Run ``command`` ({policies} and {root} filled in) on the table and check storage before and after: every
    subject's rows stored before, none after (no parquet file under the location holds a key, no manifest bound
    equals one), every other row the table returned still returned. (seconds, bytes of data files written,
    each line it printed with the second it appeared at)."""
    held_before, bounds_before, total, with_key = scan(policies, set(subjects))
    assert held_before == len(subjects) * ROWS_PER_USER, held_before
    before = current_files(policies)
    print(f"  {root.name}: {len(before)} files, {held_before:,} rows with a key, {bounds_before} manifest "
          f"bound(s) equal to a key", flush=True)
    seconds, lines = timed([part.format(policies=policies, root=root) if part.startswith("{") else part
                            for part in command])
    held_after, bounds_after, left, _ = scan(policies, set(subjects))
    assert held_after == 0, f"{held_after} rows with a key still in storage"
    assert bounds_after == 0, f"{bounds_after} manifest bound(s) still equal to a key"
    assert left == total - with_key, (left, total, with_key)
    written = sum(size for path, size in current_files(policies).items() if path not in before)
    return seconds, written, lines


def main() -> None:
    rows = int(float(sys.argv[1]) * 1_000_000) if len(sys.argv) > 1 else 3_000_000
    print(f"load before: {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        full = measure(base / "full", rows, [sys.executable, "-c", BASELINE, "{policies}", "{root}/keys.txt"])
        erase = measure(base / "erase", rows, [sys.executable, "-c", "from tablepolicy.cli.app import main; main()",
                                               "erase", "{policies}", "--requests", "{root}/requests.yaml"])
    print(f"table: {rows:,} rows, {DAYS} day partitions x {COMMITS_PER_DAY} commits of one file; {SUBJECTS:,} "
          f"subjects, {SUBJECTS * ROWS_PER_USER:,} rows; both verified: no parquet file under the location holds a "
          "key, no manifest bound equals one")
    print("each side's steps (seconds since its process started):")
    for second, line in full[2] + erase[2]:
        if line.startswith(("baseline: ", "  bench.events: ")):
            print(f"  {second:7.1f}  {line.strip()[:120]}")
    print(f"full rewrite + expire + orphans: {full[0]:7.2f}s  {full[1] / 2**20:9.1f} MiB written")
    print(f"tablepolicy erase:               {erase[0]:7.2f}s  {erase[1] / 2**20:9.1f} MiB written")
    print(f"speed-up: {full[0] / erase[0]:.2f}x (target >= 3x); bytes rewritten: {erase[1] / full[1]:.3f}x "
          f"(target <= 0.1x); load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""Decisions for a fleet without a JVM (issue 22, target 2): `health` and `maintain --dry-run` over 1,000 tables,
a few of them large (100,000 data files in 2,000 manifests each), in seconds, each manifest read at most once.

The fleet is built with pyiceberg alone on the embedded SQLite catalog (local disk warehouse). Every table declares
snapshots, compaction, manifests, retention, orphan files and erasure (POLICY) and has two snapshots (the second
adds one manifest to the first's; the first is 2 days old: expiry due); a large table's first snapshot lists 1,999
manifests of 50 entries, its second one more. Manifests and manifest lists are written directly (pyiceberg's
manifest writers, committed as AddSnapshot + SetSnapshotRef), so 100,000 files need no 100,000 appends. The data
files exist: each is a hard link to one of DAYS real parquet files (one per day of the ``dt`` partition) whose row
count, size and column bounds the entries carry, so the orphan listing lists 100,000 files that are all referenced,
and a scan of the table reads real rows. Every STRAY-th table also has an old unreferenced file (orphan removal
due).

Sides, each a fresh process, best of ROUNDS:
  floor    -- pyiceberg alone: load every table, read every manifest any snapshot keeps once, and list the
              table location (what health with an orphan decision must at least read);
  health   -- `tablepolicy health POLICIES`;
  dry run  -- `tablepolicy maintain POLICIES --dry-run`.
Then each command once more with every avro open counted (tests/avro_reads.py, pyspark unimportable: no JVM):
the most reads of any one manifest or manifest list, against the distinct files.
Run: .venv/bin/python bench/fleet.py [TABLES] [LARGE] [FILES] [MANIFESTS] [ROUNDS]   (default 1000 3 100000 2000 3)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from pyiceberg.conversions import to_bytes  # noqa: E402
from pyiceberg.manifest import (  # noqa: E402
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    write_manifest,
    write_manifest_list,
)
from pyiceberg.table import Table  # noqa: E402
from pyiceberg.table.refs import SnapshotRefType  # noqa: E402
from pyiceberg.table.snapshots import Operation, Snapshot, Summary  # noqa: E402
from pyiceberg.table.update import AddSnapshotUpdate, AssertRefSnapshotId, SetSnapshotRefUpdate  # noqa: E402
from pyiceberg.typedef import Record  # noqa: E402
from pyiceberg.types import PrimitiveType  # noqa: E402

from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

TOOL = Path(sys.executable).parent / "tablepolicy"
NAMESPACE = "fleet"
DAYS = 100  # partitions (dt), one template parquet file each: half 151-200 days old, half 0-49
ROWS_PER_FILE = 20
STRAY = 50  # every STRAY-th table has an old unreferenced file
POLICY = """table: {name}
columns:
  - {{name: event_id, type: string, required: true}}
  - {{name: user_id, type: string, required: true}}
  - {{name: ts, type: timestamptz, required: true}}
  - {{name: dt, type: date, required: true}}
  - {{name: amount, type: long}}
partition_by: [dt]
lifecycle:
  snapshots: {{max_age: 1d, min_keep: 1}}
  retention: {{column: dt, keep: 60d}}
  compaction: {{min_input_files: 5, target_file_size: 128MB}}
  manifests: {{min_manifests: 10}}
  orphan_files: {{older_than: 3d}}
  erasure: {{key: [user_id], within: 30d}}
"""
FLOOR = """
import sys
from pathlib import Path
from pyarrow import fs
from pyiceberg.catalog.sql import SqlCatalog
root = Path(sys.argv[1]).resolve().parent / ".lake"
catalog = SqlCatalog("lake", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=(root / "warehouse").as_uri())
local = fs.LocalFileSystem()
for namespace in catalog.list_namespaces():
    for name in catalog.list_tables(namespace):
        table = catalog.load_table(name)
        read = set()
        for snapshot in table.metadata.snapshots:
            for manifest in snapshot.manifests(table.io):
                if manifest.manifest_path not in read:
                    read.add(manifest.manifest_path)
                    manifest.fetch_manifest_entry(table.io, discard_deleted=False)
        location = table.location().removeprefix("file://").removeprefix("file:")
        local.get_file_info(fs.FileSelector(location, recursive=True, allow_not_found=True))
"""


def name(i: int) -> str:
    return f"t{i:04d}"


def local_path(uri: str) -> str:
    return uri.removeprefix("file://").removeprefix("file:")


class Templates:
    """One real parquet file per day: what every data file entry of that day describes (and links to)."""

    def __init__(self, folder: Path, today: date) -> None:
        folder.mkdir(parents=True)
        self.files: list[tuple[Path, int, dict[int, bytes], dict[int, bytes]]] = []
        self.days: list[int] = []
        epoch = date(1970, 1, 1)
        for d in range(DAYS):
            day = today - timedelta(days=200 - d if d < DAYS // 2 else DAYS - 1 - d)  # no day near the cutoff
            start = datetime(day.year, day.month, day.day, tzinfo=UTC)
            ids = [f"u{(d * ROWS_PER_FILE + r) % 997:04d}" for r in range(ROWS_PER_FILE)]
            times = [start + timedelta(minutes=r) for r in range(ROWS_PER_FILE)]
            table = pa.table({
                "event_id": pa.array([f"e{d}-{r}" for r in range(ROWS_PER_FILE)], pa.string()),
                "user_id": pa.array(ids, pa.string()),
                "ts": pa.array(times, pa.timestamp("us", tz="UTC")),
                "dt": pa.array([day] * ROWS_PER_FILE, pa.date32()),
                "amount": pa.array(list(range(ROWS_PER_FILE)), pa.int64()),
            })
            path = folder / f"day-{d:03d}.parquet"
            pq.write_table(table, path)
            self.days.append((day - epoch).days)
            self.files.append((path, path.stat().st_size, {}, {}))
        self.times = [(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=day)) for day in self.days]

    def bounds(self, table: Table, d: int) -> tuple[dict[int, bytes], dict[int, bytes]]:
        schema = table.schema()
        fields = {f.name: (f.field_id, f.field_type) for f in schema.fields if isinstance(f.field_type, PrimitiveType)}
        start = self.times[d]
        micros = int((start - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1_000_000)
        last = micros + (ROWS_PER_FILE - 1) * 60_000_000
        ids = sorted(f"u{(d * ROWS_PER_FILE + r) % 997:04d}" for r in range(ROWS_PER_FILE))
        lower = {fields["user_id"][0]: to_bytes(fields["user_id"][1], ids[0]),
                 fields["ts"][0]: to_bytes(fields["ts"][1], micros),
                 fields["dt"][0]: to_bytes(fields["dt"][1], self.days[d]),
                 fields["amount"][0]: to_bytes(fields["amount"][1], 0)}
        upper = {fields["user_id"][0]: to_bytes(fields["user_id"][1], ids[-1]),
                 fields["ts"][0]: to_bytes(fields["ts"][1], last),
                 fields["dt"][0]: to_bytes(fields["dt"][1], self.days[d]),
                 fields["amount"][0]: to_bytes(fields["amount"][1], ROWS_PER_FILE - 1)}
        return lower, upper


def add_snapshot(table: Table, templates: Templates, manifests: list[int], first_file: int, *, age: timedelta
                 ) -> tuple[Table, int]:
    """Commit a snapshot ``age`` old keeping the current one's manifests and adding ``manifests`` new ones (of that
    many data files each, hard links to the day's template); returns the table after the commit and the next
    file number."""
    metadata, io = table.metadata, table.io
    spec, schema = table.spec(), table.schema()
    parent = table.current_snapshot()
    snapshot_id = uuid.uuid4().int & ((1 << 63) - 1)
    sequence = metadata.next_sequence_number()
    location = local_path(table.location())
    bounds = [templates.bounds(table, d) for d in range(DAYS)]
    written: list[ManifestFile] = []
    number = first_file
    for entries in manifests:
        path = f"{table.location()}/metadata/{uuid.uuid4()}-m0.avro"
        with write_manifest(format_version=metadata.format_version, spec=spec, schema=schema,
                            output_file=io.new_output(path), snapshot_id=snapshot_id,
                            avro_compression="deflate") as writer:
            for _ in range(entries):
                d = number % DAYS
                day = date(1970, 1, 1) + timedelta(days=templates.days[d])
                folder = f"{location}/data/dt={day.isoformat()}"
                file = f"{folder}/{number:07d}-{snapshot_id}.parquet"
                os.makedirs(folder, exist_ok=True)
                template, size, _, _ = templates.files[d]
                os.link(template, file)
                lower, upper = bounds[d]
                data = DataFile.from_args(
                    content=DataFileContent.DATA, file_path=f"file://{file}", file_format=FileFormat.PARQUET,
                    partition=Record(templates.days[d]), record_count=ROWS_PER_FILE, file_size_in_bytes=size,
                    lower_bounds=lower, upper_bounds=upper, value_counts={}, null_value_counts={},
                    column_sizes={}, nan_value_counts={}, split_offsets=[4], sort_order_id=0)
                data.spec_id = spec.spec_id
                writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id,
                                                   data_file=data))
                number += 1
        written.append(writer.to_manifest_file())
    kept = list(parent.manifests(io)) if parent is not None else []
    manifest_list = f"{table.location()}/metadata/snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
    with write_manifest_list(format_version=metadata.format_version, output_file=io.new_output(manifest_list),
                             snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id if parent else None,
                             sequence_number=sequence, avro_compression="deflate") as lister:
        lister.add_manifests(kept + written)
    added = sum(manifests)
    total = added + (int(parent.summary.get("total-data-files") or 0) if parent and parent.summary else 0)
    summary = Summary(operation=Operation.APPEND, **{
        "added-data-files": str(added), "total-data-files": str(total),
        "added-records": str(added * ROWS_PER_FILE), "total-records": str(total * ROWS_PER_FILE)})
    snapshot = Snapshot(snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id if parent else None,
                        sequence_number=sequence, timestamp_ms=int((time.time() - age.total_seconds()) * 1000),
                        manifest_list=manifest_list,
                        summary=summary, schema_id=schema.schema_id)
    table.catalog.commit_table(table, (AssertRefSnapshotId(ref="main", snapshot_id=parent.snapshot_id
                                                          if parent else None),),
                               (AddSnapshotUpdate(snapshot=snapshot),
                                SetSnapshotRefUpdate(ref_name="main", type=SnapshotRefType.BRANCH,
                                                     snapshot_id=snapshot_id, max_ref_age_ms=None,
                                                     max_snapshot_age_ms=None, min_snapshots_to_keep=None)))
    return table.catalog.load_table(table.name()), number


def build(root: Path, tables: int, large: int, files: int, manifests: int, stray: int = STRAY) -> Path:
    """The project's policies folder under ``root`` (its catalog and warehouse beside it): ``large`` of the
    ``tables`` with ``files`` data files in ``manifests`` manifests, every ``stray``-th with an old orphan."""
    policies = root / "policies"
    (policies / NAMESPACE).mkdir(parents=True)
    for i in range(tables):
        (policies / NAMESPACE / f"{name(i)}.yaml").write_text(POLICY.format(name=f"{NAMESPACE}.{name(i)}"))
    model, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    catalog = embedded_catalog(policies)
    started = time.perf_counter()
    for state in desired_states(model):
        create_like(catalog, state)
    print(f"  {tables} tables created in {time.perf_counter() - started:.0f}s", flush=True)
    templates = Templates(root / "templates", datetime.now(UTC).date())
    started = time.perf_counter()
    per_manifest = max(1, files // manifests)
    for i in range(tables):
        table = catalog.load_table((NAMESPACE, name(i)))
        first = [per_manifest] * (manifests - 1) if i < large else [2]
        table, number = add_snapshot(table, templates, first, 0 if i < large else i * 4,  # days vary
                                     age=timedelta(days=2))  # past max_age 1d: expiry due
        add_snapshot(table, templates, [per_manifest if i < large else 2], number, age=timedelta(0))
        if i % stray == stray - 1:
            orphan = Path(local_path(table.location())) / "data" / "stray-from-a-failed-write.parquet"
            orphan.write_bytes(b"not referenced by any snapshot")
            os.utime(orphan, (time.time() - 5 * 86400,) * 2)
        if i < large:
            print(f"  large table {name(i)}: {manifests * per_manifest} files in {manifests} manifests "
                  f"({time.perf_counter() - started:.0f}s so far)", flush=True)
    print(f"  snapshots written in {time.perf_counter() - started:.0f}s", flush=True)
    return policies


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak resident KB of one child process (exit 0, or 2: work is due)."""
    with tempfile.TemporaryFile("w+") as errors:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors,
                                 env={**os.environ, "NO_COLOR": "1", **(env or {})})
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 2):
            errors.seek(0)
            raise SystemExit(f"{' '.join(command)} exited {child.returncode}: {errors.read()[-3000:]}")
    return elapsed, usage.ru_maxrss


def counted(args: list[str], out: Path) -> dict[str, int]:
    """Avro opens by path of one run of the CLI with ``args`` (pyspark unimportable, JAVA_HOME nowhere)."""
    run([sys.executable, "-m", "tests.avro_reads", str(out), *args], env={"JAVA_HOME": "/nonexistent"})
    opens: dict[str, int] = json.loads(out.read_text())
    return opens


def main() -> None:
    args = [int(a) for a in sys.argv[1:]]
    tables, large, files, manifests, rounds = (args + [1000, 3, 100_000, 2000, 3][len(args):])[:5]
    root = Path(tempfile.mkdtemp(prefix="tp-bench-fleet-"))
    try:
        print(f"{tables} tables, {large} with {files} data files in {manifests} manifests", flush=True)
        policies = build(root, tables, large, files, manifests)
        sides = {"floor": [sys.executable, "-c", FLOOR, str(policies)],
                 "health": [str(TOOL), "health", str(policies)],
                 "maintain --dry-run": [str(TOOL), "maintain", str(policies), "--dry-run"]}
        best = {side: min(run(command) for _ in range(rounds)) for side, command in sides.items()}
        reads = {side: counted(command[1:], root / "opens.json") for side, command in sides.items()
                 if side != "floor"}
        floor, floor_kb = best["floor"]
        print()
        print(f"{'side':>20} | {'seconds':>8} | {'x floor':>7} | {'peak MB':>7} | {'x floor':>7} | "
              f"{'avro files':>10} | {'opens':>6} | {'most of one':>11}")
        for side, (seconds, kb) in best.items():
            opened = reads.get(side)
            counts = (f"{len(opened):>10} | {sum(opened.values()):>6} | {max(opened.values(), default=0):>11}"
                      if opened is not None else f"{'':>10} | {'':>6} | {'':>11}")
            print(f"{side:>20} | {seconds:>8.2f} | {seconds / floor:>7.2f} | {kb / 1024:>7.0f} | "
                  f"{kb / floor_kb:>7.2f} | {counts}")
        print("target: no JVM (pyspark unimportable in the counted runs), each manifest and list opened at most once")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The JVM-free orphan decision on object storage: `scan_orphans` over a table location of 10,000 objects on a
moto S3 server (127.0.0.1), side by side with the same decision over the same layout on local disk.

The layout: a table of 1,000 data files written by pyiceberg in one commit (a partition each; with its
manifest, manifest list and metadata files, 1,004 reachable objects), and 8,996 orphan-looking objects
(1-byte files under data/, spread over 100 directories) put with boto3 (on disk: written and back-dated). The
decision lists every object (S3: ten pages of 1,000 keys), reads the table's metadata, manifests and manifest
list, and compares; both sides must find exactly the 8,996 candidates. The time of each side is the best of
ROUNDS; objects per second is the listing's size over it.
Run: .venv/bin/python bench/orphans_s3.py [ROUNDS] [OBJECTS]   (default 3 rounds, 10,000 objects)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table import Table  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

from tablepolicy.runtime.orphans import list_files, normalize, scan_orphans  # noqa: E402
from tests.s3server import s3_server  # noqa: E402

DATA_FILES, BUCKET = 1_000, "bench"
SCHEMA = Schema(NestedField(1, "part", LongType(), required=False), NestedField(2, "msg", StringType()))
SPEC = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "part"))
GUARD = datetime.now(UTC) + timedelta(days=1)  # every object is older: each unreferenced one is a candidate


def table_with_data_files(catalog: SqlCatalog) -> Table:
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.events", schema=SCHEMA, partition_spec=SPEC)
    table.append(pa.table({"part": list(range(DATA_FILES)), "msg": ["x"] * DATA_FILES}, schema=SCHEMA.as_arrow()))
    return catalog.load_table("bench.events")


def strays(table: Table, total: int, listed_now: int) -> list[str]:
    return [f"data/stray-{i % 100:03d}/orphan-{i:05d}.parquet" for i in range(total - listed_now)]


def timed(table: Table, rounds: int, expected: int) -> tuple[float, int, float]:
    """The best decision time, the objects it listed, and the best time of the listing alone."""
    best, listed, listing = float("inf"), 0, float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        list_files(table.location(), table.io.properties)
        listing = min(listing, time.perf_counter() - started)
        started = time.perf_counter()
        scan = scan_orphans(table, GUARD)
        best = min(best, time.perf_counter() - started)
        assert scan.files == expected and scan.refused is None, (scan.files, expected, scan.refused)
        listed = scan.listed
    return best, listed, listing


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    total = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    with tempfile.TemporaryDirectory() as scratch, s3_server() as s3:
        work = Path(scratch)
        s3.bucket(BUCKET)
        client: Any = s3.client()
        client.meta.config.max_pool_connections = 32

        started = time.perf_counter()
        remote = table_with_data_files(SqlCatalog("s3", uri=f"sqlite:///{work / 's3.db'}", warehouse=f"s3://{BUCKET}/wh",
                                                  **s3.pyiceberg_properties()))
        prefix = normalize(remote.location()).split("/", 1)[1]
        live = sum(p.get("KeyCount", 0) for p in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET,
                                                                                                   Prefix=prefix))
        orphans = strays(remote, total, live)
        with ThreadPoolExecutor(32) as pool:
            list(pool.map(lambda rel: client.put_object(Bucket=BUCKET, Key=f"{prefix}/{rel}", Body=b"\0"), orphans))
        print(f"built on moto: {live} table objects + {len(orphans)} orphan-looking ones "
              f"in {time.perf_counter() - started:.1f}s")

        local = table_with_data_files(SqlCatalog("disk", uri=f"sqlite:///{work / 'disk.db'}",
                                                 warehouse=(work / "wh").as_uri()))
        root = Path(normalize(local.location()))
        old = time.time() - 10 * 86400
        for rel in orphans:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(b"\0")
            os.utime(root / rel, (old, old))

        s3_seconds, s3_listed, s3_listing = timed(remote, rounds, len(orphans))
        disk_seconds, disk_listed, disk_listing = timed(local, rounds, len(orphans))
        assert s3_listed == disk_listed == total, (s3_listed, disk_listed, total)
        print(f"{'':10} {'objects':>8} {'candidates':>10} {'seconds':>8} {'objects/s':>10} {'listing alone':>14}")
        for side, listed, seconds, listing in (("moto S3", s3_listed, s3_seconds, s3_listing),
                                               ("local disk", disk_listed, disk_seconds, disk_listing)):
            print(f"{side:10} {listed:>8,} {len(orphans):>10,} {seconds:>8.2f} {listed / seconds:>10,.0f} "
                  f"{listing:>13.2f}s")
        print(f"S3 / disk: {s3_seconds / disk_seconds:.1f}x the time (best of {rounds})")


if __name__ == "__main__":
    main()

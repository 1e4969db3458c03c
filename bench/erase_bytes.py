"""Bytes an erasure's rewrite writes against Spark's rewrite of the same file (issue 22, target 4: at most 1.05x).

A table of seed 001's shape (bench/erase.py: events sorted by user_id within a day) written by Spark, one file,
with the writer settings Spark gives a table created by pyiceberg (no codec property: Iceberg Java's gzip) and
then again with zstd set; for each, one subject's rows are deleted from that file twice over: by Spark's own
copy-on-write DELETE, and by erase's pyarrow rewrite (runtime/erasure/like_source.py) of the same rows minus the
same subject; and, for reference, by pyiceberg's writer with the table's properties alone (what erase did before).
Prints the bytes of each and the ratios. Run: .venv/bin/python bench/erase_bytes.py [ROWS]
"""

from __future__ import annotations

import sys
import tempfile
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyiceberg.expressions import AlwaysTrue  # noqa: E402
from pyiceberg.io.pyarrow import ArrowScan, write_file  # noqa: E402
from pyiceberg.table import Table, WriteTask  # noqa: E402

from bench.erase import POLICY, events  # noqa: E402
from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tablepolicy.runtime.catalog.config import resolve_catalog  # noqa: E402
from tablepolicy.runtime.erasure.like_source import source_layout, write_like  # noqa: E402
from tablepolicy.runtime.spark.session import SparkOptions, start_session  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 3_000_000
    root = Path(tempfile.mkdtemp())
    policies = root / "policies"
    policies.mkdir()
    (policies / "events.yaml").write_text(POLICY.replace("partition_by: [day(ts)]\n", ""))
    project, _ = validate(policies)
    catalog = embedded_catalog(policies)
    create_like(catalog, desired_states(project)[0])
    data = events(rows)
    day = data.filter(pc.equal(data.column("day"), 15)).select(["event_id", "user_id", "payload", "ts"])
    subject = day.column("user_id")[day.num_rows // 2].as_py()
    source = root / "rows.parquet"
    pq.write_table(day, source)
    spark = start_session(resolve_catalog(None, policies), SparkOptions())
    spark.sql("ALTER TABLE lake.bench.events SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')")
    deleted = pc.sum(pc.equal(day.column("user_id"), subject)).as_py()
    print(f"{day.num_rows:,} rows in one Spark-written file; one subject's {deleted} rows deleted")
    for codec in (None, "zstd"):
        if codec is not None:
            spark.sql(f"ALTER TABLE lake.bench.events SET TBLPROPERTIES ('write.parquet.compression-codec'='{codec}')")
        spark.sql("DELETE FROM lake.bench.events")
        spark.read.parquet(str(source)).coalesce(1).sortWithinPartitions("user_id").writeTo("lake.bench.events").append()
        table = catalog.load_table(("bench", "events"))
        (task,) = list(table.scan().plan_files())
        kept = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue()).to_table([task])
        kept = kept.filter(pc.not_equal(kept.column("user_id"), subject))
        ours = write_like(table.io, table.metadata, _task(table, kept), source_layout(table.io, task.file.file_path))
        (before,) = write_file(table.io, table.metadata, iter([_task(table, kept)]))
        spark.sql(f"DELETE FROM lake.bench.events WHERE user_id = '{subject}'")
        (after,) = list(catalog.load_table(("bench", "events")).scan().plan_files())
        theirs = after.file.file_size_in_bytes
        name = codec or "unset (Spark: gzip)"
        print(f"codec {name}: Spark's DELETE {theirs:,} B; erase {ours.file_size_in_bytes:,} B = "
              f"{ours.file_size_in_bytes / theirs:.3f}x (target <= 1.05x); pyiceberg's writer alone "
              f"{before.file_size_in_bytes:,} B = {before.file_size_in_bytes / theirs:.3f}x")
    spark.stop()


def _task(table: Table, kept: pa.Table) -> WriteTask:
    return WriteTask(write_uuid=uuid.uuid4(), task_id=0, schema=table.schema(), record_batches=kept.to_batches())


if __name__ == "__main__":
    main()

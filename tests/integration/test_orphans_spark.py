"""The JVM-free orphan decision (runtime/orphans.py) and Spark's remove_orphan_files, as maintain renders it
(equal_schemes, prefix_mismatch_mode ERROR), agree on what an orphan is for a table Spark wrote: a partition
field whose name starts with ``_``, statistics and partition statistics from Iceberg's own procedures, a tag
and a branch holding files the main history no longer reaches, and hidden files (``_SUCCESS``, ``.crc``,
``_temporary/``) beside real strays. Spark removes exactly the candidates the scan named, no hidden file and
no file a ref or the statistics reach; the scan then finds nothing, and every ref still reads."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tablepolicy.compiler.maintenance.actions import RemoveOrphanFiles
from tablepolicy.compiler.render.maintenance import action_sql
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.orphans import normalize, scan_orphans
from tablepolicy.runtime.spark.session import SparkOptions, start_session
from tests.integration.conftest import Lake, sqlite_catalog

pytestmark = pytest.mark.spark

HIDDEN = ["_SUCCESS", "data/.part-00000.parquet.crc", "data/_temporary/0/_temporary/part-00001.parquet",
          "data/_year=2024/.part-00002.parquet.crc", "metadata/.v9.metadata.json.crc", "data/_spark_metadata/0"]
STRAYS = ["data/stray.parquet", "data/_year=2024/stray.parquet", "metadata/stray.avro"]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    root = tmp_path_factory.mktemp("orphans-lake")
    (root / "warehouse").mkdir()
    config = sqlite_catalog(root, "olake")
    with contextlib.ExitStack() as stack:
        spark = start_session(config, SparkOptions())
        stack.callback(spark.stop)
        yield Lake(config, spark)


def test_the_scan_and_sparks_removal_agree(lake: Lake) -> None:
    sql = lake.spark.sql
    sql("CREATE NAMESPACE IF NOT EXISTS olake.db")
    sql("CREATE TABLE olake.db.events (id BIGINT, msg STRING, _year INT) USING iceberg PARTITIONED BY (_year)")
    sql("INSERT INTO olake.db.events VALUES (1, 'a', 2024), (2, 'b', 2025)")
    sql("ALTER TABLE olake.db.events CREATE TAG v1")
    sql("DELETE FROM olake.db.events WHERE _year = 2024")  # v1 alone reaches the 2024 file now
    sql("ALTER TABLE olake.db.events CREATE BRANCH audit")
    sql("INSERT INTO olake.db.events.branch_audit VALUES (3, 'c', 2026)")  # a file only the branch reaches
    sql("CALL olake.system.compute_table_stats(table => 'db.events')")
    sql("CALL olake.system.compute_partition_stats(table => 'db.events')")

    with CatalogReader(lake.config) as reader:
        table = reader.pyiceberg_table(("db", "events"), fresh=True)
    assert table is not None
    assert table.metadata.statistics and table.metadata.partition_statistics
    assert {"v1", "audit", "main"} <= set(table.metadata.refs)
    root = Path(normalize(table.location()))
    assert (root / "data" / "_year=2024").is_dir()  # a partition directory that looks hidden
    for relative in HIDDEN + STRAYS:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(b"\0" * 16)
    ten_days_ago = (datetime.now(UTC) - timedelta(days=10)).timestamp()
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (ten_days_ago, ten_days_ago))

    guard = datetime.now(UTC) - timedelta(days=3)
    scan = scan_orphans(table, guard)
    assert scan.refused is None, scan.refused
    assert sorted(f.path for f in scan.old) == sorted(str(root / s) for s in STRAYS)
    # Hadoop's local filesystem wrote a .crc checksum beside every file Spark wrote: hidden too, never orphans
    checksums = [p for p in root.rglob(".*.crc") if str(p.relative_to(root)) not in HIDDEN]
    assert checksums and scan.hidden == len(HIDDEN) + len(checksums)

    removal = action_sql(RemoveOrphanFiles(table=("db", "events"), older_than=guard, reason="agreement"), "olake")
    assert "equal_schemes => map('s3a,s3n', 's3')" in removal and "prefix_mismatch_mode => 'ERROR'" in removal
    removed = sorted(normalize(row["orphan_file_location"]) for row in sql(removal).collect())
    assert removed == sorted(f.path for f in scan.old)

    assert all((root / relative).exists() for relative in HIDDEN)
    lake.reload()
    with CatalogReader(lake.config) as reader:
        after = reader.pyiceberg_table(("db", "events"), fresh=True)
    assert after is not None and scan_orphans(after, guard).files == 0
    assert sql("SELECT id FROM olake.db.events VERSION AS OF 'v1' ORDER BY id").collect() == [(1,), (2,)]
    assert sql("SELECT id FROM olake.db.events.branch_audit ORDER BY id").collect() == [(2,), (3,)]
    assert sql("SELECT id FROM olake.db.events ORDER BY id").collect() == [(2,)]

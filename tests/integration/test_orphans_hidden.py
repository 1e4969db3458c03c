"""What the JVM-free orphan decision counts as reachable or hidden, on local disk and on a moto S3 server, as
Iceberg 1.10's remove_orphan_files does: hidden paths are never candidates (so a table whose only unreferenced
files are hidden is not due, and maintain starts no Spark for it); statistics and partition statistics files,
the metadata log, and files only a tag or a branch reaches stay reachable; a metadata file dropped from the log
is an orphan (Spark's procedure reads the current log only)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from pyiceberg.table.statistics import PartitionStatisticsFile, StatisticsFile
from pyiceberg.table.update import SetPartitionStatisticsUpdate

from tablepolicy.runtime.orphans import is_hidden, normalize, scan_orphans
from tests.catalog_fixtures import create_examples, embedded_catalog
from tests.cli_runner import pyspark_blocker, tablepolicy_process
from tests.s3server import S3Server, s3_server

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "hidden"
LATER = datetime.now(UTC) + timedelta(days=1)  # every file here is older than this guard (S3 cannot back-date)
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("msg", pa.string())])


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.bucket(BUCKET)
        yield server


@pytest.fixture(params=["local", "s3"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> SqlCatalog:
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    if request.param == "local":
        made = SqlCatalog("lake", uri=uri, warehouse=(tmp_path / "wh").as_uri())
    else:
        server: S3Server = request.getfixturevalue("s3")
        made = SqlCatalog("lake", uri=uri, warehouse=f"s3://{BUCKET}/{tmp_path.name}", **server.pyiceberg_properties())
    made.create_namespace("logs")
    return made


def appended(table: Table, *ids: int, branch: str | None = None) -> Table:
    rows = pa.table({"id": list(ids), "msg": ["x" * 40] * len(ids)}, schema=SCHEMA)
    if branch is None:
        table.append(rows)
    else:
        table.append(rows, branch=branch)
    return table.refresh()


def write(table: Table, relative: str, body: bytes = b"\0") -> str:
    """A file under the table location, written through its FileIO (local or S3); its path as listed."""
    location = f"{table.location().rstrip('/')}/{relative}"
    with table.io.new_output(location).create(overwrite=True) as out:
        out.write(body)
    return normalize(location)


def candidates(table: Table) -> list[str]:
    scan = scan_orphans(table, LATER)
    assert scan.refused is None, scan.refused
    return [f.path for f in scan.old]


@pytest.mark.parametrize(("path", "partitions", "hidden"), [
    ("data/part-0.parquet", (), False),
    ("_SUCCESS", (), True),
    ("data/.part-0.parquet.crc", (), True),
    ("data/_temporary/0/task/part-0.parquet", (), True),
    ("metadata/.v3.metadata.json.crc", (), True),
    ("data/_year=2024/part-0.parquet", (), True),  # no field _year: an ordinary hidden directory
    ("data/_year=2024/part-0.parquet", ("_year=",), False),  # a partition directory of field _year
    ("data/_year=2024/.part-0.parquet.crc", ("_year=",), True),
    ("data/year=2024/part-0.parquet", (), False),
    ("data/a_b/c.d/part-0.parquet", (), False),  # only the first character counts
])
def test_the_hidden_rule_is_icebergs(path: str, partitions: tuple[str, ...], hidden: bool) -> None:
    assert is_hidden(path, partitions) is hidden


def test_hidden_files_are_never_candidates(catalog: SqlCatalog) -> None:
    table = appended(catalog.create_table("logs.events", schema=SCHEMA), 1, 2)
    for relative in ("_SUCCESS", "data/.part-0.parquet.crc", "data/_temporary/0/part-1.parquet",
                     "metadata/.v1.metadata.json.crc", "data/_year=2024/part-2.parquet"):
        write(table, relative)
    scan = scan_orphans(table, LATER)
    assert (scan.files, scan.hidden, scan.refused) == (0, 5, None)
    stray = write(table, "data/stray.parquet")
    assert candidates(table) == [stray]


def test_statistics_and_partition_statistics_files_are_reachable(catalog: SqlCatalog) -> None:
    table = appended(catalog.create_table("logs.events", schema=SCHEMA), 1, 2)
    snapshot = table.current_snapshot()
    assert snapshot is not None
    snapshot_id = snapshot.snapshot_id
    stats_name, partition_stats_name = f"{snapshot_id}-stats.puffin", f"partition-stats-{snapshot_id}.parquet"
    stats, partition_stats = (f"{table.location()}/metadata/{name}" for name in (stats_name, partition_stats_name))
    write(table, f"metadata/{stats_name}", b"PFA1" + b"\0" * 20 + b"PFA1")
    write(table, f"metadata/{partition_stats_name}", b"PAR1")
    assert len(candidates(table)) == 2  # registered with no metadata yet: both are orphans

    table.update_statistics().set_statistics(StatisticsFile(
        snapshot_id=snapshot.snapshot_id, statistics_path=stats, file_size_in_bytes=28,
        file_footer_size_in_bytes=20, blob_metadata=[])).commit()
    table = table.refresh()
    assert candidates(table) == [normalize(partition_stats)]
    with table.transaction() as tx:
        tx._apply((SetPartitionStatisticsUpdate(partition_statistics=PartitionStatisticsFile(
            snapshot_id=snapshot.snapshot_id, statistics_path=partition_stats, file_size_in_bytes=4)),))
    table = table.refresh()
    assert [s.statistics_path for s in table.metadata.partition_statistics] == [partition_stats]
    assert candidates(table) == []


def test_the_metadata_log_is_reachable_and_what_fell_out_of_it_is_not(catalog: SqlCatalog) -> None:
    table = catalog.create_table("logs.events", schema=SCHEMA,
                                 properties={"write.metadata.previous-versions-max": "2"})
    for batch in range(4):
        table = appended(table, batch)
    logged = [normalize(entry.metadata_file) for entry in table.metadata.metadata_log]
    assert len(logged) == 2
    every_metadata = sorted(p for p in _listed(table) if p.endswith(".metadata.json"))
    assert len(every_metadata) == 5  # created, then one per append
    dropped = sorted(set(every_metadata) - {*logged, normalize(table.metadata_location)})
    assert len(dropped) == 2 and candidates(table) == dropped


def test_files_only_a_tag_reaches_are_not_orphans(catalog: SqlCatalog) -> None:
    table = appended(catalog.create_table("logs.events", schema=SCHEMA), 1)
    tagged = table.current_snapshot()
    assert tagged is not None
    table.manage_snapshots().create_tag(tagged.snapshot_id, "v1").commit()
    with table.transaction() as tx:
        tx.delete("id >= 0")
    table = table.refresh()
    deleted = table.current_snapshot()
    assert deleted is not None
    table = appended(table, 2)
    later = table.current_snapshot()
    assert later is not None
    kept = {m.manifest_path for s in (tagged, later) for m in s.manifests(table.io)}
    only_deleted = {normalize(m.manifest_path) for m in deleted.manifests(table.io) if m.manifest_path not in kept}
    table.maintenance.expire_snapshots().by_id(deleted.snapshot_id).commit()
    table = table.refresh()
    main = {s.snapshot_id for s in _ancestors(table)}
    assert tagged.snapshot_id not in main and deleted.snapshot_id not in main  # the tag alone keeps it
    assert table.snapshot_by_name("v1") is not None
    # the expired snapshot's manifest list and the manifest only it had are orphans (pyiceberg removes no
    # files); the files of the tagged snapshot, the first data file among them, are not
    assert len(only_deleted) == 1
    assert candidates(table) == sorted({normalize(deleted.manifest_list), *only_deleted})


def test_files_only_a_branch_reaches_are_not_orphans(catalog: SqlCatalog) -> None:
    table = appended(catalog.create_table("logs.events", schema=SCHEMA), 1)
    head = table.current_snapshot()
    assert head is not None
    table.manage_snapshots().create_branch(head.snapshot_id, "audit").commit()
    table = appended(table.refresh(), 2, branch="audit")
    branch = table.snapshot_by_name("audit")
    assert branch is not None and branch.snapshot_id not in {s.snapshot_id for s in _ancestors(table)}
    only_branch = {normalize(task.file.file_path) for task in table.scan(snapshot_id=branch.snapshot_id).plan_files()}
    only_branch -= {normalize(task.file.file_path) for task in table.scan().plan_files()}
    assert len(only_branch) == 1 and only_branch <= set(_listed(table))
    assert candidates(table) == []


def _ancestors(table: Table) -> list[Any]:
    from pyiceberg.table.snapshots import ancestors_of

    return list(ancestors_of(table.current_snapshot(), table.metadata))


def _listed(table: Table) -> list[str]:
    from tablepolicy.runtime.orphans import stored_files

    return list(stored_files(table.location(), table.io.properties))


def test_a_table_with_only_hidden_unreferenced_files_starts_no_spark(tmp_path: Path) -> None:
    """Orphan removal declared, old hidden files under the location and nothing else unreferenced: nothing is
    due, and the run, in a process where pyspark cannot be imported, succeeds."""
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    create_examples(policies)
    table = embedded_catalog(policies).load_table("logs.app_events")
    root = Path(normalize(table.location()))
    ten_days_ago = (datetime.now(UTC) - timedelta(days=10)).timestamp()
    for relative in ("_SUCCESS", "data/.part-0.parquet.crc", "data/_temporary/0/part-1.parquet",
                     "metadata/.v1.metadata.json.crc"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(b"\0" * 64)
        os.utime(root / relative, (ten_days_ago, ten_days_ago))
    run = tablepolicy_process("maintain", "policies", cwd=tmp_path, env=pyspark_blocker(tmp_path / "no-spark"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No maintenance due on 4 table(s)." in run.stdout
    assert "no unreferenced file older than" in run.stdout

    (root / "data" / "stray.parquet").write_bytes(b"\0" * 64)  # the same run with one real orphan: due
    os.utime(root / "data" / "stray.parquet", (ten_days_ago, ten_days_ago))
    due = tablepolicy_process("maintain", "policies", "--dry-run", cwd=tmp_path,
                              env=pyspark_blocker(tmp_path / "no-spark"))
    assert "1 unreferenced file(s), 64 bytes" in due.stdout, due.stdout + due.stderr

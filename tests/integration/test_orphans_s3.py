"""Orphan scans and storage listings on object storage, without a JVM: a table on a real S3 server (moto on
127.0.0.1) is listed through the catalog's own S3 properties (endpoint, keys, region), as pyiceberg reads it,
for ``s3://``, ``s3a://`` and ``s3n://`` locations alike; listings past S3's 1,000-key pages come back whole;
a file the metadata names under another bucket or prefix than the listing's refuses removal, saying what
differs; hidden paths are never candidates."""

from __future__ import annotations

import io
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from tablepolicy.compiler.maintenance.actions import RemoveOrphanFiles
from tablepolicy.compiler.render.maintenance import action_sql
from tablepolicy.runtime.orphans import normalize, reachable_files, scan_orphans, stored_files
from tests.s3server import S3Server, s3_server

BUCKET, OTHER = "orphans", "elsewhere"
LATER = datetime.now(UTC) + timedelta(days=1)  # a guard every object here is older than (S3 cannot back-date)
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "msg", StringType()))


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.bucket(BUCKET)
        server.bucket(OTHER)
        yield server


def make_table(s3: S3Server, tmp_path: Path, scheme: str = "s3", appends: int = 3,
               spec: PartitionSpec | None = None, schema: Schema = SCHEMA) -> tuple[SqlCatalog, Table]:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}",
                         warehouse=f"{scheme}://{BUCKET}/{tmp_path.name}", **s3.pyiceberg_properties())
    catalog.create_namespace("logs")
    table: Table = catalog.create_table("logs.events", schema=schema, partition_spec=spec or PartitionSpec())
    for batch in range(appends):
        columns = {f.name: [batch] if f.name != "msg" else ["x" * 50] for f in schema.fields}
        table.append(pa.table(columns, schema=schema.as_arrow()))
    return catalog, catalog.load_table("logs.events")


def put(s3: S3Server, keys: list[str], body: bytes = b"\0", bucket: str = BUCKET) -> None:
    client: Any = s3.client()
    client.meta.config.max_pool_connections = 16  # a connection per thread
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda key: client.put_object(Bucket=bucket, Key=key, Body=body), keys))


def key_of(table: Table, relative: str) -> str:
    return f"{normalize(table.location()).split('/', 1)[1]}/{relative}"


@pytest.mark.parametrize("scheme", ["s3", "s3a"])
def test_orphans_are_found_with_the_catalogs_s3_settings(s3: S3Server, scheme: str, tmp_path: Path) -> None:
    _, table = make_table(s3, tmp_path, scheme)
    location = table.location()
    assert location.startswith(f"{scheme}://{BUCKET}/")
    stray = f"{normalize(location)}/data/stray.parquet"  # bucket/key, as the listing spells it
    put(s3, [key_of(table, "data/stray.parquet")])

    stored = stored_files(location, table.io.properties)
    assert stray in stored and len(stored) > 3
    assert all(path.startswith(f"{BUCKET}/{tmp_path.name}/") for path in stored)
    scan = scan_orphans(table, LATER)
    assert [f.path for f in scan.old] == [stray] and scan.young == 0 and scan.refused is None
    assert scan_orphans(table, datetime.now(UTC) - timedelta(days=1)).young == 1


@pytest.mark.parametrize("total", [1_001, 2_500, 10_000])
def test_listings_past_one_page_are_whole(s3: S3Server, total: int, tmp_path: Path) -> None:
    """S3 answers 1,000 keys a page: every page is listed, each object judged once."""
    _, table = make_table(s3, tmp_path, appends=2)
    reachable = reachable_files(table)
    live = {p for p in stored_files(table.location(), table.io.properties) if p in reachable}
    assert len(live) == 2 * 3 + 3  # a data file, a manifest, a manifest list per append; 3 metadata files
    strays = [key_of(table, f"data/batch={i % 37}/stray-{i:05d}.parquet") for i in range(total - len(live))]
    put(s3, strays)

    scan = scan_orphans(table, LATER)
    assert (scan.listed, scan.files, scan.young, scan.hidden) == (total, total - len(live), 0, 0)
    assert {f.path for f in scan.old} == {f"{BUCKET}/{key}" for key in strays}
    assert scan.refused is None  # 1-byte strays: a small share of the bytes


@pytest.mark.parametrize(("first", "then"), [("s3", "s3a"), ("s3a", "s3"), ("s3n", "s3"), ("s3", "s3n")])
def test_schemes_that_name_one_store_are_one(s3: S3Server, first: str, then: str, tmp_path: Path) -> None:
    """A table under one spelling whose metadata also names files under another (added with that spelling, as
    another engine writes them): the listing spells them one way; nothing live is a candidate, the stray is."""
    _, table = make_table(s3, tmp_path, first, appends=2)
    added = key_of(table, "data/added-elsewhere.parquet")
    put(s3, [added], _parquet())
    table.add_files([f"{then}://{BUCKET}/{added}"])
    table = table.refresh()
    spelled = {path.split("://", 1)[0] for path in _data_files(table)}
    assert spelled == {first, then} and table.location().startswith(f"{first}://")
    clean = scan_orphans(table, LATER)
    assert (clean.files, clean.hidden, clean.refused) == (0, 0, None) and clean.listed == 3 * 3 + 4

    put(s3, [key_of(table, "data/stray.parquet")])
    scan = scan_orphans(table, LATER)
    assert [f.path for f in scan.old] == [f"{normalize(table.location())}/data/stray.parquet"]
    assert scan.refused is None


def _data_files(table: Table) -> list[str]:
    return [task.file.file_path for task in table.scan().plan_files()]


def _parquet(rows: int = 1) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"id": list(range(rows)), "msg": ["z"] * rows}, schema=SCHEMA.as_arrow()), sink)
    return sink.getvalue()


@pytest.mark.parametrize(("bucket", "prefix", "differs"), [
    (OTHER, None, f"bucket (authority) '{OTHER}' vs '{BUCKET}'"),
    (BUCKET, "moved/away", "prefix '/moved/away' vs '/{table}'"),
])
def test_a_file_the_metadata_names_elsewhere_refuses_removal(
        s3: S3Server, bucket: str, prefix: str | None, differs: str, tmp_path: Path) -> None:
    """The metadata names a data file under another bucket (or prefix) while the listing holds a file at the
    same path under the table location: the same file spelled two ways, or a table moved without its
    metadata. Removal is refused, naming both spellings and what differs."""
    _, table = make_table(s3, tmp_path, appends=1)
    here = key_of(table, "data/shared.parquet")
    table_prefix = here.rsplit("/data/", 1)[0]
    there = here if prefix is None else f"{prefix}/data/shared.parquet"
    put(s3, [here], _parquet())
    put(s3, [there], _parquet(), bucket=bucket)
    table.add_files([f"s3://{bucket}/{there}"])
    table = table.refresh()

    scan = scan_orphans(table, LATER)
    assert scan.refused is not None and scan.refused == scan.mismatch
    assert f"s3://{bucket}/{there}" in scan.refused and f"s3://{BUCKET}/{here}" in scan.refused
    assert differs.format(table=table_prefix) in scan.refused
    assert "correct the table location or the catalog" in scan.refused


def test_a_file_elsewhere_with_no_namesake_here_is_no_mismatch(s3: S3Server, tmp_path: Path) -> None:
    """Data files outside the location (add_files, write.data.path) are legitimate: only a listed file at the
    same path makes a mismatch."""
    _, table = make_table(s3, tmp_path, appends=1)
    put(s3, ["imported/part-0.parquet"], _parquet(), bucket=OTHER)
    table.add_files([f"s3://{OTHER}/imported/part-0.parquet"])
    put(s3, [key_of(table, "data/stray.parquet")])
    scan = scan_orphans(table.refresh(), LATER)
    assert (scan.files, scan.mismatch, scan.refused) == (1, None, None)


def test_metadata_outside_the_location_refuses_removal(s3: S3Server, tmp_path: Path) -> None:
    """A table whose location says one prefix while its metadata file lives under another (registered from a
    copy whose location was not updated): the listing of the location may not be its files."""
    catalog, table = make_table(s3, tmp_path, appends=1)
    client: Any = s3.client()
    metadata_key = table.metadata_location.split(f"{BUCKET}/", 1)[1]
    text = client.get_object(Bucket=BUCKET, Key=metadata_key)["Body"].read().decode()
    copied = text.replace(f'"location":"{table.location()}"', f'"location":"s3://{BUCKET}/{tmp_path.name}/moved"')
    assert copied != text
    client.put_object(Bucket=BUCKET, Key=f"{tmp_path.name}/copies/v1.metadata.json", Body=copied.encode())
    put(s3, [f"{tmp_path.name}/moved/data/stray.parquet"])
    moved = catalog.register_table("logs.moved", f"s3://{BUCKET}/{tmp_path.name}/copies/v1.metadata.json")

    scan = scan_orphans(moved, LATER)
    assert scan.refused is not None and "is outside the table location" in scan.refused
    assert f"s3://{BUCKET}/{tmp_path.name}/copies/v1.metadata.json" in scan.refused


HIDDEN = ["_SUCCESS", "data/.part-0.parquet.crc", "data/_temporary/0/part-1.parquet", "metadata/.trash/v0.json",
          "data/_year=2024/part-2.parquet"]


@pytest.mark.parametrize("partitioned", [False, True])
def test_hidden_paths_are_not_candidates(s3: S3Server, partitioned: bool, tmp_path: Path) -> None:
    """What Spark's listing skips (names starting with _ or .) is not an orphan here either, except a partition
    directory of a field whose name starts so (``_year=2024`` when the table has a field ``_year``)."""
    schema = Schema(*SCHEMA.fields, NestedField(3, "_year", LongType(), required=False))
    spec = PartitionSpec(PartitionField(3, 1000, IdentityTransform(), "_year")) if partitioned else None
    _, table = make_table(s3, tmp_path, appends=1 if partitioned else 0, spec=spec, schema=schema)
    put(s3, [key_of(table, path) for path in HIDDEN])

    scan = scan_orphans(table, LATER)
    partition_file = f"{normalize(table.location())}/data/_year=2024/part-2.parquet"
    if partitioned:
        assert ([f.path for f in scan.old], scan.hidden) == ([partition_file], 4)
    else:
        assert (scan.files, scan.hidden) == (0, 5)


def test_spark_removal_names_equal_schemes_and_refuses_prefix_mismatches() -> None:
    sql = action_sql(RemoveOrphanFiles(table=("logs", "it's"), older_than=datetime(2026, 1, 2, tzinfo=UTC),
                                       reason="1 file"), "lake")
    assert sql == ("CALL `lake`.system.`remove_orphan_files`(\n"
                   "  table => '`lake`.`logs`.`it\\'s`',\n"
                   "  older_than => TIMESTAMP '2026-01-02 00:00:00+00:00',\n"
                   "  equal_schemes => map('s3a,s3n', 's3'),\n"
                   "  prefix_mismatch_mode => 'ERROR'\n)")

"""An erasure's rewritten file is written as the file it replaces was (runtime/erasure/like_source.py): a source
file written gzip, with a dictionary for one column and none for the others, in row groups of 2,500 rows, is
replaced by a file written the same way; the table's own properties win where they are set. Real files on a
real SQLite catalog's table, no JVM. (Against Spark's own rewrite of a Spark-written file: bench/erase_bytes.py,
1.000x and 0.991x its bytes.)"""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table, WriteTask
from pyiceberg.types import LongType, NestedField, StringType

from tablepolicy.runtime.erasure.like_source import DICTIONARY, source_layout, write_like

SCHEMA = Schema(NestedField(1, "event_id", LongType(), required=False),
                NestedField(2, "user_id", StringType(), required=False),
                NestedField(3, "payload", StringType(), required=False))
ROWS = 10_000


def rows() -> pa.Table:
    return pa.table({"event_id": pa.array(range(ROWS), pa.int64()),
                     "user_id": pa.array([f"user-{i // 10:05d}" for i in range(ROWS)]),
                     "payload": pa.array([f"payload {i % 97}" for i in range(ROWS)])})


def with_ids(table: pa.Table) -> pa.Table:
    fields = [f.with_metadata({b"PARQUET:field_id": str(i).encode()}) for i, f in enumerate(table.schema, start=1)]
    return table.cast(pa.schema(fields))


def table_of(tmp_path: Path, properties: dict[str, str]) -> Table:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace("shop")
    return catalog.create_table("shop.events", SCHEMA, properties=properties)


def written(path: str) -> tuple[str, dict[str, bool], list[int]]:
    """(codec, column -> written with a dictionary, rows of each row group)"""
    meta = pq.ParquetFile(path.removeprefix("file:")).metadata
    first = meta.row_group(0)
    columns = {first.column(i).path_in_schema: bool(DICTIONARY & set(first.column(i).encodings))
               for i in range(meta.num_columns)}
    return first.column(0).compression, columns, [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]


@pytest.mark.parametrize(("properties", "codec"), [
    ({}, "GZIP"),  # nothing set: the source's codec
    ({"write.parquet.compression-codec": "zstd"}, "ZSTD"),  # the table says: its codec wins
])
def test_the_rewrite_is_written_as_its_source(tmp_path: Path, properties: dict[str, str], codec: str) -> None:
    table = table_of(tmp_path, properties)
    source = tmp_path / "source.parquet"
    pq.write_table(with_ids(rows()), source, compression="gzip", use_dictionary=["user_id"], row_group_size=2_500)
    assert written(str(source)) == ("GZIP", {"event_id": False, "user_id": True, "payload": False},
                                    [2_500, 2_500, 2_500, 2_500])
    kept = rows().filter(pa.compute.not_equal(rows().column("user_id"), "user-00042"))
    task = WriteTask(write_uuid=uuid.uuid4(), task_id=0, schema=SCHEMA, record_batches=kept.to_batches())
    data_file = write_like(table.io, table.metadata, task, source_layout(table.io, str(source)))
    assert written(data_file.file_path) == (codec, {"event_id": False, "user_id": True, "payload": False},
                                            [2_500, 2_500, 2_500, 2_490])
    assert data_file.record_count == ROWS - 10 and data_file.file_size_in_bytes == Path(
        data_file.file_path.removeprefix("file:")).stat().st_size
    assert pq.read_table(data_file.file_path.removeprefix("file:")).column("user_id").to_pylist() == \
        kept.column("user_id").to_pylist()


def test_a_renamed_column_keeps_its_encoding_by_field_id(tmp_path: Path) -> None:
    """The source names the column as it was written (``uid``); the table calls it user_id now."""
    table = table_of(tmp_path, {})
    source = tmp_path / "source.parquet"
    old = rows().rename_columns(["event_id", "uid", "payload"])
    pq.write_table(with_ids(old), source, compression="snappy", use_dictionary=["uid"])
    task = WriteTask(write_uuid=uuid.uuid4(), task_id=0, schema=SCHEMA, record_batches=rows().to_batches())
    data_file = write_like(table.io, table.metadata, task, source_layout(table.io, str(source)))
    assert written(data_file.file_path)[:2] == ("SNAPPY", {"event_id": False, "user_id": True, "payload": False})


@pytest.mark.parametrize(("properties", "dictionary"), [
    # pyarrow's writer (pyiceberg's) encodes every column with a dictionary; Spark's keeps one only where it pays:
    # not for a unique id (its dictionary is the values again, plus indices), yes for 1,000 users and 97 payloads
    ({}, {"event_id": False, "user_id": True, "payload": True}),
    # a dictionary larger than the table allows is dropped, as parquet-mr drops it: 1,000 user ids take 14 KB
    ({"write.parquet.dict-size-bytes": "8192"}, {"event_id": False, "user_id": False, "payload": True}),
], ids=["pays", "dictionary too large"])
def test_a_dictionary_the_source_took_by_default_is_kept_only_where_it_pays(
    tmp_path: Path, properties: dict[str, str], dictionary: dict[str, bool]
) -> None:
    table = table_of(tmp_path, properties)
    source = tmp_path / "source.parquet"
    pq.write_table(with_ids(rows()), source, compression="zstd")  # pyarrow's defaults: a dictionary everywhere
    assert written(str(source))[1] == {"event_id": True, "user_id": True, "payload": True}
    task = WriteTask(write_uuid=uuid.uuid4(), task_id=0, schema=SCHEMA, record_batches=rows().to_batches())
    data_file = write_like(table.io, table.metadata, task, source_layout(table.io, str(source)))
    assert written(data_file.file_path)[1] == dictionary
    plain = tmp_path / "everything.parquet"  # and what the dropped dictionary would have cost
    pq.write_table(with_ids(rows()), plain, compression="zstd", compression_level=3)
    if not dictionary["event_id"]:
        assert data_file.file_size_in_bytes < plain.stat().st_size


ON, FPP, MAX = ("write.parquet.bloom-filter-enabled.column.", "write.parquet.bloom-filter-fpp.column.",
                "write.parquet.bloom-filter-max-bytes")


def filters(path: str) -> dict[str, list[int]]:
    """column -> the bytes of its bloom filter's bitset in each row group (0: none; a power of two, after a header
    of a few bytes)"""
    meta = pq.ParquetFile(path.removeprefix("file:")).metadata
    return {meta.row_group(0).column(i).path_in_schema: [
        1 << (length.bit_length() - 1) if (length := meta.row_group(g).column(i).bloom_filter_length or 0) > 0 else 0
        for g in range(meta.num_row_groups)] for i in range(meta.num_columns)}


@pytest.mark.parametrize(("properties", "expected"), [
    ({}, {"event_id": [0, 0], "user_id": [0, 0], "payload": [0, 0]}),  # none asked for: none written
    # Iceberg's fpp (0.01) for the 500 distinct user ids of a row group: 1 KiB (pyarrow sizes by what it writes)
    ({ON + "user_id": "true"}, {"event_id": [0, 0], "user_id": [1024, 1024], "payload": [0, 0]}),
    # 5,000 distinct ids: 8 KiB; a smaller fpp costs more bytes
    ({ON + "user_id": "true", FPP + "user_id": "0.0001", ON + "event_id": "true", ON + "payload": "false"},
     {"event_id": [8192, 8192], "user_id": [2048, 2048], "payload": [0, 0]}),
    ({ON + "event_id": "true", MAX: "4096"}, {"event_id": [4096, 4096], "user_id": [0, 0], "payload": [0, 0]}),
    ({ON + "event_id": "true", MAX: "5000"}, {"event_id": [4096, 4096], "user_id": [0, 0], "payload": [0, 0]}),
    ({ON + "gone": "true"}, {"event_id": [0, 0], "user_id": [0, 0], "payload": [0, 0]}),  # no such column
], ids=["none", "default size", "fpp per column", "max bytes", "max bytes no power of two", "no such column"])
def test_the_rewrite_writes_the_bloom_filters_the_table_asks_for(
        tmp_path: Path, properties: dict[str, str], expected: dict[str, list[int]]) -> None:
    """pyiceberg's own writer writes none (and warns, an error in this suite): the rewrite writes them itself."""
    table = table_of(tmp_path, properties)
    source = tmp_path / "source.parquet"
    pq.write_table(with_ids(rows()), source, row_group_size=5_000)
    task = WriteTask(write_uuid=uuid.uuid4(), task_id=0, schema=SCHEMA, record_batches=rows().to_batches())
    data_file = write_like(table.io, table.metadata, task, source_layout(table.io, str(source)))
    assert filters(data_file.file_path) == expected

"""The reader table against real readers on tables Spark writes: delete files (position deletes on format 2,
deletion vectors on format 3) and v3 types Spark adds through Iceberg's API, read by Spark 3.5 with the Iceberg
1.10 runtime, by DuckDB's iceberg extension and by pyiceberg. A "yes" must read the rows the other readers read,
a "no" must fail: a row of compiler/iceberg/readers.py that a real reader contradicts fails here."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import FixedType, LongType, NestedField, TimeType, UUIDType

from tablepolicy.compiler.iceberg.readers import support
from tests.duckdb_reader import VERSION as DUCKDB
from tests.duckdb_reader import duckdb_rows
from tests.integration.conftest import Lake, sqlite_lake

SPARK, PYICEBERG = "3.5", "0.12"


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    with sqlite_lake(tmp_path_factory.mktemp("readers")) as lake:
        lake.spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.r")
        yield lake


def pyiceberg(lake: Lake) -> Catalog:
    return load_catalog(lake.config.name, **lake.config.properties)


def norm(value: Any) -> Any:
    """One form for what readers return differently: uuid as text, binary as bytes."""
    if isinstance(value, uuid.UUID):
        return str(value)
    return bytes(value) if isinstance(value, bytearray) else value


def rows(found: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(norm(v) for v in row) for row in found), key=repr)


def spark_rows(lake: Lake, name: str) -> list[tuple[Any, ...]]:
    lake.reload()
    return rows(lake.spark.table(f"lake.r.{name}").collect())


def pyiceberg_rows(lake: Lake, name: str) -> list[tuple[Any, ...]]:
    return rows(r.values() for r in pyiceberg(lake).load_table(f"r.{name}").scan().to_arrow().to_pylist())


def check(lake: Lake, tmp_path: Path, name: str, features: list[str], expected: list[tuple[Any, ...]]) -> None:
    """Each reader, for each feature: reads ``expected`` where the table says yes, fails where it says no."""
    location = pyiceberg(lake).load_table(f"r.{name}").metadata_location
    readers = {("spark", SPARK): lambda: spark_rows(lake, name), ("duckdb", DUCKDB): lambda: rows(
        duckdb_rows(location, tmp_path)), ("pyiceberg", PYICEBERG): lambda: pyiceberg_rows(lake, name)}
    for (engine, version), read in readers.items():
        claims = {support(engine, version, f).value for f in features}
        if claims == {"yes"}:
            assert read() == expected, f"{engine} {version} reads {features} otherwise"
        elif "no" in claims:
            with pytest.raises(Exception):  # noqa: B017 - whatever the reader raises: it cannot read the table
                read()
        # unknown: nothing to hold the reader to (a TG113 warning for users)


@pytest.mark.parametrize(("version", "features"), [
    (2, ["format-v2", "position-deletes"]), (3, ["format-v3", "deletion-vectors"]),
], ids=["position deletes on format 2", "deletion vectors on format 3"])
def test_merge_on_read_deletes(lake: Lake, tmp_path: Path, version: int, features: list[str]) -> None:
    name = f"deletes_v{version}"
    lake.spark.sql(f"CREATE TABLE lake.r.{name} (id bigint, s string) USING iceberg TBLPROPERTIES "
                   f"('format-version'='{version}', 'write.delete.mode'='merge-on-read')")
    lake.spark.sql(f"INSERT INTO lake.r.{name} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    lake.spark.sql(f"DELETE FROM lake.r.{name} WHERE id IN (2, 3)")
    deletes = lake.spark.sql(f"SELECT file_path FROM lake.r.{name}.delete_files").collect()
    assert {Path(r.file_path).suffix for r in deletes} == {".parquet" if version == 2 else ".puffin"}
    check(lake, tmp_path, name, features, [(1, "a"), (4, "d")])


def add_column(lake: Lake, name: str, column: str, iceberg_type: str) -> None:
    """A column of a type Spark's DDL cannot write, added through Iceberg's Java API in Spark's JVM."""
    jvm = lake.spark._jvm
    catalog = lake.spark._jsparkSession.sessionState().catalogManager().catalog("lake").icebergCatalog()
    table = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"r.{name}"))
    types = jvm.org.apache.iceberg.types.Types
    kind = {"timestamp_ns": types.TimestampNanoType.withoutZone(),
            "timestamptz_ns": types.TimestampNanoType.withZone()}[iceberg_type]
    table.updateSchema().addColumn(column, kind).commit()


@pytest.mark.parametrize("kind", ["timestamp_ns", "timestamptz_ns"])
def test_nanosecond_timestamps(lake: Lake, tmp_path: Path, kind: str) -> None:
    name = f"v3_{kind}"
    lake.spark.sql(f"CREATE TABLE lake.r.{name} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='3')")
    lake.spark.sql(f"INSERT INTO lake.r.{name} VALUES (1), (2)")
    add_column(lake, name, "ns", kind)
    check(lake, tmp_path, name, ["format-v3", f"type-{kind}"], [(1, None), (2, None)])


def test_types_spark_reads_otherwise_or_not(lake: Lake, tmp_path: Path) -> None:
    """time, uuid and fixed written by pyiceberg into the catalog Spark reads."""
    table = pyiceberg(lake).create_table("r.plain_types", Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "u", UUIDType(), required=False),
        NestedField(3, "f", FixedType(3), required=False)))
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "u": pa.array([uuid.UUID(int=7).bytes, None],
                                                                              pa.binary(16)),
                           "f": pa.array([b"abc", None], pa.binary(3))}))
    check(lake, tmp_path, "plain_types", ["type-uuid", "type-fixed"],
          [(1, str(uuid.UUID(int=7)), b"abc"), (2, None, None)])
    timed = pyiceberg(lake).create_table("r.times", Schema(NestedField(1, "id", LongType(), required=False),
                                                           NestedField(2, "t", TimeType(), required=False)))
    timed.append(pa.table({"id": pa.array([1], pa.int64()), "t": pa.array([None], pa.time64("us"))}))
    check(lake, tmp_path, "times", ["type-time"], [(1, None)])


def test_names_that_differ_only_by_case(lake: Lake) -> None:
    """Spark reads such a table whole, but no query can name either column: case-insensitive resolution."""
    table = pyiceberg(lake).create_table("r.cased", Schema(NestedField(1, "Quantity", LongType(), required=False),
                                                           NestedField(2, "quantity", LongType(), required=False)))
    table.append(pa.table({"Quantity": pa.array([1], pa.int64()), "quantity": pa.array([2], pa.int64())}))
    assert support("spark", SPARK, "names-case-only").value == "no"
    lake.reload()
    with pytest.raises(Exception, match=r"AMBIGUOUS_REFERENCE|ambiguous"):
        lake.spark.sql("SELECT quantity FROM lake.r.cased").collect()

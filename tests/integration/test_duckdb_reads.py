"""Each row of the reader table about DuckDB that a table pyiceberg writes can show, against the real DuckDB:
"yes" must read the rows pyiceberg reads, "no" must fail. A row the real reader contradicts fails here.
Tables with delete files and v3 types come from Spark: tests/integration/test_readers_spark.py."""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, Transform, TruncateTransform
from pyiceberg.types import FixedType, IcebergType, LongType, NestedField, StringType, TimestampType, TimeType, UUIDType

from tablepolicy.compiler.iceberg.readers import support
from tests.duckdb_reader import VERSION, duckdb_rows

ROWS: dict[str, tuple[pa.DataType, list[Any]]] = {
    "long": (pa.int64(), [1, 2, None]),
    "string": (pa.string(), ["a", "bb", None]),
    "time": (pa.time64("us"), [datetime.time(1, 2, 3), datetime.time(23, 59, 59, 999999), None]),
    "uuid": (pa.binary(16), [uuid.UUID(int=1).bytes, uuid.UUID(int=2**127).bytes, None]),
    "fixed[3]": (pa.binary(3), [b"abc", b"\x00\x01\x02", None]),
    "timestamp": (pa.timestamp("us"), [datetime.datetime(2026, 1, 1), datetime.datetime(1969, 12, 31, 23), None]),
}
TYPES: dict[str, IcebergType] = {"long": LongType(), "string": StringType(), "time": TimeType(), "uuid": UUIDType(),
                                 "fixed[3]": FixedType(3), "timestamp": TimestampType()}


@dataclass(frozen=True)
class Case:
    feature: str
    column: str = "string"  # the type of the second column, beside id: long
    format_version: int = 2
    partition: tuple[Transform[Any, Any], str] | None = field(default=None)  # transform, source column


CASES = {
    "format-v1": Case("format-v1", format_version=1),
    "format-v2": Case("format-v2"),
    "type-time": Case("type-time", "time"),
    "type-uuid": Case("type-uuid", "uuid"),
    "type-fixed": Case("type-fixed", "fixed[3]"),
    "transform-bucket": Case("transform-bucket", partition=(BucketTransform(4), "id")),
    "transform-truncate": Case("transform-truncate", partition=(TruncateTransform(1), "value")),
    "transform-time": Case("transform-time", "timestamp", partition=(DayTransform(), "value")),
}


def pyiceberg_table(root: Path, case: Case) -> tuple[str, list[tuple[Any, ...]]]:
    catalog = SqlCatalog("readers", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=(root / "lake").as_uri())
    catalog.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "value", TYPES[case.column], required=False))
    spec = PartitionSpec()
    if case.partition is not None:
        transform, source = case.partition
        spec = PartitionSpec(PartitionField(1 if source == "id" else 2, 1000, transform, "p"))
    table = catalog.create_table("ns.t", schema, partition_spec=spec,
                                 properties={"format-version": str(case.format_version)})
    arrow_type, values = ROWS[case.column]
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "value": pa.array(values, arrow_type)}))
    table = catalog.load_table("ns.t")
    rows = sorted((tuple(r.values()) for r in table.scan().to_arrow().to_pylist()), key=repr)
    return table.metadata_location, rows


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_duckdb_reads_what_the_table_says_it_reads(tmp_path: Path, case: Case) -> None:
    claim = support("duckdb", VERSION, case.feature)
    assert claim.value != "unknown", f"the reader table says nothing of {case.feature} for DuckDB {VERSION}"
    location, expected = pyiceberg_table(tmp_path, case)
    if claim.value == "yes":
        assert duckdb_rows(location, tmp_path) == expected, f"DuckDB {VERSION} reads {case.feature} otherwise"
    else:
        with pytest.raises(Exception):  # noqa: B017 - whatever DuckDB raises: it cannot read the table
            duckdb_rows(location, tmp_path)

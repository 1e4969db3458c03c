"""Reading only what a plan needs from metadata JSON gives what pyiceberg's full parse gives.

Tables of format v1 and v2 (v3 comes from Spark in the integration tests), gzip-compressed metadata,
nested types, every transform, sort orders, identifier fields, and a history of schema and partition
evolution with data, made with pyiceberg (no JVM).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from pyiceberg.types import (
    DecimalType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.runtime.catalog.reader import CatalogReader
from tests.metadata_oracle import pyiceberg_reading

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "event_time", TimestamptzType(), required=True, doc="when it happened"),
    NestedField(3, "region", StringType()),
    NestedField(4, "amount", DecimalType(12, 2)),
    NestedField(5, "tags", ListType(6, StringType(), element_required=False)),
    NestedField(7, "attrs", MapType(8, StringType(), 9, StructType(NestedField(10, "v", StringType())))),
    identifier_field_ids=[1],
)
SPEC = PartitionSpec(
    PartitionField(2, 1000, DayTransform(), "event_day"),
    PartitionField(1, 1001, BucketTransform(16), "id_bucket"),
    PartitionField(3, 1002, TruncateTransform(4), "region_trunc"),
)
ORDER = SortOrder(SortField(3, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST),
                  SortField(2, DayTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST))


@pytest.fixture
def catalog(tmp_path: Path) -> tuple[SqlCatalog, CatalogConfig]:
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": tmp_path.as_uri()}
    config = CatalogConfig("lake", props)
    sql = SqlCatalog("lake", uri=props["uri"], warehouse=props["warehouse"])
    sql.create_namespace("sales")
    return sql, config


def assert_same_reading(catalog: SqlCatalog, config: CatalogConfig, name: tuple[str, ...]) -> None:
    with CatalogReader(config) as reader:
        ours = reader.table(name)
    assert ours == pyiceberg_reading(name, catalog.load_table(name))


@pytest.mark.parametrize("version", ["1", "2"])
def test_new_table(catalog: tuple[SqlCatalog, CatalogConfig], version: str) -> None:
    sql, config = catalog
    sql.create_table(("sales", "orders"), SCHEMA, partition_spec=SPEC, sort_order=ORDER,
                     properties={"format-version": version, "comment": "orders"})
    assert_same_reading(sql, config, ("sales", "orders"))


def test_gzip_compressed_metadata(catalog: tuple[SqlCatalog, CatalogConfig], tmp_path: Path) -> None:
    sql, config = catalog
    table = sql.create_table(("sales", "orders"), SCHEMA, partition_spec=SPEC, sort_order=ORDER)
    compressed = tmp_path / "00001-copy.gz.metadata.json"
    compressed.write_bytes(gzip.compress(table.metadata.model_dump_json().encode()))
    sql.register_table(("sales", "copy"), compressed.as_uri())
    assert_same_reading(sql, config, ("sales", "copy"))


@pytest.mark.parametrize("version", ["1", "2"])
def test_evolved_table_with_data(catalog: tuple[SqlCatalog, CatalogConfig], version: str) -> None:
    sql, config = catalog
    table = sql.create_table(("sales", "orders"), SCHEMA, partition_spec=SPEC, sort_order=ORDER,
                             properties={"format-version": version})
    table.append(pa.Table.from_pylist([{"id": 1, "event_time": 0, "region": "eu"}],
                                      schema=table.schema().as_arrow()))
    with table.update_schema() as update:
        update.add_column(("attrs", "value", "w"), LongType())
        update.rename_column("amount", "total")
    with table.update_spec() as spec:
        spec.remove_field("region_trunc")
        spec.add_identity("total")
    with table.update_sort_order() as order:
        order.asc("id", IdentityTransform())
    with table.update_schema() as update:
        update.delete_column("tags")
    table.append(pa.Table.from_pylist([{"id": 2, "event_time": 0}], schema=table.schema().as_arrow()))
    first = table.metadata.snapshots[0].snapshot_id
    table.manage_snapshots().create_tag(first, "month_end", max_ref_age_ms=86_400_000).create_branch(
        first, "audit", max_ref_age_ms=3_600_000, max_snapshot_age_ms=60_000, min_snapshots_to_keep=2).commit()
    reading = pyiceberg_reading(("sales", "orders"), sql.load_table(("sales", "orders")))
    assert ("tags", "element") in reading.history.dropped_paths and 3 in reading.history.partition_source_ids
    assert reading.snapshot_id is not None
    assert [(r.name, r.kind, r.snapshot_id) for r in reading.state.refs] == [("audit", "branch", first),
                                                                            ("month_end", "tag", first)]
    assert_same_reading(sql, config, ("sales", "orders"))


def test_catalogs_without_a_listing_read_the_same(catalog: tuple[SqlCatalog, CatalogConfig]) -> None:
    """REST, Glue and Hive have no one-query listing: the table comes from load_table and reads the same."""
    sql, config = catalog
    sql.create_table(("sales", "orders"), SCHEMA, partition_spec=SPEC, sort_order=ORDER)
    with CatalogReader(config) as reader:
        reader.metadata_locations = lambda: None  # type: ignore[method-assign]
        ours = reader.table(("sales", "orders"))
        assert reader.pyiceberg_table(("sales", "orders")) is not None
    assert ours == pyiceberg_reading(("sales", "orders"), sql.load_table(("sales", "orders")))

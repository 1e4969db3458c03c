"""Orphan scans and storage listings on object storage, without a JVM: a table on a real S3 server (moto on
127.0.0.1) is listed through the catalog's own S3 properties (endpoint, keys, region), as pyiceberg reads it,
for ``s3://`` and ``s3a://`` locations alike."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from runtime.orphans import normalize, scan_orphans, stored_files
from tests.s3server import S3Server, s3_server


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.bucket("orphans")
        yield server


@pytest.mark.parametrize("scheme", ["s3", "s3a"])
def test_orphans_are_found_with_the_catalogs_s3_settings(s3: S3Server, scheme: str, tmp_path: Path) -> None:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}",
                         warehouse=f"{scheme}://orphans/{tmp_path.name}", **s3.pyiceberg_properties())
    catalog.create_namespace("logs")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "msg", StringType()))
    table: Table = catalog.create_table("logs.events", schema=schema)
    for batch in range(3):
        table.append(pa.table({"id": [batch], "msg": ["x" * 50]}, schema=schema.as_arrow()))
    table = catalog.load_table("logs.events")
    location = table.location()
    assert location.startswith(f"{scheme}://orphans/")
    stray = f"{normalize(location)}/data/stray.parquet"  # bucket/key, as the listing spells it
    s3.client().put_object(Bucket="orphans", Key=stray.split("/", 1)[1], Body=b"\0" * 10)  # type: ignore[attr-defined]

    stored = stored_files(location, table.io.properties)
    assert stray in stored and len(stored) > 3
    assert all(path.startswith(f"orphans/{tmp_path.name}/") for path in stored)
    scan = scan_orphans(table, datetime.now(UTC) + timedelta(days=1))
    assert [f.path for f in scan.old] == [stray] and scan.young == 0 and scan.refused is None
    assert scan_orphans(table, datetime.now(UTC) - timedelta(days=1)).young == 1

"""Orphan files found from a listing and the metadata, no JVM: a stray old file is a candidate, a fresh
one and every file a snapshot or a tag still reaches are not; implausible candidates are refused."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from tablepolicy.runtime.orphans import normalize, reachable_files, scan_orphans

NOW = datetime(2026, 11, 22, 12, 30, tzinfo=UTC)  # the scans' "now": every file's time is set from it, not the clock
GUARD = NOW - timedelta(days=3)


def written_at(table: Table, when: datetime) -> None:
    """Every file under the table's location as if written at ``when``."""
    stamp = when.timestamp()
    for path in Path(normalize(table.location())).rglob("*"):
        if path.is_file():
            os.utime(path, (stamp, stamp))


@pytest.fixture
def table(tmp_path: Path) -> Table:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=(tmp_path / "wh").as_uri())
    catalog.create_namespace("logs")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("msg", pa.string())])
    created = catalog.create_table("logs.events", schema=schema)
    for batch in range(3):
        created.append(pa.table({"id": [batch * 10 + i for i in range(10)], "msg": ["x" * 50] * 10}, schema=schema))
    written = catalog.load_table("logs.events")
    written_at(written, NOW - timedelta(hours=2))
    return written


def stray(table: Table, name: str, age: timedelta, size: int = 100) -> str:
    path = Path(normalize(table.location())) / "data" / name
    path.write_bytes(b"\0" * size)
    stamp = (NOW - age).timestamp()
    os.utime(path, (stamp, stamp))
    return str(path)


def test_every_written_file_is_reachable(table: Table) -> None:
    reachable = reachable_files(table)
    listed = [str(p) for p in Path(normalize(table.location())).rglob("*") if p.is_file()]
    assert listed and set(listed) <= reachable


def test_only_the_old_stray_file_is_a_candidate(table: Table) -> None:
    old = stray(table, "old.parquet", timedelta(days=5))
    stray(table, "fresh.parquet", timedelta(hours=1))
    scan = scan_orphans(table, GUARD)
    assert [f.path for f in scan.old] == [old]
    assert (scan.files, scan.bytes, scan.young, scan.refused) == (1, 100, 1, None)


def test_a_healthy_table_has_nothing_to_remove(table: Table) -> None:
    scan = scan_orphans(table, GUARD)
    assert (scan.files, scan.young, scan.refused) == (0, 0, None)
    assert scan.listed >= 3 * 3  # a data file, a manifest and a manifest list per append, plus metadata


def test_files_only_an_old_snapshot_reaches_are_not_orphans(table: Table) -> None:
    with table.transaction() as tx:
        tx.delete("id >= 0")  # the current snapshot reaches none of the data files; older snapshots do
    table = table.refresh()
    written_at(table, NOW - timedelta(hours=1))
    scan = scan_orphans(table, NOW + timedelta(days=1))  # every file is older than this guard: none is young
    assert (scan.files, scan.young) == (0, 0)


def test_candidates_that_outweigh_the_table_are_refused(table: Table) -> None:
    stray(table, "huge.bin", timedelta(days=9), size=10_000_000)
    scan = scan_orphans(table, GUARD)
    assert scan.files == 1 and scan.refused is not None and "check the location" in scan.refused


def test_a_table_nested_in_this_location_is_refused(table: Table) -> None:
    other = table.location().rstrip("/") + "/data/other_table"
    scan = scan_orphans(table, GUARD, other_locations=[other, "file:///elsewhere/t"])
    assert scan.refused is not None and "other_table" in scan.refused

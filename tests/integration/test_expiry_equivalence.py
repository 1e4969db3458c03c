"""The engine-free expiry (runtime/expiry.py) against Spark's ``expire_snapshots`` procedure on the same table:
the same snapshots and refs survive and the same files are deleted.

One table on the embedded SQLite catalog with a history of appends, a merge-on-read DELETE (a position delete
file), an INSERT OVERWRITE (the data files before it are read only by older snapshots), a branch with snapshot
retention and commits of its own (from s5), a tag without retention and one past its max_ref_age. The warehouse and the
catalog database are copied aside once built; for each case they are put back at the same path before each
side, so both sides expire the very same table (same snapshot ids, same files), with the call maintain makes.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table
from sqlalchemy import text

from tablepolicy.compiler.maintenance.actions import ExpireSnapshots
from tablepolicy.compiler.render.maintenance import action_sql
from tablepolicy.runtime.expiry import expire
from tablepolicy.runtime.orphans import stored_files
from tests.integration.conftest import Lake, sqlite_lake

pytestmark = pytest.mark.spark

NAME = ("hist", "t")


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    with sqlite_lake(tmp_path_factory.mktemp("lake")) as made:
        yield made


def pyiceberg(lake: Lake) -> SqlCatalog:
    return SqlCatalog("lake", **lake.config.properties)


def load(lake: Lake) -> Table:
    return pyiceberg(lake).load_table(NAME)


def head(lake: Lake) -> int:
    snapshot = load(lake).current_snapshot()
    assert snapshot is not None
    return snapshot.snapshot_id


@pytest.fixture(scope="module")
def history(lake: Lake, tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """Builds the table; returns its snapshots by name (s1..s7 on main, b1 and b2 on the branch)."""
    sql = lake.spark.sql
    sql("CREATE NAMESPACE IF NOT EXISTS lake.hist")
    sql("CREATE TABLE lake.hist.t (id BIGINT, v STRING) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')")
    ids: dict[str, int] = {}
    for name, statement in (("s1", "INSERT INTO lake.hist.t VALUES (1, 'a'), (2, 'b')"),
                            ("s2", "INSERT INTO lake.hist.t VALUES (3, 'c')"),
                            ("s3", "DELETE FROM lake.hist.t WHERE id = 1"),
                            ("s4", "INSERT OVERWRITE lake.hist.t VALUES (4, 'd'), (5, 'e')"),
                            ("s5", "INSERT INTO lake.hist.t VALUES (6, 'f')"),
                            ("s6", "INSERT INTO lake.hist.t VALUES (7, 'g')")):
        sql(statement)
        ids[name] = head(lake)
    sql(f"ALTER TABLE lake.hist.t CREATE BRANCH audit AS OF VERSION {ids['s5']} RETAIN 7 DAYS "
        "WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    sql(f"ALTER TABLE lake.hist.t CREATE TAG kept AS OF VERSION {ids['s1']}")
    for name, value in (("b1", 20), ("b2", 21)):
        sql(f"INSERT INTO lake.hist.t.branch_audit VALUES ({value}, 'x')")
        ids[name] = load(lake).metadata.refs["audit"].snapshot_id
    sql("INSERT INTO lake.hist.t VALUES (8, 'h')")
    ids["s7"] = head(lake)
    # a tag past its max_ref_age (1 ms): Spark's RETAIN counts minutes at least, so pyiceberg sets it
    load(lake).manage_snapshots().create_tag(ids["s3"], "stale", max_ref_age_ms=1).commit()
    lake.reload()
    saved = tmp_path_factory.mktemp("saved")
    shutil.copytree(warehouse(lake), saved / "warehouse")
    SAVED.update(warehouse=saved / "warehouse", pointer=pointer(lake))
    return ids


SAVED: dict[str, object] = {}


def warehouse(lake: Lake) -> Path:
    return Path(lake.config.properties["uri"].removeprefix("sqlite:///")).parent / "warehouse"


def pointer(lake: Lake) -> tuple[str, str]:
    """The catalog's row for the table: its metadata location and the previous one."""
    with pyiceberg(lake).engine.connect() as connection:
        row = connection.execute(text("SELECT metadata_location, previous_metadata_location FROM iceberg_tables "
                                      "WHERE table_namespace = 'hist' AND table_name = 't'")).one()
    return str(row[0]), str(row[1])


def restore(lake: Lake) -> None:
    """The warehouse copied back (copy2: the same files, times kept) and the catalog pointing where it did."""
    saved = SAVED["warehouse"]
    assert isinstance(saved, Path)
    shutil.rmtree(warehouse(lake))
    shutil.copytree(saved, warehouse(lake))
    location, previous = SAVED["pointer"]  # type: ignore[misc]
    with pyiceberg(lake).engine.begin() as connection:
        connection.execute(text("UPDATE iceberg_tables SET metadata_location = :m, previous_metadata_location = :p "
                                "WHERE table_namespace = 'hist' AND table_name = 't'"), {"m": location, "p": previous})
    lake.reload()


def state(lake: Lake) -> tuple[list[int], dict[str, int], set[str]]:
    table = load(lake)
    return (sorted(s.snapshot_id for s in table.metadata.snapshots),
            {name: ref.snapshot_id for name, ref in table.metadata.refs.items()},
            set(stored_files(table.location(), table.io.properties)))


def by_name(ids: dict[str, int], found: list[int]) -> list[str]:
    names = {v: k for k, v in ids.items()}
    return sorted(names[i] for i in found)


CASES = {  # older_than (as the snapshot whose time it is, or "later": after every commit), retain_last
    "older than s7, keep 1": ("s7", 1),
    "older than s5, keep 1": ("s5", 1),
    "everything old, keep 3": ("later", 3),
}
EXPECTED = {  # surviving snapshots: main's kept, the branch's two, kept's s1; stale's s3 goes with its tag
    "older than s7, keep 1": ["b1", "b2", "s1", "s7"],
    "older than s5, keep 1": ["b1", "b2", "s1", "s5", "s6", "s7"],
    "everything old, keep 3": ["b1", "b2", "s1", "s5", "s6", "s7"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_same_snapshots_survive_and_the_same_files_go(lake: Lake, history: dict[str, int], case: str) -> None:
    at, retain_last = CASES[case]
    restore(lake)
    table = load(lake)
    if at == "later":
        older_than = datetime.now(UTC) + timedelta(seconds=1)
    else:
        snapshot = table.metadata.snapshot_by_id(history[at])
        assert snapshot is not None
        older_than = datetime.fromtimestamp(snapshot.timestamp_ms / 1000, UTC)
    _, _, stored = state(lake)
    action = ExpireSnapshots(table=NAME, reason="test", older_than=older_than, retain_last=retain_last)

    lake.spark.sql(action_sql(action, "lake")).collect()
    spark_snapshots, spark_refs, spark_stored = state(lake)

    restore(lake)
    assert state(lake)[2] == stored
    expired = expire("hist.t", lambda: load(lake), older_than=older_than, retain_last=retain_last,
                     clock=lambda: datetime.now(UTC))
    ours_snapshots, ours_refs, ours_stored = state(lake)

    assert by_name(history, spark_snapshots) == EXPECTED[case]  # what Iceberg's rules keep, by name
    assert ours_snapshots == spark_snapshots
    assert ours_refs == spark_refs and sorted(ours_refs) == ["audit", "kept", "main"]
    spark_deleted, ours_deleted = stored - spark_stored, stored - ours_stored
    assert ours_deleted == spark_deleted
    # the files the expiry names; Hadoop's local filesystem also deleted each one's .NAME.crc, and so did ours
    assert set(expired.deleted) == {p for p in ours_deleted if not p.endswith(".crc")}
    assert {p for p in ours_deleted if p.endswith(".crc")}
    assert any(p.endswith(".parquet") for p in ours_deleted)  # s2's data file: only s2 and s3 read it
    assert not any(p.endswith(".metadata.json") for p in ours_deleted)
    for snapshot in load(lake).metadata.snapshots:  # every remaining snapshot still reads
        load(lake).scan(snapshot_id=snapshot.snapshot_id).to_arrow()

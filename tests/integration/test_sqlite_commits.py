"""Spark commits to the embedded SQLite catalog while another process commits to it without pause.

Iceberg's JDBC catalog leaves a ResultSet open on the connection it initialised itself with, and that
connection then reads the catalog as it was: once another process committed, every write on it failed with
SQLITE_BUSY_SNAPSHOT, and a fresh catalog plugin (what retries used to make) initialised the same way, so a
retry landed only if no other commit came between its start and its end (tablepolicy.runtime.spark.sqlite_pool). Here
another process commits to the same catalog all the time — to another namespace, as a busy catalog's other
tables do — and every statement must land: apply's steps, and the safety tag apply commits before a
destructive step (which ran without retries or fresh connections, and failed so).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tablepolicy.runtime.executor import (
    TRANSIENT,
    ExecutionError,
    create_tag,
    drop_catalog_plugins,
    run_sql,
    with_commit_retries,
)
from tablepolicy.runtime.spark.session import SparkOptions, start_session
from tests.integration.conftest import sqlite_catalog

pytestmark = pytest.mark.spark
STATEMENTS = 12
WRITER = """
import sys, time
from pathlib import Path
from pyiceberg.catalog.sql import SqlCatalog
from sqlalchemy.exc import OperationalError
uri, warehouse, stop, count = sys.argv[1:5]
catalog = SqlCatalog("lake", uri=uri, warehouse=warehouse)
written = 0
while not Path(stop).exists():
    try:
        catalog.update_namespace_properties(("busy",), updates={"tick": str(written)})
    except OperationalError:  # locked while Spark commits: nothing committed
        time.sleep(0.001)
        continue
    written += 1
    if written % 10 == 0:
        Path(count + ".tmp").write_text(str(written))
        Path(count + ".tmp").replace(count)
print(written)
"""


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, SqlCatalog, Path]]:
    root = tmp_path_factory.mktemp("sqlite-race")
    (root / "warehouse").mkdir()
    config = sqlite_catalog(root, "lake")
    catalog = SqlCatalog("lake", **config.properties)
    catalog.create_namespace("race")
    catalog.create_namespace("busy")
    catalog.create_table(("race", "t"), Schema(NestedField(1, "id", LongType(), required=False)))
    spark = start_session(config, SparkOptions())
    yield spark, catalog, root
    spark.stop()


def _written(count: Path) -> int:
    text = count.read_text() if count.exists() else ""
    return int(text) if text else 0


def _wait_for(count: Path, at_least: int) -> None:
    deadline = time.time() + 60
    while _written(count) < at_least:
        assert time.time() < deadline, f"the writer did not reach {at_least} commits"
        time.sleep(0.01)


def test_every_commit_lands_while_another_process_commits_all_the_time(
        lake: tuple[Any, SqlCatalog, Path], tmp_path: Path) -> None:
    spark, catalog, _ = lake
    spark.sql("SELECT count(*) FROM lake.race.t").collect()  # Spark's catalog is initialised before the writer
    stop, count = tmp_path / "stop", tmp_path / "count"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, catalog.properties["uri"],
                               catalog.properties["warehouse"], str(stop), str(count)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for step in range(STATEMENTS):
            _wait_for(count, _written(count) + 10)  # another process committed since Spark last read the catalog
            with_commit_retries(spark, partial(run_sql, spark, "ALTER TABLE lake.race.t SET TBLPROPERTIES "
                                               f"('app.step' = '{step}')", f"step {step}"))
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err[-3000:]
    table = catalog.load_table(("race", "t"))
    assert table.properties["app.step"] == str(STATEMENTS - 1)
    assert catalog.load_namespace_properties(("busy",))["tick"] == str(int(out.strip()) - 1)



def _writer(catalog: SqlCatalog, stop: Path, count: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, catalog.properties["uri"], catalog.properties["warehouse"],
                             str(stop), str(count)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stale_plugin(spark: Any, count: Path) -> None:
    """Spark's catalog plugin as a retry or a new session leaves it: initialised (its connection reading the
    catalog as it was then), after which the other process committed."""
    drop_catalog_plugins(spark)
    spark.sql("SELECT count(*) FROM lake.race.t").collect()
    _wait_for(count, _written(count) + 10)


def test_the_safety_tag_lands_while_another_process_commits_all_the_time(
        lake: tuple[Any, SqlCatalog, Path], tmp_path: Path) -> None:
    """The tag apply commits before a destructive step: the same statement run bare (as apply ran it) fails
    with SQLITE_BUSY_SNAPSHOT; as apply runs it now, it lands, on the snapshot named."""
    spark, catalog, _ = lake
    with_commit_retries(spark, partial(run_sql, spark, "INSERT INTO lake.race.t VALUES (1)", "insert"))
    snapshot = catalog.load_table(("race", "t")).metadata.current_snapshot_id
    assert snapshot is not None
    stop, count = tmp_path / "stop", tmp_path / "count"
    writer = _writer(catalog, stop, count)
    try:
        _stale_plugin(spark, count)
        with pytest.raises(ExecutionError, match=TRANSIENT.pattern):
            run_sql(spark, f"ALTER TABLE lake.race.t CREATE TAG bare AS OF VERSION {snapshot}", "a bare tag")
        _stale_plugin(spark, count)
        create_tag(spark, "lake.race.t", "tablepolicy-before-0123abcd", snapshot, 7, "safety tag before step 1")
    finally:
        stop.touch()
        _out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err[-3000:]
    refs = catalog.load_table(("race", "t")).metadata.refs
    assert refs["tablepolicy-before-0123abcd"].snapshot_id == snapshot
    assert "bare" not in refs

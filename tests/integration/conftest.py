"""Real Spark with the real Iceberg runtime against a throwaway embedded SQLite catalog, one per module; a Spark
standalone cluster on 127.0.0.1 for the tests that run on one."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.types import IcebergType, ListType, MapType, StructType

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.model.table import TableState
from tablepolicy.compiler.sql.statements import Statement
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.executor import run_sql
from tablepolicy.runtime.spark.catalog_conf import spark_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
from tests.pgserver import free_port, postgres_server


@dataclass
class Lake:
    config: CatalogConfig
    spark: Any

    def reader(self) -> CatalogReader:
        return CatalogReader(self.config)

    def run(self, statements: list[Statement]) -> None:
        for statement in statements:
            run_sql(self.spark, statement.sql, statement.change.summary)

    def register(self, config: CatalogConfig) -> None:
        """Add another catalog to the running session (Spark loads catalog plugins on first use)."""
        for key, value in spark_catalog(config).conf.items():
            self.spark.conf.set(key, value)

    def reload(self) -> None:
        """Spark's catalogs loaded afresh, after commits made outside this JVM (pyiceberg's, erasure's among
        them): a pooled SQLite connection of the JDBC catalog keeps reading the database as it was."""
        self.spark._jsparkSession.sessionState().catalogManager().reset()

    def parse(self, sql: str) -> None:
        """Parse with Spark's own parser (Iceberg extensions included) without executing."""
        self.spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)


def sqlite_catalog(root: Path, name: str) -> CatalogConfig:
    return CatalogConfig(name, {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}",
                                "warehouse": (root / "warehouse").as_uri()})


@contextlib.contextmanager
def sqlite_lake(root: Path) -> Iterator[Lake]:
    """A Spark session on an embedded SQLite catalog under ``root``, stopped on exit (modules that need no
    PostgreSQL run: their module fixture is this)."""
    (root / "warehouse").mkdir()
    config = sqlite_catalog(root, "lake")
    spark = start_session(config, SparkOptions())
    try:
        yield Lake(config, spark)
    finally:
        spark.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def lake(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Lake]:
    """The same suite runs on the embedded SQLite catalog and on a real PostgreSQL server."""
    root = tmp_path_factory.mktemp("lake")
    (root / "warehouse").mkdir()
    with contextlib.ExitStack() as stack:
        if request.param == "postgresql":
            url = stack.enter_context(postgres_server())
            config = CatalogConfig("lake", {"type": "sql", "uri": url, "warehouse": (root / "warehouse").as_uri()})
        else:
            config = sqlite_catalog(root, "lake")
        spark = start_session(config, SparkOptions())
        stack.callback(spark.stop)
        yield Lake(config, spark)


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _wait(url: str, predicate: object, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if predicate(response.read().decode()):  # type: ignore[operator]
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{url} not ready")


@pytest.fixture
def spark_cluster(tmp_path: Path) -> Iterator[str]:
    """A standalone master and one worker, both on 127.0.0.1, stopped afterwards; its master URL."""
    home = _spark_home()
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(tmp_path),
           "SPARK_WORKER_DIR": str(tmp_path / "work")}
    port, ui, worker_ui = free_port(), free_port(), free_port()
    spark_class = str(home / "bin" / "spark-class")
    master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                               "--cores", "1", "--memory", "1g", "--webui-port", str(worker_ui),
                               f"spark://127.0.0.1:{port}"], env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(f"http://127.0.0.1:{ui}/json/", lambda body: '"aliveworkers" : 1' in body or '"aliveworkers":1' in body)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for process in (worker, master):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def shape(t: IcebergType) -> object:
    """A type without field ids: names, types, nullability and docs, nested."""
    if isinstance(t, StructType):
        return tuple((f.name, shape(f.field_type), f.required, f.doc) for f in t.fields)
    if isinstance(t, ListType):
        return ("list", shape(t.element_type), t.element_required)
    if isinstance(t, MapType):
        return ("map", shape(t.key_type), shape(t.value_type), t.value_required)
    return t


def assert_table_matches(current: TableState, desired: TableState, *, ids: bool = True) -> None:
    """What the catalog holds equals what the policy declares, field by field (and id by id for a table
    created from the policy; an evolved table keeps the ids of its history)."""
    if ids:
        assert current.columns == desired.columns
        assert current.identifier_field_ids == desired.identifier_field_ids
    else:
        assert shape(current.columns) == shape(desired.columns)
    assert current.identifier_fields == desired.identifier_fields
    assert [(p.source, p.transform) for p in current.partition] == [(p.source, p.transform) for p in desired.partition]
    for have, want in zip(current.partition, desired.partition, strict=True):
        if want.name is not None:
            assert have.name == want.name
    assert current.sort == desired.sort
    missing = {k: v for k, v in desired.properties.items() if current.properties.get(k) != v}
    assert missing == {}, f"properties differ: want {missing}, have {current.properties}"
    assert current.comment == desired.comment
    assert current.format_version == desired.format_version

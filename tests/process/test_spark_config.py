"""One catalog definition for both engines, jar resolution and Java checks: configuration only, no JVM."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.errors import CatalogError
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark import jars
from tablepolicy.runtime.spark.catalog_conf import spark_catalog
from tablepolicy.runtime.spark.session import SparkOptions, SparkSetupError, check_java, session_conf


def test_sqlite_catalog_becomes_the_jdbc_catalog_on_the_same_file(tmp_path: Path) -> None:
    config = resolve_catalog(None, tmp_path / "policies")
    conf = spark_catalog(config).conf
    assert config.embedded and config.name == "lake"
    assert conf["spark.sql.catalog.lake"] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf["spark.sql.catalog.lake.type"] == "jdbc"
    assert conf["spark.sql.catalog.lake.uri"].startswith(f"jdbc:sqlite:{tmp_path / '.lake' / 'catalog.db'}?")
    assert conf["spark.sql.catalog.lake.jdbc.schema-version"] == "V1"
    assert conf["spark.sql.catalog.lake.warehouse"] == (tmp_path / ".lake" / "warehouse").as_uri()


def test_postgresql_catalog_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__URI", "postgresql+psycopg2://app:s3cret@db.internal:5433/iceberg")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__WAREHOUSE", "s3://lake/warehouse")
    config = resolve_catalog("prod", tmp_path)
    conf = spark_catalog(config).conf
    assert conf["spark.sql.catalog.prod.uri"] == "jdbc:postgresql://db.internal:5433/iceberg"
    assert conf["spark.sql.catalog.prod.jdbc.user"] == "app"
    assert conf["spark.sql.catalog.prod.jdbc.password"] == "s3cret"
    assert "s3cret" not in config.describe() and "s3cret" not in str(config.redacted())


@pytest.mark.parametrize(
    ("props", "kind"),
    [({"uri": "https://rest.example/api", "credential": "id:secret"}, "rest"),
     ({"type": "glue", "warehouse": "s3://w"}, "glue"),
     ({"uri": "thrift://metastore:9083"}, "hive")],
)
def test_other_catalog_types(props: dict[str, str], kind: str) -> None:
    conf = spark_catalog(CatalogConfig("c", props)).conf
    assert conf["spark.sql.catalog.c.type"] == kind


@pytest.mark.parametrize(
    ("props", "message"),
    [({"uri": "sqlite:///:memory:"}, "in-memory SQLite catalog cannot be shared"),
     ({"uri": "mysql://u@h/db"}, "backend 'mysql' is not supported"),
     ({"type": "dynamodb"}, "catalog type 'dynamodb' has no Spark mapping")],
)
def test_unsupported_catalogs_are_refused_clearly(props: dict[str, str], message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        spark_catalog(CatalogConfig("c", props))


def test_session_uses_the_pip_iceberg_jar_and_debian_drivers(tmp_path: Path) -> None:
    options = SparkOptions(conf={"spark.executor.memory": "2g"})
    conf = session_conf(resolve_catalog(None, tmp_path / "policies"), options)
    jar_list = conf["spark.driver.extraClassPath"].split(":")  # local: the driver is the only JVM
    assert jar_list[0].endswith("iceberg-spark-runtime-3.5_2.12-1.10.2.jar")
    assert "/usr/share/java/sqlite-jdbc.jar" in jar_list and "/usr/share/java/postgresql.jar" in jar_list
    assert "spark.jars.packages" not in conf and "spark.jars" not in conf
    cluster = session_conf(resolve_catalog(None, tmp_path / "policies"), SparkOptions(master="spark://127.0.0.1:7077"))
    assert cluster["spark.jars"].split(",") == jar_list and "spark.driver.extraClassPath" not in cluster
    assert conf["spark.sql.extensions"].endswith("IcebergSparkSessionExtensions")
    assert conf["spark.ui.enabled"] == "false" and conf["spark.sql.shuffle.partitions"] == "2"
    assert conf["spark.executor.memory"] == "2g"


def test_without_local_jars_maven_coordinates_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jars, "iceberg_runtime_jar", lambda: None)
    monkeypatch.setattr(jars, "s3a_jars", lambda: None)
    monkeypatch.setattr(jars, "DRIVERS", {"sqlite": jars.Driver(("/nonexistent.jar",), "org.xerial:sqlite-jdbc:3")})
    plan = jars.resolve_jars("sqlite")
    assert plan.jars == []
    assert plan.packages == [jars.ICEBERG_PACKAGE, "org.xerial:sqlite-jdbc:3"]


def test_explicit_spark_jars_win() -> None:
    assert jars.resolve_jars("sqlite", "/opt/a.jar,/opt/b.jar").jars == ["/opt/a.jar", "/opt/b.jar"]


def fake_java(tmp_path: Path, version_line: str) -> Path:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return home


def test_wrong_java_version_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, 'openjdk version "21.0.2" 2024-01-16')))
    with pytest.raises(SparkSetupError, match=r"Spark 3\.5 runs on Java 8, 11 or 17; found Java 21"):
        check_java()


def test_java_17_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15')))
    assert check_java() == "17"


def test_missing_java_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(SparkSetupError, match="apt-get install openjdk-17-jre-headless"):
        check_java()

"""Each pyiceberg catalog definition, S3 properties included, to the exact Spark settings: no engine.

pyiceberg 0.12 knows the catalog types rest, hive, glue, dynamodb, sql, in-memory and bigquery; it has no
``nessie`` type: a pyiceberg user reaches Nessie through its Iceberg REST API (type rest), mapped as such,
and ``type: nessie`` is refused with that advice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.errors import CatalogError
from tablepolicy.runtime.spark import jars
from tablepolicy.runtime.spark.catalog_conf import NESSIE_HINT, spark_catalog
from tablepolicy.runtime.spark.session import SparkOptions, session_conf

C = "spark.sql.catalog.c"
BASE = {C: "org.apache.iceberg.spark.SparkCatalog", f"{C}.cache-enabled": "false",
        f"{C}.io-impl": "org.apache.iceberg.hadoop.HadoopFileIO"}
S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem"
H = "spark.hadoop.fs.s3a."
# S3A's retries bounded: a store that stops mid-run ends the run with an error, not minutes of silence
BOUNDS = {H + "attempts.maximum": "2", H + "retry.limit": "2", H + "retry.interval": "500ms",
          H + "connection.establish.timeout": "5000", H + "connection.timeout": "20000"}
SCHEMES = {"spark.hadoop.fs.s3.impl": S3A, "spark.hadoop.fs.s3n.impl": S3A, **BOUNDS}
# the REST client's waits bounded; views asked of the server (SeaweedFS's /v1/config lists no endpoints)
REST = {f"{C}.view-endpoints-supported": "true", f"{C}.rest.client.connection-timeout-ms": "5000",
        f"{C}.rest.client.socket-timeout-ms": "30000", f"{C}.rest.client.max-retries": "3",
        # pyiceberg asks for vended credentials by default; Spark's RESTCatalog is told to ask the same
        f"{C}.header.X-Iceberg-Access-Delegation": "vended-credentials"}
MOTO = {"s3.endpoint": "http://127.0.0.1:9000", "s3.access-key-id": "AKID", "s3.secret-access-key": "SECRET",
        "s3.region": "us-east-1", "s3.path-style-access": "true"}
MOTO_HADOOP = {**SCHEMES, H + "endpoint": "http://127.0.0.1:9000", H + "connection.ssl.enabled": "false",
               H + "path.style.access": "true", H + "endpoint.region": "us-east-1", H + "access.key": "AKID",
               H + "secret.key": "SECRET",
               H + "aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}

# (id, pyiceberg properties, spark.sql.catalog.c* settings, spark.hadoop.* settings, warehouse on S3)
CASES = [
    ("sql-sqlite", {"type": "sql", "uri": "sqlite:////srv/lake/catalog.db", "warehouse": "file:///srv/lake/wh"},
     {**BASE, f"{C}.warehouse": "file:///srv/lake/wh", f"{C}.type": "jdbc",
      f"{C}.uri": "jdbc:sqlite:/srv/lake/catalog.db?journal_mode=WAL&busy_timeout=30000",
      f"{C}.jdbc.schema-version": "V1"},
     SCHEMES, False),
    ("sql-sqlite-on-s3", {"uri": "sqlite:////srv/lake/catalog.db", "warehouse": "s3://bucket/wh", **MOTO},
     {**BASE, f"{C}.warehouse": "s3://bucket/wh", f"{C}.type": "jdbc",
      f"{C}.uri": "jdbc:sqlite:/srv/lake/catalog.db?journal_mode=WAL&busy_timeout=30000",
      f"{C}.jdbc.schema-version": "V1"},
     MOTO_HADOOP, True),
    ("sql-postgresql-on-s3a", {"type": "sql", "uri": "postgresql+psycopg2://etl:pw@db:5433/iceberg",
                               "warehouse": "s3a://bucket/wh", **MOTO},
     {**BASE, f"{C}.warehouse": "s3a://bucket/wh", f"{C}.type": "jdbc",
      f"{C}.uri": "jdbc:postgresql://db:5433/iceberg", f"{C}.jdbc.schema-version": "V1",
      f"{C}.jdbc.user": "etl", f"{C}.jdbc.password": "pw"},
     MOTO_HADOOP, True),
    ("sql-s3n-session-token", {"uri": "postgresql://db/iceberg", "warehouse": "s3n://bucket/wh",
                               "client.access-key-id": "AKID", "client.secret-access-key": "SECRET",
                               "client.session-token": "TOKEN", "client.region": "eu-west-1"},
     {**BASE, f"{C}.warehouse": "s3n://bucket/wh", f"{C}.type": "jdbc",
      f"{C}.uri": "jdbc:postgresql://db/iceberg", f"{C}.jdbc.schema-version": "V1"},
     {**SCHEMES, H + "endpoint.region": "eu-west-1", H + "access.key": "AKID", H + "secret.key": "SECRET",
      H + "session.token": "TOKEN",
      H + "aws.credentials.provider": "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"}, True),
    ("sql-s3-keys-from-environment", {"uri": "sqlite:////l/c.db", "warehouse": "s3://bucket/wh",
                                      "s3.endpoint": "https://s3.internal", "s3.force-virtual-addressing": "true"},
     {**BASE, f"{C}.warehouse": "s3://bucket/wh", f"{C}.type": "jdbc",
      f"{C}.uri": "jdbc:sqlite:/l/c.db?journal_mode=WAL&busy_timeout=30000", f"{C}.jdbc.schema-version": "V1"},
     {**SCHEMES, H + "endpoint": "https://s3.internal", H + "path.style.access": "false"}, True),
    ("rest-token", {"uri": "https://rest.example/api", "token": "TOKEN", "warehouse": "analytics"},
     {**BASE, f"{C}.token": "TOKEN", f"{C}.warehouse": "analytics", f"{C}.type": "rest",
      f"{C}.uri": "https://rest.example/api", **REST},
     SCHEMES, False),
    ("rest-credential", {"type": "rest", "uri": "https://rest.example/api", "credential": "id:secret",
                         "scope": "PRINCIPAL_ROLE:ALL", "oauth2-server-uri": "https://auth.example/token",
                         "prefix": "p", **MOTO},
     {**BASE, f"{C}.credential": "id:secret", f"{C}.scope": "PRINCIPAL_ROLE:ALL",
      f"{C}.oauth2-server-uri": "https://auth.example/token", f"{C}.prefix": "p", f"{C}.type": "rest",
      f"{C}.uri": "https://rest.example/api", **REST},
     MOTO_HADOOP, True),
    ("rest-nessie", {"type": "rest", "uri": "http://nessie:19120/iceberg/main"},
     {**BASE, f"{C}.type": "rest", f"{C}.uri": "http://nessie:19120/iceberg/main", **REST}, SCHEMES, False),
    ("rest-s3fileio", {"uri": "https://rest.example/api", "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                       "s3.endpoint": "http://minio:9000", "s3.path-style-access": "true"},
     {**BASE, f"{C}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO", f"{C}.s3.endpoint": "http://minio:9000",
      f"{C}.s3.path-style-access": "true", f"{C}.type": "rest", f"{C}.uri": "https://rest.example/api", **REST},
     {**SCHEMES, H + "endpoint": "http://minio:9000", H + "connection.ssl.enabled": "false",
      H + "path.style.access": "true"}, False),
    # SeaweedFS's REST catalog as tests/seaweed.py defines it: a warehouse that is a name, tables on S3
    ("rest-seaweedfs", {"type": "rest", "uri": "http://127.0.0.1:8181", "credential": "K:S",
                        "oauth2-server-uri": "http://127.0.0.1:8181/v1/oauth/tokens", "scope": "catalog",
                        "warehouse": "warehouse", **MOTO},
     {**BASE, f"{C}.warehouse": "warehouse", f"{C}.credential": "K:S", f"{C}.scope": "catalog",
      f"{C}.oauth2-server-uri": "http://127.0.0.1:8181/v1/oauth/tokens", f"{C}.type": "rest",
      f"{C}.uri": "http://127.0.0.1:8181", **REST},
     MOTO_HADOOP, True),
    # the definition's own REST client settings win over the bounds, and others of the kind pass through
    ("rest-own-timeouts", {"type": "rest", "uri": "http://r", "view-endpoints-supported": "false",
                           "rest.client.socket-timeout-ms": "120000", "rest.client.max-connections": "4"},
     {**BASE, f"{C}.type": "rest", f"{C}.uri": "http://r", f"{C}.view-endpoints-supported": "false",
      f"{C}.rest.client.connection-timeout-ms": "5000", f"{C}.rest.client.socket-timeout-ms": "120000",
      f"{C}.rest.client.max-retries": "3", f"{C}.rest.client.max-connections": "4",
      f"{C}.header.X-Iceberg-Access-Delegation": "vended-credentials"},
     SCHEMES, False),
    # headers as the definition writes them, for both engines: delegation turned to remote signing, another added
    ("rest-headers", {"type": "rest", "uri": "http://r", "header.X-Iceberg-Access-Delegation": "remote-signing",
                      "header.X-Tenant": "analytics"},
     {**BASE, f"{C}.type": "rest", f"{C}.uri": "http://r", **REST,
      f"{C}.header.X-Iceberg-Access-Delegation": "remote-signing", f"{C}.header.X-Tenant": "analytics"},
     SCHEMES, False),
    ("glue", {"type": "glue", "warehouse": "s3://bucket/wh", "client.region": "eu-central-1"},
     {**BASE, f"{C}.warehouse": "s3://bucket/wh", f"{C}.type": "glue", f"{C}.client.region": "eu-central-1"},
     {**SCHEMES, H + "endpoint.region": "eu-central-1"}, True),
    ("hive", {"uri": "thrift://metastore:9083", "warehouse": "s3a://bucket/wh", "s3.endpoint": "http://minio:9000"},
     {**BASE, f"{C}.warehouse": "s3a://bucket/wh", f"{C}.type": "hive", f"{C}.uri": "thrift://metastore:9083"},
     {**SCHEMES, H + "endpoint": "http://minio:9000", H + "connection.ssl.enabled": "false",
      H + "path.style.access": "true"}, True),
    ("s3-anonymous", {"uri": "sqlite:////l/c.db", "warehouse": "s3://public/wh", "s3.anonymous": "true"},
     {**BASE, f"{C}.warehouse": "s3://public/wh", f"{C}.type": "jdbc",
      f"{C}.uri": "jdbc:sqlite:/l/c.db?journal_mode=WAL&busy_timeout=30000", f"{C}.jdbc.schema-version": "V1"},
     {**SCHEMES, H + "aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"}, True),
]


@pytest.mark.parametrize(("props", "catalog", "hadoop", "storage"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_definition_to_spark_settings(props: dict[str, str], catalog: dict[str, str], hadoop: dict[str, str],
                                      storage: bool) -> None:
    derived = spark_catalog(CatalogConfig("c", props))
    assert derived.conf == catalog
    assert derived.hadoop == hadoop
    assert derived.object_storage is storage


@pytest.mark.parametrize(("props", "message"), [
    ({"type": "nessie", "uri": "http://nessie:19120/api/v2"}, NESSIE_HINT),
    ({"uri": "sqlite:////l/c.db", "s3.access-key-id": "AKID"}, "S3 credentials are incomplete"),
])
def test_refused_definitions(props: dict[str, str], message: str) -> None:
    with pytest.raises(CatalogError) as raised:
        spark_catalog(CatalogConfig("c", props))
    assert message in str(raised.value) and "AKID" not in str(raised.value)


def test_session_carries_the_s3a_settings_and_jars(tmp_path: Path) -> None:
    props = {"uri": f"sqlite:///{tmp_path}/c.db", "warehouse": "s3://bucket/wh", **MOTO}
    conf = session_conf(CatalogConfig("c", props), SparkOptions(conf={H + "endpoint": "http://override:1"}))
    assert {k: conf[k] for k in MOTO_HADOOP} == {**MOTO_HADOOP, H + "endpoint": "http://override:1"}  # user's last
    local = jars.s3a_jars()
    if local is None:  # no `make install` here: Maven's coordinates, never a silent absence
        assert set(jars.S3A_PACKAGES) <= set(conf["spark.jars.packages"].split(","))
    else:
        assert local == [str(jars.s3a_jar_dir() / name) for name in jars.S3A_JARS]
        assert set(local) <= set(conf["spark.driver.extraClassPath"].split(":"))


def test_s3a_jars_fall_back_to_maven_only_for_object_storage(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.setattr(jars, "s3a_jar_dir", lambda: tmp_path)
    assert jars.s3a_jars() is None
    assert not set(jars.S3A_PACKAGES) & set(jars.resolve_jars("sqlite").packages)
    assert set(jars.S3A_PACKAGES) <= set(jars.resolve_jars("sqlite", object_storage=True).packages)
    (tmp_path / jars.S3A_JARS[0]).write_bytes(b"")
    assert jars.s3a_jars() is None  # half a connector is none: Maven's pair
    (tmp_path / jars.S3A_JARS[1]).write_bytes(b"")
    plan = jars.resolve_jars("sqlite", object_storage=True)
    assert [str(tmp_path / n) for n in jars.S3A_JARS] == plan.jars[-2:]
    assert not set(jars.S3A_PACKAGES) & set(plan.packages)
    assert jars.resolve_jars("sqlite", "/opt/a.jar", object_storage=True).jars == ["/opt/a.jar"]  # explicit wins


def test_a_table_on_s3_asks_for_the_s3a_jars_when_the_definition_does_not(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A REST catalog naming its warehouse, without S3 settings (keys from the environment): the definition alone
    asks for no S3A; a run touching a table on S3 does (SparkOptions.object_storage, set by apply from the plan's
    metadata locations). The jars hidden: Maven's coordinates, the fallback for machines with internet."""
    monkeypatch.setattr(jars, "s3a_jar_dir", lambda: tmp_path / "no-jars")
    config = CatalogConfig("c", {"type": "rest", "uri": "http://rest:8181", "warehouse": "analytics"})
    assert spark_catalog(config).object_storage is False
    alone = session_conf(config, SparkOptions())
    assert not any("hadoop-aws" in v for v in alone.values())
    touched = session_conf(config, SparkOptions(object_storage=True))
    assert set(jars.S3A_PACKAGES) <= set(touched["spark.jars.packages"].split(","))

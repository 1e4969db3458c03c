"""One catalog definition serves both engines: pyiceberg's config -> Spark's Iceberg catalog config.

A pyiceberg SQL catalog on SQLite or PostgreSQL becomes Iceberg's JDBC catalog over the same two
tables (``iceberg_tables``, ``iceberg_namespace_properties``); REST, Glue and Hive map likewise.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import make_url

from compiler.catalog.config import CatalogConfig
from compiler.errors import CatalogError

# pyiceberg properties that mean the same to Iceberg's Java catalogs
_PASSTHROUGH = ("warehouse", "credential", "token", "scope", "oauth2-server-uri", "prefix", "s3.endpoint",
                "s3.access-key-id", "s3.secret-access-key", "s3.region", "s3.path-style-access", "io-impl")


@dataclass(frozen=True)
class SparkCatalog:
    conf: dict[str, str]
    jdbc_driver: str | None  # "sqlite" | "postgresql" when the JDBC catalog needs a driver jar


def spark_catalog(config: CatalogConfig) -> SparkCatalog:
    prefix = f"spark.sql.catalog.{config.name}"
    # no table cache: other writers commit to the same tables, tablepolicy's own pyiceberg commits among them
    # (erasure's, runtime/erasure/commits.py), and a cached table is read as it was, down to manifests an
    # expiry has deleted since
    conf = {prefix: "org.apache.iceberg.spark.SparkCatalog", f"{prefix}.cache-enabled": "false"}
    props = config.properties
    for key in _PASSTHROUGH:
        if key in props:
            conf[f"{prefix}.{key}"] = props[key]
    driver: str | None = None
    match config.kind:
        case "sql":
            jdbc, extra, driver = _jdbc(props.get("uri", ""))
            conf |= {f"{prefix}.type": "jdbc", f"{prefix}.uri": jdbc, f"{prefix}.jdbc.schema-version": "V1"}
            conf |= {f"{prefix}.{k}": v for k, v in extra.items()}
        case "rest":
            conf |= {f"{prefix}.type": "rest", f"{prefix}.uri": props["uri"]}
        case "glue":
            conf |= {f"{prefix}.type": "glue"}
        case "hive":
            conf |= {f"{prefix}.type": "hive", f"{prefix}.uri": props["uri"]}
        case other:
            raise CatalogError(f"catalog type '{other}' has no Spark mapping; use sql, rest, glue or hive")
    return SparkCatalog(conf, driver)


def _jdbc(uri: str) -> tuple[str, dict[str, str], str]:
    """SQLAlchemy URI -> (JDBC URL, extra catalog properties, driver name)."""
    try:
        url = make_url(uri)
    except Exception:
        raise CatalogError("the SQL catalog's uri is not a SQLAlchemy URL (e.g. sqlite:///path/catalog.db)") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise CatalogError("an in-memory SQLite catalog cannot be shared with Spark; use a file path")
        # the settings pyiceberg's side uses too (runtime.catalog.reader): WAL and a busy timeout
        return f"jdbc:sqlite:{url.database}?journal_mode=WAL&busy_timeout=30000", {}, "sqlite"
    if backend == "postgresql":
        port = f":{url.port}" if url.port else ""
        extra = {}
        if url.username:
            extra["jdbc.user"] = url.username
        if url.password:
            extra["jdbc.password"] = str(url.password)
        return f"jdbc:postgresql://{url.host or 'localhost'}{port}/{url.database}", extra, "postgresql"
    raise CatalogError(f"SQL catalog backend '{backend}' is not supported with Spark; use sqlite or postgresql")

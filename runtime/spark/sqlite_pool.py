"""Fresh SQLite connections for Iceberg's JDBC catalog in Spark: the one its initialisation used is stale.

``JdbcCatalog.initialize`` checks that its two tables exist with ``DatabaseMetaData.getTables(...)`` and
never closes that ResultSet (Iceberg 1.10, ``atomicCreateTable``). With the xerial SQLite driver the open
ResultSet keeps a read transaction on the pooled connection, and the pool hands that connection out first
for every later call (it is last-in, first-out). In WAL mode the connection then reads the catalog as it
was when Spark first touched it, and once another process has committed, every write on it fails with
``SQLITE_BUSY_SNAPSHOT`` — Iceberg's commit retries, and a new catalog plugin initialises the same way.

So before a commit runs, the idle connections of every SQLite JDBC catalog of the session are closed
(``ClientPoolImpl.close``, which also closes that forgotten ResultSet) and the pool is opened again: the
next call opens a new connection, and no ResultSet is left open on those afterwards. PostgreSQL and other
catalogs are left alone: their reads hold no snapshot between statements.
"""

from __future__ import annotations

from typing import Any

from runtime.spark.iceberg_catalog import iceberg_catalog

SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
PREFIX = "spark.sql.catalog."


def sqlite_catalogs(spark: Any) -> list[str]:
    """The Iceberg catalogs of the session that are JDBC catalogs on a SQLite file, by name."""
    confs = spark._jvm.scala.collection.JavaConverters.mapAsJavaMap(
        spark._jsparkSession.sessionState().conf().getAllConfs())
    settings = {str(k): str(v) for k, v in confs.items() if str(k).startswith(PREFIX)}
    return sorted(name for key, value in settings.items()
                  if value == SPARK_CATALOG and "." not in (name := key.removeprefix(PREFIX))
                  and settings.get(f"{PREFIX}{name}.type") == "jdbc"
                  and settings.get(f"{PREFIX}{name}.uri", "").startswith("jdbc:sqlite:"))


def renew_connections(spark: Any) -> None:
    """Close the pooled connections of the session's SQLite JDBC catalogs; the next call opens a fresh one.
    A catalog not loaded yet is loaded (initialised) first, so its initialisation's connection goes too."""
    for name in sqlite_catalogs(spark):
        catalog = iceberg_catalog(spark, name)
        if catalog.getClass().getName() == "org.apache.iceberg.CachingCatalog":
            catalog = _field(spark, catalog, "org.apache.iceberg.CachingCatalog", "catalog")
        pool = _field(spark, catalog, "org.apache.iceberg.jdbc.JdbcCatalog", "connections")
        pool.close()  # waits for connections in use (none between statements), closes every idle one
        _set_field(spark, pool, "org.apache.iceberg.ClientPoolImpl", "closed", False)


def _declared(spark: Any, owner: str, name: str) -> Any:
    loader = spark._jvm.java.lang.Thread.currentThread().getContextClassLoader()
    field = loader.loadClass(owner).getDeclaredField(name)
    field.setAccessible(True)
    return field


def _field(spark: Any, obj: Any, owner: str, name: str) -> Any:
    return _declared(spark, owner, name).get(obj)


def _set_field(spark: Any, obj: Any, owner: str, name: str, value: bool) -> None:
    _declared(spark, owner, name).setBoolean(obj, value)

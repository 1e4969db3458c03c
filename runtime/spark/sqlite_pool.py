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

from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from tablepolicy.compiler.errors import TablePolicyError

from .iceberg_catalog import iceberg_catalog


class StaleConnectionError(TablePolicyError):
    """The JDBC catalog's connection pool could not be renewed (not the Iceberg version expected)."""


SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
PREFIX = "spark.sql.catalog."
SEPARATOR = "\u0001"  # between "key -> value" entries of Scala's Map.mkString


def sqlite_catalogs(spark: Any) -> list[str]:
    """The Iceberg catalogs of the session that are JDBC catalogs on a SQLite file, by name."""
    # the session's settings as one string: one call into the JVM rather than two per setting
    text = spark._jsparkSession.sessionState().conf().getAllConfs().mkString(SEPARATOR)
    settings = dict(entry.split(" -> ", 1) for entry in text.split(SEPARATOR) if entry.startswith(PREFIX))
    return sorted(name for key, value in settings.items()
                  if value == SPARK_CATALOG and "." not in (name := key.removeprefix(PREFIX))
                  and settings.get(f"{PREFIX}{name}.type") == "jdbc"
                  and settings.get(f"{PREFIX}{name}.uri", "").startswith("jdbc:sqlite:"))


def renew_connections(spark: Any, *, again: bool = False) -> None:
    """Close the pooled connections of the session's SQLite JDBC catalogs; the next call opens a fresh one.

    A catalog not loaded yet is loaded (initialised) first, so its initialisation's connection goes too. Only
    initialisation leaves a connection stale, so each pool is renewed once (``again``: whatever was done)."""
    known = _KNOWN.setdefault(spark._jvm, _Known())
    for name in sqlite_catalogs(spark):
        try:
            _renew(spark, known, name, again)
        except Exception as exc:  # another Iceberg version than the one whose private fields this reads
            raise StaleConnectionError(f"cannot renew the connections of the SQLite catalog '{name}' "
                                       f"(Iceberg 1.10's JDBC catalog expected): {str(exc).splitlines()[0]}") from None


def _renew(spark: Any, known: _Known, name: str, again: bool) -> None:
    catalog = iceberg_catalog(spark, name)
    if catalog.getClass().getName() == "org.apache.iceberg.CachingCatalog":
        catalog = known.accessible(spark, "org.apache.iceberg.CachingCatalog", "catalog").get(catalog)
    pool = known.accessible(spark, "org.apache.iceberg.jdbc.JdbcCatalog", "connections").get(catalog)
    identity = spark._jvm.java.lang.System.identityHashCode(pool)
    if identity in known.renewed and not again:
        return
    pool.close()  # waits for connections in use (none between statements), closes every idle one
    known.accessible(spark, "org.apache.iceberg.ClientPoolImpl", "closed").setBoolean(pool, False)
    known.renewed.add(identity)


@dataclass
class _Known:
    """Per JVM: the pools already renewed (by identity hash) and the private fields looked up once."""

    renewed: set[int] = field(default_factory=set)
    fields: dict[tuple[str, str], Any] = field(default_factory=dict)

    def accessible(self, spark: Any, owner: str, name: str) -> Any:
        """A private field of an Iceberg class, made accessible."""
        if (owner, name) not in self.fields:
            loader = spark._jvm.java.lang.Thread.currentThread().getContextClassLoader()
            declared = loader.loadClass(owner).getDeclaredField(name)
            declared.setAccessible(True)
            self.fields[owner, name] = declared
        return self.fields[owner, name]


_KNOWN: WeakKeyDictionary[Any, _Known] = WeakKeyDictionary()  # by py4j's view of the JVM: gone with it

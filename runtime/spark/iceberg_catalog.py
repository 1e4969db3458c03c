"""The Iceberg Java catalog behind one of the session's Spark catalog plugins, and table identifiers for it."""

from __future__ import annotations

from typing import Any


def iceberg_catalog(spark: Any, catalog: str) -> Any:
    """The Iceberg catalog behind the session's catalog plugin: same configuration, same cache.

    The plugin is loaded from the JVM thread's active session's configuration; a session built in another
    thread (apply starts Spark in the background) is not active here until made so, and the first step of
    an apply may be this create, before any spark.sql() has loaded the plugin."""
    session = spark._jsparkSession
    spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(session)
    return session.sessionState().catalogManager().catalog(catalog).icebergCatalog()


def table_identifier(spark: Any, name: tuple[str, ...]) -> Any:
    jvm = spark._jvm
    parts = spark.sparkContext._gateway.new_array(jvm.java.lang.String, len(name) - 1)
    for i, part in enumerate(name[:-1]):
        parts[i] = part
    return jvm.org.apache.iceberg.catalog.TableIdentifier.of(jvm.org.apache.iceberg.catalog.Namespace.of(parts),
                                                             name[-1])

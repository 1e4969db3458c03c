"""DuckDB's Iceberg extension, from PyPI (duckdb-extension-iceberg and -avro), loaded without the network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
from duckdb_extensions import import_extension

VERSION = duckdb.__version__


def duckdb_rows(metadata_location: str, scratch: Path) -> list[tuple[Any, ...]]:
    """The rows DuckDB reads from a table's metadata file, sorted; what DuckDB raises when it cannot read it.
    A fresh connection each time: an internal error leaves a connection unusable."""
    connection = duckdb.connect()
    try:
        connection.sql(f"SET extension_directory='{scratch / 'duckdb-extensions'}'")
        connection.sql("SET autoinstall_known_extensions=false")
        import_extension("avro", con=connection)
        import_extension("iceberg", con=connection)
        connection.sql("LOAD iceberg")
        path = metadata_location.removeprefix("file://")
        return sorted(connection.execute("SELECT * FROM iceberg_scan(?)", [path]).fetchall(), key=repr)
    finally:
        connection.close()

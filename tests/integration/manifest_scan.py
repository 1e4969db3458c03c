"""The independent check for manifests: every avro file read generically, by the schema in its own header
(no Iceberg model of manifests), and the lower and upper bounds it holds for a column decoded as UTF-8 text.

Shares no code with the engine's manifest reading (runtime/erasure/manifests.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFileIO


def manifest_bounds(path: Path) -> dict[int, list[str]]:
    """Field id -> every lower and upper bound a manifest holds for it (any entry status); {} for an avro file
    that is no manifest (a manifest list)."""
    found: dict[int, list[str]] = {}
    with AvroFile[Any](PyArrowFileIO().new_input(str(path))) as reader:
        if "partition-spec" not in reader.header.meta:
            return {}
        names = [f.name for f in reader.schema.fields]
        data_file = reader.schema.fields[names.index("data_file")].field_type
        file_names = [f.name for f in data_file.fields]  # type: ignore[attr-defined]
        for record in reader:
            entry = record[names.index("data_file")]
            for column in ("lower_bounds", "upper_bounds"):
                for field_id, value in (entry[file_names.index(column)] or {}).items():
                    found.setdefault(field_id, []).append(value.decode("utf-8", errors="replace"))
    return found

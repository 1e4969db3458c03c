"""The survey with pruning finds what the survey without it finds, reading fewer files: a table pyiceberg writes
(its manifests carry every file's bounds) and files under its location no snapshot references (no manifest entry:
their footers decide). Counted per evidence, as the proof reports them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from tablepolicy.runtime.erasure.keys import FIELD_ID, SUBJECT, KeyColumn, KeySet
from tablepolicy.runtime.erasure.pruning import Evidence, KeyProbe
from tablepolicy.runtime.erasure.survey import FileReader, Survey, survey
from tablepolicy.runtime.orphans import normalize

COLUMN = KeyColumn(("user_id",), 2, pa.string())
KEYS = KeySet((COLUMN,), pa.table({COLUMN.alias: ["u1", "u5"], SUBJECT: pa.array([0, 1], pa.int32())}),
              ("REQ-0", "REQ-1"))


def rows(users: list[str]) -> pa.Table:
    return pa.table({"event_id": pa.array(range(len(users)), pa.int64()), "user_id": pa.array(users, pa.string())})


def table(tmp_path: Path) -> Table:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace("privacy")
    schema = Schema(NestedField(1, "event_id", LongType(), required=False),
                    NestedField(2, "user_id", StringType(), required=False))
    created = catalog.create_table(("privacy", "events"), schema)
    created.append(rows(["a", "b"]))  # bounds a..b: excluded unopened
    created.append(rows(["v", "w"]))  # v..w: excluded unopened
    created.append(rows(["a", "u1", "z"]))  # holds u1
    created.append(rows(["a", "z"]))  # a..z covers the keys: pyiceberg writes no bloom filter, read
    return catalog.load_table(("privacy", "events"))


def stray(loaded: Table, name: str, users: list[str]) -> str:
    """A parquet file under the data folder no snapshot references, with field ids and a bloom filter."""
    path = Path(loaded.location().removeprefix("file://")) / "data" / name
    schema = pa.schema([pa.field("event_id", pa.int64(), metadata={FIELD_ID: b"1"}),
                        pa.field("user_id", pa.string(), metadata={FIELD_ID: b"2"})])
    pq.write_table(rows(users).cast(schema), path, bloom_filter_options={"user_id": {"ndv": 4, "fpp": 0.0001}})
    return normalize(str(path))


def surveyed(loaded: Table, prune: bool) -> Survey:
    return survey(loaded, FileReader(KEYS, probe=KeyProbe.of(KEYS) if prune else None), {})


def test_pruning_finds_what_reading_every_file_finds(tmp_path: Path) -> None:
    loaded = table(tmp_path)
    excluded = stray(loaded, "stray-clean.parquet", ["a", "z"])  # a..z covers the keys; the filter excludes them
    orphan = stray(loaded, "stray-held.parquet", ["a", "u5"])
    both = surveyed(loaded, prune=False), surveyed(loaded, prune=True)

    every, pruned = both
    assert set(pruned.held) == set(every.held) and len(pruned.held) == 2
    assert pruned.orphans == every.orphans == [orphan]
    assert excluded in pruned.clean and pruned.clean == every.clean
    assert {p: h.rows for p, h in pruned.held.items()} == {p: h.rows for p, h in every.held.items()}
    assert every.pruning.files == {Evidence.READ: 6}
    assert pruned.pruning.files == {Evidence.BOUNDS: 2, Evidence.BLOOM_FILTER: 1, Evidence.READ: 3}
    assert pruned.pruning.bytes_read + pruned.pruning.bytes_skipped == every.pruning.bytes_read == pruned.bytes_read


def test_a_reader_remembers_a_file_excluded_unread_as_holding_no_key(tmp_path: Path) -> None:
    loaded = table(tmp_path)
    reader = FileReader(KEYS, probe=KeyProbe.of(KEYS))
    first = survey(loaded, reader, {})
    again = survey(loaded, reader, {})  # the run's second survey: answers per (path, size) reused
    assert again.clean == first.clean and set(again.held) == set(first.held)
    assert again.pruning == first.pruning
    assert sum(r.evidence is Evidence.BOUNDS for r in reader.seen.values()) == 2

"""Key values as manifest column bounds, without a JVM: pyiceberg writes real tables (its manifests carry
every column's bounds), the survey finds the manifests whose bounds reveal a key, and only those no snapshot
reads are deleted; the rule for truncated bounds."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from tablepolicy.runtime.erasure.keys import SUBJECT, KeyColumn, KeySet
from tablepolicy.runtime.erasure.leftovers import delete_unreferenced, manifests
from tablepolicy.runtime.erasure.manifests import KeyBounds, truncations
from tablepolicy.runtime.erasure.survey import FileReader, survey
from tests.integration.manifest_scan import manifest_bounds

ERASED = "subject-erased"


def keys(values: list[object], arrow_type: pa.DataType | None = None, field_id: int = 2) -> KeySet:
    arrow_type = arrow_type or pa.string()
    column = KeyColumn(("user_id",), field_id, arrow_type)
    return KeySet((column,), pa.table({column.alias: pa.array(values, arrow_type),
                                       SUBJECT: pa.array(range(len(values)), pa.int32())}),
                  tuple(f"REQ-{i}" for i in range(len(values))))


@pytest.mark.parametrize(("bound", "revealed"), [
    ("a-long-subject-identifier-0042", True),  # the key itself
    ("a-long-subject-i", True),  # its lower bound truncated to 16 characters
    ("a-long-subject-j", True),  # its upper bound truncated: the last character incremented
    ("a-long-subject-identifier-0043", False),
    ("a-long-subject-id", False),  # 17 characters: no length the table truncates to
    ("a", False),  # a prefix, but no truncation of the key: a kept value may share it
    ("b", False),
], ids=["exact", "truncated-lower", "truncated-upper", "another-key", "other-length", "prefix", "unrelated"])
def test_a_bound_reveals_a_key_when_it_is_the_key_or_its_truncated_form(bound: str, revealed: bool) -> None:
    assert bool(KeyBounds.of(keys(["a-long-subject-identifier-0042"])).reveals(2, bound.encode())) is revealed


def test_truncation_lengths_come_from_the_table_metrics_settings() -> None:
    lengths = truncations({"write.metadata.metrics.default": "truncate(8)",
                           "write.metadata.metrics.column.user_id": "full", "other": "truncate(3)"})
    assert lengths == {8, 16}
    assert KeyBounds.of(keys(["a-long-subject-identifier-0042"]), lengths).reveals(2, b"a-long-s")


def test_integer_bounds_are_compared_as_numbers() -> None:
    bounds = KeyBounds.of(keys([7, 1 << 40], pa.int64()))
    assert bounds.reveals(2, (7).to_bytes(4, "little", signed=True)) == {0}  # an int column's 4-byte bound
    assert bounds.reveals(2, (1 << 40).to_bytes(8, "little", signed=True)) == {1}
    assert not bounds.reveals(2, (8).to_bytes(8, "little", signed=True))
    assert not bounds.reveals(3, (7).to_bytes(8, "little", signed=True))  # not a key column


def rows(users: list[str], first: int) -> pa.Table:
    return pa.table({"event_id": pa.array(range(first, first + len(users)), pa.int64()),
                     "user_id": pa.array(users, pa.string())})


@pytest.fixture()
def table(tmp_path: Path) -> Table:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace("privacy")
    schema = Schema(NestedField(1, "event_id", LongType(), required=False),
                    NestedField(2, "user_id", StringType(), required=False))
    created = catalog.create_table(("privacy", "events"), schema)
    created.append(rows(["kept-1", "kept-2"], 0))
    created.append(rows([ERASED, "kept-3"], 10))  # ERASED is this file's lower bound
    return catalog.load_table(("privacy", "events"))


def avro_with_key(table: Table) -> set[str]:
    """Independently: the avro files under the location with a user_id bound equal to the key."""
    return {str(p) for p in Path(table.location().removeprefix("file://")).rglob("*.avro")
            if ERASED in manifest_bounds(p).get(2, [])}


def test_only_manifests_no_snapshot_reads_are_deleted(table: Table) -> None:
    assert len(avro_with_key(table)) == 1
    reader = FileReader(keys([ERASED]))
    found = survey(table, reader, {})
    assert found.manifests_with_keys == sorted(avro_with_key(table))
    assert found.manifest_orphans == []  # the current snapshot reads it: never deleted

    table.delete(EqualTo("user_id", ERASED))  # the file is rewritten without the key
    table = table.refresh()
    table.maintenance.expire_snapshots().by_ids(
        [s.snapshot_id for s in table.metadata.snapshots if s.snapshot_id != table.metadata.current_snapshot_id]
    ).commit()  # the commit only: the expired snapshots' manifests stay behind, as after a killed expiry
    table = table.refresh()
    found = survey(table, reader, {})
    assert set(found.manifests_with_keys) == avro_with_key(table)
    orphans = found.manifest_orphans
    assert orphans and list(found.held) == found.orphans  # the data file is left behind too

    deleted = delete_unreferenced(lambda: table.refresh(), {p: found.stored[p] for p in orphans}, {}, manifests)
    assert deleted == orphans
    assert sorted(table.refresh().scan().to_arrow().column("user_id").to_pylist()) == ["kept-1", "kept-2", "kept-3"]
    # pyiceberg's delete wrote the removed file's entry with its statistics: the current snapshot's own
    # manifest still holds the key as that deleted entry's lower bound (erase rewrites the manifests)
    found = survey(table.refresh(), FileReader(keys([ERASED])), {})
    (left,) = avro_with_key(table)
    assert found.manifests_with_keys == [left] and found.manifest_orphans == []
    (erased_file,) = found.bounded_in(table.metadata.current_snapshot_id)
    assert erased_file in found.held  # the file the delete replaced, now referenced by no snapshot


def test_a_manifest_a_snapshot_reads_is_never_deleted(table: Table) -> None:
    found = survey(table, FileReader(keys([ERASED])), {})
    (path,) = found.manifests_with_keys
    assert delete_unreferenced(lambda: table.refresh(), {path: found.stored[path]}, {}, manifests) == []
    assert Path(path).exists()

"""The erasure delete's data work without a JVM: which rows a file keeps (a table of cases), and the new
files pyarrow stages for a real pyiceberg table (rows, order, partition, the manifests the commit reads),
discarded without a trace. The commit through Iceberg's Java API is proven in tests/integration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from tablepolicy.runtime.erasure import arrow_rewrite
from tablepolicy.runtime.erasure.arrow_rewrite import LeftToSpark, StagedRewrite, stage_rewrite
from tablepolicy.runtime.erasure.keys import SUBJECT, KeyColumn, KeySet, _key_arrays, matches, without_keys
from tablepolicy.runtime.orphans import normalize

USER = pa.struct([("uid", pa.string()), ("name", pa.string())])


def keys(columns: list[tuple[tuple[str, ...], int, pa.DataType]], rows: list[tuple[Any, ...]]) -> KeySet:
    key_columns = tuple(KeyColumn(path, field_id, kind) for path, field_id, kind in columns)
    data = {c.alias: pa.array([r[i] for r in rows], c.arrow_type) for i, c in enumerate(key_columns)}
    return KeySet(key_columns, pa.table({**data, SUBJECT: pa.array(range(len(rows)), pa.int32())}),
                  tuple(f"REQ-{i}" for i in range(len(rows))))


ONE = [(("user_id",), 1, pa.string())]
CASES = {
    "a key's rows go, the rest keep their order": (
        pa.table({"n": [1, 2, 3, 4, 5], "user_id": ["a", "b", "a", None, "c"]}), ONE, [("a",)], [2, 4, 5]),
    "a NULL key column matches nothing": (
        pa.table({"n": [1, 2], "user_id": pa.array([None, None], pa.string())}), ONE, [("a",)], [1, 2]),
    "no row holds a key": (pa.table({"n": [1, 2], "user_id": ["x", "y"]}), ONE, [("a",)], [1, 2]),
    "every row holds a key": (pa.table({"n": [1, 2], "user_id": ["a", "b"]}), ONE, [("a",), ("b",)], []),
    "large strings are matched as strings": (
        pa.table({"n": [1, 2], "user_id": pa.array(["a", "b"], pa.large_string())}), ONE, [("b",)], [1]),
    "a nested key (user.uid)": (
        pa.table({"n": [1, 2, 3], "user": pa.array([{"uid": "a", "name": "x"}, None, {"uid": "b", "name": "a"}],
                                                  USER)}),
        [(("user", "uid"), 5, pa.string())], [("a",)], [2, 3]),
    "two key columns must both match": (
        pa.table({"n": [1, 2, 3], "tenant": ["t1", "t2", "t1"], "user_id": [7, 7, 8]}),
        [(("tenant",), 1, pa.string()), (("user_id",), 2, pa.int64())], [("t1", 7)], [2, 3]),
    "an int column against long keys": (
        pa.table({"n": [1, 2, 3], "user_id": pa.array([7, 8, 7], pa.int32())}), [(("user_id",), 1, pa.int64())],
        [(7,)], [2]),
    "the same file rows as 10,000 keys": (
        pa.table({"n": [1, 2, 3], "user_id": ["k0", "x", "k9999"]}), ONE, [(f"k{i}",) for i in range(10_000)], [2]),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_rows_without_keys(case: tuple[pa.Table, list[tuple[tuple[str, ...], int, pa.DataType]],
                                       list[tuple[Any, ...]], list[int]]) -> None:
    read, columns, rows, kept = case
    result = without_keys(read, keys(columns, rows))
    assert result.column("n").to_pylist() == kept
    assert result.schema == read.schema


MATCHED = {
    "one key column, each subject its own value": (
        pa.table({"user_id": ["a", "b", None, "a", "x"]}), ONE, [("a",), ("b",), ("c",)]),
    "two requests for the same subject: the row is paired with both": (
        pa.table({"user_id": ["a", "b", "a", None]}), ONE, [("a",), ("b",), ("a",)]),
    "an int column against long keys": (
        pa.table({"user_id": pa.array([7, None, 8, 7], pa.int32())}), [(("user_id",), 1, pa.int64())], [(7,), (9,)]),
    "a nested key": (
        pa.table({"user": pa.array([{"uid": "a", "name": "b"}, None, {"uid": "b", "name": "a"}], USER)}),
        [(("user", "uid"), 5, pa.string())], [("b",)]),
    "two key columns": (
        pa.table({"tenant": ["t1", "t2", "t1"], "user_id": ["a", "a", "b"]}),
        [(("tenant",), 1, pa.string()), (("user_id",), 2, pa.string())], [("t1", "a"), ("t2", "b")]),
}


@pytest.mark.parametrize("case", MATCHED.values(), ids=MATCHED.keys())
def test_a_files_rows_holding_a_key_are_matched_to_their_subjects_as_the_join_pairs_them(
    case: tuple[pa.Table, list[tuple[tuple[str, ...], int, pa.DataType]], list[tuple[Any, ...]]]
) -> None:
    """The survey's match (a set lookup for one key column whose subjects' values differ) pairs each row holding a
    key with its subjects exactly as the hash join of the rows with the key set does."""
    read, columns, rows = case
    key_set = keys(columns, rows)
    paths = [list(path) for path, _, _ in columns]
    found = matches(read, paths, key_set)
    joined = pa.table(_key_arrays(read, paths, key_set)).join(key_set.table, keys=key_set.aliases,
                                                                    join_type="inner")
    assert sorted(found.to_pylist(), key=repr) == sorted(joined.to_pylist(), key=repr) != []


SCHEMA = Schema(NestedField(1, "event_id", LongType(), required=False), NestedField(2, "user_id", StringType()),
                NestedField(3, "region", StringType()))


def lake(tmp_path: Path, **properties: str) -> Any:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace("privacy")
    spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=IdentityTransform(), name="region"))
    table = catalog.create_table(("privacy", "events"), schema=SCHEMA, partition_spec=spec, properties=properties)
    for first in (0, 100):  # two files per region
        table.append(pa.table({
            "event_id": pa.array(range(first, first + 6), pa.int64()),
            "user_id": ["u1", "u2", "u1", "u3", "u2", "u1"],
            "region": ["eu", "eu", "eu", "us", "us", "us"]}))
    return table.refresh()


def files_of(table: Any) -> dict[str, str]:
    return {normalize(t.file.file_path): t.file.partition[0] for t in table.scan().plan_files()}


def test_a_staged_rewrite_writes_each_file_without_the_keys_in_its_partition(tmp_path: Path) -> None:
    table = lake(tmp_path)
    files = files_of(table)
    holding = frozenset(path for path, region in files.items() if region == "eu")
    staged = stage_rewrite(table, holding, keys(ONE, [("u1",)]))
    assert isinstance(staged, StagedRewrite) and staged.snapshot_id == table.metadata.current_snapshot_id
    assert staged.sources == holding and len(staged.manifests) == 2  # one manifest per append lists them
    for rewritten in staged.files:
        ((path, size),) = rewritten.written
        written = Path(path.removeprefix("file://"))
        assert written.stat().st_size == size and written.parent.name == "region=eu"
        assert pq.read_table(written).column("user_id").to_pylist() == ["u2"]  # u1 twice gone, order kept
    staged.discard()
    assert files_of(table.refresh()) == files  # nothing committed
    assert not [p for p in tmp_path.rglob("*.parquet") if str(p) not in files]  # nothing left


def test_a_file_whose_every_row_holds_a_key_is_replaced_by_none(tmp_path: Path) -> None:
    table = lake(tmp_path)
    holding = frozenset(path for path, region in files_of(table).items() if region == "eu")
    staged = stage_rewrite(table, holding, keys(ONE, [("u1",), ("u2",)]))
    assert isinstance(staged, StagedRewrite) and [f.written for f in staged.files] == [(), ()]


def written_as_orc(table: Any) -> Any:
    with table.transaction() as change:
        change.set_properties({"write.format.default": "orc"})
    return table.refresh()


def a_file_gone(table: Any) -> Any:
    Path(next(iter(files_of(table))).removeprefix("file://")).unlink()  # storage lost it: pyarrow cannot read it
    return table


@pytest.mark.parametrize(("change", "cluster", "reason"), [
    (written_as_orc, False, "the table writes orc files"),
    (lambda table: table, True, "the files hold "),
    (a_file_gone, False, "pyiceberg could not rewrite "),
], ids=["orc", "cluster", "unreadable file"])  # format v3: tests/integration (pyiceberg cannot write v3)
def test_what_pyarrow_does_not_rewrite_is_left_to_spark_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any, cluster: bool, reason: str
) -> None:
    monkeypatch.setattr(arrow_rewrite, "CLUSTER_BYTES", 100)  # the test's files are a few KiB
    table = change(lake(tmp_path))
    before = sorted(tmp_path.rglob("*.parquet"))
    staged = stage_rewrite(table, frozenset(files_of(table)), keys(ONE, [("u1",)]), cluster=cluster)
    assert isinstance(staged, LeftToSpark) and staged.reason.startswith(reason), staged
    if cluster:  # the size as a person reads it, never "0 MiB"
        assert re.fullmatch(r"the files hold [\d.,]+ KiB: the cluster's executors share the work", staged.reason)
    assert sorted(tmp_path.rglob("*.parquet")) == before  # whatever it wrote before it stopped is gone


def test_a_cluster_leaves_small_rewrites_to_pyarrow(tmp_path: Path) -> None:
    table = lake(tmp_path)
    assert isinstance(stage_rewrite(table, frozenset(files_of(table)), keys(ONE, [("u1",)]), cluster=True),
                      StagedRewrite)

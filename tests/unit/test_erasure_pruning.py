"""A file is excluded before any column chunk is read when its metadata shows it holds no requested key
(runtime/erasure/pruning.py): manifest bounds (the file not even opened), row-group statistics, bloom filters; a file
without them, or with evidence that cannot be decoded, is read as before. Files written by pyarrow with Iceberg field
ids; each case says what decided it and whether a key was found."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs as pafs

from tablepolicy.runtime.erasure.bloom import Probe, SplitBlockFilter, encode, read_filter
from tablepolicy.runtime.erasure.file_scan import read_file
from tablepolicy.runtime.erasure.keys import FIELD_ID, SUBJECT, KeyColumn, KeySet
from tablepolicy.runtime.erasure.pruning import Evidence, FileBounds, KeyProbe

LOCAL = pafs.LocalFileSystem()


def keys(columns: list[tuple[tuple[str, ...], int, pa.DataType]], subjects: list[tuple[Any, ...]]) -> KeySet:
    resolved = tuple(KeyColumn(path, field_id, arrow_type) for path, field_id, arrow_type in columns)
    data = {c.alias: pa.array([s[i] for s in subjects], c.arrow_type) for i, c in enumerate(resolved)}
    return KeySet(resolved, pa.table({**data, SUBJECT: pa.array(range(len(subjects)), pa.int32())}),
                  tuple(f"REQ-{i}" for i in range(len(subjects))))


USER = keys([(("user_id",), 2, pa.string())], [("u1",), ("u5",)])
ID = keys([(("account",), 3, pa.int64())], [(7,), (1 << 40,)])
PAIR = keys([(("tenant",), 4, pa.string()), (("user_id",), 2, pa.string())], [("t1", "u1"), ("t2", "u2")])
NESTED = keys([(("user", "uid"), 6, pa.string())], [("u1",)])


def field(name: str, arrow_type: pa.DataType, field_id: int) -> pa.Field:
    return pa.field(name, arrow_type, metadata={FIELD_ID: str(field_id).encode()})


@dataclass(frozen=True)
class Layout:
    """How a case's file is written: its columns (name -> (field id, type, values)), row groups, which columns get
    a bloom filter and how big (fpp), and whether statistics are written."""

    columns: dict[str, tuple[int, pa.DataType, list[Any]]]
    bloom: tuple[str, ...] = ()
    fpp: float = 0.0001
    statistics: bool = True
    row_group_size: int | None = None

    def write(self, path: Path) -> None:
        fields = [field(name, t, i) for name, (i, t, _) in self.columns.items()]
        table = pa.table([pa.array(v, t) for _, t, v in self.columns.values()], schema=pa.schema(fields))
        pq.write_table(table, path, write_statistics=self.statistics, row_group_size=self.row_group_size,
                       bloom_filter_options={c: {"ndv": table.num_rows, "fpp": self.fpp} for c in self.bloom})


def users(*values: str, bloom: bool = False, statistics: bool = True, groups: int | None = None) -> Layout:
    return Layout({"event_id": (1, pa.int64(), list(range(len(values)))), "user_id": (2, pa.string(), list(values))},
                  ("user_id",) if bloom else (), statistics=statistics, row_group_size=groups)


CASES: list[tuple[str, Layout, KeySet, Evidence, int]] = [  # (id, file, keys, what decides, rows holding a key)
    ("no-filter-no-statistics", users("a", "b", statistics=False), USER, Evidence.READ, 0),
    ("statistics", users("a", "b"), USER, Evidence.STATISTICS, 0),
    ("statistics-cover-no-filter", users("a", "z"), USER, Evidence.READ, 0),
    ("bloom-filter", users("a", "z", bloom=True), USER, Evidence.BLOOM_FILTER, 0),
    ("bloom-filter-no-statistics", users("a", "z", bloom=True, statistics=False), USER, Evidence.BLOOM_FILTER, 0),
    ("holds-a-key", users("a", "u1", "z", bloom=True), USER, Evidence.READ, 1),
    ("holds-the-other-key", users("a", "u5", "z", bloom=True), USER, Evidence.READ, 1),
    ("row-groups-by-statistics", users("a", "b", "v", "w", groups=2), USER, Evidence.STATISTICS, 0),
    ("row-groups-statistics-then-bloom", users("a", "b", "t", "w", bloom=True, groups=2), USER,
     Evidence.BLOOM_FILTER, 0),
    ("one-row-group-holds-it", users("a", "b", "t", "u1", bloom=True, groups=2), USER, Evidence.READ, 1),
    ("int32-bloom", Layout({"account": (3, pa.int32(), [1, 2, 3, 9])}, ("account",), statistics=False), ID,
     Evidence.READ, 0),  # 1 << 40 cannot be an INT32 value's encoding: nothing concluded, the file is read
    ("int64-bloom", Layout({"account": (3, pa.int64(), [1, 2, 3, 9])}, ("account",), statistics=False), ID,
     Evidence.BLOOM_FILTER, 0),
    ("int64-statistics", Layout({"account": (3, pa.int64(), [8, 9])}), ID, Evidence.STATISTICS, 0),
    ("int64-holds", Layout({"account": (3, pa.int64(), [7, 9])}, ("account",)), ID, Evidence.READ, 1),
    # a two-column key: each subject's pair crossed over two rows; the filters admit every value of each column
    ("pair-crossed", Layout({"tenant": (4, pa.string(), ["t1", "t2"]), "user_id": (2, pa.string(), ["u2", "u1"])},
                            ("tenant", "user_id"), statistics=False), PAIR, Evidence.READ, 0),
    # no column excludes both subjects; the tenant filter excludes (t2, u2), the user filter (t1, u1)
    ("pair-each-by-one-column", Layout({"tenant": (4, pa.string(), ["t1", "t3"]),
                                        "user_id": (2, pa.string(), ["u3", "u2"])}, ("tenant", "user_id"),
                                       statistics=False), PAIR, Evidence.BLOOM_FILTER, 0),
    ("pair-holds", Layout({"tenant": (4, pa.string(), ["t1", "t3"]), "user_id": (2, pa.string(), ["u1", "u2"])},
                          ("tenant", "user_id"), statistics=False), PAIR, Evidence.READ, 1),
    ("no-key-column", Layout({"other": (9, pa.string(), ["u1"])}), USER, Evidence.NO_KEY_COLUMN, 0),
]


@pytest.mark.parametrize(("layout", "key_set", "decided", "held"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_what_decides_a_file(tmp_path: Path, layout: Layout, key_set: KeySet, decided: Evidence, held: int) -> None:
    path = tmp_path / "f.parquet"
    layout.write(path)

    found = read_file(LOCAL, str(path), key_set, KeyProbe.of(key_set))
    unpruned = read_file(LOCAL, str(path), key_set)

    assert found.evidence is decided
    assert (found.held.rows if found.held else 0) == held
    assert unpruned.evidence in (Evidence.READ, Evidence.NO_KEY_COLUMN) and unpruned.held == found.held


def test_a_nested_key_is_found_by_its_field_id(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    uid = pa.struct([field("uid", pa.string(), 6), field("name", pa.string(), 7)])
    for name, uids, decided in (("absent.parquet", ["a", "z"], Evidence.BLOOM_FILTER),
                                ("held.parquet", ["a", "u1"], Evidence.READ)):
        path = tmp_path / name
        table = pa.table([pa.array([{"uid": u, "name": "n"} for u in uids], uid)],
                         schema=pa.schema([field("user", uid, 5)]))
        pq.write_table(table, path, bloom_filter_options={"user.uid": {"ndv": 2, "fpp": 0.0001}})
        found = read_file(LOCAL, str(path), NESTED, KeyProbe.of(NESTED))
        assert found.evidence is decided
        assert bool(found.held) is (decided is Evidence.READ)


def bounds(lower: bytes | None, upper: bytes | None, size: int, field_id: int = 2) -> FileBounds:
    return FileBounds(size, {field_id: lower} if lower else {}, {field_id: upper} if upper else {})


@pytest.mark.parametrize(("given", "decided"), [
    (lambda size: bounds(b"a", b"b", size), Evidence.BOUNDS),
    (lambda size: bounds(b"v", None, size), Evidence.BOUNDS),  # no upper bound: the lower alone excludes
    (lambda size: bounds(b"u6", b"z", size), Evidence.BOUNDS),  # above both keys
    (lambda size: bounds(b"u1", b"u1", size), Evidence.READ),  # the key is the bound
    (lambda size: bounds(b"u0", b"u2", size), Evidence.READ),  # a truncated upper bound (u1..., incremented)
    (lambda size: bounds(b"a", b"b", size + 1), Evidence.READ),  # the entry describes another size: not this file
    (lambda size: bounds(b"a", b"b", size, field_id=3), Evidence.READ),  # another column's bounds
    (lambda size: bounds(b"\xff\xfe", b"\xff\xff", size), Evidence.READ),  # not UTF-8: nothing concluded
], ids=["below", "lower-only", "above", "equal", "truncated", "other-size", "other-column", "undecodable"])
def test_manifest_bounds_exclude_a_file_unopened(tmp_path: Path, given: Callable[[int], FileBounds],
                                                 decided: Evidence) -> None:
    path = tmp_path / "f.parquet"
    users("a", "z").write(path)  # its statistics cover the keys: only the bounds can exclude it
    size = path.stat().st_size
    if decided is Evidence.BOUNDS:
        path.unlink()  # excluded by its manifest entry alone: a read would fail
    assert read_file(LOCAL, str(path), USER, KeyProbe.of(USER), given(size), size).evidence is decided


def test_integer_bounds_exclude_by_value(tmp_path: Path) -> None:
    probe = KeyProbe.of(ID)
    four = (8).to_bytes(4, "little", signed=True), (9).to_bytes(4, "little", signed=True)  # an int column's
    assert not probe.after_bounds(bounds(*four, 10, field_id=3), 10)
    assert probe.after_bounds(bounds((0).to_bytes(8, "little"), (7).to_bytes(8, "little"), 10, field_id=3), 10) \
        == {0}


def unwritten(bloom: SplitBlockFilter, low: str, high: str, *, admitted: bool) -> str:
    """A value between ``low`` and ``high`` that was not written and that ``bloom`` admits (or refuses)."""
    return next(v for i in range(100_000) if low < (v := f"{low}-{i}") < high
                and bloom.may_hold(Probe.of(encode(v, "BYTE_ARRAY") or b"")) is admitted)


def test_a_false_positive_filter_leads_to_a_read(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    written = [f"m{i:03}" for i in range(200)]
    users(*written, bloom=True).write(path)
    # a filter far too small for 200 values (two blocks, most bits set): many absent keys pass it, not all
    pq.write_table(pq.read_table(path), path, bloom_filter_options={"user_id": {"ndv": 100, "fpp": 0.5}})
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    data = path.read_bytes()[chunk.bloom_filter_offset:chunk.bloom_filter_offset + chunk.bloom_filter_length]
    bloom = read_filter(data)
    admitted, refused = (keys([(("user_id",), 2, pa.string())], [(unwritten(bloom, "m000", "m199", admitted=a),)])
                         for a in (True, False))

    found = read_file(LOCAL, str(path), admitted, KeyProbe.of(admitted))

    assert found.evidence is Evidence.READ and found.held is None  # read, and it holds no key
    assert read_file(LOCAL, str(path), refused, KeyProbe.of(refused)).evidence is Evidence.BLOOM_FILTER


def test_a_filter_it_cannot_decode_leads_to_a_read(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    users("a", "z", bloom=True).write(path)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    data = bytearray(path.read_bytes())
    member = data.index(b"\x1c\x1c", chunk.bloom_filter_offset) + 1  # the algorithm union's member: BLOCK (field 1)
    data[member] = 0x2C  # field 2: an algorithm the spec does not define
    path.write_bytes(bytes(data))

    assert read_file(LOCAL, str(path), USER, KeyProbe.of(USER)).evidence is Evidence.READ


@pytest.mark.parametrize(("tenants", "users", "left"), [
    ((b"t1", b"t1"), (b"u2", b"u3"), set()),  # the tenant bounds exclude (t2, u2), the user bounds (t1, u1)
    ((b"t1", b"t2"), (b"u2", b"u3"), {1}),  # only (t1, u1) excluded
    ((b"t1", b"t1"), (b"u1", b"u3"), {0}),
], ids=["each-subject-by-one-column", "one-left", "other-left"])
def test_a_multi_column_key_is_excluded_per_subject(tenants: tuple[bytes, bytes], users: tuple[bytes, bytes],
                                                    left: set[int]) -> None:
    given = FileBounds(10, {4: tenants[0], 2: users[0]}, {4: tenants[1], 2: users[1]})
    assert KeyProbe.of(PAIR).after_bounds(given, 10) == left


def test_the_per_file_unit_ships_by_value(tmp_path: Path) -> None:
    """read_file's arguments survive pickling (a cluster's executors receive them so) and decide alike."""
    path = tmp_path / "f.parquet"
    users("a", "z", bloom=True).write(path)
    probe = KeyProbe.of(USER)
    probe.probes(0, "BYTE_ARRAY")  # hashed before shipping, as a run's first survey leaves it
    arguments = (LOCAL, str(path), USER, probe, bounds(b"a", b"z", path.stat().st_size), path.stat().st_size)
    assert read_file(*pickle.loads(pickle.dumps(arguments))) == read_file(*arguments)
    assert read_file(*arguments).evidence is Evidence.BLOOM_FILTER


class CountingFile:
    """A file's ``read_at`` that counts the bytes it returns."""

    def __init__(self, path: Path) -> None:
        self.data, self.read = path.read_bytes(), 0

    def read_at(self, size: int, offset: int) -> bytes:
        chunk = self.data[offset:offset + size]
        self.read += len(chunk)
        return chunk


@pytest.mark.parametrize(("keys", "sparse"), [(1, True), (2, True), (8, True), (9, False), (5_000, False)])
def test_a_large_filter_tested_for_a_few_keys_is_read_a_block_at_a_time(tmp_path: Path, keys: int,
                                                                        sparse: bool) -> None:
    """Iceberg's writer sizes each filter at write.parquet.bloom-filter-max-bytes (1 MiB by default): a file tested
    for a few keys reads their 32-byte blocks and the header, not the bitset; many keys read it whole, once.
    Either way the verdict per key is the whole filter's."""
    from tablepolicy.runtime.erasure.bloom import filter_at

    path = tmp_path / "f.parquet"
    written = [f"user-{i:06}" for i in range(200_000)]
    pq.write_table(pa.table({"user_id": written}), path,
                   bloom_filter_options={"user_id": {"ndv": 200_000, "fpp": 0.001}})  # pyarrow sizes it: 512 KiB
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    whole = read_filter(path.read_bytes()[chunk.bloom_filter_offset:][:chunk.bloom_filter_length])
    assert len(whole.bitset) >= 2**18
    tested = [Probe.of(encode(v, "BYTE_ARRAY") or b"") for v in [*written[:keys // 2], *(
        f"absent-{i}" for i in range(keys - keys // 2))]]
    counted = CountingFile(path)

    found = filter_at(counted.read_at, chunk.bloom_filter_offset, chunk.bloom_filter_length, keys)

    assert [found.may_hold(p) for p in tested] == [whole.may_hold(p) for p in tested]
    assert all(found.may_hold(p) for p in tested[:keys // 2])  # every written key: no false negative
    if sparse:
        assert counted.read <= 64 + keys * 32, counted.read  # the header's guess and one block a key
    else:
        assert counted.read >= len(whole.bitset)


def test_a_small_filter_is_read_whole_in_one_read_even_for_one_key(tmp_path: Path) -> None:
    """On object storage each read is a request: below bloom.SPARSE_MIN_BYTES one read of the whole filter costs less
    time than a header read and a block read."""
    from tablepolicy.runtime.erasure.bloom import SplitBlockFilter, filter_at

    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"user_id": [f"user-{i}" for i in range(2_000)]}), path,
                   bloom_filter_options={"user_id": {"ndv": 2_000, "fpp": 0.01}})
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    calls: list[int] = []
    data = path.read_bytes()

    def read_at(size: int, offset: int) -> bytes:
        calls.append(size)
        return data[offset:offset + size]

    found = filter_at(read_at, chunk.bloom_filter_offset, chunk.bloom_filter_length, 1)
    assert isinstance(found, SplitBlockFilter) and calls == [chunk.bloom_filter_length]

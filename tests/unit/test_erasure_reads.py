"""An erasure reads the key columns of each data file once per run, the files it rewrites once more in full, and
every file once more for the proof's fresh read (issue 22, target 4).

A table of seven parquet files over seven commits, written by pyiceberg alone: three files with no key, two holding
a subject's key that the current snapshot reads (one of them the copy-on-write rewrite of a file that still holds the
key, which only the history reads now), and one more only the history reads (its rows deleted by key). One run of
``tablepolicy.erase``, pyspark unimportable (no JVM), with every open of a data file counted at the seam all readers
share: the pyarrow filesystem pyiceberg's FileIO builds (``PyArrowFileIO._initialize_fs``), which the survey
(runtime/locations.filesystem), the rewrite (pyiceberg's ArrowScan, like_source.source_layout) and the proof open
files through.

Each open is attributed to the step that made it (the survey, the rewrite, the proof's survey) and sorted by what it
read: a read that ends at the end of the file is the footer (pyarrow reads the last 64 KiB, then the rest of the
footer if it is longer); any other read is of column chunks, named by the footer's byte ranges. What is counted:
- survey: one open per data file per run that reads the key column (user_id) and no other, across the surveys after
  the DELETE and the expiry too (files are immutable: they read only the files written since), none of the files
  the rewrite wrote (from rows already matched against the key set);
- rewrite: one open of each file holding a key in the current snapshot reading every column (ArrowScan), and one
  more that reads its footer only (source_layout: the writer settings of the source). The second is footer
  metadata, a small read at the end of the file, not a second read of its data: counted apart, asserted as one;
- proof: one open per file left in storage reading the key column, independent of what the run remembered.
Observed with ``prune=False``: 7 survey opens (the 7 files; none of the 2 the rewrite wrote; none by the survey after
the expiry), 2 rewrite opens of every column plus 2 of the footer (the last 64 KiB each), 5 proof opens.
With pruning (the default), a file whose manifest bounds exclude every key ("kept".."kept", "other".."other" against
u1, u2, u3) is never opened: the survey opens the 4 files holding a key, the proof none of the 5 left, and says so.
Merge-on-read is not here: pyiceberg writes no delete file (tests/integration has Spark's).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs as pafs
from pyiceberg.io.pyarrow import PyArrowFileIO

import tablepolicy
from tablepolicy.runtime.erase import _prove
from tablepolicy.runtime.erasure import arrow_rewrite, survey
from tablepolicy.runtime.orphans import normalize
from tests.catalog_fixtures import policy_table
from tests.cli_runner import pyspark_unimportable

POLICY = """table: privacy.events
columns:
  - {name: event_id, type: long}
  - {name: user_id, type: string}
  - {name: payload, type: binary}
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
COLUMNS = ("event_id", "user_id", "payload")
KEY = frozenset({"user_id"})


@dataclass
class Open:
    """One open of a file: the step that made it and the byte ranges it read."""

    step: str
    path: str
    size: int
    reads: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes)

    def columns(self, chunks: dict[str, tuple[int, int]]) -> frozenset[str]:
        """The columns whose chunks a read that is not the footer's overlapped."""
        body = [(start, start + length) for start, length in self.reads if start + length != self.size and length]
        return frozenset(name for name, (first, end) in chunks.items()
                         if any(start < end and first < stop for start, stop in body))

    @property
    def footer_only(self) -> bool:
        return all(start + length == self.size for start, length in self.reads if length)


class Counted:
    """A file pyarrow reads through Python, recording each read's range (pa.PythonFile's handle)."""

    def __init__(self, inner: pa.NativeFile, record: Open) -> None:
        self.inner, self.record, self.lock = inner, record, threading.Lock()

    def read(self, nbytes: int = -1) -> bytes:
        with self.lock:
            start = self.inner.tell()
            data = bytes(self.inner.read() if nbytes is None or nbytes < 0 else self.inner.read(nbytes))
            self.record.reads.append((start, len(data)))
            return data

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self.inner.seek(offset, whence))

    def tell(self) -> int:
        return int(self.inner.tell())

    def size(self) -> int:
        return int(self.inner.size())

    def close(self) -> None:
        self.inner.close()

    @property
    def closed(self) -> bool:
        return bool(self.inner.closed)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False


class Steps:
    """The step the run is in: the proof's survey is the proof's, the rewrite's reads the rewrite's."""

    def __init__(self) -> None:
        self.active: list[str] = []
        self.opens: list[Open] = []
        self.surveys = 0

    def now(self) -> str:
        return next((s for s in ("proof", "rewrite", "survey") if s in self.active), "other")

    @contextmanager
    def within(self, step: str) -> Iterator[None]:
        self.active.append(step)
        try:
            yield
        finally:
            self.active.pop()

    def wrap(self, step: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self.surveys += step == "survey" and "proof" not in self.active
            with self.within(step):
                return function(*args, **kwargs)
        return wrapped


class Counting(pafs.FileSystemHandler):  # type: ignore[misc]  # pyarrow's stubs: an untyped base
    """A local filesystem whose data files' opens are recorded; everything else goes straight through."""

    def __init__(self, inner: pafs.FileSystem, steps: Steps) -> None:
        self.inner, self.steps = inner, steps

    def open_input_file(self, path: str) -> pa.NativeFile:
        opened = self.inner.open_input_file(path)
        if not path.endswith(".parquet"):
            return opened
        record = Open(self.steps.now(), normalize(path), opened.size())
        self.steps.opens.append(record)
        return pa.PythonFile(Counted(opened, record), mode="r")

    def open_input_stream(self, path: str) -> pa.NativeFile:
        assert not path.endswith(".parquet"), path  # data files are read by range, never streamed
        return self.inner.open_input_stream(path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Counting) and other.inner.equals(self.inner)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return "counting-" + str(self.inner.type_name)

    def normalize_path(self, path: str) -> str:
        return str(self.inner.normalize_path(path))

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return list(self.inner.get_file_info(paths))

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return list(self.inner.get_file_info(selector))

    def create_dir(self, path: str, recursive: bool) -> None:
        self.inner.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self.inner.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.inner.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        raise AssertionError("erase deletes no root")

    def delete_file(self, path: str) -> None:
        self.inner.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self.inner.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self.inner.copy_file(src, dest)

    def open_output_stream(self, path: str, metadata: dict[str, str] | None) -> pa.NativeFile:
        return self.inner.open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path: str, metadata: dict[str, str] | None) -> pa.NativeFile:
        return self.inner.open_append_stream(path, metadata=metadata)


def rows(first: int, users: list[str]) -> pa.Table:
    """Rows with 16 KiB of random bytes each: the payload's chunk is most of a file (more than the 64 KiB pyarrow
    reads at its end for the footer), the key column's a few bytes."""
    return pa.table({"event_id": pa.array(range(first, first + len(users)), pa.int64()), "user_id": users,
                     "payload": pa.array([os.urandom(16 * 1024) for _ in users], pa.binary())})


def build(tmp_path: Path) -> Path:
    """The project and its table: seven commits, seven files (see the module's note)."""
    policies, table = policy_table(tmp_path, POLICY, ("privacy", "events"))
    table.append(rows(0, ["kept"] * 8))  # no key
    table.append(rows(100, ["kept", "u1", "kept", "kept"] * 2))  # holds u1, current
    table.append(rows(200, ["kept"] * 8))  # no key
    table.append(rows(300, ["kept", "u2"] * 4))  # holds u2: rewritten by the next commit, the history keeps it
    table.delete("event_id == 300")  # copy-on-write: a new file, still holding u2, is current
    table.append(rows(400, ["u3"] * 8))  # holds u3 only: the next commit drops it, the history keeps it
    table.delete("user_id == 'u3'")
    table.append(rows(500, ["other"] * 8))  # no key
    (tmp_path / "requests.csv").write_text("id,received,user_id\nREQ-1,2026-11-02,u1\nREQ-2,2026-11-03,u2\n"
                                           "REQ-3,2026-11-04,u3\n")
    return policies


def stored(tmp_path: Path) -> set[str]:
    return {normalize(str(p)) for p in (tmp_path / ".lake").rglob("*.parquet")}


def chunks(path: str) -> dict[str, tuple[int, int]]:
    """Each column's chunk in the file: (first byte, end)."""
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 1
    found = {}
    for index in range(meta.num_columns):
        column = meta.row_group(0).column(index)
        first = min(o for o in (column.dictionary_page_offset, column.data_page_offset) if o is not None)
        found[column.path_in_schema] = (first, first + column.total_compressed_size)
    return found


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Steps:
    """Every data file opened from here on is counted, with the step that opened it."""
    steps = Steps()
    initialize = PyArrowFileIO._initialize_fs
    monkeypatch.setattr(PyArrowFileIO, "_initialize_fs", lambda io, scheme, netloc=None: pafs.PyFileSystem(
        Counting(initialize(io, scheme, netloc), steps)))
    monkeypatch.setattr("tablepolicy.runtime.erase.survey", steps.wrap("survey", survey.survey))
    monkeypatch.setattr("tablepolicy.runtime.erase._prove", steps.wrap("proof", _prove))
    monkeypatch.setattr(arrow_rewrite, "_rewrite_file", steps.wrap("rewrite", arrow_rewrite._rewrite_file))
    for name in [k for k in os.environ if k.startswith(("PYICEBERG_", "TABLEPOLICY_"))]:
        monkeypatch.delenv(name)
    return steps


@pytest.mark.parametrize("prune", [False, True], ids=["every file read", "pruned by manifest bounds"])
def test_an_erasure_reads_each_file_once_per_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  counted: Steps, prune: bool) -> None:
    policies = build(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    before = stored(tmp_path)
    assert len(before) == 7
    layout = {path: chunks(path) for path in before}  # four of them are gone after the run
    counted.opens.clear()  # the table's own copy-on-write delete read a file

    with pyspark_unimportable():  # the pyarrow path: no JVM
        outcome = tablepolicy.erase(policies, requests=tmp_path / "requests.csv", now=NOW, prune=prune)

    ((erased),) = outcome.tables
    proof = erased.proof
    assert outcome.complete, proof.as_json()
    assert len(proof.files_with_keys) == 4 and len(proof.files_rewritten) == 2
    after = stored(tmp_path)
    written = after - before
    assert len(written) == 2 and len(after) == 5  # two rewritten; the four files holding a key deleted
    assert [s.action for s in proof.steps] == ["delete_rows", "expire_snapshots"]
    assert counted.surveys == 3  # the first, one after each step (the proof's is its own)
    layout |= {path: chunks(path) for path in written}
    rewritten = set(proof.files_rewritten)

    got: dict[tuple[str, str], Counter[str]] = {}  # (file name, step) -> what its opens read -> how many
    for read in counted.opens:
        assert read.path in before | after, read.path
        what = "footer" if read.footer_only else "+".join(sorted(read.columns(layout[read.path])))
        got.setdefault((Path(read.path).name, read.step), Counter())[what] += 1
    holding = before - after  # every file that held a key is gone; none left holds one
    expected: dict[tuple[str, str], Counter[str]] = {}
    for path in before | (after - written):  # what the rewrite wrote, from rows already matched, only the proof reads
        if not prune or path in holding:
            expected[(Path(path).name, "survey")] = Counter({"user_id": 1})
    for path in rewritten:
        expected[(Path(path).name, "rewrite")] = Counter({"+".join(sorted(COLUMNS)): 1, "footer": 1})
    for path in after if not prune else ():
        expected[(Path(path).name, "proof")] = Counter({"user_id": 1})
    assert got == expected
    assert proof.pruning.as_json() == {
        "enabled": prune, "excluded_by_bounds": 5 if prune else 0, "excluded_by_statistics": 0,
        "excluded_by_bloom_filter": 0, "no_key_column": 0, "files_read": 0 if prune else 5,
        "bytes_read": 0 if prune else proof.bytes_scanned, "bytes_skipped": proof.bytes_scanned if prune else 0}


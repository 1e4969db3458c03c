"""The erasure delete's data work, done with pyarrow: no JVM.

The files of the current snapshot that hold a key are small in number (the survey found them) and each is
read, filtered and written once: work that takes pyarrow a fraction of a second and took Spark's first jobs
in a fresh JVM several (planning, code generation, a broadcast of the key set; 5 of an erasure's 25 s at
1,000 subjects). So the rewrite happens here: each file is read with pyiceberg
(its position deletes and deletion vectors applied, columns projected by field id on the live schema),
the rows holding a key are dropped by an arrow join with the key set (the same data the proof matches,
never SQL text) and the rest is written as a new parquet file in the same partition, with the writer settings
of the file it replaces (runtime/erasure/like_source.py: about the bytes Spark's rewrite writes). Nothing is committed
here: commits.commit_rewrite swaps the files in one validated overwrite through pyiceberg.

Spark does the rewrite instead (snapshot_delete.delete_keys), and the proof says why (``LeftToSpark``):
- where pyiceberg cannot read a file as Spark does: an equality delete file applies to it, or it is not
  parquet, or pyiceberg fails on it (a type it cannot write, say);
- on a format v3 table, whose row lineage Spark's rewrite carries over and a new pyarrow file would not
  (pyiceberg 0.12 cannot load one yet: the guard is for the version that can);
- when the files hold more than ``CLUSTER_BYTES`` and Spark runs on a cluster: its executors share the work,
  this process would do it alone.
"""

from __future__ import annotations

import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import DataFile, FileFormat, ManifestContent
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import FileScanTask, Table, WriteTask
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.typedef import Record

from tablepolicy.compiler.erasure.cost import Placement
from tablepolicy.compiler.render.maintenance_report import byte_size

from ..manifests import READS
from ..orphans import normalize
from .keys import KeySet, without_keys
from .like_source import source_layout, write_like

WRITE_FORMAT = "write.format.default"
REWRITERS = 2  # files rewritten at once: pyarrow releases the GIL while it decodes and encodes (2 cores)
CLUSTER_BYTES = 512 * 2**20  # beyond this a Spark cluster rewrites the files, sharing the work


@dataclass(frozen=True)
class Rewritten:
    """One file that held a key and what replaces it: no file when every row it read held a key."""

    source: str  # normalized path, as the survey names it
    data_files: tuple[DataFile, ...] = field(default=(), compare=False)  # as written, with footer metrics

    @property
    def written(self) -> tuple[tuple[str, int], ...]:
        """(path as written, bytes) of each new file."""
        return tuple((f.file_path, f.file_size_in_bytes) for f in self.data_files)


@dataclass(frozen=True)
class StagedRewrite:
    """New files written for ``snapshot_id``'s files that held a key, not committed yet."""

    snapshot_id: int
    files: tuple[Rewritten, ...]
    io: FileIO
    manifests: frozenset[str] = frozenset()  # normalized paths of the snapshot's manifests that list them

    @property
    def sources(self) -> frozenset[str]:
        return frozenset(f.source for f in self.files)

    def discard(self) -> None:
        """A rewrite that will not be committed leaves no file behind (its files hold no key, but they are
        litter until the orphan guard's age has passed)."""
        for file in self.files:
            for path, _ in file.written:
                self.io.delete(path)


@dataclass(frozen=True)
class _SourcePartition:
    """The partition a rewritten file stays in, shaped as pyiceberg's writer asks of a partition key (the
    record and its path), whatever spec the source file was written under."""

    partition: Record
    spec: PartitionSpec
    schema: Schema

    def to_path(self) -> str:
        return self.spec.partition_to_path(self.partition, self.schema)


@dataclass(frozen=True)
class LeftToSpark:
    """Why Spark rewrites the files instead (the proof's statement says it)."""

    reason: str


def rewrite_placement(master: str, size: int) -> Placement:
    """Where the delete rewrites ``size`` bytes of files holding a key (stage_rewrite's rule, for the dry run)."""
    if not size:
        return Placement(False, "nothing to rewrite")
    if master.startswith("local") or size <= CLUSTER_BYTES:
        return Placement(False, f"pyarrow, {byte_size(size)} not above {byte_size(CLUSTER_BYTES)} on a cluster; the "
                                "Spark session where pyiceberg cannot read a file as Spark does")
    return Placement(True, f"Spark's executors: {byte_size(size)} above {byte_size(CLUSTER_BYTES)}")


def stage_rewrite(table: Table, holding: frozenset[str], keys: KeySet, *, cluster: bool = False,
                  ref: str = MAIN_BRANCH) -> StagedRewrite | LeftToSpark:
    """Write, for each file of the snapshot of ``table``'s ``ref`` (main: the current one) in ``holding``, its rows
    that hold no key as a new file; or say why Spark should (see the module's note). ``cluster``: Spark runs on a
    cluster."""
    found = table.metadata.refs.get(ref)
    snapshot_id = found.snapshot_id if found is not None else None
    if snapshot_id is None or not holding:
        return LeftToSpark("the table's current snapshot holds none of the files" if ref == MAIN_BRANCH
                           else f"the snapshot of '{ref}' holds none of the files")
    if table.metadata.format_version >= 3:  # pyiceberg 0.12 loads no v3 table yet; one that can must not
        return LeftToSpark("a format v3 table's row lineage is carried over by Spark's rewrite")
    if (kind := table.metadata.properties.get(WRITE_FORMAT, "parquet").lower()) != "parquet":
        return LeftToSpark(f"the table writes {kind} files")
    listing, tasks = _holding_entries(table, snapshot_id, holding)
    if tasks is None:
        try:
            tasks = [t for t in table.scan(snapshot_id=snapshot_id).plan_files()
                     if normalize(t.file.file_path) in holding]
        except ValueError as exc:  # pyiceberg refuses to plan a file an equality delete file applies to
            return LeftToSpark(f"pyiceberg cannot read the files: {_first_line(exc)}")
    if any(t.file.file_format != FileFormat.PARQUET for t in tasks):
        return LeftToSpark("a file holding a key is not parquet")
    if cluster and (size := sum(t.file.file_size_in_bytes for t in tasks)) > CLUSTER_BYTES:
        return LeftToSpark(f"the files hold {byte_size(size)}: the cluster's executors share the work")
    pool = ThreadPoolExecutor(REWRITERS)
    futures = [pool.submit(_rewrite_file, table, task, keys, number) for number, task in enumerate(tasks)]
    try:
        for future in futures:
            if future.exception() is not None:  # waits for it; the first failure stops the rest
                break
    except BaseException:  # interrupted: what runs finishes, what waits never starts, nothing written is left
        _written(tasks, futures, pool, snapshot_id, table.io, listing)[0].discard()
        raise
    staged, failed = _written(tasks, futures, pool, snapshot_id, table.io, listing)
    if failed is None:
        return staged
    staged.discard()
    task, error = failed  # a type pyiceberg cannot read or write; storage errors Spark meets again
    return LeftToSpark(f"pyiceberg could not rewrite {Path(task.file.file_path).name}: {_first_line(error)}")


def _written(tasks: list[FileScanTask], futures: list[Future[Rewritten]], pool: ThreadPoolExecutor, snapshot_id: int,
             io: FileIO, listing: frozenset[str]) -> tuple[StagedRewrite, tuple[FileScanTask, Exception] | None]:
    """Once the pool has stopped: the files written (in the tasks' order), and the first task that failed."""
    pool.shutdown(wait=True, cancel_futures=True)
    ran = [(task, f) for task, f in zip(tasks, futures, strict=True) if f.done() and not f.cancelled()]
    failures = [(task, error) for task, f in ran if isinstance(error := f.exception(), Exception)]
    written = tuple(f.result() for _, f in ran if f.exception() is None)
    return StagedRewrite(snapshot_id, written, io, listing), (failures[0] if failures else None)


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _holding_entries(table: Table, snapshot_id: int, holding: frozenset[str]
                     ) -> tuple[frozenset[str], list[FileScanTask] | None]:
    """The data manifests of the snapshot that list a file of ``holding`` as live (the commit reads only them),
    and the files' scan tasks when the snapshot reads no delete manifest: then no delete file applies to any
    file, and a task is its data file alone, taken from the entries the run's surveys decoded already (READS).
    With delete manifests, None: pyiceberg's planning pairs the files with their deletes."""
    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    assert snapshot is not None
    manifests = READS.manifests(table.io, snapshot)
    listing, tasks = set(), []
    for manifest in manifests:
        if manifest.content == ManifestContent.DATA:
            for entry in READS.entries(table.io, manifest, discard_deleted=True):
                if normalize(entry.data_file.file_path) in holding:
                    listing.add(normalize(manifest.manifest_path))
                    tasks.append(FileScanTask(entry.data_file))
    plain = all(m.content == ManifestContent.DATA for m in manifests)
    return frozenset(listing), (tasks if plain else None)


def _rewrite_file(table: Table, task: FileScanTask, keys: KeySet, number: int) -> Rewritten:
    schema = table.schema()
    read = ArrowScan(table.metadata, table.io, schema, AlwaysTrue()).to_table([task])
    kept = without_keys(read, keys)
    source = normalize(task.file.file_path)
    if kept.num_rows == 0:
        return Rewritten(source, ())
    spec = table.metadata.specs()[task.file.spec_id]
    partition = _SourcePartition(task.file.partition, spec, schema) if spec.fields else None
    write = WriteTask(write_uuid=uuid.uuid4(), task_id=number, schema=schema,
                      record_batches=kept.combine_chunks().to_batches(),
                      partition_key=partition)  # type: ignore[arg-type]  # duck-typed: record and path
    data_file = write_like(table.io, table.metadata, write, source_layout(table.io, task.file.file_path))
    data_file.spec_id = task.file.spec_id  # written under the source's spec, which may not be the default
    return Rewritten(source, (data_file,))

"""erase: delete the subjects' rows, physically remove every file that held them, and prove it.

An erasure is done when no retained file holds the key, not when queries stop returning it (seed 001):
1. before: the data files of the current snapshot that hold a key (Spark's _file column);
2. DELETE in Spark; if the table writes merge-on-read, the files holding the rows are rewritten so no
   current file keeps them behind a delete file;
3. every older snapshot is expired (retain the current one): old files that still held the rows are
   deleted from storage; a tag or branch that keeps such a snapshot is reported as a blocker;
4. proof, read back with pyiceberg: no snapshot the table keeps returns a key, and none of the files of
   step 1 is referenced or still exists in storage. The proof names requests and files, never values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pyiceberg.manifest import ManifestContent
from pyiceberg.table import Table

from compiler.catalog.config import CatalogConfig
from compiler.erasure.plan import TableErasure
from compiler.model.names import format_name
from compiler.render.erasure import delete_sql, expire_sql, files_holding_sql, rewrite_sql
from runtime.catalog.reader import CatalogReader
from runtime.executor import ExecutionError, query_sql, run_sql
from runtime.lock import catalog_locks
from runtime.spark.session import SparkOptions, start_session


@dataclass
class TableProof:
    table: tuple[str, ...]
    requests: list[str]
    files_with_keys: list[str]  # current data files that held a key, before the DELETE
    rows_before: int
    snapshots_checked: list[int] = field(default_factory=list)
    rows_after: int = 0
    files_still_referenced: list[str] = field(default_factory=list)
    files_still_stored: list[str] = field(default_factory=list)
    blocking_refs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None  # a statement failed: this table is not done, the others still run

    @property
    def complete(self) -> bool:
        return not (self.rows_after or self.files_still_referenced or self.files_still_stored or self.blocking_refs
                    or self.error)

    def as_json(self) -> dict[str, Any]:
        return {"table": format_name(self.table), "requests": self.requests, "complete": self.complete,
                "rows_before": self.rows_before, "rows_after": self.rows_after,
                "files_with_keys_before": self.files_with_keys, "snapshots_checked": self.snapshots_checked,
                "files_still_referenced": self.files_still_referenced,
                "files_still_stored": self.files_still_stored, "blocking_refs": self.blocking_refs,
                "error": self.error, "seconds": round(self.seconds, 3)}


def run_erasure(
    tables: list[TableErasure], catalog: CatalogConfig, options: SparkOptions, *, lock_dir: Any
) -> list[TableProof]:
    spark = start_session(catalog, options)
    proofs = []
    with CatalogReader(catalog) as reader, catalog_locks(reader, [format_name(t.table) for t in tables], lock_dir):
        for erasure in tables:
            try:
                proofs.append(_erase(spark, reader, erasure))
            except ExecutionError as exc:  # the proof still says what happened to every table
                proofs.append(TableProof(erasure.table, sorted({s.request for s in erasure.subjects}), [], 0,
                                         error=str(exc)))
    return proofs


def _fresh(reader: CatalogReader, name: tuple[str, ...]) -> Table:
    table = reader.pyiceberg_table(name, fresh=True)
    assert table is not None, f"{format_name(name)} disappeared during the erasure"
    return table


def _erase(spark: Any, reader: CatalogReader, erasure: TableErasure) -> TableProof:
    started = time.perf_counter()
    catalog, what = reader.config.name, f"{format_name(erasure.table)}: erasure"
    held = query_sql(spark, files_holding_sql(erasure, catalog), f"{what}: find the files that hold the keys")
    proof = TableProof(erasure.table, sorted({s.request for s in erasure.subjects}),
                       sorted(str(r["file"]) for r in held), rows_before=sum(int(r["n"]) for r in held))
    if proof.files_with_keys:
        run_sql(spark, delete_sql(erasure, catalog), f"{what}: delete")
        if _has_delete_files(_fresh(reader, erasure.table)):  # merge-on-read: rewrite what the delete files mask
            run_sql(spark, rewrite_sql(erasure, catalog), f"{what}: rewrite files behind delete files")
        run_sql(spark, expire_sql(erasure, catalog, datetime.now(UTC)),
                f"{what}: expire the snapshots that still reference the rows")
    _prove(_fresh(reader, erasure.table), erasure, proof)
    proof.seconds = time.perf_counter() - started
    return proof


def _rows(table: Table, erasure: TableErasure, snapshot_id: int | None = None) -> int:
    if table.current_snapshot() is None:
        return 0
    return int(table.scan(row_filter=erasure.row_filter(), snapshot_id=snapshot_id).to_arrow().num_rows)


def _has_delete_files(table: Table) -> bool:
    snapshot = table.current_snapshot()
    return snapshot is not None and any(m.content == ManifestContent.DELETES for m in snapshot.manifests(table.io))


def _prove(table: Table, erasure: TableErasure, proof: TableProof) -> None:
    """Read back with pyiceberg, independently of the engine that deleted."""
    held = set(proof.files_with_keys)
    still: dict[int, set[str]] = {}
    for snapshot in table.metadata.snapshots:
        proof.snapshots_checked.append(snapshot.snapshot_id)
        proof.rows_after += _rows(table, erasure, snapshot.snapshot_id)
        files = {entry.data_file.file_path for m in snapshot.manifests(table.io)
                 for entry in m.fetch_manifest_entry(table.io, discard_deleted=True)}
        still[snapshot.snapshot_id] = files & held
    proof.files_still_referenced = sorted(set().union(*still.values()))
    proof.files_still_stored = sorted(path for path in held if table.io.new_input(path).exists())
    proof.blocking_refs = sorted(name for name, ref in table.metadata.refs.items() if still.get(ref.snapshot_id))

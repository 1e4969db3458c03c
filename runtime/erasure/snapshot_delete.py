"""The erasure DELETE as one copy-on-write overwrite that commits beside concurrent appends.

Spark's ``DELETE FROM t WHERE k IN (SELECT ... FROM keys)`` commits under the table's delete isolation level,
serializable by default: its scan has no filter Iceberg can push down (the keys come from a view), so its
conflict check covers the whole table and every append that lands while it runs fails it ("Found
conflicting files"). Iceberg 1.10 reads that level only from the table property; setting the property for
the run would itself be a commit that changes what the policy declares (and stays changed after a kill).

So erasure rewrites the files itself: the files of the current snapshot that hold a key are read with their
delete files applied, their rows anti-joined with the keys (data, never SQL text) and written as new
files, and the new files are swapped in with one OverwriteFiles commit. The commit is validated as Spark
validates a delete under snapshot isolation: from the snapshot the rewrite read, no delete file added for
the rewritten files and none of them removed meanwhile. Appends do not conflict. That is sound for erasure
because the proof reads storage afterwards: a key row appended while this ran is found there and the
request is not proven until a re-run erases it.

Most erasures do this with no JVM: pyarrow rewrites the files (runtime/erasure/arrow_rewrite.py) and
pyiceberg commits them with the same validation (runtime/erasure/commits.py). Spark does it here
(``delete_keys``, with Iceberg's machinery for rewrite_data_files) in the cases arrow_rewrite's note lists
(``LeftToSpark``): a file pyiceberg cannot read as Spark does, a format v3 table, a large rewrite on a
cluster.

The table's delete mode does not matter: a merge-on-read table gets the same physical rewrite (the rows
are gone from storage, not masked), and position delete files that pointed only into the rewritten files
go with them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import reduce
from typing import Any

from tablepolicy.compiler.model.table import ColumnPath
from tablepolicy.compiler.sql.filters import qualified

from ..orphans import normalize
from ..spark.iceberg_catalog import iceberg_catalog, table_identifier

MAIN = "main"
TEMPORARY_BRANCH = "tablepolicy-erasure-"  # + a tag's name: where its rewrite is committed before the tag moves
SCAN_TASK_SET = "scan-task-set-id"  # SparkReadOptions.SCAN_TASK_SET_ID
REWRITTEN_TASK_SET = "rewritten-file-scan-task-set-id"  # SparkWriteOptions.REWRITTEN_FILE_SCAN_TASK_SET_ID


def delete_keys(spark: Any, catalog: str, table: tuple[str, ...], columns: Sequence[tuple[ColumnPath, str]],
                view: str, holding: frozenset[str], ref: str = MAIN) -> int:
    """Remove every row whose key columns equal a row of ``view`` (``columns``: each key column and the
    view's column holding its values) from the snapshot of ``ref`` (main: the current one) in one commit on it.
    Returns the files rewritten.

    ``holding``: the files (normalized paths) the survey found holding a key: only they are read and
    rewritten. Scanning every file's key columns in Spark to find them again was most of an erasure's time
    (67 of 86 s on 240 files, 4 of them holding keys). A key row appended after the survey is in no file of
    ``holding``: the proof's fresh read finds it and the request is not proven until a re-run erases it.

    A tag cannot take a commit: the rewrite is committed on a temporary branch started at the tag's snapshot,
    then the tag is re-pointed to that branch's head and the branch dropped, in one commit (Iceberg's
    replaceTag keeps the tag's retention). A run killed in between leaves the branch: the next run drops it."""
    iceberg = iceberg_catalog(spark, catalog).loadTable(table_identifier(spark, table))
    iceberg.refresh()
    snapshot = iceberg.currentSnapshot() if ref == MAIN else iceberg.snapshot(ref)
    if snapshot is None or not holding:
        return 0
    snapshot_id = snapshot.snapshotId()
    tag = ref != MAIN and iceberg.refs().get(ref).isTag()
    branch = f"{TEMPORARY_BRANCH}{ref}" if tag else ref
    if tag:
        _drop_branch(iceberg, branch)
        iceberg.manageSnapshots().createBranch(branch, snapshot_id).commit()
    keys = spark.table(view)
    tasks = _tasks(iceberg, snapshot_id, holding)
    added = []
    try:
        for spec_id, spec_tasks in sorted(tasks.items()):
            added += _rewrite(spark, iceberg, spec_id, spec_tasks, columns, keys)
        _commit(spark, iceberg, snapshot_id, *_task_files(spark, [t for group in tasks.values() for t in group]), added,
                branch)
    except Exception as exc:
        if "CommitStateUnknownException" not in str(exc):  # the commit may have landed: its files stay
            _discard(iceberg, added)
        if tag:
            _drop_branch(iceberg, branch)
        raise
    if tag:
        iceberg.refresh()
        head = iceberg.refs().get(branch).snapshotId()
        iceberg.manageSnapshots().replaceTag(ref, head).removeBranch(branch).commit()
    return sum(len(group) for group in tasks.values())


def _drop_branch(iceberg: Any, branch: str) -> None:
    iceberg.refresh()
    if iceberg.refs().containsKey(branch):
        iceberg.manageSnapshots().removeBranch(branch).commit()


def _commit(spark: Any, iceberg: Any, snapshot_id: int, files: list[Any], deletes: list[Any], added: list[Any],
            branch: str = MAIN) -> None:
    """Swap the rewritten files (and the delete files that point into them only) for the new ones, validated as
    Spark validates a copy-on-write delete under snapshot isolation (SparkWrite.commitWithSnapshotIsolation):
    appends meanwhile do not conflict."""
    jvm = spark._jvm
    util = jvm.org.apache.iceberg.util
    data, obsolete = util.DataFileSet.create(), util.DeleteFileSet.create()
    for file in files:
        data.add(file)
    for delete in deletes:
        obsolete.add(delete)
    overwrite = iceberg.newOverwrite().deleteFiles(data, obsolete)
    for file in added:
        overwrite.addFile(file)
    overwrite.set("tablepolicy.operation", "erasure")
    overwrite.set("tablepolicy.erasure.read-snapshot-id", str(snapshot_id))
    overwrite.validateFromSnapshot(snapshot_id)
    overwrite.conflictDetectionFilter(jvm.org.apache.iceberg.expressions.Expressions.alwaysTrue())
    overwrite.validateNoConflictingDeletes()
    if branch != MAIN:
        overwrite.toBranch(branch)
    overwrite.commit()


def _task_files(spark: Any, tasks: list[Any]) -> tuple[list[Any], list[Any]]:
    """The data files of ``tasks`` and their delete files that point into them only: a DV or a file-scoped
    position delete file of a rewritten file points nowhere afterwards."""
    content = spark._jvm.org.apache.iceberg.util.ContentFileUtil
    rewritten = {task.file().location() for task in tasks}
    deletes = [d for task in tasks for d in task.deletes()
               if content.isDV(d) or content.referencedDataFileLocation(d) in rewritten]
    return [task.file() for task in tasks], deletes


def _match(rows: Any, keys: Any, columns: Sequence[tuple[ColumnPath, str]]) -> Any:
    """Every key column equal to its value in the key set: a NULL key matches nothing, as in the DELETE's IN."""
    return reduce(lambda a, b: a & b, [rows[qualified(path)] == keys[qualified((alias,))] for path, alias in columns])


def _tasks(iceberg: Any, snapshot_id: int, holding: frozenset[str]) -> dict[int, list[Any]]:
    """The scan tasks of the files holding a key, by partition spec (each spec is written on its own)."""
    tasks: dict[int, list[Any]] = {}
    iterable = iceberg.newScan().useSnapshot(snapshot_id).planFiles()
    try:
        iterator = iterable.iterator()
        while iterator.hasNext():
            task = iterator.next()
            if normalize(task.file().location()) in holding:
                tasks.setdefault(task.spec().specId(), []).append(task)
    finally:
        iterable.close()
    return tasks


def _rewrite(spark: Any, iceberg: Any, spec_id: int, tasks: list[Any], columns: Sequence[tuple[ColumnPath, str]],
             keys: Any) -> list[Any]:
    """Write the rows of ``tasks`` that hold no key as new files of spec ``spec_id``; return them, uncommitted."""
    from pyspark.sql import functions

    jvm = spark._jvm
    group = f"tablepolicy-erasure-{uuid.uuid4()}"
    cache, staged, coordinator = (_singleton(spark, name) for name in (
        "SparkTableCache", "ScanTaskSetManager", "FileRewriteCoordinator"))
    task_list = jvm.java.util.ArrayList()
    for task in tasks:
        task_list.add(task)
    try:
        cache.add(group, iceberg)
        staged.stageTasks(iceberg, group, task_list)
        rows = spark.read.format("iceberg").option(SCAN_TASK_SET, group).load(group)
        kept = rows.join(functions.broadcast(keys), _match(rows, keys, columns), "left_anti")
        (kept.write.format("iceberg").option(REWRITTEN_TASK_SET, group).option("output-spec-id", str(spec_id))
         .option("fanout-enabled", "true").option("distribution-mode", "none").mode("append").save(group))
        return list(coordinator.fetchNewFiles(iceberg, group))
    finally:
        cache.remove(group)
        staged.removeTasks(iceberg, group)
        coordinator.clearRewrite(iceberg, group)


def _singleton(spark: Any, name: str) -> Any:
    """``org.apache.iceberg.spark.<name>.get()``, called by reflection: py4j does not find a static get() on
    a class that also has an instance get(key)."""
    gateway = spark.sparkContext._gateway
    loader = gateway.jvm.java.lang.Thread.currentThread().getContextClassLoader()
    method = loader.loadClass(f"org.apache.iceberg.spark.{name}").getMethod(
        "get", gateway.new_array(gateway.jvm.java.lang.Class, 0))
    return method.invoke(None, gateway.new_array(gateway.jvm.java.lang.Object, 0))


def _discard(iceberg: Any, files: list[Any]) -> None:
    """New files of a commit that did not happen hold no key; delete them rather than leave orphans."""
    io = iceberg.io()
    for file in files:
        io.deleteFile(file.location())

"""Snapshot expiry and orphan removal run without a JVM (runtime/expiry.py, runtime/orphans.py): maintain runs
them with pyspark unimportable; the expiry keeps what retain_last, branches and tags keep, deletes only what the
expired snapshots reached and no remaining one does, and a writer's commit or a ref made while it decides is
never lost (its commit fails and it decides again on the new metadata). Spark's procedure gives the same
result on the same table: tests/integration/test_expiry_equivalence.py."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.maintenance.due import maintenance_plan
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.health import CatalogHealth
from tablepolicy.runtime.maintain import Locations, orphan_scanner, run_maintenance
from tablepolicy.runtime.orphans import reachable_files, stored_files
from tablepolicy.runtime.spark.session import SparkOptions
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import pyspark_unimportable

POLICY = """table: shop.orders
columns:
  - {name: id, type: long}
  - {name: note, type: string}
lifecycle:
  snapshots: {max_age: 1d, min_keep: 2}
  orphan_files: {older_than: 3d}
"""


def rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "note": pa.array([f"n{i}" for i in ids], pa.string())})


def make(tmp_path: Path) -> tuple[Path, SqlCatalog, Table]:
    policies = tmp_path / "policies"
    (policies / "shop").mkdir(parents=True)
    (policies / "shop" / "orders.yaml").write_text(POLICY)
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    catalog = embedded_catalog(policies)
    for state in desired_states(project):
        create_like(catalog, state)
    return policies, catalog, catalog.load_table(("shop", "orders"))


def on_disk(table: Table) -> set[str]:
    return set(stored_files(table.location(), table.io.properties))


def needed(table: Table) -> set[str]:
    """Every file the table's snapshots and metadata reach (a Hadoop table's version hint aside: none here)."""
    return {p for p in reachable_files(table) if not p.endswith("/metadata/version-hint.text")}


def test_maintain_expires_and_removes_orphans_with_pyspark_unimportable(tmp_path: Path) -> None:
    policies, catalog, table = make(tmp_path)
    table.append(rows([1, 2]))
    table.append(rows([3]))
    first_files = {f for f in on_disk(table) if f.endswith(".parquet")}
    table.overwrite(rows([10, 11]))  # the first two appends' data files are read only by the snapshots before
    table.append(rows([12]))
    table = catalog.load_table(("shop", "orders"))
    history = [s.snapshot_id for s in sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms)]
    assert len(history) >= 5
    stray = Path(table.location().removeprefix("file://")) / "data" / "stray.parquet"
    stray.write_bytes(b"no snapshot references this")
    os.utime(stray, (time.time() - 5 * 86400,) * 2)
    before = on_disk(table)

    project, _ = validate(policies)
    config = resolve_catalog(None, policies)
    now = datetime.now(UTC) + timedelta(days=1)  # a day on: every snapshot is older than max_age
    with pyspark_unimportable():
        with CatalogReader(config) as reader:
            plan = maintenance_plan(project, CatalogHealth(reader, orphan_scanner(reader, Locations())), now)
        (due,) = plan.tables
        assert [a.action for a in due.actions] == ["expire_snapshots", "remove_orphan_files"]
        assert not due.needs_spark
        report = run_maintenance(plan, config, SparkOptions(), lock_dir=tmp_path / "locks")

    (outcome,) = report.tables
    assert [(s.action.action, s.status.value, s.error) for s in outcome.steps] == [
        ("expire_snapshots", "done", None), ("remove_orphan_files", "done", None)]
    expire, orphans = outcome.steps
    assert expire.sql.startswith("-- without Spark") and "expire_snapshots" in expire.sql
    assert expire.effect.snapshots_expired == len(history) - 2
    assert orphans.effect.files_removed == 1 and orphans.output == {"orphan_file_location": str(stray)}
    table = catalog.load_table(("shop", "orders"))
    assert [s.snapshot_id for s in sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms)] == history[-2:]
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [10, 11, 12]
    after = on_disk(table)
    assert needed(table) <= after  # nothing needed
    gone = before - after
    assert str(stray) in gone and first_files <= gone  # the overwritten data files went with their snapshots
    assert expire.output["deleted_content_files_count"] == len(first_files)
    assert expire.output["deleted_manifest_lists_count"] == len(history) - 2
    assert not any(p.endswith(".metadata.json") for p in gone)


def concurrent(catalog: SqlCatalog, act: Callable[[Table], None]) -> Callable[[], Table]:
    """``latest`` for the expiry: the first time it is read, another writer (its own catalog connection) acts on the
    table right after, before the expiry commits."""
    calls = [0]

    def latest() -> Table:
        calls[0] += 1
        table = catalog.load_table(("shop", "orders"))
        if calls[0] == 1:
            other = SqlCatalog("lake", **catalog.properties)
            act(other.load_table(("shop", "orders")))
        return table

    return latest


def history_of(tmp_path: Path, commits: int) -> tuple[SqlCatalog, list[int]]:
    _, catalog, table = make(tmp_path)
    for i in range(commits):
        table.append(rows([i]))
    table = catalog.load_table(("shop", "orders"))
    return catalog, [s.snapshot_id for s in sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms)]


def test_a_writer_committing_meanwhile_is_not_lost(tmp_path: Path) -> None:
    from tablepolicy.runtime.expiry import expire

    catalog, history = history_of(tmp_path, 4)
    later = datetime.now(UTC) + timedelta(days=1)
    expired = expire("shop.orders", concurrent(catalog, lambda t: t.append(rows([99]))), older_than=later,
                     retain_last=1, clock=lambda: later)
    table = catalog.load_table(("shop", "orders"))
    head = table.current_snapshot()
    assert head is not None and head.snapshot_id not in history  # the writer's snapshot, kept
    assert [s.snapshot_id for s in table.metadata.snapshots] == [head.snapshot_id]  # retain_last 1 from it
    assert set(expired.snapshots) == set(history)
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3, 99]


def test_a_tag_made_meanwhile_keeps_its_snapshot(tmp_path: Path) -> None:
    from tablepolicy.runtime.expiry import expire

    catalog, history = history_of(tmp_path, 4)
    later = datetime.now(UTC) + timedelta(days=1)
    tag = lambda t: t.manage_snapshots().create_tag(history[0], "audit").commit()  # noqa: E731
    expired = expire("shop.orders", concurrent(catalog, tag), older_than=later, retain_last=1, clock=lambda: later)
    table = catalog.load_table(("shop", "orders"))
    assert table.metadata.refs["audit"].snapshot_id == history[0]
    assert sorted(s.snapshot_id for s in table.metadata.snapshots) == sorted([history[0], history[-1]])
    assert set(expired.snapshots) == set(history[1:-1])
    assert sorted(table.scan(snapshot_id=history[0]).to_arrow()["id"].to_pylist()) == [0]


def test_refs_retention_is_honoured(tmp_path: Path) -> None:
    """A branch keeps its min_snapshots_to_keep ancestors; a tag past its max_ref_age is removed with its
    snapshot; a tag without one keeps its snapshot; files the branch reads stay."""
    from tablepolicy.runtime.expiry import expire

    catalog, history = history_of(tmp_path, 5)
    table = catalog.load_table(("shop", "orders"))
    (table.manage_snapshots().create_branch(history[2], "audit", min_snapshots_to_keep=2)
     .create_tag(history[0], "kept").create_tag(history[1], "stale", max_ref_age_ms=1).commit())
    later = datetime.now(UTC) + timedelta(days=1)
    expired = expire("shop.orders", lambda: catalog.load_table(("shop", "orders")), older_than=later,
                     retain_last=1, clock=lambda: later)
    table = catalog.load_table(("shop", "orders"))
    assert sorted(table.metadata.refs) == ["audit", "kept", "main"]
    assert sorted(s.snapshot_id for s in table.metadata.snapshots) == sorted(
        [history[0], history[1], history[2], history[4]])  # kept's, audit's two (2, 1), main's head
    assert expired.refs == ("stale",) and expired.snapshots == (history[3],)
    for snapshot in table.metadata.snapshots:  # every remaining snapshot still reads
        assert table.scan(snapshot_id=snapshot.snapshot_id).to_arrow().num_rows >= 1
    assert needed(table) <= on_disk(table)


KILLED = """
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from tablepolicy.compiler.maintenance.due import maintenance_plan
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.health import CatalogHealth
from tablepolicy.runtime.maintain import Locations, orphan_scanner, run_maintenance
from tablepolicy.runtime.spark.session import SparkOptions
policies = Path(sys.argv[1])
project, _ = validate(policies)
config = resolve_catalog(None, policies)
with CatalogReader(config) as reader:
    plan = maintenance_plan(project, CatalogHealth(reader, orphan_scanner(reader, Locations())),
                            datetime.now(UTC) + timedelta(days=1))
report = run_maintenance(plan, config, SparkOptions(), lock_dir=policies.parent / "locks")
print(" ".join(f"{s.action.action}={s.status.value}" for t in report.tables for s in t.steps))
"""


def test_killed_between_the_commit_and_the_deletions_a_rerun_converges(tmp_path: Path) -> None:
    """kill -9 while the expiry waits after its commit (TABLEPOLICY_EXPIRY_PAUSE): the table reads, its
    snapshots are those the expiry keeps, nothing it still reaches was deleted; the re-run takes the dead run's
    lock, has no expiry left to do and exits cleanly; the files left behind are unreferenced."""
    import subprocess
    import sys

    policies, catalog, table = make(tmp_path)
    for i in range(4):
        table.append(rows([i]))
    run = [sys.executable, "-c", KILLED, str(policies)]
    env = {**os.environ, "TABLEPOLICY_EXPIRY_PAUSE": "120", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen(run, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(1200):  # until the expiry's commit lands (the process then waits before deleting)
            if len(catalog.load_table(("shop", "orders")).metadata.snapshots) == 2 or process.poll() is not None:
                break
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()
    finally:
        process.kill()
        process.wait()
    table = catalog.load_table(("shop", "orders"))
    assert len(table.metadata.snapshots) == 2 and sorted(table.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]
    assert needed(table) <= on_disk(table)
    left = on_disk(table) - needed(table)
    assert any(p.rsplit("/", 1)[-1].startswith("snap-") for p in left)  # the expired manifest lists, not deleted

    again = subprocess.run(run, env={**env, "TABLEPOLICY_EXPIRY_PAUSE": "0"}, capture_output=True, text=True,
                           check=False)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "", again.stdout  # nothing due: the expiry is done, the leftovers are young
    table = catalog.load_table(("shop", "orders"))
    assert len(table.metadata.snapshots) == 2 and needed(table) <= on_disk(table)
    assert on_disk(table) - needed(table) == left  # unreferenced: orphan removal's, once past its guard


def test_a_table_with_gc_disabled_is_refused_as_spark_refuses_it(tmp_path: Path) -> None:
    import pytest

    from tablepolicy.runtime.expiry import ExpiryRefused, expire

    catalog, history = history_of(tmp_path, 3)
    catalog.load_table(("shop", "orders")).transaction().set_properties({"gc.enabled": "false"}).commit_transaction()
    later = datetime.now(UTC) + timedelta(days=1)
    with pytest.raises(ExpiryRefused, match=r"^shop.orders: cannot expire snapshots: GC is disabled"):
        expire("shop.orders", lambda: catalog.load_table(("shop", "orders")), older_than=later, retain_last=1,
               clock=lambda: later)
    assert [s.snapshot_id for s in catalog.load_table(("shop", "orders")).metadata.snapshots] == history

"""Spark killed with SIGKILL (the whole process group, JVM included) while it writes files under a table: a
user's DELETE on a merge-on-read table writing its position delete files, and maintain's compaction writing new
data files. The catalog's SQLite database is held with a write lock meanwhile, so no commit can land before the
kill: what the killed writer left (whole or torn, as the kill found it) is read by no snapshot. The kill fires the
moment the first new file is listed; no timing is asserted. Then the commands run again: maintain converges (a
second run finds nothing due), erase ends proven, and the independent pyarrow scan finds no key in any file under
the table location and reads every one of them (a torn file left behind would fail it)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyiceberg.table import Table

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import ROOT
from tests.integration.erasure_data import ERASED, checksum, fill, keys_in_storage, policy, requests_yaml

pytestmark = pytest.mark.spark
KEYS = set(ERASED.values())
CLI = [sys.executable, "-c", "from tablepolicy.cli.app import main; main()"]
USER_DELETE = """
import sys
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
spark = start_session(resolve_catalog(None, Path(sys.argv[1])), SparkOptions())
spark.sql("DELETE FROM lake.privacy.events WHERE user.uid = 'u3'")
"""
COMPACTION = "  compaction: {min_input_files: 2}\n"


def setup(root: Path, mode: str) -> tuple[Path, Path]:
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "events.yaml").write_text(policy("events", mode) + COMPACTION)
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, diagnostics
    catalog = embedded_catalog(policies)
    for state in desired_states(project):
        create_like(catalog, state)
    fill(catalog.load_table(("privacy", "events")))
    requests = root / "requests.yaml"
    requests.write_text(requests_yaml())
    return policies, requests


def table(policies: Path) -> Table:
    return embedded_catalog(policies).load_table(("privacy", "events"))


def files_under(location: str) -> set[Path]:
    root = Path(location.removeprefix("file:").removeprefix("//"))
    return {p for p in root.rglob("*.parquet") if p.is_file()}


def killed_on_first_new_file(command: list[str], policies: Path) -> set[Path]:
    """Run ``command`` with the catalog held (no commit can land) and kill its process group the moment a new
    parquet file is listed under the table; returns the new files."""
    location = table(policies).location()
    snapshots = len(table(policies).metadata.snapshots)
    before = files_under(location)
    held = sqlite3.connect(policies.parent / ".lake" / "catalog.db", isolation_level=None)
    held.execute("PRAGMA journal_mode=WAL")  # as the Spark side opens it
    held.execute("BEGIN IMMEDIATE")  # readers go on; every commit waits
    try:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True, env=_env())
        try:
            while process.poll() is None and not (files_under(location) - before):
                time.sleep(0.01)
            os.killpg(process.pid, signal.SIGKILL)
        finally:
            output = process.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        held.execute("ROLLBACK")
        held.close()
    assert process.returncode == -signal.SIGKILL, output  # killed while writing, not ended by itself
    assert len(table(policies).metadata.snapshots) == snapshots  # nothing committed
    new = files_under(location) - before
    assert new, output
    return new


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYICEBERG_CATALOG__")}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True, env=_env(), timeout=900,
                         check=False)
    assert "internal error" not in run.stdout + run.stderr and "Traceback" not in run.stdout + run.stderr, run
    return run


def erase_proven(policies: Path, requests: Path) -> None:
    proof = policies.parent / "proof.json"
    # after a known kill no writer can be running: the operator lets erase delete its torn files at once
    run = cli("erase", str(policies), "--requests", str(requests), "--proof", str(proof), "--debris-min-age", "0s")
    assert run.returncode == 0, run.stdout + run.stderr
    (result,) = json.loads(proof.read_text())["tables"]
    assert result["state"] == "complete", result
    assert keys_in_storage(table(policies).location(), KEYS) == {}  # reads every parquet file: none torn


def test_user_delete_killed_writing_delete_files_then_erase(tmp_path: Path) -> None:
    policies, requests = setup(tmp_path, "merge-on-read")
    intact = checksum(table(policies))

    new = killed_on_first_new_file([sys.executable, "-c", USER_DELETE, str(policies)], policies)

    assert all("delete" in p.name for p in new), new  # Spark was writing position delete files
    assert checksum(table(policies)) == intact
    health = cli("health", str(policies))
    assert health.returncode == 0 and "damaged" not in health.stdout + health.stderr, health
    erase_proven(policies, requests)
    assert checksum(table(policies)) == intact


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_maintain_killed_writing_compacted_files_converges(tmp_path: Path, mode: str) -> None:
    policies, requests = setup(tmp_path, mode)
    intact = checksum(table(policies), without=set())

    killed_on_first_new_file([*CLI, "maintain", str(policies)], policies)

    assert checksum(table(policies), without=set()) == intact
    run = cli("maintain", str(policies))
    assert run.returncode == 0, run.stdout + run.stderr
    assert checksum(table(policies), without=set()) == intact
    again = cli("maintain", str(policies), "--dry-run")
    assert again.returncode == 0 and "No maintenance due on 1 table(s)." in again.stdout, again.stdout
    erase_proven(policies, requests)


OLD = 1_577_880_000  # 2020-01-01 12:00 UTC: past any guard whatever day the test runs


def test_unreachable_torn_files_past_the_guard_removed_by_orphan_removal(tmp_path: Path) -> None:
    policies, _ = setup(tmp_path, "copy-on-write")
    (policies / "events.yaml").write_text(policy("events", "copy-on-write") + "  orphan_files: {older_than: 3d}\n")
    root = Path(table(policies).location().removeprefix("file:").removeprefix("//"))
    data = sorted((root / "data").rglob("*.parquet"))[0]
    manifest = sorted((root / "metadata").glob("*-m0.avro"))[0]
    planted = {data.parent / "00009-0-killed-zero.parquet": b"",
               data.parent / "00009-0-killed-footer.parquet": data.read_bytes()[:-7],
               manifest.parent / "killed-half-m0.avro": manifest.read_bytes()[: manifest.stat().st_size // 2]}
    for path, body in planted.items():
        path.write_bytes(body)
        os.utime(path, (OLD, OLD))
    intact = checksum(table(policies), without=set())

    run = cli("maintain", str(policies))

    assert run.returncode == 0, run.stdout + run.stderr
    assert [p for p in planted if p.exists()] == []
    assert checksum(table(policies), without=set()) == intact


def test_maintain_on_a_torn_data_file_a_snapshot_reads_names_it(tmp_path: Path) -> None:
    policies, _ = setup(tmp_path, "copy-on-write")
    current = sorted(t.file.file_path for t in table(policies).scan().plan_files())
    torn = Path(current[-1].removeprefix("file:").removeprefix("//"))
    torn.write_bytes(torn.read_bytes()[:-7])

    run = cli("maintain", str(policies))

    assert run.returncode == 1, run.stdout + run.stderr
    assert f"the table is damaged: {current[-1]} (a data or delete file snapshot" in run.stdout + run.stderr, \
        run.stdout + run.stderr
    assert "roll the table back to a snapshot that does not read it" in run.stdout + run.stderr


def metadata_files(location: str) -> set[Path]:
    root = Path(location.removeprefix("file:").removeprefix("//"))
    return set(root.rglob("*.metadata.json"))


def test_apply_killed_writing_table_metadata_converges(tmp_path: Path) -> None:
    policies, _ = setup(tmp_path, "copy-on-write")
    intact = checksum(table(policies), without=set())
    (policies / "events.yaml").write_text(policy("events", "copy-on-write").replace(
        "  - {name: ts, type: timestamptz}\n", "  - {name: ts, type: timestamptz}\n  - {name: note, type: string}\n"))
    location = table(policies).location()
    before = metadata_files(location)
    held = sqlite3.connect(policies.parent / ".lake" / "catalog.db", isolation_level=None)
    held.execute("PRAGMA journal_mode=WAL")
    held.execute("BEGIN IMMEDIATE")  # the ALTER's metadata is written, its commit waits: killed before it lands
    try:
        process = subprocess.Popen([*CLI, "apply", str(policies), "--auto-approve"], cwd=ROOT, env=_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        while process.poll() is None and not (metadata_files(location) - before):
            time.sleep(0.01)
        os.killpg(process.pid, signal.SIGKILL)
        output = process.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        held.execute("ROLLBACK")
        held.close()
    assert process.returncode == -signal.SIGKILL, output
    assert "note" not in [f.name for f in table(policies).schema().fields]  # nothing committed

    run = cli("apply", str(policies), "--auto-approve")

    assert run.returncode == 0, run.stdout + run.stderr
    assert cli("plan", str(policies), "--detailed-exitcode").returncode == 0  # converged: no changes left
    assert "note" in [f.name for f in table(policies).schema().fields]
    assert checksum(table(policies), without=set()) == intact
    health = cli("health", str(policies))
    assert health.returncode == 0 and "damaged" not in health.stdout + health.stderr, health

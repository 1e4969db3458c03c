"""erase as separate processes, as the scheduled workflow runs it: killed with SIGKILL (the whole process
group, JVM included) at points the test watches for from outside (the run's progress lines, the table's
metadata), then run again until it ends proven; and beside a writer appending in another process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.erasure.commits import PAUSE
from tests.catalog_fixtures import create_like
from tests.integration.erasure_data import (
    ERASED,
    checksum,
    erasure_project,
    events_table,
    fill,
    keys_in_storage,
    policy,
    requests_yaml,
)
from tests.pgserver import postgres_server

pytestmark = pytest.mark.spark
KEYS = set(ERASED.values())
# each erasure step waits this long before its commit and before deleting files: windows for a kill timed
# from outside, and for the writer's appends to land between the delete's read and its commit
STEP_PAUSE = "2"
COMMAND = [sys.executable, "-c", "from tablepolicy.cli.app import main; main()", "erase"]


Watch = Callable[[str, Table, int], bool]  # output so far, the table now, the most snapshots seen -> kill now
WATCHES: dict[str, Watch] = {
    "during the delete": lambda out, t, most: "deleting the rows of" in out,
    "after the delete": lambda out, t, most: t.current_snapshot() is not None
    and t.current_snapshot().summary.operation.value in ("overwrite", "delete"),  # type: ignore[union-attr]
    "during the expiry": lambda out, t, most: "expiring" in out,
    "after the expiry's commit": lambda out, t, most: len(t.metadata.snapshots) < most,
    "during file deletion": lambda out, t, most: "unreferenced file(s) that hold a key" in out,
}


def run_until(policies: Path, requests: Path, watch: Watch | None, proof: Path, *extra: str) -> tuple[int, str]:
    """Run erase; kill its process group the moment ``watch`` says so. Returns (exit code, output)."""
    process = subprocess.Popen([*COMMAND, str(policies), "--requests", str(requests), "--proof", str(proof), *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", PAUSE: STEP_PAUSE})
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")))  # type: ignore[union-attr]
    reader.start()
    most = 0
    deadline = time.time() + 600
    while process.poll() is None and time.time() < deadline:
        if watch is not None:
            now = events_table(policies)
            most = max(most, len(now.metadata.snapshots))
            if watch("".join(lines), now, most):
                os.killpg(process.pid, signal.SIGKILL)
                break
        time.sleep(0.02)
    process.wait(timeout=60)
    reader.join(timeout=60)
    return process.returncode, "".join(lines)


@pytest.mark.parametrize("points", [
    ["during the delete"], ["after the delete"], ["during the expiry"],
    ["after the expiry's commit", "during file deletion"],
], ids=lambda points: "-then-".join(p.replace(" ", "-").replace("'", "") for p in points))
def test_killed_erase_ends_proven_when_run_again(tmp_path: Path, points: list[str]) -> None:
    # the kill is timed from outside by polling: on a loaded machine it can land after the step it aims at
    # (nothing left to resume, which proves nothing); such an attempt starts over on a fresh table
    for attempt in range(3):
        policies, requests, before = erasure_project(tmp_path / f"attempt{attempt}")
        intact, history = checksum(events_table(policies)), checksum(events_table(policies), before)
        proof = tmp_path / f"attempt{attempt}" / "proof.json"
        killed = []
        for point in points:
            code, output = run_until(policies, requests, WATCHES[point], proof)
            killed.append(code == -signal.SIGKILL)
            if code != -signal.SIGKILL:
                break  # it finished before reaching the point (only the second, opportunistic kill may)
        if killed[0] and keys_in_storage(events_table(policies).location(), KEYS):
            break
    assert killed[0], output
    assert keys_in_storage(events_table(policies).location(), KEYS), "killed too late three times: nothing to resume"
    # after a known crash the operator says no writer is running: a file the kill tore is deleted at any age
    code, output = run_until(policies, requests, None, proof, "--debris-min-age", "0s")
    assert code == 0, output
    (result,) = json.loads(proof.read_text())["tables"]
    assert result["state"] == "complete", result
    assert keys_in_storage(events_table(policies).location(), KEYS) == {}
    assert checksum(events_table(policies)) == intact
    assert checksum(events_table(policies), before) == history


WRITER = """
import sys, time
from pathlib import Path
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException, ValidationException
from sqlalchemy.exc import OperationalError
from tests.integration.erasure_data import batch
catalog = SqlCatalog("lake", uri=sys.argv[1], warehouse=sys.argv[2])
stop = Path(sys.argv[3])
written = 0
while not stop.exists():
    try:
        table = catalog.load_table(("privacy", "events"))
        table.append(batch(500_000 + written * 10, ["writer"], days=1))  # into a partition that holds keys
    # lost a race (a locked SQLite too), or pyiceberg's own retry found the snapshot it started from expired
    # (erase expires it): nothing committed, load the table again
    except (CommitFailedException, ValidationException, OperationalError):
        time.sleep(0.05)
        continue
    written += 1
    print(table.current_snapshot().snapshot_id, table.current_snapshot().sequence_number, flush=True)
    time.sleep(1)  # a micro-batch writer: a few commits land while erase's delete runs
"""


@contextmanager
def catalog_url(kind: str, root: Path) -> Iterator[str]:
    if kind == "postgresql":
        with postgres_server() as url:
            yield url
    else:
        yield f"sqlite:///{root / 'catalog.db'}"


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
@pytest.mark.parametrize("kind", ["postgresql", "sqlite"])
def test_rows_appended_during_erase_all_survive(tmp_path: Path, kind: str, mode: str) -> None:
    """A writer appends into a partition that holds keys, several times while erase's delete runs (the test
    checks that it did): the delete commits (appends do not conflict with it), no appended row is lost, the
    key is gone from storage and the proof holds. The SQLite catalog is shared by three connections here:
    pyiceberg in this process and in the writer's, and Spark's JDBC catalog in erase's JVM."""
    with catalog_url(kind, tmp_path) as url:
        warehouse = (tmp_path / "warehouse").as_uri()
        policies = tmp_path / "policies"
        policies.mkdir()
        (policies / "events.yaml").write_text(policy("events", mode))
        project, _ = validate(policies)
        catalog = SqlCatalog("lake", uri=url, warehouse=warehouse)
        for state in desired_states(project):
            create_like(catalog, state)
        fill(catalog.load_table(("privacy", "events")))
        filled = catalog.load_table(("privacy", "events"))
        intact = checksum(filled)
        sequence = {s.snapshot_id: s.sequence_number for s in filled.snapshots()}
        requests = tmp_path / "requests.yaml"
        requests.write_text(requests_yaml())
        stop, proof = tmp_path / "stop", tmp_path / "proof.json"
        writer = subprocess.Popen([sys.executable, "-c", WRITER, url, warehouse, str(stop)], stdout=subprocess.PIPE,
                                  text=True, cwd=Path(__file__).resolve().parents[2])
        try:
            erase = subprocess.run([*COMMAND, str(policies), "--requests", str(requests), "--proof", str(proof),
                                    "--catalog", "lake"], capture_output=True, text=True, timeout=900, check=False,
                                   env={**os.environ, PAUSE: STEP_PAUSE, "PYICEBERG_CATALOG__LAKE__TYPE": "sql",
                                        "PYICEBERG_CATALOG__LAKE__URI": url,
                                        "PYICEBERG_CATALOG__LAKE__WAREHOUSE": warehouse})
        finally:
            stop.touch()
            out, _ = writer.communicate(timeout=300)
        assert writer.returncode == 0
        assert erase.returncode == 0, erase.stdout + erase.stderr
        appended = dict(tuple(map(int, line.split())) for line in out.splitlines())
        table = catalog.load_table(("privacy", "events"))
        [erasure] = [s for s in table.snapshots() if s.summary.get("tablepolicy.operation") == "erasure"]
        read = int(erasure.summary["tablepolicy.erasure.read-snapshot-id"])
        during = [n for n in appended.values() if (sequence | appended)[read] < n < erasure.sequence_number]
        assert during, "no append landed while the delete ran: the race this test is about did not happen"
        (result,) = json.loads(proof.read_text())["tables"]
        assert result["state"] == "complete", result
        assert keys_in_storage(table.location(), KEYS) == {}
        rows = table.scan().to_arrow().to_pylist()
        assert sum(r["user"]["uid"] == "writer" for r in rows) == len(appended) > 0  # no appended row lost
        assert checksum(table, without=KEYS | {"writer"}) == intact

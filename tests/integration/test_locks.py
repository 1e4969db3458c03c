"""Locks between processes, as runners hold them: on PostgreSQL a killed holder's advisory lock is gone at once;
on SQLite a holder that stops beating (another host, or hung) is taken over after the stale window, never
before; ``tablepolicy unlock`` through the installed command, case by case.

Holders are real processes taking the locks apply, maintain and erase take (``catalog_locks`` on the
catalog the CLI resolves); the heartbeat is shortened with TABLEPOLICY_LOCK_HEARTBEAT."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from tests.cli_runner import CLI_COMMAND
from tests.pgserver import postgres_server

pytestmark = pytest.mark.spark  # the integration tier `make unit` leaves out (PostgreSQL, processes, waits)
ROOT = Path(__file__).resolve().parents[2]
BEAT = 0.25  # seconds: a lock is dead after 4 beats without one (1 s)

HOLD = """
import sys, time
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.lock import catalog_locks
_, _command, policies, seconds, *tables = sys.argv
with CatalogReader(resolve_catalog(None, Path(policies))) as reader, \\
        catalog_locks(reader, tables, Path(policies) / ".tablepolicy"):
    print("locked", flush=True)
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline and not (Path(policies) / "stop").exists():  # the test says when
        time.sleep(0.05)
print("released", flush=True)
"""


@dataclass
class Lake:
    policies: Path
    env: dict[str, str]

    def start(self, seconds: float, *tables: str, command: str = "maintain",
              wrap: list[str] | None = None) -> subprocess.Popen[str]:
        """A holder: ``command`` is what it says it runs (``tablepolicy maintain``)."""
        holder = subprocess.Popen([*(wrap or []), sys.executable, "-c", HOLD, command, str(self.policies),
                                   str(seconds), *tables], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=self.env, cwd=ROOT)
        assert holder.stdout is not None
        line = holder.stdout.readline()
        assert line == "locked\n", line + holder.communicate()[1]
        return holder

    def take(self, *tables: str) -> subprocess.CompletedProcess[str]:
        """A second run taking the same locks and letting them go at once."""
        return subprocess.run([sys.executable, "-c", HOLD, "apply", str(self.policies), "0", *tables],
                              capture_output=True, text=True, env=self.env, cwd=ROOT, timeout=60, check=False)

    def unlock(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI_COMMAND, "unlock", *args, "--policies", str(self.policies)], capture_output=True,
                              text=True, env=self.env, cwd=self.policies.parent, timeout=60, check=False)


def _with_table(catalog: SqlCatalog) -> None:
    catalog.create_namespace("ops")
    catalog.create_table(("ops", "events"), schema=pa.schema([pa.field("id", pa.int64())]))


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def lake(request: pytest.FixtureRequest, tmp_path: Path) -> Lake:
    return _lake(request.param, request, tmp_path)


@pytest.fixture
def pg_lake(request: pytest.FixtureRequest, tmp_path: Path) -> Lake:
    """Advisory locks: PostgreSQL only."""
    return _lake("postgresql", request, tmp_path)


@pytest.fixture
def file_lake(request: pytest.FixtureRequest, tmp_path: Path) -> Lake:
    """Heartbeat locks: the embedded SQLite catalog keeps them in lock files."""
    return _lake("sqlite", request, tmp_path)


def _lake(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Lake:
    policies = tmp_path / "policies"
    policies.mkdir()
    env = {**os.environ, "TABLEPOLICY_LOCK_HEARTBEAT": str(BEAT), "NO_COLOR": "1"}
    if kind == "sqlite":
        warehouse = tmp_path / ".lake" / "warehouse"
        warehouse.mkdir(parents=True)
        _with_table(SqlCatalog("lake", uri=f"sqlite:///{tmp_path / '.lake' / 'catalog.db'}",
                               warehouse=warehouse.as_uri()))
    else:
        url = request.getfixturevalue("pg_url")
        database = f"db{os.getpid()}_{abs(hash(tmp_path.name)) % 10**6}"
        _createdb(url, database)
        url = url.rsplit("/", 1)[0] + "/" + database
        env |= {"PYICEBERG_CATALOG__PROD__URI": url, "PYICEBERG_CATALOG__PROD__WAREHOUSE": tmp_path.as_uri()}
        _with_table(SqlCatalog("prod", uri=url, warehouse=tmp_path.as_uri()))
    return Lake(policies, env)


def _createdb(url: str, database: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{database}"'))
    engine.dispose()


def _kill(holder: subprocess.Popen[str]) -> None:
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)


def test_a_live_holder_blocks_a_second_run_with_a_message_naming_it(lake: Lake) -> None:
    holder = lake.start(60, "ops.events", "ops.other")
    try:
        second = lake.take("ops.events")
        assert second.returncode == 1
        assert f"table ops.events is being maintained by pid {holder.pid} on " in second.stderr
        assert "(tablepolicy maintain) since " in second.stderr and "last heartbeat" in second.stderr
        assert "`tablepolicy unlock ops.events` shows the holder" in second.stderr
        assert lake.take("ops.unrelated").returncode == 0  # a lock is per table
    finally:
        _kill(holder)


def test_a_killed_holder_on_this_host_is_taken_over_at_once(lake: Lake) -> None:
    """PostgreSQL ends the killed process's session and with it the advisory lock; a lock file names a pid
    this host no longer runs. Either way the next run proceeds without waiting out the stale window: the lock
    file's heartbeat is moved a day ahead, so only the gone pid can free it, however slow the machine."""
    holder = lake.start(120, "ops.events")
    _kill(holder)
    lock = lake.policies.parent / ".lake" / "lock-ops.events.json"
    if lock.exists():  # SQLite's lock file (PostgreSQL's row is only informative: the session is the lock)
        held = json.loads(lock.read_text())
        lock.write_text(json.dumps({**held, "heartbeat": held["heartbeat"] + 86_400}).ljust(1024))
    second = lake.take("ops.events")
    assert second.returncode == 0, second.stderr


def test_postgresql_releases_the_lock_of_a_killed_holder_whose_pid_looks_alive(pg_lake: Lake) -> None:
    """A holder killed but not reaped (a zombie keeps its pid) on PostgreSQL: the session is gone, so the lock is."""
    lake = pg_lake
    holder = lake.start(60, "ops.events")
    holder.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + 5
    second = lake.take("ops.events")
    while second.returncode != 0 and time.monotonic() < deadline:  # the server notices the closed socket
        second = lake.take("ops.events")
    assert second.returncode == 0, second.stderr
    holder.wait(timeout=30)


def _unshare_hostname() -> list[str]:
    """Run a holder under another host name (its own UTS namespace): this host cannot see its pid."""
    if shutil.which("unshare") is None or os.geteuid() != 0:  # CI runs as root, with util-linux: never skipped there
        assert not os.environ.get("CI"), "a second host name needs unshare (util-linux) as root"
        pytest.skip("a second host name needs unshare as root")  # outside CI only (asserted above)
    return ["unshare", "--uts", "sh", "-c", 'hostname runner-b && exec "$@"', "sh"]


def test_a_dead_holder_on_another_host_is_taken_over_after_the_stale_window_not_before(file_lake: Lake) -> None:
    lake = file_lake
    holder = lake.start(60, "ops.events", wrap=_unshare_hostname())
    lock = lake.policies.parent / ".lake" / "lock-ops.events.json"
    first = lock.read_text()
    deadline = time.monotonic() + 60  # a beat is due every BEAT seconds; a loaded machine may take longer
    while lock.read_text() == first and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lock.read_text() != first  # it beats while alive
    _kill(holder)
    last_beat = json.loads(lock.read_text())["heartbeat"]  # the window runs from here, not from the kill
    early = lake.take("ops.events")
    if time.time() - last_beat < 4 * BEAT:  # answered inside the window (a loaded machine may answer later)
        assert early.returncode == 1 and f"pid {holder.pid} on runner-b" in early.stderr
    time.sleep(4 * BEAT + 0.5)
    late = lake.take("ops.events")
    assert late.returncode == 0, late.stderr


def test_a_hung_holder_is_taken_over_after_the_stale_window_and_learns_it_lost_the_lock(file_lake: Lake) -> None:
    lake = file_lake
    holder = lake.start(120, "ops.events")
    holder.send_signal(signal.SIGSTOP)  # alive (its pid is there) but silent
    try:
        time.sleep(4 * BEAT + 0.5)
        taken = lake.take("ops.events")
        assert taken.returncode == 0, taken.stderr
    finally:
        (lake.policies / "stop").touch()
        holder.send_signal(signal.SIGCONT)
    _, err = holder.communicate(timeout=30)
    assert holder.returncode == 1 and "LockLostError: the lock on ops.events was taken over" in err


def test_unlock_a_dead_runs_lock(lake: Lake) -> None:
    holder = lake.start(60, "ops.events")
    _kill(holder)
    shown = lake.unlock("ops.events")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(("Catalog: lake (sql, sqlite:", "Catalog: prod (sql, postgresql"))
    assert lines[1].startswith("Lock on ops.events (")
    assert f"  holder:         pid {holder.pid} on " in shown.stdout
    assert "  command:        tablepolicy maintain" in shown.stdout
    assert "  last heartbeat: " in shown.stdout
    assert ("  state:          dead: no PostgreSQL session holds its advisory lock" in shown.stdout
            or f"  state:          dead: pid {holder.pid} is gone from " in shown.stdout)
    assert "Took over the dead run's lock on ops.events" in shown.stdout
    assert "tp:tp@" not in shown.stdout + shown.stderr  # the catalog's password
    again = lake.unlock("ops.events")
    assert again.returncode == 1
    assert "error: no lock on table ops.events in " in again.stderr and "nothing to unlock" in again.stderr
    assert lake.take("ops.events").returncode == 0


def test_unlock_refuses_a_live_holder_without_force_and_cuts_it_off_with_force(lake: Lake) -> None:
    holder = lake.start(120, "ops.events")
    try:
        refused = lake.unlock("ops.events")
        assert refused.returncode == 1
        assert "  state:          alive: " in refused.stdout
        assert "Taking over a live run's lock lets another apply, maintain or erase change the table" in refused.stderr
        assert "tablepolicy unlock ops.events --force" in refused.stderr
        assert lake.take("ops.events").returncode == 1  # still held
        forced = lake.unlock("ops.events", "--force")
        assert forced.returncode == 0, forced.stdout + forced.stderr
        assert "Removed the lock of a LIVE run on ops.events (--force)." in forced.stdout
        assert lake.take("ops.events").returncode == 0
    finally:
        (lake.policies / "stop").touch()
        _, err = holder.communicate(timeout=60)
    assert holder.returncode == 1 and "LockLostError: the lock on ops.events was taken over" in err


@pytest.mark.parametrize(("table", "expected"), [
    ("ops.event", "table ops.event is not in catalog '{catalog}'"),
    ("ops.evnets", "close names: ops.events"),
    ("ops..x", "TABLE 'ops..x': "),
])
def test_unlock_of_a_table_the_catalog_does_not_hold_lists_close_names(lake: Lake, table: str, expected: str) -> None:
    result = lake.unlock(table)
    catalog = "prod" if "PYICEBERG_CATALOG__PROD__URI" in lake.env else "lake"
    assert result.returncode == 1
    assert expected.format(catalog=catalog) in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_unlock_of_a_table_only_a_dead_run_knew_takes_its_lock(lake: Lake) -> None:
    """An apply creating a table locks a name the catalog does not hold yet; its lock can be taken over."""
    holder = lake.start(60, "ops.new_table")
    _kill(holder)
    result = lake.unlock("ops.new_table")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Took over the dead run's lock on ops.new_table" in result.stdout

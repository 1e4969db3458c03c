"""Locks every runner of a REST catalog sees: two work trees of one policy repository (as two CI runners have),
each with its own .tablepolicy/ folder, against one SeaweedFS server (tests/seaweed.py). The catalog's definition
names ``tablepolicy.lock-location``; the lock is an object written there with S3's conditional writes
(runtime/lock/objects.py). A maintain holding the table in one tree refuses an apply in the other, naming the
holder, and an apply's lock refuses the other tree's real maintain (nothing expired until it is released); a
killed holder (its pid gone) is taken over at once, a hung one (alive, silent) after its heartbeat stops for the
stale window and learns it lost the lock; ``unlock`` in the other tree shows and clears the lock.

Holders are real processes taking the locks maintain takes (``catalog_locks``, tests/integration/test_locks.py's
Lake); the runs they block are the installed CLI. The heartbeat is shortened with TABLEPOLICY_LOCK_HEARTBEAT.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from tests.cli_runner import CLI_COMMAND, process_env
from tests.integration.test_locks import Lake
from tests.seaweed import SECRET_KEY, SeaweedServer, seaweed_server

pytestmark = pytest.mark.spark
BEAT = 0.25  # seconds: a lock is dead after 4 beats without one (1 s)
LOCKS = "tablepolicy-locks"  # a plain bucket beside the table bucket
NAME = "restlock"
POLICY = """table: shop.orders
columns:
  - {name: id, type: long, required: true}
  - {name: qty, type: int}
properties: {commit.retry.num-retries: '8'}
"""


@dataclass
class Tree(Lake):
    """One work tree: its own policies/ and .tablepolicy/, the same catalog definition (``start`` holds a lock as
    maintain does, ``take`` as a second run, ``unlock`` through the CLI: test_locks.Lake's)."""

    @property
    def root(self) -> Path:
        return self.policies.parent

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*CLI_COMMAND, *args], capture_output=True, text=True, env=self.env, cwd=self.root,
                              timeout=300, check=False)
        assert SECRET_KEY not in done.stdout + done.stderr
        return done


@pytest.fixture(scope="module")
def server() -> Iterator[SeaweedServer]:
    with seaweed_server() as running:
        running.s3().create_bucket(Bucket=LOCKS)  # type: ignore[attr-defined]
        from pyiceberg.catalog import load_catalog

        catalog = load_catalog(NAME, **running.catalog_properties())
        catalog.create_namespace("shop")
        catalog.create_table("shop.orders", pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                       pa.field("qty", pa.int32())]))
        yield running


@pytest.fixture
def trees(server: SeaweedServer, tmp_path: Path) -> tuple[Tree, Tree]:
    made = []
    for name in ("runner-a", "runner-b"):
        root = tmp_path / name
        (root / "policies" / "shop").mkdir(parents=True)
        (root / "policies" / "shop" / "orders.yaml").write_text(POLICY)
        props = {**server.catalog_properties(), "tablepolicy.lock-location": f"s3://{LOCKS}/{tmp_path.name}"}
        (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {NAME: props}}))
        env = process_env(root, {"PYICEBERG_HOME": str(root), "TABLEPOLICY_LOCK_HEARTBEAT": str(BEAT)})
        made.append(Tree(root / "policies", env))
    return made[0], made[1]


def lock_keys(server: SeaweedServer, tmp_path: Path) -> list[str]:
    return server.keys(LOCKS, f"{tmp_path.name}/")


def kill(holder: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)


def test_a_maintain_in_one_tree_refuses_an_apply_in_the_other(server: SeaweedServer, trees: tuple[Tree, Tree],
                                                              tmp_path: Path) -> None:
    a, b = trees
    holder = a.start(120, "shop.orders")
    try:
        assert lock_keys(server, tmp_path) == [f"{tmp_path.name}/lock-shop.orders.json"]
        assert not (a.root / ".tablepolicy").exists() or not list((a.root / ".tablepolicy").glob("lock-*"))
        applied = b.cli("apply", "policies", "--auto-approve")
        assert applied.returncode == 1, applied.stdout + applied.stderr
        assert f"table shop.orders is being maintained by pid {holder.pid} on " in applied.stderr, applied.stderr
        assert "`tablepolicy unlock shop.orders` shows the holder" in applied.stderr
        from pyiceberg.catalog import load_catalog

        table = load_catalog(NAME, **server.catalog_properties()).load_table("shop.orders")
        assert "commit.retry.num-retries" not in table.properties  # nothing applied
        assert b.take("shop.other").returncode == 0  # a lock is per table
    finally:
        (a.root / "policies" / "stop").touch()
        _, err = holder.communicate(timeout=60)
    assert holder.returncode == 0, err
    assert lock_keys(server, tmp_path) == []  # released: the object is gone
    second = b.take("shop.orders")
    assert second.returncode == 0, second.stderr


def test_an_apply_in_one_tree_refuses_a_maintain_in_the_other(server: SeaweedServer, trees: tuple[Tree, Tree],
                                                             tmp_path: Path) -> None:
    """The other direction, with maintain's real run: snapshot expiry is due (three appends, a 1s max age), and the
    other tree's apply holds the table, so maintain refuses it and expires nothing; once released, it runs."""
    a, b = trees
    policy = POLICY + "lifecycle:\n  snapshots: {max_age: 1s, min_keep: 1}\n"
    for tree in trees:
        (tree.root / "policies" / "shop" / "orders.yaml").write_text(policy)
    from pyiceberg.catalog import load_catalog

    table = load_catalog(NAME, **server.catalog_properties()).load_table("shop.orders")
    for i in range(3):
        table.append(pa.Table.from_pylist([{"id": i, "qty": i}], schema=table.schema().as_arrow()))
    time.sleep(1.5)  # every snapshot but the newest past the declared 1s
    before = len(load_catalog(NAME, **server.catalog_properties()).load_table("shop.orders").metadata.snapshots)
    holder = b.start(120, "shop.orders", command="apply")
    try:
        run = a.cli("maintain", "policies", "--only", "snapshots")
        assert run.returncode == 1, run.stdout + run.stderr
        assert f"table shop.orders is being applied by pid {holder.pid} on " in run.stderr, run.stderr
        table = load_catalog(NAME, **server.catalog_properties()).load_table("shop.orders")
        assert len(table.metadata.snapshots) == before >= 3  # nothing expired
    finally:
        kill(holder)
    run = a.cli("maintain", "policies", "--only", "snapshots")
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(load_catalog(NAME, **server.catalog_properties()).load_table("shop.orders").metadata.snapshots) == 1


def test_a_killed_holder_is_taken_over_at_once(server: SeaweedServer, trees: tuple[Tree, Tree],
                                               tmp_path: Path) -> None:
    """Its pid is gone from this host: the other tree's run takes the lock without waiting out the window."""
    a, b = trees
    holder = a.start(120, "shop.orders")
    kill(holder)
    taken = b.take("shop.orders")
    assert taken.returncode == 0, taken.stderr
    assert lock_keys(server, tmp_path) == []


def test_a_hung_holder_is_taken_over_after_its_heartbeat_stops(server: SeaweedServer, trees: tuple[Tree, Tree],
                                                               tmp_path: Path) -> None:
    """Alive (its pid is there) but silent: refused while its heartbeat is fresh, taken over once it is older than
    the window, and the holder learns at its next beat that it lost the lock (its If-Match fails)."""
    a, b = trees
    holder = a.start(120, "shop.orders")
    try:
        early = b.take("shop.orders")
        assert early.returncode == 1 and f"pid {holder.pid}" in early.stderr, early.stderr
        holder.send_signal(signal.SIGSTOP)
        time.sleep(4 * BEAT + 1)
        taken = b.take("shop.orders")
        assert taken.returncode == 0, taken.stderr
    finally:
        (a.root / "policies" / "stop").touch()
        holder.send_signal(signal.SIGCONT)
    _, err = holder.communicate(timeout=60)
    assert holder.returncode == 1 and "LockLostError: the lock on shop.orders was taken over" in err, err


def test_unlock_in_the_other_tree_shows_and_clears_a_dead_runs_lock(server: SeaweedServer, trees: tuple[Tree, Tree],
                                                                    tmp_path: Path) -> None:
    a, b = trees
    holder = a.start(120, "shop.orders")
    try:
        live = b.unlock("shop.orders")
        assert live.returncode == 1, live.stdout + live.stderr
        assert f"  holder:         pid {holder.pid} on " in live.stdout and "state:          alive" in live.stdout
        assert f"(lock objects in s3://{LOCKS}/{tmp_path.name}/)" in live.stdout, live.stdout
    finally:
        kill(holder)
    shown = b.unlock("shop.orders")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "  command:        tablepolicy maintain" in shown.stdout
    assert f"  state:          dead: pid {holder.pid} is gone from " in shown.stdout, shown.stdout
    assert "Took over the dead run's lock on shop.orders" in shown.stdout
    assert lock_keys(server, tmp_path) == []
    again = b.unlock("shop.orders")
    assert again.returncode == 1 and "no lock on table shop.orders in " in again.stderr, again.stderr


def test_a_lock_location_the_store_refuses_stops_the_run_naming_it(server: SeaweedServer,
                                                                    trees: tuple[Tree, Tree]) -> None:
    """SeaweedFS refuses writes to its table bucket outside a table (403): the run stops before any work with one
    line naming the location and the answer, the table untouched."""
    a, _ = trees
    definition = yaml.safe_load((a.root / ".pyiceberg.yaml").read_text())
    definition["catalog"][NAME]["tablepolicy.lock-location"] = "s3://warehouse/locks"
    (a.root / ".pyiceberg.yaml").write_text(yaml.safe_dump(definition))
    (a.root / "policies" / "shop" / "orders.yaml").write_text(POLICY.replace("'8'", "'9'"))
    run = a.cli("apply", "policies", "--auto-approve")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "PUT s3://warehouse/locks/lock-shop.orders.json answered 403" in run.stderr, run.stderr
    assert "internal error" not in run.stderr, run.stderr
    from pyiceberg.catalog import load_catalog

    table = load_catalog(NAME, **server.catalog_properties()).load_table("shop.orders")
    assert table.properties.get("commit.retry.num-retries") != "9"

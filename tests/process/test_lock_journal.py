"""Locks expire with their holder; journals survive torn lines and ignore other plans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.journal import Journal
from tablepolicy.runtime.lock import (
    HEARTBEAT_ENV,
    LockHeldError,
    LockSettingError,
    catalog_locks,
    heartbeat_seconds,
    lock_key,
    table_locks,
)


def test_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    import socket
    import time

    (tmp_path / "lock-shop.orders.json").write_text(
        json.dumps({"host": socket.gethostname(), "pid": pid, "since": time.time()}))
    with table_locks(None, tmp_path, ["shop.orders"]):
        owner = json.loads((tmp_path / "lock-shop.orders.json").read_text())
        assert owner["pid"] == os.getpid()
    assert not (tmp_path / "lock-shop.orders.json").exists()


def test_lock_of_a_live_process_is_refused_with_its_name(tmp_path: Path) -> None:
    with table_locks(None, tmp_path, ["shop.orders"]):
        child = subprocess.run(
            [sys.executable, "-c", "from pathlib import Path; from tablepolicy.runtime.lock import table_locks\n"
             f"with table_locks(None, Path({str(tmp_path)!r}), ['shop.orders']): pass"],
            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
        assert child.returncode != 0
        assert f"table shop.orders is locked by pid {os.getpid()} on " in child.stderr


def test_sql_lock_rows_are_all_or_none(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    engine = create_engine(f"sqlite:///{tmp_path / 'c.db'}")
    with table_locks(engine, tmp_path, ["a.b", "a.c"]), pytest.raises(LockHeldError), \
            table_locks(engine, tmp_path, ["a.c"]):
        pass
    with table_locks(engine, tmp_path, ["a.c"]):  # released by both blocks
        pass


def test_journal_skips_torn_lines_and_other_plans(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "plan.json.journal", "p1")
    journal.record(1, "first")
    Journal(tmp_path / "plan.json.journal", "p2").record(2, "other plan")
    with (tmp_path / "plan.json.journal").open("a") as out:
        out.write('{"plan_id": "p1", "step": 3, "sta')  # killed mid-write
    journal.record(4, "fourth")
    assert journal.completed() == {1, 4}


def test_runs_against_one_sqlite_catalog_share_locks_whatever_directory_they_start_from(tmp_path: Path) -> None:
    config = CatalogConfig("lake", {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
                                    "warehouse": tmp_path.as_uri()})
    with CatalogReader(config) as apply_side, CatalogReader(config) as maintain_side, \
            catalog_locks(apply_side, ["ads.clicks"], tmp_path / "plans"), \
            pytest.raises(LockHeldError, match=r"ads\.clicks"), \
            catalog_locks(maintain_side, ["ads.clicks"], tmp_path / "policies" / ".tablepolicy"):
        pass
    assert list(tmp_path.glob("lock-*.json")) == []  # beside catalog.db, released


def test_lock_keys_are_the_same_in_every_process() -> None:
    """Python's hash() is salted per process; the advisory lock key must not be."""
    script = "from tablepolicy.runtime.lock import lock_key; print(lock_key('shop.orders'), lock_key('`a.b`.c'))"
    keys = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, cwd=Path(__file__).resolve().parents[2]).stdout
            for seed in ("1", "2", "random")}
    assert keys == {f"{lock_key('shop.orders')} {lock_key('`a.b`.c')}\n"}
    assert lock_key("shop.orders") == 4879517515673348951  # pinned: runners of two versions must agree
    assert -(2**63) <= lock_key("x" * 5000) < 2**63


@pytest.mark.parametrize(("value", "seconds"), [(None, 15.0), ("", 15.0), ("0.2", 0.2), (" 5 ", 5.0), ("15", 15.0)])
def test_heartbeat_interval(monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float) -> None:
    if value is None:
        monkeypatch.delenv(HEARTBEAT_ENV, raising=False)
    else:
        monkeypatch.setenv(HEARTBEAT_ENV, value)
    assert heartbeat_seconds() == seconds


@pytest.mark.parametrize("value", ["abc", "0", "-1", "16", "nan", "inf", "0.01"])
def test_heartbeat_interval_that_cannot_work_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str
) -> None:
    monkeypatch.setenv(HEARTBEAT_ENV, value)
    with pytest.raises(LockSettingError, match=rf"^TABLEPOLICY_LOCK_HEARTBEAT='{value}': give the lock heartbeat"):
        heartbeat_seconds()
    with pytest.raises(LockSettingError), table_locks(None, tmp_path, ["a.b"]):
        pass
    assert list(tmp_path.iterdir()) == []  # nothing taken


def test_a_lock_file_carries_a_heartbeat_the_holder_refreshes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv(HEARTBEAT_ENV, "0.1")
    lock = tmp_path / "lock-shop.orders.json"
    with table_locks(None, tmp_path, ["shop.orders"]):
        first = later = json.loads(lock.read_text())
        deadline = time.monotonic() + 60  # a beat is due every 0.1 s; a loaded machine may take longer
        while later["heartbeat"] == first["heartbeat"] and time.monotonic() < deadline:
            time.sleep(0.01)
            later = json.loads(lock.read_text())
    assert first["interval"] == 0.1 and first["since"] == later["since"]
    assert later["heartbeat"] > first["heartbeat"] and later["token"] == first["token"]
    assert set(first) == {"table", "host", "pid", "command", "since", "heartbeat", "interval", "token", "session"}


def test_a_legacy_lock_without_heartbeat_is_still_honoured_for_its_hour(tmp_path: Path) -> None:
    """A lock an older tablepolicy wrote (no heartbeat) on another host: trusted until its one-hour TTL."""
    import time

    legacy = tmp_path / "lock-shop.orders.json"
    legacy.write_text(json.dumps({"host": "elsewhere", "pid": 1, "since": time.time() - 600}))
    with pytest.raises(LockHeldError, match=r"is locked by pid 1 on elsewhere since "), \
            table_locks(None, tmp_path, ["shop.orders"]):
        pass
    legacy.write_text(json.dumps({"host": "elsewhere", "pid": 1, "since": time.time() - 3700}))
    with table_locks(None, tmp_path, ["shop.orders"]):
        pass

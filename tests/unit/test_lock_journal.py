"""Locks expire with their holder; journals survive torn lines and ignore other plans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.catalog.config import CatalogConfig
from runtime.catalog.reader import CatalogReader
from runtime.journal import Journal
from runtime.lock import LockHeldError, catalog_locks, table_locks


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
            [sys.executable, "-c", "from pathlib import Path; from runtime.lock import table_locks\n"
             f"with table_locks(None, Path({str(tmp_path)!r}), ['shop.orders']): pass"],
            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
        assert child.returncode != 0
        assert f"table shop.orders is being applied by pid {os.getpid()} on " in child.stderr


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

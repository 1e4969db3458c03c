"""Lock files for any table name: one file per table, whatever characters or length the name has."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.runtime.lock import table_locks


@pytest.mark.parametrize("name", ["ns.t" + "x" * 400, "a/b.c", "a\nb.c", "ns.t\u00e9", "..", "a b.`c`"])
def test_any_table_name_gets_its_own_lock_file(tmp_path: Path, name: str) -> None:
    with table_locks(None, tmp_path, [name, name + "2"]):
        files = sorted(p.name for p in tmp_path.iterdir())
        assert len(files) == 2 and all(len(f) < 128 and "/" not in f and "\n" not in f for f in files)
    assert list(tmp_path.iterdir()) == []


def test_ordinary_names_keep_readable_lock_files(tmp_path: Path) -> None:
    with table_locks(None, tmp_path, ["shop.orders"]):
        assert [p.name for p in tmp_path.iterdir()] == ["lock-shop.orders.json"]

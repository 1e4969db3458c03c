"""erase's "lost the commit race" error names what the catalog said, not the driver's exception class."""

from __future__ import annotations

import pytest

from tablepolicy.runtime.erasure import commits
from tablepolicy.runtime.executor import CONFLICT_ATTEMPTS, ExecutionError


class OperationalError(Exception):
    """Named as SQLAlchemy's, which is how erasure tells a locked SQLite catalog apart."""


def test_a_locked_catalog_is_named_without_the_drivers_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commits.time, "sleep", lambda _s: None)
    calls = []

    def attempt() -> None:
        calls.append(1)
        raise OperationalError("(sqlite3.OperationalError) database is locked\n[SQL: UPDATE iceberg_tables ...]")

    with pytest.raises(ExecutionError) as raised:
        commits._retried("`n's`.`t``x`: erasure", attempt)
    assert str(raised.value) == (f"`n's`.`t``x`: erasure: lost the commit race {CONFLICT_ATTEMPTS} times: "
                                 "database is locked")
    assert len(calls) == CONFLICT_ATTEMPTS

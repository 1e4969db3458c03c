"""`erase --format json`: stdout holds the JSON alone, and a table that failed says why on stderr as well (a person
watching a CD log reads stderr; a machine reads the JSON's `error`)."""

from __future__ import annotations

import pytest

from tablepolicy.cli.erasure import _told_machine
from tablepolicy.runtime.erasure.proof import TableProof
from tablepolicy.runtime.events import ErasureProgress, TableErased


def test_a_failed_table_is_an_error_line_on_stderr_and_stdout_stays_empty(capsys: pytest.CaptureFixture[str]) -> None:
    proof = TableProof(("db", "events"), ["REQ-1"])
    failed = "db.events: the commit's outcome is unknown; run erase again once the catalog server answers"
    _told_machine(ErasureProgress("db.events: proving"), [])
    _told_machine(TableErased(proof, (), {"error": failed}), [])
    _told_machine(TableErased(proof, (), {"error": None}), [])  # a table that is done prints nothing more
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["  db.events: proving", f"error: {failed}"]

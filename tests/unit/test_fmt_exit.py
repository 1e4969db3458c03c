"""`fmt` exits non-zero when a file does not parse or cannot be read, with or without --check, and leaves it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_runner import tablepolicy

GOOD = "table: s.t\ncolumns:\n  - {name: id, type: long}\n"
UNFORMATTED = "columns:\n  - {name: id, type: long}\ntable: s.t\n"
BROKEN = {
    "syntax": b"table: s.t\ncolumns: [\n",
    "not_utf8": b"table: s.t\ncolumns: \xff\n",
    "too_deep": b"table: s.t\ncolumns: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "duplicate_key": b"table: s.t\ntable: s.u\ncolumns: []\n",
}


@pytest.mark.parametrize("check", [False, True], ids=["rewrite", "check"])
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_file_that_does_not_parse_fails_fmt(tmp_path: Path, case: str, check: bool) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "good.yaml").write_text(GOOD)
    (policies / "later.yaml").write_text(UNFORMATTED)
    (policies / "bad.yaml").write_bytes(BROKEN[case])
    run = tablepolicy("fmt", *(["--check"] if check else []), "policies", cwd=tmp_path)
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "policies/bad.yaml: not formatted" in run.stderr, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert (policies / "bad.yaml").read_bytes() == BROKEN[case]  # left as it is
    # the other files are still formatted (or listed): one bad file does not stop the rest
    assert ((policies / "later.yaml").read_text() == UNFORMATTED) == check


def test_a_clean_tree_still_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "good.yaml").write_text(UNFORMATTED)
    assert tablepolicy("fmt", "policies", cwd=tmp_path).returncode == 0
    assert tablepolicy("fmt", "--check", "policies", cwd=tmp_path).returncode == 0


def test_an_unreadable_file_fails_fmt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "locked.yaml").write_text(GOOD)
    (policies / "locked.yaml").chmod(0)
    if os.geteuid() == 0:  # root reads any file (as CI runs): the read fails as it does for everyone else
        real = Path.read_text

        def refuse(self: Path, *args: object, **kwargs: object) -> str:
            if self.name == "locked.yaml":
                raise PermissionError(13, "Permission denied", str(self))
            return real(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Path, "read_text", refuse)
    try:
        run = tablepolicy("fmt", "policies", cwd=tmp_path)
    finally:
        monkeypatch.undo()
        (policies / "locked.yaml").chmod(0o644)
    assert run.returncode == 1 and "cannot be read" in run.stderr, run.stderr

"""A folder of policies or overlays that cannot be listed is a one-line error naming it and the fix, with or without
caches: never skipped (its files would go unchecked, and a table declared there would read as missing elsewhere)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_runner import ROOT, tablepolicy


def project(where: Path, *, caches: bool) -> Path:
    shutil.copytree(ROOT / "policies", where / "policies")
    shutil.copytree(ROOT / "environments", where / "environments")
    if caches:
        (where / ".tablepolicy").mkdir()
    return where


def refused(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Listing ``folder`` fails as it does for a user without read permission (the tests run as root)."""
    scandir, iterdir = os.scandir, Path.iterdir

    def scan(path: str | os.PathLike[str] = ".") -> Iterator[os.DirEntry[str]]:
        if Path(path).absolute() == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    def listing(self: Path) -> Iterator[Path]:
        if self.absolute() == folder:
            raise PermissionError(13, "Permission denied", str(self))
        return iterdir(self)

    monkeypatch.setattr(os, "scandir", scan)
    monkeypatch.setattr(Path, "iterdir", listing)


@pytest.mark.parametrize("caches", [False, True], ids=["no cache", "caches on, warm"])
@pytest.mark.parametrize(("folder", "args"), [
    ("policies/logs", ("validate", "policies")),
    ("policies/logs", ("validate", "policies/ads/click_log.yaml")),
    ("policies", ("validate", "policies/ads/click_log.yaml")),
    ("environments", ("validate", "policies")),
    ("policies/logs", ("fmt", "--check", "policies")),
])
def test_a_folder_that_cannot_be_listed_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str,
                                                  args: tuple[str, ...], caches: bool) -> None:
    where = project(tmp_path, caches=caches)
    if caches:
        assert tablepolicy("validate", "policies", cwd=where).returncode == 0  # saved findings, ready to answer
    refused(monkeypatch, (where / folder).absolute())
    run = tablepolicy(*args, cwd=where)
    assert (run.returncode, run.stderr.splitlines()) == (1, [
        f"error: cannot list {folder}: Permission denied; make it readable for this user (the files in it would "
        "otherwise go unchecked)"])


def test_fmt_of_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    run = tablepolicy("fmt", "nowhere", cwd=tmp_path)
    assert (run.returncode, run.stderr) == (1, "error: no such folder: nowhere; give the project's policies/ folder, "
                                               "a subfolder or one policy file\n")

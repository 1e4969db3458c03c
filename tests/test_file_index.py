"""The model cache's file index: a warm run reads only the policy files whose size or mtime changed (as Git's index
does), never trusts a file changed within the clock's reach of the index being written, and changes no finding."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from compiler.validate import validate
from runtime.caches.models import FILE_INDEX, FileModelCache

ROOT = Path(__file__).resolve().parents[1]
HOUR_AGO_NS = 3600 * 10**9


def project(tmp_path: Path) -> tuple[Path, Path]:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    for file in policies.rglob("*.yaml"):
        age(file)
    return policies, tmp_path / ".tablepolicy" / "models.tsv"


def age(file: Path, mtime_ns: int | None = None) -> None:
    """As if last edited an hour before now (the index is written now): its entry is then trusted."""
    stamp = mtime_ns if mtime_ns is not None else file.stat().st_mtime_ns - HOUR_AGO_NS
    os.utime(file, ns=(stamp, stamp))


def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The table files read from now on (a namespace defaults file is read again each run for its checks'
    positions: those are not cached, the files are few)."""
    read: list[str] = []
    original = Path.read_bytes

    def counted(self: Path) -> bytes:
        if self.name != "_namespace.yaml":
            read.append(self.name)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    return read


def test_a_warm_run_reads_only_the_file_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policies, cache_file = project(tmp_path)
    cold, cold_findings = validate(policies, FileModelCache.open(cache_file))
    assert (cache_file.parent / FILE_INDEX).is_file()
    read = reads(monkeypatch)
    warm, warm_findings = validate(policies, FileModelCache.open(cache_file))
    assert read == []
    assert [t.name for t in warm.tables] == [t.name for t in cold.tables]
    assert [d.render() for d in warm_findings] == [d.render() for d in cold_findings]

    edited = next(policies.rglob("click_log.yaml"))
    edited.write_text(edited.read_text().replace("table: ads.click_log", "table: ads.click_log_v2"))
    changed, _ = validate(policies, FileModelCache.open(cache_file))
    assert read == ["click_log.yaml"]
    assert ("ads", "click_log_v2") in [t.name for t in changed.tables]


def test_an_unchanged_stat_is_taken_at_its_word_only_when_old_enough(tmp_path: Path) -> None:
    """A file rewritten with the same size and mtime passes as unchanged once its entry is trusted (Git's rule);
    rewritten within RACY_NS of the index being written, it is read again."""
    policies, cache_file = project(tmp_path)
    file = next(policies.rglob("click_log.yaml"))
    text = file.read_text()
    renamed = text.replace("table: ads.click_log", "table: ads.click_lug")
    assert len(renamed) == len(text)

    validate(policies, FileModelCache.open(cache_file))
    stamp = file.stat().st_mtime_ns
    file.write_text(renamed)
    age(file, stamp)
    trusted, _ = validate(policies, FileModelCache.open(cache_file))
    assert ("ads", "click_log") in [t.name for t in trusted.tables]

    now = (cache_file.parent / FILE_INDEX).stat().st_mtime_ns
    file.write_text(text)
    age(file, now)  # edited in the same instant the index was written: racy, never trusted
    validate(policies, FileModelCache.open(cache_file))
    file.write_text(renamed)
    age(file, now)
    racy, _ = validate(policies, FileModelCache.open(cache_file))
    assert ("ads", "click_lug") in [t.name for t in racy.tables]


@pytest.mark.parametrize("damage", ["{not json", '{"version": 1, "files": {"/x": [1, 2]}}', "[" * 50_000])
def test_a_damaged_file_index_is_started_over(tmp_path: Path, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    policies, cache_file = project(tmp_path)
    _, cold_findings = validate(policies, FileModelCache.open(cache_file))
    (cache_file.parent / FILE_INDEX).write_text(damage)
    read = reads(monkeypatch)
    _, findings = validate(policies, FileModelCache.open(cache_file))
    assert sorted(read) == sorted(p.name for p in policies.rglob("*.yaml") if p.name != "_namespace.yaml")
    assert [d.render() for d in findings] == [d.render() for d in cold_findings]

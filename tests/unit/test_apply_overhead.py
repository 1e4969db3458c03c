"""What apply does once per run rather than once per step, and what it still does per step: the journal's
lines are on disk (flushed) before the next step starts and fsynced as runtime/apply.py decides; the
case-sensitivity setting is set once around the steps; a step's first attempt skips the pool renewal its run
already did, and a retry still renews."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tablepolicy.runtime import executor
from tablepolicy.runtime.executor import ExecutionError, case_sensitive, with_commit_retries
from tablepolicy.runtime.journal import Journal


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def counted(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    return calls


def test_a_record_outside_a_run_is_fsynced_at_once(tmp_path: Path, fsyncs: list[int]) -> None:
    Journal(tmp_path / "j", "p1").record(1, "first")
    assert len(fsyncs) == 1
    assert Journal(tmp_path / "j", "p1").completed() == {1}


def test_records_of_a_run_are_on_disk_before_the_next_step_and_fsynced_once_at_its_end(
        tmp_path: Path, fsyncs: list[int]) -> None:
    journal = Journal(tmp_path / "j", "p1")
    with journal.appending():
        for step in (1, 2, 3):
            journal.record(step, f"step {step}")
            # what a re-run after a kill right now would read
            assert Journal(tmp_path / "j", "p1").completed() == set(range(1, step + 1))
        assert fsyncs == []
        journal.sync()  # a step only the journal can tell was done
        journal.sync()  # nothing new: no second fsync
        assert len(fsyncs) == 1
        journal.record(4, "step 4")
    assert len(fsyncs) == 2  # the end of the run makes step 4 durable
    assert journal.completed() == {1, 2, 3, 4}


def test_a_run_that_fails_still_makes_its_records_durable(tmp_path: Path, fsyncs: list[int]) -> None:
    journal = Journal(tmp_path / "j", "p1")
    with pytest.raises(RuntimeError), journal.appending():
        journal.record(1, "first")
        raise RuntimeError("step 2 failed")
    assert len(fsyncs) == 1
    assert journal.completed() == {1}


def test_a_run_that_records_nothing_leaves_no_journal(tmp_path: Path) -> None:
    with Journal(tmp_path / "j", "p1").appending():
        pass
    assert not (tmp_path / "j").exists()


def test_a_run_never_appends_to_a_line_a_crash_cut_short(tmp_path: Path) -> None:
    (tmp_path / "j").write_text('{"plan_id": "p1", "step": 1, "status": "done"}\n{"plan_id": "p1", "st')
    journal = Journal(tmp_path / "j", "p1")
    with journal.appending():
        journal.record(2, "second")
        journal.record(3, "third")
    assert journal.completed() == {1, 2, 3}


class Conf:
    """spark.conf, recording every call (each one is a round trip to the JVM in a real session)."""

    def __init__(self, value: str | None) -> None:
        self.value = value
        self.calls: list[tuple[str, str]] = []

    def get(self, key: str, default: str | None) -> str | None:
        self.calls.append(("get", key))
        return self.value if self.value is not None else default

    def set(self, key: str, value: str) -> None:
        self.calls.append(("set", value))
        self.value = value

    def unset(self, key: str) -> None:
        self.calls.append(("unset", key))
        self.value = None


class Session:
    def __init__(self, value: str | None) -> None:
        self.conf = Conf(value)


@pytest.mark.parametrize("before", [None, "false", "true"])
def test_case_sensitivity_is_set_once_for_nested_blocks_and_restored_after(before: str | None) -> None:
    spark = Session(before)
    with case_sensitive(spark):
        outer = list(spark.conf.calls)
        for _ in range(3):
            with case_sensitive(spark):
                assert spark.conf.value == "true"
        assert spark.conf.calls == outer  # the inner blocks asked the JVM nothing
    assert spark.conf.value == before
    other = Session("false")  # another session inside the block is set on its own
    with case_sensitive(spark), case_sensitive(other):
        assert other.conf.value == "true"
    assert other.conf.value == "false"


@pytest.mark.parametrize(("renewed", "failures", "renewals"), [
    (False, 0, [False]),  # a run's first step renews
    (True, 0, []),  # later steps: the run already did
    (True, 1, [True]),  # a retry drops the plugins and renews the new ones
    (False, 2, [False, True, True]),
])
def test_a_steps_first_attempt_renews_the_pools_unless_the_run_did(
        monkeypatch: pytest.MonkeyPatch, renewed: bool, failures: int, renewals: list[bool]) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(executor, "renew_connections", lambda _spark, again: seen.append(again))
    monkeypatch.setattr(executor, "drop_catalog_plugins", lambda _spark: None)
    monkeypatch.setattr("time.sleep", lambda _seconds: None)
    left = [failures]

    def run() -> str:
        if left[0]:
            left[0] -= 1
            raise ExecutionError("step 1 failed: CommitFailedException: database is locked")
        return "ran"

    spark: Any = object()
    assert with_commit_retries(spark, run, renewed=renewed) == "ran"
    assert seen == renewals

"""``--lock-timeout``: a run whose table another run holds waits for it (asking again every POLL_SECONDS) instead of
stopping at once; past the timeout it is refused with who holds it and how long it waited. Time passes through
the sleep and clock given, never the wall clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.runtime.lock import FileStore, Holder, LockHeldError, acquire_waiting, hold, waiting_for_locks
from tests.cli_runner import tablepolicy


def other_run(store: FileStore, name: str) -> Holder:
    return store.acquire(name, Holder.me(name, 15.0, "other-run"))


def test_without_a_timeout_a_held_table_is_refused_at_once(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    other_run(store, "sales.orders")
    slept: list[float] = []
    with pytest.raises(LockHeldError, match=r"sales\.orders") as caught, hold(store, ["sales.orders"],
                                                                            sleep=slept.append):
        pass
    assert slept == [] and "waited" not in str(caught.value)


def test_with_a_timeout_the_run_takes_the_lock_once_the_other_run_lets_it_go(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    other = other_run(store, "sales.orders")
    slept: list[float] = []

    def meanwhile(seconds: float) -> None:  # the other run finishes while this one waits
        slept.append(seconds)
        store.release("sales.orders", other)

    entered = False
    with waiting_for_locks(600), hold(FileStore(tmp_path), ["sales.orders"], sleep=meanwhile):
        entered = True
    assert entered and slept == [2.0]


def test_past_the_timeout_the_refusal_names_the_holder_and_the_wait(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    other_run(store, "sales.orders")
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    me = Holder.me("sales.orders", 15.0, "this-run")
    with pytest.raises(LockHeldError, match=r"table sales\.orders .*\(waited 5s: --lock-timeout\)$"):
        acquire_waiting(store, "sales.orders", me, 5.0, sleep, lambda: now[0])
    assert now[0] == 5.0  # asked at 0, 2, 4 and 5 seconds


@pytest.mark.parametrize("command", ["apply", "maintain", "erase"])
def test_commands_that_take_locks_have_the_flag(command: str, tmp_path: Path) -> None:
    run = tablepolicy(command, "--help", cwd=tmp_path)
    assert "--lock-timeout DURATION" in run.stdout


def test_a_timeout_that_is_no_duration_is_refused_before_any_work(tmp_path: Path) -> None:
    run = tablepolicy("apply", "--lock-timeout", "soon", "--dry-run", cwd=tmp_path)
    assert run.returncode == 1 and run.stderr.startswith("error: --lock-timeout: ")

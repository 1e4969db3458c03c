"""The unit tier runs in this process: a test here that starts a process, forks, sends a signal or starts a JVM
fails at that call, naming it, so the tier keeps its promise (and ``make unit`` its time). Such a test belongs in
tests/process/ or tests/integration/."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest


class LeftTheProcess(AssertionError):
    """A unit test reached outside its process."""


def _refuse(what: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise LeftTheProcess(f"a unit test may not {what}: move it to tests/process/ (or tests/integration/ when it "
                             "needs Spark or a server)")
    return refused


@pytest.fixture(autouse=True)
def in_this_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("start a process (subprocess)"))
    for name, what in (("fork", "fork"), ("forkpty", "fork"), ("kill", "send a signal"), ("killpg", "send a signal"),
                       ("posix_spawn", "start a process"), ("posix_spawnp", "start a process"),
                       ("system", "start a process")):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refuse(what))
    yield

"""A record of an apply's progress: one JSON line per finished step, written and flushed before the next step
starts, so a run killed at any point can be re-run and skip what is done. Durable against a power loss as the
caller asks (``sync``): apply fsyncs at once the steps only the journal can tell were done, and the rest at the
end of the run; see runtime/apply.py."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from tablepolicy.compiler import jsontext
from tablepolicy.compiler.errors import TablePolicyError


class JournalError(TablePolicyError):
    """The journal holds a line no run wrote."""


class Journal:
    def __init__(self, path: Path, plan_id: str) -> None:
        self.path = path
        self.plan_id = plan_id
        self._out: IO[str] | None = None  # the open file, kept while _holding (inside appending())
        self._holding = False
        self._unsynced = False  # records written and flushed, not yet fsynced

    def completed(self) -> set[int]:
        """Indices of the steps this plan finished in earlier runs (lines of other plans are ignored)."""
        if not self.path.exists():
            return set()
        done: set[int] = set()
        # lines are ASCII (json.dumps escapes the rest): an undecodable byte is a torn line's
        text = self.path.read_bytes().decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), 1):
            try:
                entry = jsontext.loads(line)
            except ValueError:
                continue  # a line torn by a crash mid-write: that step is checked again
            step = entry.get("step") if isinstance(entry, dict) else None
            if not isinstance(step, int) or isinstance(step, bool):  # whole JSON no run wrote: an edit
                raise JournalError(
                    f"{self.path}:{number}: not a journal entry (a run writes {{\"plan_id\": ..., \"step\": N, "
                    "\"status\": \"done\", ...}); remove that line, or the whole file to have every step "
                    "checked against the catalog again")
            if entry.get("plan_id") == self.plan_id and entry.get("status") == "done":
                done.add(step)
        return done

    @contextmanager
    def appending(self) -> Iterator[None]:
        """A run's records: the file opened, and its last line checked for a tear, on the first record only.
        Inside, a record is written and flushed (a killed process loses none: the kernel has it) and made
        durable by ``sync()`` or, at the latest, when the block ends (fsync once, however it ends)."""
        if self._holding:
            yield
            return
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            if self._out is not None:
                try:
                    self.sync()
                finally:
                    self._out.close()
                    self._out = None

    def record(self, step: int, summary: str, status: str = "done") -> None:
        """Journal a finished step: durably (fsynced) at once, unless inside ``appending()``."""
        line = json.dumps({"plan_id": self.plan_id, "step": step, "status": status, "summary": summary,
                           "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        out = self._out or self._open()
        out.write(line + "\n")
        out.flush()
        self._unsynced = True
        if not self._holding:
            self.sync()
            out.close()
            self._out = None

    def sync(self) -> None:
        """Make every record written so far durable (a power loss keeps them)."""
        if self._out is not None and self._unsynced:
            os.fsync(self._out.fileno())
            self._unsynced = False

    def _open(self) -> IO[str]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as existing:
                existing.seek(-1, os.SEEK_END)
                torn = existing.read(1) != b"\n"
        self._out = self.path.open("a", encoding="utf-8")
        if torn:  # never append to a line a crash cut short
            self._out.write("\n")
        return self._out

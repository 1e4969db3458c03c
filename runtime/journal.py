"""A durable record of an apply's progress: one JSON line per finished step, fsynced before the next
step starts, so a run killed at any point can be re-run and skip what is done."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from compiler import jsontext
from compiler.errors import TablePolicyError


class JournalError(TablePolicyError):
    """The journal holds a line no run wrote."""


class Journal:
    def __init__(self, path: Path, plan_id: str) -> None:
        self.path = path
        self.plan_id = plan_id

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

    def record(self, step: int, summary: str, status: str = "done") -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"plan_id": self.plan_id, "step": step, "status": status, "summary": summary,
                           "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        torn = False
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as existing:
                existing.seek(-1, os.SEEK_END)
                torn = existing.read(1) != b"\n"
        with self.path.open("a", encoding="utf-8") as out:
            out.write(("\n" if torn else "") + line + "\n")  # never append to a line a crash cut short
            out.flush()
            os.fsync(out.fileno())

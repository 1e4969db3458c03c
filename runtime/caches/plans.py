"""Per-table plan cache in a file (``.tablepolicy/plan-cache.json``), the planner's PlanCacheStore: a table's
plan is reused while its policy files and its catalog metadata file are unchanged. Keys: compiler.plan.reuse's
plan_key (sha256 of the table's policy file and of every namespace defaults file it inherits), the tool
version, and the table's current metadata location (Iceberg writes a new file on every commit)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tablepolicy.compiler import __version__, jsontext
from tablepolicy.compiler.diff.changes import TightenRetention
from tablepolicy.compiler.plan.model import TablePlan

from .atomic import replace_text

CACHE_VERSION = 2  # 2: plans carry table UUIDs and consumed approvals (plan file format 3)


@dataclass
class PlanCache:
    path: Path
    entries: dict[str, dict[str, object]] = field(default_factory=dict)
    hits: int = 0

    @classmethod
    def open(cls, path: Path) -> PlanCache:
        try:
            document = jsontext.loads(path.read_text(encoding="utf-8"))
            if document.get("version") == CACHE_VERSION and document.get("tool") == __version__:
                return cls(path, document["entries"])
        except (OSError, ValueError, KeyError):
            pass
        return cls(path)

    def get(self, table: tuple[str, ...], key: str, metadata_location: str) -> TablePlan | None:
        entry = self.entries.get(".".join(table))
        if not entry or entry.get("key") != key or entry.get("metadata_location") != metadata_location:
            return None
        try:
            found = TablePlan.model_validate(entry["plan"])
        except (ValidationError, KeyError):
            return None
        self.hits += 1
        return found

    def put(self, table: TablePlan, key: str) -> None:
        location = table.requirement.metadata_location
        if location is None or any(isinstance(c, TightenRetention) for c in table.changes):
            return  # retention estimates depend on the day: always recomputed
        self.entries[".".join(table.table)] = {
            "key": key, "metadata_location": location, "plan": table.model_dump(mode="json"),
        }

    def save(self) -> None:
        document = {"version": CACHE_VERSION, "tool": __version__, "entries": self.entries}
        replace_text(self.path, json.dumps(document, sort_keys=True), "the plan cache")

"""Validated policy models and their findings, cached by content hash.

This is the cache in memory; runtime/caches/models.py keeps it between runs in ``.tablepolicy/models.json``
(reading and writing that file is IO, which the compiler does not do).

A file whose text is unchanged is not parsed again: its model is restored from JSON (and validated by
the same strict models), its YAML positions are parsed only if a later finding needs one. A table's
semantic findings are reused while its file and every namespace defaults file it inherits are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler import __version__
from compiler.diagnostics import Diagnostic, Location, Severity
from compiler.spec.table import NamespaceDefaults, TablePolicy

CACHE_VERSION = 4  # bump when validation rules change: cached models and findings are then re-derived


@dataclass
class ModelCache:
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    changed: bool = False  # an entry was added since the cache was read: only then is it worth saving

    @classmethod
    def in_memory(cls) -> ModelCache:
        return cls()

    @staticmethod
    def entries_of(document: Any) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]] | None:
        """The models and findings of a saved document when this version of the tool wrote it, else None."""
        if (isinstance(document, dict) and document.get("version") == CACHE_VERSION
                and document.get("tool") == __version__
                and isinstance(document.get("models"), dict) and isinstance(document.get("checks"), dict)):
            return document["models"], document["checks"]
        return None

    def document(self) -> dict[str, Any]:
        """What is saved between runs (``entries_of`` reads it back)."""
        return {"version": CACHE_VERSION, "tool": __version__, "models": self.models, "checks": self.checks}

    def model(self, digest: str) -> dict[str, Any] | None:
        return self.models.get(digest)

    def put_model(self, digest: str, model: TablePolicy | NamespaceDefaults) -> None:
        """The model's JSON text, restored with model_validate_json (one pass in Rust) when it is read; a
        table's name and state beside it, which every run reads."""
        data = model.model_dump_json(by_alias=True, exclude_unset=True)
        self.changed = True
        if isinstance(model, TablePolicy):
            self.models[digest] = {"kind": "table", "data": data, "table": model.table, "state": model.state}
        else:
            self.models[digest] = {"kind": "namespace", "data": data}

    def findings(self, key: str) -> list[Diagnostic] | None:
        cached = self.checks.get(key)
        if cached is None:
            return None
        return [
            Diagnostic(d["code"], Severity(d["severity"]), Location(d["file"], d["line"], d["col"]), d["message"],
                       d["hint"])
            for d in cached
        ]

    def put_findings(self, key: str, findings: list[Diagnostic]) -> None:
        self.changed = True
        self.checks[key] = [
            {"code": d.code, "severity": int(d.severity), "file": d.location.file, "line": d.location.line,
             "col": d.location.col, "message": d.message, "hint": d.hint}
            for d in findings
        ]

    def save(self) -> None:
        """Keep the entries for the next run: in memory there is nowhere to (runtime's FileModelCache writes)."""

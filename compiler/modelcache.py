"""Validated policy models and their findings, cached by content hash (``.tablepolicy/models.json``).

A file whose text is unchanged is not parsed again: its model is restored from JSON (and validated by
the same strict models), its YAML positions are parsed only if a later finding needs one. A table's
semantic findings are reused while its file and every namespace defaults file it inherits are unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler import __version__
from compiler.diagnostics import Diagnostic, Location, Severity
from compiler.spec.table import NamespaceDefaults, TablePolicy

CACHE_VERSION = 4  # bump when validation rules change: cached models and findings are then re-derived


@dataclass
class ModelCache:
    path: Path | None  # None: this run only, never saved
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def open(cls, path: Path) -> ModelCache:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            if (isinstance(document, dict) and document.get("version") == CACHE_VERSION
                    and document.get("tool") == __version__
                    and isinstance(document["models"], dict) and isinstance(document["checks"], dict)):
                return cls(path, document["models"], document["checks"])
        except (OSError, ValueError, KeyError, RecursionError):  # unreadable, damaged or absurdly nested: start over
            pass
        return cls(path)

    @classmethod
    def in_memory(cls) -> ModelCache:
        return cls(None)

    def model(self, digest: str) -> dict[str, Any] | None:
        return self.models.get(digest)

    def put_model(self, digest: str, model: TablePolicy | NamespaceDefaults) -> None:
        """The model's JSON text, restored with model_validate_json (one pass in Rust) when it is read; a
        table's name and state beside it, which every run reads."""
        data = model.model_dump_json(by_alias=True, exclude_unset=True)
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
        self.checks[key] = [
            {"code": d.code, "severity": int(d.severity), "file": d.location.file, "line": d.location.line,
             "col": d.location.col, "message": d.message, "hint": d.hint}
            for d in findings
        ]

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {"version": CACHE_VERSION, "tool": __version__, "models": self.models, "checks": self.checks}
        self.path.write_text(json.dumps(document), encoding="utf-8")

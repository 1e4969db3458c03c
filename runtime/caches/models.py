"""The model cache kept between runs in a file (``.tablepolicy/models.json``): compiler.modelcache's entries,
read when a run starts and written when it validated without errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from compiler import jsontext
from compiler.modelcache import ModelCache


@dataclass
class FileModelCache(ModelCache):
    path: Path | None = None

    @classmethod
    def open(cls, path: Path) -> FileModelCache:
        try:
            entries = ModelCache.entries_of(jsontext.loads(path.read_text(encoding="utf-8")))
            if entries is not None:
                return cls(*entries, path=path)
        except (OSError, ValueError, RecursionError):  # unreadable, damaged or absurdly nested: start over
            pass
        return cls(path=path)

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.document()), encoding="utf-8")

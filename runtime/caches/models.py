"""The model cache kept between runs in a file (``.tablepolicy/models.json``): compiler.modelcache's entries,
read when a run starts and written when it validated without errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from compiler.modelcache import ModelCache


@dataclass
class FileModelCache(ModelCache):
    path: Path | None = None

    @classmethod
    def open(cls, path: Path) -> FileModelCache:
        try:
            # the tool's own file: json.loads, without jsontext's depth scan (a second over a 10,000-file project);
            # a file damaged into deep nesting still fails below, as a RecursionError
            entries = ModelCache.entries_of(json.loads(path.read_text(encoding="utf-8")))
            if entries is not None:
                return cls(*entries, path=path)
        except (OSError, ValueError, RecursionError):  # unreadable, damaged or absurdly nested: start over
            pass
        return cls(path=path)

    def save(self) -> None:
        if self.path is None or not self.changed:  # nothing new: the file already holds every entry
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.document(), separators=(",", ":")), encoding="utf-8")

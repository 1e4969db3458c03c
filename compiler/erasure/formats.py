"""The requests file formats, by file suffix: light enough for the check that git tracks no requests file, which
runs on every validate and must not load the request models or a YAML parser to look at file names."""

from __future__ import annotations

from typing import Literal

RequestsFormat = Literal["yaml", "csv", "jsonl"]
FORMATS: dict[str, RequestsFormat] = {".yaml": "yaml", ".yml": "yaml", ".csv": "csv", ".jsonl": "jsonl",
                                      ".ndjson": "jsonl"}
ACCEPTED = ", ".join(FORMATS)

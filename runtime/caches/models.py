"""The model cache kept between runs in files: compiler.modelcache's entries, read when a run starts and written
when it validated without errors.

``.tablepolicy/models.tsv``, one entry per line, so that a warm run of 10,000 files splits lines instead of
decoding 27 MB of JSON (0.19 s, most of what validating one file of such a project cost):

    {"version": 5, "tool": "0.1.0"}                  the header: another version's cache is started over
    {"<findings key>": [<finding>, ...], ...}         the tables' findings (JSON)
    <sha256>\\ttable\\t<name>\\t<state>\\t<model JSON>   a table policy
    <sha256>\\tnamespace\\t\\t\\t<model JSON>            namespace defaults

A model's JSON holds no tab or line break (JSON escapes them) and a table's name none either (names refuse control
characters). ``.tablepolicy/files.json`` is the file index (see ModelCache.files).
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablepolicy.compiler import __version__
from tablepolicy.compiler.modelcache import CACHE_VERSION, ModelCache

from .atomic import replace_text

MODELS = "models.tsv"
FILE_INDEX = "files.json"
INDEX_VERSION = 3  # 3: an entry is [size, mtime_ns, ctime_ns, inode, mode, sha256] (modelcache.file_stamp)
RACY_NS = 2 * 10**9  # an index entry counts only for a file last changed this long before the run that wrote it
_STATES = ("present", "absent")


@dataclass
class FileModelCache(ModelCache):
    path: Path | None = None

    @classmethod
    def open(cls, path: Path, index: FileIndex | None = None) -> FileModelCache:
        """``index``: the file index (``file_index``) when the caller read it a moment before."""
        cache = cls(path=path, settled_before_ns=time.time_ns() - RACY_NS)  # before any policy file is stat'ed
        try:
            cache.models, cache.checks = _entries(read_cache_text(path))
        except (OSError, ValueError, RecursionError):  # unreadable, damaged or absurdly nested: start over
            return cache
        cache.files, cache.trusted_before_ns = index if index is not None else file_index(path.with_name(FILE_INDEX))
        return cache

    def save(self) -> None:
        """Each file replaced whole (written beside it, then renamed over it): a run reading the cache while another
        saves it finds the old file or the new one, never half of one."""
        if self.path is None:
            return
        if self.changed:  # else the file already holds every entry
            replace_text(self.path, _document(self.models, self.checks), "the model cache")
        seen = {path: entry for path, entry in self.files.items() if path in self.files_seen}
        if self.files_changed or len(seen) < len(self.files):
            index = {"version": INDEX_VERSION, "started_ns": self.settled_before_ns + RACY_NS, "files": seen}
            replace_text(self.path.with_name(FILE_INDEX), json.dumps(index, separators=(",", ":")), "the model cache")
        self.saved = True


def read_cache_text(path: Path) -> str:
    """A cache file's text, as ``Path.read_text`` reads it; OSError when it is no regular file: a FIFO left there
    would block the run forever (opened without blocking, then refused), a folder cannot be read."""
    with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), encoding="utf-8") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise OSError(f"{path} is no regular file")
        return file.read()


def _header() -> dict[str, Any]:
    return {"version": CACHE_VERSION, "tool": __version__}


def _entries(text: str) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The models and findings of a saved cache; ValueError when it is damaged or another version's."""
    if not text.endswith("\n"):  # every line ends with one: the last one is cut short
        raise ValueError("a cache cut short")
    lines = text.split("\n")
    # the tool's own file: json.loads without jsontext's depth scan; nesting damage fails as a RecursionError
    if len(lines) < 2 or json.loads(lines[0]) != _header():
        raise ValueError("another version's cache")
    checks = json.loads(lines[1])
    if not isinstance(checks, dict):
        raise ValueError("damaged findings")
    models: dict[str, dict[str, Any]] = {}
    for line in lines[2:]:
        if not line:
            continue
        digest, kind, table, state, data = line.split("\t", 4)  # too few fields: ValueError
        if kind == "table" and state in _STATES and table:
            models[digest] = {"kind": "table", "data": data, "table": table, "state": state}
        elif kind == "namespace":
            models[digest] = {"kind": "namespace", "data": data}
        else:
            raise ValueError(f"damaged entry {digest[:12]}")
    return models, checks


def _document(models: dict[str, dict[str, Any]], checks: dict[str, list[dict[str, Any]]]) -> str:
    lines = [json.dumps(_header()), json.dumps(checks, separators=(",", ":"))]
    for digest, entry in models.items():
        fields = (digest, entry["kind"], entry.get("table", ""), entry.get("state", ""), entry["data"])
        if not any("\t" in f or "\n" in f for f in fields[:4]) and "\n" not in fields[4]:
            lines.append("\t".join(fields))  # anything else is left out (parsed again next time), never garbled
    return "\n".join(lines) + "\n"


FileIndex = tuple[dict[str, list[Any]], int]  # absolute path -> [*file_stamp, sha256]; trusted before (ns)


def file_index(path: Path) -> FileIndex:
    """The saved file index and the mtime before which its entries are trusted; nothing when it is unreadable."""
    try:
        written = path.stat().st_mtime_ns
        document = json.loads(read_cache_text(path))
    except (OSError, ValueError, RecursionError):
        return {}, 0
    if not isinstance(document, dict) or document.get("version") != INDEX_VERSION:
        return {}, 0
    files, started = document.get("files"), document.get("started_ns")
    if not isinstance(files, dict) or not isinstance(started, int):
        return {}, 0  # each entry is checked when it is used (ModelCache.known_digest)
    return files, min(written, started) - RACY_NS  # the run's start: a run may write its index seconds after a read

"""``.tablepolicy/verdict.json``: the whole project's findings from the last ``validate`` that saved its model cache,
with the digest of what they follow from (compiler/verdict.py). A run whose policy files the file index vouches for,
unchanged, and whose overlays hash the same, answers from it without parsing a file.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.modelcache import ModelCache, file_stamp
from tablepolicy.compiler.paths import ProjectPaths, environment_files, policy_files
from tablepolicy.compiler.verdict import Inputs, Verdict

from .atomic import replace_text
from .folder import cache_dir
from .models import FILE_INDEX, FileIndex, file_index, read_cache_text

VERDICT = "verdict.json"


def overlay_digests(paths: ProjectPaths) -> tuple[tuple[str, str], ...] | None:
    """Each overlay's path and the sha256 of its bytes; None when one cannot be read (the run reports it)."""
    digests = []
    for file in environment_files(paths).values():
        try:
            digests.append((str(file), hashlib.sha256(file.read_bytes()).hexdigest()))
        except OSError:
            return None
    return tuple(digests)


@dataclass(frozen=True)
class Lookup:
    """What looking for saved findings found: the answer (how many policy files the path given holds, and the
    findings it shows), or None; and the project's policy files as listed to look (None: not listed)."""

    answer: tuple[int, Diagnostics] | None
    listed: list[str] | None = None
    index: FileIndex | None = None  # the file index as read to look


def saved_validation(paths: ProjectPaths, environment: str | None, flag: str) -> Lookup:
    """The answer of the saved verdict when nothing it follows from has changed."""
    folder = cache_dir(paths)
    if not paths.scope.is_dir():
        return Lookup(None)
    try:
        text = read_cache_text(folder / VERDICT)
    except (OSError, UnicodeDecodeError):
        return Lookup(None)
    read = file_index(folder / FILE_INDEX)
    index = ModelCache(files=read[0], trusted_before_ns=read[1])
    listed = policy_files(str(paths.scope))
    digests = []
    for name in listed:
        try:
            digest = index.known_digest(name, file_stamp(os.stat(name)))
        except OSError:
            return Lookup(None, listed, read)
        if digest is None:  # changed, new, or too recent to vouch for: the run reads it
            return Lookup(None, listed, read)
        digests.append((name, digest))
    overlays = overlay_digests(paths)
    if overlays is None:
        return Lookup(None, listed, read)
    verdict = Verdict.from_json(text, Inputs(str(paths.scope), environment, flag, tuple(digests), overlays).key())
    return Lookup(verdict.selected(paths, listed) if verdict is not None else None, listed, read)


def save_verdict(paths: ProjectPaths, environment: str | None, flag: str, verdict: Verdict, index: ModelCache,
                 listed: list[Path], overlays: tuple[tuple[str, str], ...] | None) -> None:
    """Keep ``verdict`` under the digests of the texts the run validated (``index``, its file index after the run;
    ``overlays``: hashed before the run read them). Nothing is kept for a file the index holds no text of."""
    if overlays is None:
        return
    digests = []
    for file in listed:
        entry = index.files.get(str(file))
        if type(entry) is not list or not entry:
            return
        digests.append((str(file), str(entry[-1])))
    key = Inputs(str(paths.scope), environment, flag, tuple(digests), overlays).key()
    replace_text(cache_dir(paths) / VERDICT, verdict.to_json(key), "the model cache")

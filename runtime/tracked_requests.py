"""Requests files that git tracks (TP619): their key values are in git history, which no erasure reaches.

``validate`` (and so the scaffolded pre-commit hook, which runs it when such a file is staged) reads git's index
file itself: the paths it lists are what git tracks or is about to commit. No git process is started (validate
stays fast and runs where git is not installed). A path is a candidate by its extension and its first lines
(a YAML mapping starting ``requests:``, a CSV header naming id and received, JSON lines with a received date);
a candidate that loads as requests (so holds key values) is the finding.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from tablepolicy.compiler.diagnostics import Diagnostics, Location
from tablepolicy.compiler.erasure.formats import FORMATS

from .gitinfo import work_tree

_HEAD = 4096  # bytes read to decide whether a file looks like requests
_CSV_HEADER = re.compile(r"(^|,)\s*\"?id\"?\s*(,|$)")


def index_paths(root: Path) -> list[str] | None:
    """The paths git's index lists (relative to the work tree ``root``), or None when it cannot be read."""
    dot = root / ".git"
    try:
        if dot.is_file():  # a worktree or submodule: "gitdir: <path>"
            gitdir = Path(dot.read_text(encoding="utf-8").split("gitdir:", 1)[1].strip())
            dot = gitdir if gitdir.is_absolute() else (root / gitdir)
        data = (dot / "index").read_bytes()
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack(">II", data[4:12])
    paths: list[str] = []
    pos, previous = 12, b""
    try:
        for _ in range(count):
            flags_at = pos + 60
            flags = struct.unpack(">H", data[flags_at:flags_at + 2])[0]
            start = flags_at + 2 + (2 if version >= 3 and flags & 0x4000 else 0)
            if version >= 4:  # the path: strip N bytes from the previous one, then a NUL-terminated suffix
                strip, at = 0, start
                while True:
                    byte = data[at]
                    at += 1
                    strip = (strip << 7) | (byte & 0x7F)
                    if not byte & 0x80:
                        break
                    strip += 1
                end = data.index(b"\0", at)
                path = previous[:len(previous) - strip] + data[at:end]
                pos = end + 1
            else:  # a NUL-terminated path, the entry padded with 1-8 NULs to a multiple of 8 bytes
                end = data.index(b"\0", start)
                path = data[start:end]
                entry_start = flags_at - 60
                pos = entry_start + (end - entry_start + 8) // 8 * 8
            previous = path
            paths.append(path.decode("utf-8", "surrogateescape"))
    except (IndexError, ValueError, struct.error):
        return None
    return paths


def _looks_like_requests(head: str, kind: str) -> bool:
    lines = [line for line in head.splitlines() if line.strip()]
    if not lines:
        return False
    match kind:
        case "yaml":
            return any(line.startswith("requests:") for line in lines)
        case "csv":
            return "received" in lines[0] and bool(_CSV_HEADER.search(lines[0]))
        case _:
            return '"received"' in lines[0] and '"keys"' in lines[0]


def tracked_requests(where: Path) -> Diagnostics:
    """TP619 for every requests file holding key values that git tracks in the work tree ``where`` lies in."""
    findings = Diagnostics()
    root = work_tree(where)
    if root is None:
        return findings
    for relative in index_paths(root) or ():
        suffix = relative[relative.rfind("."):].lower() if "." in relative.rsplit("/", 1)[-1] else ""
        kind = FORMATS.get(suffix)
        if kind is None:
            continue
        file = root / relative
        try:
            with file.open("rb") as handle:
                head = handle.read(_HEAD).decode("utf-8", "replace")
            if not _looks_like_requests(head, kind):
                continue
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        # only a file that looks like requests loads the request models and a YAML parser (validate's fast path
        # loads neither)
        from tablepolicy.compiler.erasure.requests import load_requests
        from tablepolicy.compiler.loader import display_path

        loaded, _ = load_requests(text, relative)
        if loaded is None:
            continue
        shown = display_path(file)
        findings.error(
            "TP619", Location(shown),
            f"git tracks requests file {shown}, holding the key values of {len(loaded.model.requests)} request(s): "
            "they are in git history (every clone and fork), which no erasure reaches",
            f"git rm --cached {relative}, move the file out of the repository and append requests to the request "
            f"table (erase --requests-table privacy.erasure_requests) or pipe them (erase --requests - < FILE); if it "
            f"was ever committed, purge it from history: git filter-repo --path {relative} --invert-paths (then "
            "force-push, and have every clone re-cloned)")
    return findings

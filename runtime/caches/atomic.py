"""A cache file replaced whole: written beside itself and renamed over, so a reader (another run, at the same
moment) sees the old file or the new one, never one half written."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from tablepolicy.compiler.errors import TablePolicyError


def replace_text(path: Path, text: str, what: str) -> None:
    """Write ``text`` as ``path``; ``what`` names the cache in the one-line error when its folder is not writable."""
    # this thread's (of this process); made as the umask says
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        if isinstance(exc, OSError):
            from tablepolicy.compiler.loader import (
                display_path,  # on failure only: unlock imports the caches, not the loader
            )

            raise TablePolicyError(f"cannot save {what} {display_path(path)}: {exc.strerror or exc}; make "
                                   f"{path.parent.name}/ writable for this user, or remove it to run without caches"
                                   ) from exc
        raise

"""The commit the policies come from, stamped into plans (None outside git)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_sha(path: Path) -> str | None:
    where = path if path.is_dir() else path.parent
    try:
        result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True,
                                timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None

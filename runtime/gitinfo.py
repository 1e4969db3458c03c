"""The commit the policies come from, stamped into plans (None outside git).

A plan made from a work tree whose policies differ from the commit (modified, staged, deleted or untracked
files under the policies folder) is not that commit's plan: its sha is ``<sha>-dirty``, as ``git describe
--dirty`` marks it, so a reviewer and the table's ``tablepolicy.git-sha`` property never claim a commit the
plan was not made from.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DIRTY = "-dirty"


def run_git(where: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def in_work_tree(where: Path) -> bool:
    """Whether git could answer for ``where``: a ``.git`` (a folder, or a worktree's file) in it or a folder
    above, or GIT_DIR set. Outside one, no git process is started for nothing (a plan outside git, every test in
    a temporary folder)."""
    if os.environ.get("GIT_DIR"):
        return True
    return any((folder / ".git").exists() for folder in (where.resolve(), *where.resolve().parents))


def work_tree(where: Path) -> Path | None:
    """The git work tree ``where`` lies in (the folder holding ``.git``), or None; no git process is started."""
    return next((folder for folder in (where.resolve(), *where.resolve().parents) if (folder / ".git").exists()),
                None)


def git_sha(path: Path, *also: Path) -> str | None:
    """HEAD's sha, with ``-dirty`` when anything under ``path`` (or ``also``: an environments folder) differs
    from it; None outside git."""
    where = path if path.is_dir() else path.parent
    if not in_work_tree(where):
        return None
    head = (run_git(where, "rev-parse", "HEAD") or "").strip()
    if not head:
        return None
    # only what the plan reads counts (a README edit elsewhere does not make the plan dirty)
    paths = [str(p.resolve()) for p in (path, *also) if p.exists()]
    status = run_git(where, "status", "--porcelain", "--untracked-files=all", "--", *paths)
    return head + DIRTY if status is None or status.strip() else head


def is_dirty(sha: str | None) -> bool:
    return sha is not None and sha.endswith(DIRTY)

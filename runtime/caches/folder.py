"""Where a project keeps its caches and journals: ``.tablepolicy/`` beside its policies directory (like
Terraform's .terraform/). A read-only command never creates the folder: ``init`` makes it, ``mkdir .tablepolicy``
turns caches on in a clone."""

from __future__ import annotations

from pathlib import Path

from tablepolicy.compiler.paths import ProjectPath, find_project

from .models import MODELS, FileIndex, FileModelCache


def cache_dir(path: ProjectPath) -> Path:
    """``.tablepolicy/`` beside the project's policies directory."""
    return find_project(path).root / ".tablepolicy"


def caches_on(path: ProjectPath) -> bool:
    """Caches live in ``.tablepolicy/`` when the project has that folder."""
    return cache_dir(path).is_dir()


def project_cache(path: ProjectPath, index: FileIndex | None = None) -> FileModelCache | None:
    """``index``: the file index, when the caller read it a moment before."""
    return FileModelCache.open(cache_dir(path) / MODELS, index) if caches_on(path) else None

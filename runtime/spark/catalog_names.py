"""Identifiers for statements the runtime writes itself (safety tags), quoted like the templates' ones."""

from __future__ import annotations

from compiler.render.filters import qualified as _qualified


def qualified(catalog: str, name: tuple[str, ...]) -> str:
    return _qualified((catalog, *name))

"""Names the engines do not hold alike, refused before anything runs.

Every character a policy's names may hold works in every command (tests/test_hostile_names.py: quotes,
backticks, spaces, ``;``, ``--``, ``%20``, ``#``, ``?``, ``\\``, non-ASCII letters, emoji, in namespaces, tables
and columns, on disk and on S3). One placement does not: a namespace starting or ending with whitespace.
Spark's Iceberg catalog keeps ``ns `` as written, but pyiceberg, which plan, health, erase and maintain read the
catalog with, strips each namespace level (``Catalog.namespace_to_string``), so it looks for ``ns`` and never
finds the table Spark created.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from .. import codes
from ..diagnostics import Diagnostic, Severity
from ..iceberg.names import format_name
from .context import TableContext


def _edge(part: str) -> str | None:
    """Which end of ``part`` holds whitespace pyiceberg strips, and the character, or None."""
    for end, character in (("starts", part[:1]), ("ends", part[-1:])):
        if character and character.isspace():
            name = unicodedata.name(character, "whitespace").lower()
            return f"{end} with {'a ' + name if name != 'whitespace' else 'whitespace'} (U+{ord(character):04X})"
    return None


def check_names(ctx: TableContext) -> Iterator[Diagnostic]:
    name = ctx.table.name
    for part in name[:-1]:
        edge = _edge(part)
        if edge is not None:
            yield Diagnostic(
                codes.TP113, Severity.ERROR, ctx.at(("table",)),
                f"namespace {format_name((part,))} of table {format_name(name)} {edge}: pyiceberg, which plan, "
                "health and erase read the catalog with, strips it, so they would not find the namespace Spark "
                "creates", "remove it from the namespace's start or end (a space inside a name works)")

"""Which tables and actions one ``maintain`` run covers (``--table``, ``--only``), checked before any work.

A name that selects nothing is an error naming what exists: a typo must not become a run that does nothing
and exits 0.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import TablePolicyError
from ..iceberg.names import format_name, natural_key, parse_name
from .actions import SECTIONS

CLOSE_NAMES = 5


class SelectionError(TablePolicyError):
    """A ``--table`` or ``--only`` value that selects nothing; the message names the flag and what exists."""


@dataclass(frozen=True)
class Selection:
    """``tables``/``sections``: None selects every one."""

    tables: frozenset[tuple[str, ...]] | None = None
    sections: frozenset[str] | None = None

    def covers_table(self, name: tuple[str, ...]) -> bool:
        return self.tables is None or name in self.tables

    def covers_action(self, action: str) -> bool:
        return self.sections is None or SECTIONS[action] in self.sections


EVERYTHING = Selection()


def selection(declared: Iterable[tuple[str, ...]], tables: list[str], only: list[str]) -> Selection:
    """``tables`` as written (``logs.app_events``), ``only`` as lifecycle section names (``compaction``)."""
    sections = tuple(dict.fromkeys(SECTIONS.values()))
    for name in only:
        if name not in sections:
            # a procedure's name (rewrite_data_files) means its section; else the closest spelling
            close = [SECTIONS[name]] if name in SECTIONS else difflib.get_close_matches(name, sections, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise SelectionError(f"TM401 --only '{name}': not a lifecycle action; {hint}use one of: "
                                 f"{', '.join(sections)}")
    names = set(declared)
    by_text = {format_name(n): n for n in names}
    chosen = []
    for text in tables:
        found = by_text.get(text) or _parsed(text, names)
        if found is None:
            close = difflib.get_close_matches(text, sorted(by_text), n=CLOSE_NAMES, cutoff=0.5)
            listed = close or sorted(by_text, key=natural_key)[:CLOSE_NAMES]
            more = "" if close or len(by_text) <= CLOSE_NAMES else f" (and {len(by_text) - CLOSE_NAMES} more)"
            what = "close declared names" if close else "declared tables"
            raise SelectionError(f"TM402 --table '{text}': no policy under this path declares it; {what}: "
                                 f"{', '.join(listed) or 'none'}{more}")
        chosen.append(found)
    return Selection(frozenset(chosen) if tables else None, frozenset(only) if only else None)


def _parsed(text: str, names: set[tuple[str, ...]]) -> tuple[str, ...] | None:
    try:
        name = parse_name(text)
    except ValueError:
        return None
    return name if name in names else None

"""Findings accumulated across a whole run and shown together; nothing here prints.

A finding renders as ``file:line:col: severity CODE: message`` with an optional hint, e.g.
``policies/ads/click_log.yaml:12:11: error TP201: unknown type 'varchar(10)'``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum


class Severity(IntEnum):
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, order=True)
class Location:
    """1-based position in a policy file; line 0 means the file as a whole."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line else self.file


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    location: Location
    message: str
    hint: str | None = None

    def render(self) -> str:
        head = f"{self.location}: {self.severity} {self.code}: {self.message}"
        return f"{head}\n    hint: {self.hint}" if self.hint else head


@dataclass
class Diagnostics:
    """An ordered, append-only collection; sorted by location when read."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.items.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.items.extend(diagnostics)

    def error(self, code: str, location: Location, message: str, hint: str | None = None) -> None:
        self.add(Diagnostic(code, Severity.ERROR, location, message, hint))

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.items)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.sorted() if d.severity is Severity.ERROR]

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=lambda d: (d.location, d.code))

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.sorted())

    def __len__(self) -> int:
        return len(self.items)

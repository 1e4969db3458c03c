"""Each use of a table that a declared reader cannot read (TG112), or that no source says it can (TG113).

A finding names the reader and its version, what it cannot read, where the table uses it, what would work
instead, and the source of the answer; it stands where the policy declares the use (the column, the key),
else at the reader's entry in the file that declares the readers.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import codes
from ..diagnostics import Diagnostic, Location, Severity
from ..iceberg.readers import Verdict, support
from .declared import DeclaredReader
from .uses import Use

Locate = Callable[[Use], Location | None]


def reader_findings(readers: list[DeclaredReader], uses: list[Use], subject: str, locate: Locate,
                    change: Callable[[Use], str | None] = lambda _use: None) -> list[Diagnostic]:
    """``subject``: the table as findings name it; ``locate``: where the policy declares a use (None: nowhere,
    the reader's entry is named then); ``change``: the planned change that brings a use in (plan only)."""
    found = []
    for use in uses:
        for reader in readers:
            verdict = support(reader.engine, reader.version, use.feature)
            if verdict.value == "yes":
                continue
            where = locate(use) or reader.where
            planned = change(use)
            lead = f"this plan would {planned}: " if planned else ""
            if verdict.value == "no":
                found.append(Diagnostic(
                    codes.TG112, reader.severity, where,
                    f"{lead}reader {reader.named} cannot read {verdict.feature.what}: {subject} {use.detail}"
                    f"{_why(verdict)}",
                    f"instead: {verdict.feature.instead}; or drop {reader.engine} from the readers of {subject} "
                    f"(declared at {reader.where})"))
            else:
                found.append(Diagnostic(
                    codes.TG113, Severity.WARNING, where,
                    f"{lead}no source says reader {reader.named} can read {verdict.feature.what}: {subject} "
                    f"{use.detail} (unknown)",
                    f"check it with {reader.engine} {reader.version} and add a row to "
                    f"compiler/iceberg/readers.py; or instead: {verdict.feature.instead}"))
    return found


def _why(verdict: Verdict) -> str:
    note = f"; {verdict.note}" if verdict.note else ""
    return f" (source: {verdict.source.title}{note})"

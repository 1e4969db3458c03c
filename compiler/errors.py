"""Errors grouped by who must act. The CLI maps each to an exit code and a message without a traceback."""

from __future__ import annotations

from .diagnostics import Diagnostics


class TablePolicyError(Exception):
    """Base class: everything the CLI reports as a clean error (exit 1)."""


class PolicyError(TablePolicyError):
    """The policies in git are invalid; the user edits YAML."""

    def __init__(self, diagnostics: Diagnostics) -> None:
        self.diagnostics = diagnostics
        super().__init__(f"{len(diagnostics.errors)} error(s) in policies")


class CatalogError(TablePolicyError):
    """The catalog cannot be reached or read; the user fixes configuration or connectivity."""


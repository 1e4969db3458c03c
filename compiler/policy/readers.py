"""``readers:``: the engines that read the tables and the oldest version of each in use.

    readers:
      - {engine: spark, version: "3.5"}
      - {engine: duckdb, version: "1.5.5", severity: warning}   # what it cannot read: a warning, not an error
      - {engine: trino, version: "470"}

Declared in the org rules (``_rules.yaml``) for every table; a namespace defaults file or a table declares its own
list, which replaces the inherited one (the nearest wins; ``readers: []`` declares that nothing else reads it).
What each engine can read is the table of tablepolicy.compiler.iceberg.readers.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from .. import codes
from ..iceberg.readers import ENGINES, VersionError, parse_version
from .base import Spec

ReaderSeverity = Literal["error", "warning"]


def _engine(value: Any) -> Any:
    if isinstance(value, str) and value not in ENGINES:
        known = ", ".join(ENGINES)
        close = difflib.get_close_matches(value.lower(), list(ENGINES), n=1)
        hint = f"did you mean '{close[0]}'? Known engines: {known}" if close else f"known engines: {known}"
        raise PydanticCustomError(codes.TP120, "unknown reader engine '{engine}'", {"engine": value, "hint": hint})
    return value


def _version(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value  # the wrong type: pydantic says so
    if not isinstance(value, str):
        raise PydanticCustomError(codes.TP121, "reader version {value} is a number, not a version", {
            "value": value,
            "hint": "quote the version as written, e.g. version: \"3.10\" (YAML reads an unquoted 3.10 as the "
            "number 3.1)"})
    try:
        parse_version(value)
    except VersionError as exc:
        raise PydanticCustomError(codes.TP121, "{message}", {
            "message": f"reader version {exc}", "hint": "write the oldest version in use as dotted numbers, "
            "e.g. \"3.5\", \"1.5.5\" or \"470\""}) from None
    return value


class Reader(Spec):
    """An engine that reads the tables, at the oldest version in use."""

    engine: Annotated[str, BeforeValidator(_engine)] = Field(
        description="The reading engine: " + ", ".join(f"{e.name} ({e.title})" for e in ENGINES.values()) + ".",
        json_schema_extra={"enum": list(ENGINES)})
    version: Annotated[str, BeforeValidator(_version)] = Field(
        description="The oldest version in use, as dotted numbers: \"3.5\", \"1.5.5\", \"470\".",
        json_schema_extra={"pattern": r"^[0-9]{1,6}(\.[0-9]{1,6}){0,3}$"})
    severity: ReaderSeverity | None = Field(
        None, description="What this reader cannot read is an error (default: the rules' readers_severity) or a "
        "warning.")


Readers = list[Reader]

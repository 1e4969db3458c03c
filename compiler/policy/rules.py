"""The org rules file (``policies/_rules.yaml``): what every table must keep. Checked in compiler.guardrails."""

from __future__ import annotations

import re

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from .. import codes
from ..versions import VersionSpecError
from ..versions import parse as parse_versions
from .base import NonEmpty, Spec
from .readers import Reader, ReaderSeverity
from .table import PropertyValue
from .units import PositiveDuration


def _check_pattern(text: str) -> str:
    re.compile(text)  # a bad pattern is reported as a finding on the rules file
    return text


class DurationBounds(Spec):
    min: PositiveDuration | None = Field(None, description="The shortest value a table may declare.")
    max: PositiveDuration | None = Field(None, description="The longest value a table may declare.")


class Rules(Spec):
    """What every table of the repository must keep."""

    owner_required: bool = Field(False, description="Every table names an owner (TG101).")
    pii_requires_erasure: bool = Field(False, description="A column tagged pii needs lifecycle.erasure (TG102).")
    snapshots_max_age: DurationBounds | None = Field(None, description="Bounds of lifecycle.snapshots.max_age.")
    retention_keep: DurationBounds | None = Field(None, description="Bounds of lifecycle.retention.keep.")
    orphan_older_than: DurationBounds | None = Field(None, description="Bounds of orphan_files.older_than.")
    erasure_within: DurationBounds | None = Field(None, description="Bounds of lifecycle.erasure.within.")
    ref_max_age: DurationBounds | None = Field(
        None, description="Bounds of how long each declared branch or tag is kept: its max_ref_age, else the "
        "table's lifecycle.snapshots.max_ref_age, else forever (which breaks a max).")
    required_properties: dict[NonEmpty, PropertyValue | None] = Field(
        default_factory=dict, description="Properties every table must set (a null value: any value).")
    table_name: str | None = Field(
        None, min_length=1, json_schema_extra={"format": "regex"},
        description="Regular expression every table name matches (TG108).")
    column_name: str | None = Field(
        None, min_length=1, json_schema_extra={"format": "regex"},
        description="Regular expression every column name matches (TG109).")
    no_weakening: bool = Field(False, description="A table may not loosen its namespace's settings (TG110).")
    readers: list[Reader] | None = Field(
        None, description="The engines that read the tables, each at the oldest version in use: a table or change "
        "one of them cannot read is a finding (TG112); a namespace or table may declare its own list.")
    readers_severity: ReaderSeverity = Field(
        "error", description="Whether what a declared reader cannot read is an error (the default) or a warning.")
    ignore_unmanaged: list[NonEmpty] = Field(
        default_factory=list, description="Glob patterns (*, ?, [...]; * spans dots) over namespace names (ns, a.b) "
        "and table names (ns.table): catalog namespaces and tables git does not declare that drift leaves out. A "
        "namespace pattern covers the namespace, its nested namespaces and their tables.")

    @field_validator("table_name", "column_name")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                _check_pattern(value)
            except re.error as exc:
                raise PydanticCustomError(codes.TP104, "not a regular expression: {error}", {
                    "error": str(exc), "hint": "write a Python regular expression, e.g. ^[a-z][a-z0-9_]*$; a "
                    "backslash before ? * + ( ) [ or { matches it as itself"}) from None
        return value


# What compiler/versions.py parses, for the JSON Schema: clauses joined by commas; a prefix (.*) only with == or
# != (or no operator), ~= with two parts at least
_CLAUSE = (r"(?:(?:==|!=)?[ \t]*v?[0-9]+(?:\.[0-9]+)*(?:\.\*)?|~=[ \t]*v?[0-9]+(?:\.[0-9]+)+"
           r"|(?:===|>=|<=|>|<)[ \t]*v?[0-9]+(?:\.[0-9]+)*)")
REQUIRED_VERSION_PATTERN = rf"^[ \t]*{_CLAUSE}[ \t]*(?:,[ \t]*{_CLAUSE}[ \t]*)*$"


class RulesFile(Spec):
    required_version: str | None = Field(
        None, min_length=1, description="The tablepolicy versions this repository accepts, e.g. \">=0.1, <0.2\": "
        "every command refuses to run with another (TP009), as Terraform's required_version.",
        json_schema_extra={"pattern": REQUIRED_VERSION_PATTERN})  # the editor's check; the validator's is TP104
    rules: Rules

    @field_validator("required_version")
    @classmethod
    def _versions(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_versions(value)
            except VersionSpecError as exc:
                raise PydanticCustomError(codes.TP104, "{error}", {
                    "error": str(exc), "hint": "e.g. required_version: \">=0.1, <0.2\""}) from None
        return value


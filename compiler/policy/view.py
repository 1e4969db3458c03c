"""A view policy file: one Iceberg view, its SELECT text, column comments and properties, declared in git."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from .. import codes
from ..iceberg.names import parse_name
from .base import NonEmpty, Spec
from .table import _NAME_TEXT, PropertyValue, _check_name


def _check_view_name(text: str) -> str:
    if len(parse_name(_check_name(text))) < 2:
        raise PydanticCustomError(
            codes.TP109, "view name '{name}' has no namespace", {"name": text, "hint": "write namespace.view"})
    return text


ViewName = Annotated[str, AfterValidator(_check_view_name), _NAME_TEXT]


def query_text(sql: str) -> str:
    """The SQL as Spark stores a view's query: from its first token to its last, so whitespace and comments
    before and after are left out (comments inside stay). Quotes ('', "", ``, with backslash escapes in the
    string literals) are skipped, so a ``--`` inside one is no comment."""
    first, last, i, n = None, 0, 0, len(sql)
    while i < n:
        ch = sql[i]
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
            continue
        if sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch.isspace():
            i += 1
            continue
        start = i
        if ch in "'\"`":
            i += 1
            while i < n and sql[i] != ch:
                i += 2 if sql[i] == "\\" and ch != "`" else 1
            i += 1
        else:
            i += 1
        first = start if first is None else first
        last = min(i, n)
    return sql[first:last] if first is not None else ""


def _present_needs_sql(schema: dict[str, Any]) -> None:
    schema["properties"]["sql"].pop("default", None)
    schema["if"] = {"properties": {"state": {"const": "absent"}}, "required": ["state"]}
    schema["else"] = {"required": ["sql"]}


class ViewPolicy(Spec):
    """One Iceberg view declared in git: created, and replaced in one commit when its SQL text, column comments
    or properties differ from git; dropped only with 'state: absent' and the approval 'drop_view'."""

    model_config = ConfigDict(json_schema_extra=_present_needs_sql)

    view: ViewName = Field(description="Fully qualified name: namespace(s).view; backticks quote parts.")
    state: Literal["present", "absent"] = Field(
        "present", description="'absent' is a tombstone: the planner drops the view (with approval 'drop_view').")
    sql: str = Field(
        None,  # validated below: required unless state is absent
        validate_default=True, json_schema_extra={"minLength": 1},
        description="The view's SELECT, in Spark SQL; tables are named namespace.table (the catalog the plan is "
                    "applied to resolves them).")
    columns: dict[NonEmpty, str | None] = Field(
        default_factory=dict,
        description="The view's columns in the SELECT's order, each with its comment (null: none); when given, "
                    "every column the SELECT returns is listed.")
    description: str | None = Field(None, description="View comment.")
    owner: str | None = Field(None, min_length=1, description="Owning team; stored as property tablepolicy.owner.")
    properties: dict[NonEmpty, PropertyValue] = Field(
        default_factory=dict, description="Iceberg view properties git declares (other keys on the view are left "
                                          "alone).")
    allow_destructive: list[NonEmpty] = Field(
        default_factory=list, description="Destructive changes approved in git: 'drop_view' (with state: absent).")

    @field_validator("sql", mode="before")
    @classmethod
    def _sql_unless_absent(cls, value: Any, info: ValidationInfo) -> Any:
        present = info.data.get("state", "present") == "present"
        if value is None and present:
            raise PydanticCustomError(codes.TP103, "missing required key 'sql'",
                                      {"hint": "write the view's SELECT, or set 'state: absent' to drop the view"})
        if isinstance(value, str) and not query_text(value) and present:
            raise PydanticCustomError(codes.TP112, "a view needs its SELECT text", {"hint": "write sql: SELECT ..."})
        if isinstance(value, str) and value.rstrip().endswith(";"):
            raise PydanticCustomError(codes.TP104, "the view's SQL ends with ';': Spark parses one query, without it",
                                      {"hint": "remove the ';' at the end"})
        return "" if value is None else value

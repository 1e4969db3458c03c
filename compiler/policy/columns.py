"""Columns and their types as a policy writes them.

A type is a primitive name (``long``, ``decimal(12,2)``, ``timestamptz``) or one of
``{struct: [columns]}``, ``{list: TYPE}``, ``{map: {key: TYPE, value: TYPE}}``, nested at any depth.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Discriminator, Field, Tag
from pydantic_core import PydanticCustomError

from .. import codes
from ..iceberg.names import SAFE_FIELD_NAME
from ..iceberg.types import TypeSpellingError, parse_primitive
from .base import Count, NonEmpty, Spec


def _check_primitive(text: str) -> str:
    try:
        parse_primitive(text)
    except TypeSpellingError as exc:
        raise PydanticCustomError(codes.TP201, "{message}", {"message": str(exc), "hint": exc.hint}) from exc
    return text


# Names Spark, lock files and catalog listings can carry: no control characters (checked in Rust by pydantic;
# spec/errors.py words the finding).
FieldName = Annotated[str, Field(pattern=SAFE_FIELD_NAME)]


def _type_kind(value: Any) -> str | None:
    """The union member a type expression is: from raw YAML data, or from a model when serializing."""
    if isinstance(value, str):
        return "primitive"
    model_kinds = {"StructOf": "struct", "ListOf": "list", "MapOf": "map"}
    if type(value).__name__ in model_kinds:
        return model_kinds[type(value).__name__]
    if isinstance(value, dict):
        for kind in ("struct", "list", "map"):
            if kind in value:
                return kind
    return None


PrimitiveName = Annotated[
    str,
    AfterValidator(_check_primitive),
    # empty is an unknown type (TP201) to the validator
    Field(json_schema_extra={"minLength": 1, "examples": ["long", "string", "timestamptz", "decimal(12,2)", "date"]}),
    Field(description="A primitive type: boolean, int, long, float, double, decimal(P,S), date, time, "
          "timestamp (no zone), timestamptz, string, uuid, fixed[N], binary."),
]

TypeExpr = Annotated[
    Annotated[PrimitiveName, Tag("primitive")]
    | Annotated["StructOf", Tag("struct")]
    | Annotated["ListOf", Tag("list")]
    | Annotated["MapOf", Tag("map")],
    Discriminator(
        _type_kind,
        custom_error_type=codes.TP203,
        custom_error_message="a type is a name such as 'string' or one of {struct: [...]}, {list: TYPE}, "
        "{map: {key: TYPE, value: TYPE}}",
    ),
]


class Column(Spec):
    """One field of a table or of a struct."""

    name: FieldName = Field(min_length=1, description="Field name; any characters, Spark quoting is automatic.")
    type: TypeExpr = Field(description="Iceberg type of the field.")
    required: bool = Field(False, description="NOT NULL. Adding a required column to a live table is breaking.")
    doc: str | None = Field(None, description="Column comment, stored as the Iceberg field doc.")
    id: Count | None = Field(None, description="Pin the Iceberg field id (matches catalog fields by id).")
    renamed_from: FieldName | None = Field(
        None, min_length=1, description="Former name of this field: the planner renames it, keeping its data."
    )
    tags: list[NonEmpty] = Field(default_factory=list, description="Labels such as pii; org rules read them.")


class StructOf(Spec):
    struct: list[Column] = Field(min_length=1, description="Fields of the struct, in order.")


class ListOf(Spec):
    element: TypeExpr = Field(alias="list", description="Element type of the list.")
    element_required: bool = Field(False, description="Elements may not be null.")
    element_id: Count | None = Field(None, description="Pin the element's field id.")


class MapEntries(Spec):
    key: TypeExpr = Field(description="Key type; map keys are always required.")
    value: TypeExpr = Field(description="Value type.")
    value_required: bool = Field(False, description="Values may not be null.")
    key_id: Count | None = Field(None, description="Pin the key's field id.")
    value_id: Count | None = Field(None, description="Pin the value's field id.")


class MapOf(Spec):
    entries: MapEntries = Field(alias="map", description="Key and value types of the map.")


StructOf.model_rebuild()
ListOf.model_rebuild()
MapOf.model_rebuild()
Column.model_rebuild()

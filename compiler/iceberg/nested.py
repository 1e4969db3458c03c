"""Build pyiceberg's nested types from input that is already valid, without validating it again.

pyiceberg's types are pydantic models whose constructors re-validate every nested type through a wrap
validator: about 5 µs per field, which made building the schemas of 1,000 tables cost more than the
diff. Both inputs here are already valid: policies passed the strict spec models, and table metadata
was written by Iceberg. So fields are set the way unpickling sets them (pydantic's ``__setstate__``,
which pickle compatibility keeps stable), with the same values, fields-set and cached hash pyiceberg's
own ``__init__`` leaves. ``tests/unit/test_iceberg_types.py`` checks every kind against pyiceberg's
constructors and against pyiceberg's own parse of metadata JSON.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

_FIELD_SET = frozenset(NestedField.model_fields)
_LIST_SET = frozenset({"element_id", "element_type", "element_required"})
_MAP_SET = frozenset({"key_id", "key_type", "value_id", "value_type", "value_required"})
_STRUCT_SET = frozenset({"fields"})


Built = TypeVar("Built", bound=IcebergType)


def _built(
    cls: type[Built], values: dict[str, Any], fields_set: frozenset[str], private: dict[str, Any] | None
) -> Built:
    instance = object.__new__(cls)
    instance.__setstate__({"__dict__": values, "__pydantic_fields_set__": set(fields_set),
                           "__pydantic_extra__": None, "__pydantic_private__": private})
    return instance


def nested_field(field_id: int, name: str, field_type: IcebergType, required: bool, doc: str | None) -> NestedField:
    values = {"field_id": field_id, "name": name, "field_type": field_type, "required": required, "doc": doc,
              "initial_default": None, "write_default": None}
    return _built(NestedField, values, _FIELD_SET, None)


def struct_type(fields: tuple[NestedField, ...]) -> StructType:
    return _built(StructType, {"type": "struct", "fields": fields}, _STRUCT_SET, {"_hash": hash(fields)})


def list_type(element_id: int, element: IcebergType, element_required: bool) -> ListType:
    values = {"type": "list", "element_id": element_id, "element_type": element, "element_required": element_required}
    return _built(ListType, values, _LIST_SET, {"_hash": hash((element_id, element, element_required))})


def map_type(key_id: int, key: IcebergType, value_id: int, value: IcebergType, value_required: bool) -> MapType:
    values = {"type": "map", "key_id": key_id, "key_type": key, "value_id": value_id, "value_type": value,
              "value_required": value_required}
    return _built(MapType, values, _MAP_SET, {"_hash": hash((key_id, key, value_id, value, value_required))})


@cache
def primitive_from_json(spelling: str) -> PrimitiveType:
    """A primitive as metadata JSON spells it (``decimal(10, 2)``, ``fixed[16]``), parsed by pyiceberg once."""
    parsed = IcebergType.model_validate(spelling)
    assert isinstance(parsed, PrimitiveType)
    return parsed


def type_from_json(document: Any) -> IcebergType:
    """A type from Iceberg's JSON form (the table metadata spec), nested at any depth."""
    if isinstance(document, str):
        return primitive_from_json(document)
    match document.get("type"):
        case "struct":
            return struct_from_json(document)
        case "list":
            return list_type(document["element-id"], type_from_json(document["element"]),
                             document["element-required"])
        case "map":
            return map_type(document["key-id"], type_from_json(document["key"]), document["value-id"],
                            type_from_json(document["value"]), document["value-required"])
    parsed: IcebergType = IcebergType.model_validate(document)  # geometry and other object forms
    return parsed


def struct_from_json(document: dict[str, Any]) -> StructType:
    return struct_type(tuple(_field_from_json(f) for f in document.get("fields", ())))


def _field_from_json(document: dict[str, Any]) -> NestedField:
    if "initial-default" in document or "write-default" in document:
        # Default values are typed by their field's type: leave that conversion to pyiceberg.
        return NestedField.model_validate(document)
    return nested_field(document["id"], document["name"], type_from_json(document["type"]),
                        document["required"], document.get("doc"))

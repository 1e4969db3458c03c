"""Types built without validation are the objects pyiceberg's own constructors and parser give."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DecimalType,
    FixedType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

from tablepolicy.compiler.iceberg.nested import list_type, map_type, nested_field, struct_from_json, struct_type


def by_pyiceberg() -> StructType:
    inner = StructType(NestedField(7, "z", DecimalType(10, 2), required=True, doc="money"))
    return StructType(
        NestedField(1, "a", StringType(), required=False, doc="x"),
        NestedField(2, "b", ListType(3, LongType(), element_required=False), required=True),
        NestedField(4, "m", MapType(5, StringType(), 6, inner, value_required=False)),
        NestedField(8, "f", FixedType(16)),
        NestedField(9, "t", TimestamptzType(), required=True),
    )


def by_builder() -> StructType:
    inner = struct_type((nested_field(7, "z", DecimalType(10, 2), True, "money"),))
    return struct_type((
        nested_field(1, "a", StringType(), False, "x"),
        nested_field(2, "b", list_type(3, LongType(), False), True, None),
        nested_field(4, "m", map_type(5, StringType(), 6, inner, False), False, None),
        nested_field(8, "f", FixedType(16), False, None),
        nested_field(9, "t", TimestamptzType(), True, None),
    ))


def walk(t: IcebergType) -> list[IcebergType]:
    """Every type object in a tree, pre-order."""
    children: list[IcebergType] = []
    if isinstance(t, StructType):
        for f in t.fields:
            children += [f, *walk(f.field_type)]
    elif isinstance(t, ListType):
        children = walk(t.element_type)
    elif isinstance(t, MapType):
        children = walk(t.key_type) + walk(t.value_type)
    return [t, *children]


def state(t: Any) -> tuple[Any, ...]:
    return (type(t), t.model_dump(), t.__pydantic_fields_set__, t.__pydantic_extra__)


def test_built_types_equal_pyiceberg_constructed_ones_in_every_respect() -> None:
    expected, built = by_pyiceberg(), by_builder()
    assert built == expected
    assert repr(built) == repr(expected) and str(built) == str(expected)
    assert built.model_dump_json() == expected.model_dump_json()
    assert [state(t) for t in walk(built)] == [state(t) for t in walk(expected)]
    assert hash(built.fields[0]) == hash(expected.fields[0])  # no list inside: pyiceberg hashes lists by id
    assert Schema(*built.fields).find_column_name(7) == "m.value.z"


def test_built_types_survive_pickle_and_keep_their_hash() -> None:
    built = by_builder()
    again = pickle.loads(pickle.dumps(built))
    assert again == built and hash(again) == hash(built)
    assert again.fields[1].field_type.element_field == built.fields[1].field_type.element_field


@pytest.mark.parametrize("spelling", ["string", "decimal(38, 0)", "fixed[3]", "timestamp_ns", "timestamptz", "uuid",
                                      "unknown", "binary", "time", "date", "boolean", "int", "long", "float"])
def test_primitives_from_metadata_json_are_pyiceberg_singletons(spelling: str) -> None:
    parsed = struct_from_json({"type": "struct", "fields": [{"id": 1, "name": "c", "type": spelling,
                                                             "required": False}]})
    assert parsed == Schema.model_validate({"type": "struct", "fields": [{"id": 1, "name": "c", "type": spelling,
                                                                          "required": False}]}).as_struct()


def test_schema_json_parses_like_pyiceberg_including_defaults() -> None:
    document = Schema(*by_pyiceberg().fields, NestedField(10, "n", IntegerType(), required=False,
                                                           initial_default=5, write_default=6)).model_dump()
    expected = Schema.model_validate(document).as_struct()
    built = struct_from_json(document)
    assert built == expected
    assert built.fields[-1].initial_default == 5 and built.fields[-1].write_default == 6

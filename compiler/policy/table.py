"""A table policy file and a namespace defaults file: the two documents under ``policies/``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from .. import codes
from ..iceberg.names import _UNSAFE, UNSAFE_HINT, parse_name, table_name_problem, unsafe_character
from ..iceberg.transforms import TransformError, parse_expression
from .base import NonEmpty, Spec
from .columns import Column, FieldName
from .lifecycle import Lifecycle, Workload
from .readers import Reader
from .refs import Ref

# the characters tablepolicy.compiler.iceberg.names refuses in any name, as a JSON Schema pattern
SAFE_NAME = "^[^" + _UNSAFE.pattern[1:-1] + "]*$"
WriteMode = Literal["copy-on-write", "merge-on-read"]
PropertyValue = str | int | float | bool


def _check_name(text: str) -> str:
    bad = unsafe_character(text)
    if bad:
        raise PydanticCustomError(codes.TP101, "name {name} holds {bad}", {"name": repr(text), "bad": bad,
                                                                         "hint": UNSAFE_HINT})
    try:
        parts = parse_name(text)
    except ValueError as exc:
        raise PydanticCustomError(codes.TP107, "{message}", {"message": str(exc), "hint": "e.g. sales.orders"}) from exc
    problem = table_name_problem(parts)
    if problem is not None:  # its characters were checked above: what is left is its length
        raise PydanticCustomError(codes.TP108, "{message}", {"message": problem[0], "hint": problem[1]})
    return text


def _check_table_name(text: str) -> str:
    if len(parse_name(_check_name(text))) < 2:
        raise PydanticCustomError(
            codes.TP109, "table name '{name}' has no namespace", {"name": text, "hint": "write namespace.table"}
        )
    return text


def _check_expression(text: str) -> str:
    try:
        parse_expression(text)
    except TransformError as exc:
        raise PydanticCustomError(codes.TP301, "{message}", {"message": str(exc), "hint": exc.hint}) from exc
    return text


_SORT_SUFFIX = ("asc", "desc", "nulls first", "nulls last")


def _check_sort(text: str) -> str:
    body, _direction, _nulls = split_sort(text)
    _check_expression(body)
    return text


def split_sort(text: str) -> tuple[str, Literal["asc", "desc"], Literal["first", "last"] | None]:
    """``"time desc nulls last"`` -> ``("time", "desc", "last")``; nulls None means the default."""
    words = text.split()
    nulls: Literal["first", "last"] | None = None
    direction: Literal["asc", "desc"] = "asc"
    if len(words) >= 3 and words[-2].lower() == "nulls" and words[-1].lower() in ("first", "last"):
        nulls = "first" if words[-1].lower() == "first" else "last"
        words = words[:-2]
    if len(words) >= 2 and words[-1].lower() in ("asc", "desc"):
        direction = "desc" if words[-1].lower() == "desc" else "asc"
        words = words[:-1]
    return " ".join(words), direction, nulls


def _whole_number(value: Any) -> Any:
    """``True == 1 == 1.0`` in Python, so a Literal of ints takes YAML ``true`` and ``1.0``: refuse them first."""
    if isinstance(value, bool | float):
        raise PydanticCustomError(codes.TP104, "expected a whole number, got {value}",
                                  {"value": str(value).lower(), "hint": "write the number, e.g. format_version: 2"})
    return value


# the JSON Schema also refuses empty text, which the validator reports with the name's own code (TP107, TP301),
# and a name holding a character no name may hold (TP101); examples show what an expression is
_NAME_TEXT = Field(json_schema_extra={"minLength": 1, "pattern": SAFE_NAME})
TableName = Annotated[str, AfterValidator(_check_table_name), _NAME_TEXT]
FormatVersion = Annotated[Literal[1, 2, 3], BeforeValidator(_whole_number)]
NamespaceName = Annotated[str, AfterValidator(_check_name), _NAME_TEXT]
Expression = Annotated[
    str,
    AfterValidator(_check_expression),
    Field(json_schema_extra={"minLength": 1, "examples": ["ts", "day(ts)", "bucket(16, user_id)"]}),
    Field(description="A column or a transform of one: time_dt, day(time_dt), bucket(16, user_id), "
          "truncate(4, name), hour(ts), month(d), year(d), void(x)."),
]
SortExpression = Annotated[
    str,
    AfterValidator(_check_sort),
    Field(json_schema_extra={"minLength": 1, "examples": ["ts", "ts desc nulls last", "bucket(16, user_id) asc"]}),
    Field(description="An expression with optional direction and null order: 'time desc nulls last'."),
]


class PartitionField(Spec):
    field: Expression
    name: FieldName | None = Field(None, min_length=1, description="Partition field name (default: Iceberg's).")


class SortField(Spec):
    field: Expression
    direction: Literal["asc", "desc"] = Field("asc", description="Sort direction.")
    nulls: Literal["first", "last"] | None = Field(
        None, description="Null order (default: first for asc, last for desc)."
    )


class WriteModes(Spec):
    """How row-level operations write: rewrite files (copy-on-write) or add delete files (merge-on-read)."""

    delete: WriteMode | None = None
    update: WriteMode | None = None
    merge: WriteMode | None = None


def _short_or_mapping(value: Any) -> str | None:
    if isinstance(value, str):
        return "short"
    return "mapping" if isinstance(value, dict | PartitionField | SortField) else None


_EITHER = Discriminator(
    _short_or_mapping,
    custom_error_type=codes.TP104,
    custom_error_message="expected a string such as 'day(ts)' or a mapping with 'field:'",
)
PartitionItem = Annotated[
    Annotated[Expression, Tag("short")] | Annotated[PartitionField, Tag("mapping")], _EITHER
]
SortItem = Annotated[Annotated[SortExpression, Tag("short")] | Annotated[SortField, Tag("mapping")], _EITHER]


def _present_needs_columns(schema: dict[str, Any]) -> None:
    schema["properties"]["columns"].pop("default", None)
    schema["if"] = {"properties": {"state": {"const": "absent"}}, "required": ["state"]}
    schema["else"] = {"required": ["columns"], "properties": {"columns": {"minItems": 1}}}


class TablePolicy(Spec):
    """One Iceberg table declared in git."""

    model_config = ConfigDict(json_schema_extra=_present_needs_columns)

    table: TableName = Field(description="Fully qualified name: namespace(s).table; backticks quote parts.")
    state: Literal["present", "absent"] = Field(
        "present", description="'absent' is a tombstone: the planner drops the table (with approval)."
    )
    description: str | None = Field(None, description="Table comment.")
    owner: str | None = Field(None, min_length=1, description="Owning team; stored as property tablepolicy.owner.")
    tags: list[NonEmpty] = Field(default_factory=list, description="Free labels; stored as tablepolicy.tags.")
    location: str | None = Field(None, min_length=1, description="Explicit table location (default: the warehouse's).")
    format_version: FormatVersion = Field(2, description="Iceberg table format version.")
    case_sensitive: bool = Field(
        False, description="Allow names that differ only by case (ambiguous for Spark, Trino, Athena)."
    )
    columns: list[Column] = Field(
        None,  # validated below: required unless state is absent
        validate_default=True,
        description="Schema, in order (required unless state is absent).",
    )
    partition_by: list[PartitionItem] = Field(default_factory=list, description="Partition spec.")
    sort_by: list[SortItem] = Field(default_factory=list, description="Write sort order.")
    identifier_fields: list[NonEmpty] = Field(
        default_factory=list, description="Row identity (required, non-floating columns)."
    )
    distribution_mode: Literal["none", "hash", "range"] | None = Field(
        None, description="write.distribution-mode: how Spark shuffles rows before writing."
    )
    write_modes: WriteModes | None = Field(None, description="Row-level operation modes (format v2+).")
    properties: dict[NonEmpty, PropertyValue] = Field(
        default_factory=dict, description="Other Iceberg table properties; lifecycle-managed keys are refused."
    )
    ignore_properties: list[NonEmpty] = Field(
        default_factory=list, description="Property keys other tools own; never compared or changed."
    )
    workload: Workload | None = Field(None, description="Facts about readers and writers lifecycle must respect.")
    lifecycle: Lifecycle | None = Field(None, description="Maintenance policy (merged over namespace defaults).")
    readers: list[Reader] | None = Field(
        None, description="The engines that read this table (replaces its namespace's or the rules' list).")
    refs: list[Ref] = Field(
        default_factory=list, description="Branches and tags other than main, with their retention; one the "
        "table has and git does not declare is left alone unless an apply recorded it as declared.")
    allow_destructive: list[NonEmpty] = Field(
        default_factory=list,
        description="Destructive changes approved in git, as the plan names them: 'drop_column api.uid', "
        "'drop_table', 'tighten_retention', 'drop_tag month_end', 'shorten_ref audit'.",
    )

    @field_validator("columns", mode="before")
    @classmethod
    def _columns_unless_absent(cls, value: Any, info: ValidationInfo) -> Any:
        present = info.data.get("state", "present") == "present"
        if value is None and present:
            raise PydanticCustomError(codes.TP103, "missing required key 'columns'",
                                      {"hint": "declare the schema, or set 'state: absent' to drop the table"})
        if value == [] and present:
            raise PydanticCustomError(codes.TP112, "a table needs at least one column", {"hint": "declare the schema"})
        return [] if value is None else value


class NamespaceDefaults(Spec):
    """Defaults that every table in a namespace (and its child namespaces) inherits."""

    namespace: NamespaceName = Field(description="The namespace these defaults apply to.")
    description: str | None = Field(None, description="Namespace comment.")
    owner: str | None = Field(None, min_length=1, description="Default owner of the namespace's tables.")
    properties: dict[NonEmpty, PropertyValue] = Field(default_factory=dict, description="Default table properties.")
    workload: Workload | None = None
    lifecycle: Lifecycle | None = None
    readers: list[Reader] | None = Field(
        None, description="The engines that read this namespace's tables (replaces the rules' list).")

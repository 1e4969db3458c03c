"""A view as git declares it and as the catalog holds it: the SQL text, column comments and properties.

The current state is read from the view's metadata JSON (Iceberg's view spec, format version 1) with
pyiceberg's ViewMetadata model: the current version's SQL for dialect ``spark``, its schema's field names and
docs, and the view's properties.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.view.metadata import ViewMetadata

from ..policy.view import ViewPolicy, query_text
from .properties import property_text

DIALECT = "spark"
OWNER_KEY = "tablepolicy.owner"
COMMENT_KEY = "comment"  # where Spark's COMMENT of a view is kept


class ViewState(BaseModel):
    """What a plan compares: the SQL text, the columns with their comments (in order), the properties."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: tuple[str, ...]
    sql: str
    columns: tuple[tuple[str, str | None], ...] = Field(
        (), description="(name, comment) in the SELECT's order; empty: git names no columns (comments not compared).")
    comment: str | None = None
    properties: dict[str, str] = Field(default_factory=dict, description="Keys git declares (owner included).")


class CurrentView(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    metadata_location: str
    uuid: str
    version_id: int
    state: ViewState
    timestamp_ms: int | None = Field(None, description="When the current version was made (its timestamp-ms).")


def desired_view(policy: ViewPolicy, name: tuple[str, ...]) -> ViewState:
    properties = {key: property_text(value) for key, value in policy.properties.items()}
    if policy.owner is not None:
        properties[OWNER_KEY] = policy.owner
    return ViewState(name=name, sql=query_text(policy.sql), columns=tuple(policy.columns.items()),
                     comment=policy.description, properties=dict(sorted(properties.items())))


class ViewFormatError(ValueError):
    """A view's metadata holds no SQL this tool can compare (no version, or no representation for Spark)."""


def current_view(name: tuple[str, ...], location: str, document: dict[str, Any]) -> CurrentView:
    metadata = ViewMetadata.model_validate(document)
    version = next((v for v in metadata.versions if v.version_id == metadata.current_version_id), None)
    if version is None:
        raise ViewFormatError(f"its current version {metadata.current_version_id} is not among its versions")
    sql = next((r.root.sql for r in version.representations if r.root.dialect.lower() == DIALECT), None)
    if sql is None:
        dialects = ", ".join(sorted(r.root.dialect for r in version.representations)) or "none"
        raise ViewFormatError(f"its current version has no SQL for dialect '{DIALECT}' (it has: {dialects})")
    schema = next((s for s in metadata.schemas if s.schema_id == version.schema_id), None)
    columns = tuple((f.name, f.doc) for f in schema.fields) if schema is not None else ()
    properties = dict(metadata.properties)
    state = ViewState(name=name, sql=sql.strip(), columns=columns, comment=properties.get(COMMENT_KEY),
                      properties=dict(sorted(properties.items())))
    return CurrentView(metadata_location=location, uuid=metadata.view_uuid, version_id=version.version_id,
                       state=state, timestamp_ms=version.timestamp_ms)

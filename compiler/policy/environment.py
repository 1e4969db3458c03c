"""An environment overlay (``environments/<name>.yaml``): per-environment values over the one table file.

    catalog: prod                     # the catalog this environment targets (when no --catalog is given)
    defaults:                         # every table
      lifecycle: {snapshots: {max_age: 7d}}
    namespaces:
      logs: {lifecycle: {compaction: {target_file_size: 512MB}}}
    tables:
      security.cloudtrail_mgmt: {lifecycle: {retention: {keep: 365d}}}

An overlay sets values, never structure: the keys that declare a table or its columns are refused
(``STRUCTURE_KEYS``, finding TP701) before the models see them, so the message says why.
"""

from __future__ import annotations

from pydantic import Field

from .base import NonEmpty, Spec
from .lifecycle import Lifecycle, Workload
from .table import PropertyValue

# keys of a table file (and the usual words for a schema) that an overlay may not hold: one table file
# declares the table and its columns for every environment
STRUCTURE_KEYS = frozenset({
    "table", "namespace", "state", "columns", "schema", "fields", "partition_by", "sort_by", "identifier_fields",
    "location", "format_version", "case_sensitive", "allow_destructive",
})


class OverlaySettings(Spec):
    """The values an environment may set for a table, a namespace or every table."""

    owner: str | None = Field(None, min_length=1, description="Owning team in this environment.")
    properties: dict[NonEmpty, PropertyValue] = Field(default_factory=dict, description="Table properties.")
    workload: Workload | None = Field(None, description="Facts about readers and writers in this environment.")
    lifecycle: Lifecycle | None = Field(None, description="Lifecycle values, merged field by field.")


class EnvironmentOverlay(Spec):
    """Per-environment values layered over namespace defaults and table files (the overlay wins)."""

    description: str | None = Field(None, description="What this environment is.")
    catalog: str | None = Field(None, min_length=1, description="The catalog this environment targets.")
    defaults: OverlaySettings | None = Field(None, description="Values for every table.")
    namespaces: dict[NonEmpty, OverlaySettings] = Field(
        default_factory=dict, description="Values for the tables of a namespace (and its nested namespaces).")
    tables: dict[NonEmpty, OverlaySettings] = Field(default_factory=dict, description="Values for one table.")

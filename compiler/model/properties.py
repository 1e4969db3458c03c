"""Table properties: which keys a policy setting owns, which Spark refuses, and their derived values.

One owner per property: a key that a policy setting manages cannot also be set by hand under
``properties:``, so git never holds two answers for one value.
"""

from __future__ import annotations

from compiler.effective import Effective
from compiler.spec.table import PropertyValue, TablePolicy

# property key -> the policy setting that owns it
MANAGED_PROPERTIES: dict[str, str] = {
    "format-version": "format_version",
    "write.delete.mode": "write_modes.delete",
    "write.update.mode": "write_modes.update",
    "write.merge.mode": "write_modes.merge",
    "write.distribution-mode": "distribution_mode",
    "history.expire.max-snapshot-age-ms": "lifecycle.snapshots.max_age",
    "history.expire.min-snapshots-to-keep": "lifecycle.snapshots.min_keep",
    "history.expire.max-ref-age-ms": "lifecycle.snapshots.max_ref_age",
    "write.metadata.delete-after-commit.enabled": "lifecycle.metadata.delete_after_commit",
    "write.metadata.previous-versions-max": "lifecycle.metadata.previous_versions_max",
    "write.target-file-size-bytes": "lifecycle.compaction.target_file_size",
    "tablepolicy.owner": "owner",
    "tablepolicy.tags": "tags",
}

# Keys Spark's TableCatalog reserves (it refuses them in TBLPROPERTIES) and what to write instead.
SPARK_RESERVED: dict[str, str] = {
    "owner": "Spark sets 'owner' itself; declare the team with top-level 'owner:'",
    "provider": "the provider is always iceberg",
    "location": "declare the table location with top-level 'location:'",
    "comment": "declare the table comment with top-level 'description:'",
    "external": "Iceberg tables managed here are never external",
    "is_managed_location": "reserved by Spark",
}

# Keys Iceberg computes and exposes read-only.
ICEBERG_RESERVED = frozenset(
    {
        "uuid",
        "snapshot-count",
        "current-snapshot-id",
        "current-snapshot-summary",
        "current-snapshot-timestamp-ms",
        "current-schema",
        "default-partition-spec",
        "default-sort-order",
        "identifier-fields",
        "sort-order",
        "format",
    }
)


def property_text(value: PropertyValue) -> str:
    """Iceberg properties are strings; booleans are lowercase as Iceberg writes them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def desired_properties(policy: TablePolicy, effective: Effective) -> dict[str, str]:
    """Every property key this policy owns, with the value git declares for it.

    ``format-version`` is table metadata, not a stored property: TableState keeps it apart.
    """
    props = {key: property_text(value) for key, value in effective.properties.items()}
    if policy.write_modes is not None:
        for op in ("delete", "update", "merge"):
            mode = getattr(policy.write_modes, op)
            if mode is not None:
                props[f"write.{op}.mode"] = mode
    if policy.distribution_mode is not None:
        props["write.distribution-mode"] = policy.distribution_mode
    if effective.owner is not None:
        props["tablepolicy.owner"] = effective.owner
    if policy.tags:
        props["tablepolicy.tags"] = ",".join(policy.tags)
    lc = effective.lifecycle
    if lc.snapshots is not None:
        if lc.snapshots.max_age is not None:
            props["history.expire.max-snapshot-age-ms"] = str(lc.snapshots.max_age.millis)
        if lc.snapshots.min_keep is not None:
            props["history.expire.min-snapshots-to-keep"] = str(lc.snapshots.min_keep)
        if lc.snapshots.max_ref_age is not None:
            props["history.expire.max-ref-age-ms"] = str(lc.snapshots.max_ref_age.millis)
    if lc.metadata is not None:
        if lc.metadata.delete_after_commit is not None:
            props["write.metadata.delete-after-commit.enabled"] = property_text(lc.metadata.delete_after_commit)
        if lc.metadata.previous_versions_max is not None:
            props["write.metadata.previous-versions-max"] = str(lc.metadata.previous_versions_max)
    if lc.compaction is not None and lc.compaction.target_file_size is not None:
        props["write.target-file-size-bytes"] = str(lc.compaction.target_file_size.bytes)
    return dict(sorted(props.items()))

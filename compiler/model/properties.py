"""Table properties: which keys a policy setting owns, which Spark refuses, and their derived values.

One owner per property: a key that a policy setting manages cannot also be set by hand under
``properties:``, so git never holds two answers for one value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import jsontext
from ..effective import Effective
from ..policy.table import PropertyValue, TablePolicy
from .bloom import bloom_properties


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _millis(value: Any) -> str:
    return str(value.millis)


def _bytes(value: Any) -> str:
    return str(value.bytes)


# Lifecycle settings stored on the table: Iceberg's own properties where Iceberg reads them, else
# tablepolicy.* keys, so the table describes its policy and the planner can show old -> new values.
# property key -> (effective setting path, value -> property text)
LIFECYCLE_PROPERTIES: dict[str, tuple[str, Callable[[Any], str]]] = {
    "history.expire.max-snapshot-age-ms": ("lifecycle.snapshots.max_age", _millis),
    "history.expire.min-snapshots-to-keep": ("lifecycle.snapshots.min_keep", _text),
    "history.expire.max-ref-age-ms": ("lifecycle.snapshots.max_ref_age", _millis),
    "write.metadata.delete-after-commit.enabled": ("lifecycle.metadata.delete_after_commit", _text),
    "write.metadata.previous-versions-max": ("lifecycle.metadata.previous_versions_max", _text),
    "write.target-file-size-bytes": ("lifecycle.compaction.target_file_size", _bytes),
    "tablepolicy.retention.column": ("lifecycle.retention.column", _text),
    "tablepolicy.retention.keep": ("lifecycle.retention.keep", _text),
    "tablepolicy.orphan-files.enabled": ("lifecycle.orphan_files.enabled", _text),
    "tablepolicy.orphan-files.older-than": ("lifecycle.orphan_files.older_than", _text),
    "tablepolicy.compaction.enabled": ("lifecycle.compaction.enabled", _text),
    "tablepolicy.compaction.strategy": ("lifecycle.compaction.strategy", _text),
    "tablepolicy.compaction.min-input-files": ("lifecycle.compaction.min_input_files", _text),
    "tablepolicy.compaction.skip-recent": ("lifecycle.compaction.skip_recent", _text),
    "tablepolicy.compaction.zorder-by": ("lifecycle.compaction.zorder_by", _text),
    "tablepolicy.manifests.enabled": ("lifecycle.manifests.enabled", _text),
    "tablepolicy.manifests.min-manifests": ("lifecycle.manifests.min_manifests", _text),
    "tablepolicy.delete-files.enabled": ("lifecycle.delete_files.enabled", _text),
    "tablepolicy.delete-files.min-input-files": ("lifecycle.delete_files.min_input_files", _text),
    "tablepolicy.erasure.key": ("lifecycle.erasure.key", _text),
    "tablepolicy.erasure.within": ("lifecycle.erasure.within", _text),
}

# property key -> the policy setting that owns it
MANAGED_PROPERTIES: dict[str, str] = {
    "format-version": "format_version",
    "write.delete.mode": "write_modes.delete",
    "write.update.mode": "write_modes.update",
    "write.merge.mode": "write_modes.merge",
    "write.distribution-mode": "distribution_mode",
    "tablepolicy.owner": "owner",
    "tablepolicy.tags": "tags",
    **{key: setting for key, (setting, _) in LIFECYCLE_PROPERTIES.items()},
}

# Stamped by apply on every table it changes: which reviewed plan and commit last touched the table, and
# which property keys its policy declared by hand (so a key later removed from git is unset, while keys
# other tools set are never touched). Records, not settings: never compared by the planner.
DECLARED_KEYS = "tablepolicy.declared-properties"
APPROVALS_KEY = "tablepolicy.approvals"  # approvals consumed on the table (compiler/plan/approvals.py)
DECLARED_REFS = "tablepolicy.declared-refs"  # branches and tags the policy declared (a JSON list of names)
APPLIED_BY = "tablepolicy.applied-by"  # who ran the apply (CI: github:<actor>; else user@host): tablepolicy history
STAMP_KEYS = frozenset({"tablepolicy.plan-id", "tablepolicy.git-sha", APPLIED_BY, DECLARED_KEYS, APPROVALS_KEY,
                        DECLARED_REFS})


def declared_stamp(keys: Iterable[str]) -> str:
    """The DECLARED_KEYS value: a JSON list, since a property key may hold any character."""
    return json.dumps(sorted(keys), separators=(",", ":"))


def declared_in(properties: Mapping[str, str], stamp: str = DECLARED_KEYS) -> set[str]:
    """The keys (or with ``stamp=DECLARED_REFS`` the branches and tags) a table's stamp says its policy declared
    at the last apply (none if unstamped or unreadable)."""
    try:
        keys = jsontext.loads(properties.get(stamp, "[]"))
    except ValueError:
        return set()
    return {k for k in keys if isinstance(k, str)} if isinstance(keys, list) else set()

# Keys Spark's TableCatalog reserves (it refuses them in TBLPROPERTIES) and what to write instead.
SPARK_RESERVED: dict[str, str] = {
    "owner": "Spark sets 'owner' itself; declare the team with top-level 'owner:'",
    "provider": "the provider is always iceberg",
    "location": "declare the table location with top-level 'location:'",
    "comment": "declare the table comment with top-level 'description:'",
    "external": "Iceberg tables managed here are never external",
    "is_managed_location": "reserved by Spark",
}

# Keys a catalog server or the engines maintain on their own, rewriting them at every commit: never imported into
# git, never planned (a value copied into git goes stale with the next schema change, and setting it back would
# break readers), never listed as drift, refused in a policy (TP505). key -> who keeps it and why.
SERVER_PROPERTIES: dict[str, str] = {
    "schema.name-mapping.default": (
        "Iceberg's name mapping (field ids for data files written without them): REST servers such as SeaweedFS "
        "set it on every table and rewrite it after every commit, and Spark and pyiceberg update it when the "
        "schema changes; leave it to them"),
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
    return _text(value)


def setting_value(effective: Effective, setting: str) -> Any:
    """The effective value of a dotted lifecycle setting path, or None when unset."""
    node: Any = effective
    for part in setting.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node


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
    for key, (setting, to_text) in LIFECYCLE_PROPERTIES.items():
        value = setting_value(effective, setting)
        if value is not None:
            props[key] = to_text(value)
    props |= bloom_properties(effective.lifecycle.erasure)
    return dict(sorted(props.items()))

"""Property checks: one owner per key, and no key Spark or Iceberg refuses."""

from __future__ import annotations

from collections.abc import Iterator

from .. import codes
from ..diagnostics import Diagnostic, Location, Severity
from ..loader import LoadedNamespace
from ..model import bloom
from ..model.properties import ICEBERG_RESERVED, MANAGED_PROPERTIES, SERVER_PROPERTIES, SPARK_RESERVED
from ..policy.table import PropertyValue
from ..yamlsource import Path, SourceMap
from .context import TableContext


def property_findings(properties: dict[str, PropertyValue], source: SourceMap, at: Path = ()) -> Iterator[Diagnostic]:
    """``at``: the YAML path of the mapping that holds ``properties`` (an environment overlay's entry)."""
    for key in properties:
        where: Location = source.key((*at, "properties", key))
        if key in SPARK_RESERVED:
            yield Diagnostic(codes.TP501, Severity.ERROR, where,
                             f"Spark refuses the reserved property '{key}' in TBLPROPERTIES", SPARK_RESERVED[key])
        elif key in ICEBERG_RESERVED:
            yield Diagnostic(codes.TP502, Severity.ERROR, where,
                             f"'{key}' is computed by Iceberg and cannot be set", "remove it")
        elif key in SERVER_PROPERTIES:
            yield Diagnostic(codes.TP505, Severity.ERROR, where,
                             f"'{key}' is kept up to date by the catalog server and the engines, not by git",
                             f"remove it: {SERVER_PROPERTIES[key]}")
        elif key in MANAGED_PROPERTIES:
            yield Diagnostic(codes.TP503, Severity.ERROR, where,
                             f"property '{key}' is managed by the policy setting '{MANAGED_PROPERTIES[key]}'",
                             f"set '{MANAGED_PROPERTIES[key]}' instead, so one setting owns the value")


def check_properties(ctx: TableContext) -> Iterator[Diagnostic]:
    policy = ctx.table.policy
    yield from property_findings(policy.properties, ctx.table.source)
    filters = bloom.managed_keys(ctx.effective.lifecycle.erasure)
    for key in sorted(filters & set(ctx.effective.properties)):  # in the table file or its namespace defaults
        source, at = ctx.effective.origins.get(f"properties.{key}", (ctx.table.source, ("properties", key)))
        yield Diagnostic(codes.TP503, Severity.ERROR, source.key(at),
                         f"property '{key}' is managed by the erasure key's bloom filters ('{bloom.SETTING}')",
                         f"size or turn off the filter under '{bloom.SETTING}' instead, so one setting owns the value")
    for i, key in enumerate(policy.ignore_properties):
        if key in MANAGED_PROPERTIES or key in policy.properties or key in filters:
            yield Diagnostic(codes.TP504, Severity.ERROR, ctx.at(("ignore_properties", i)),
                             f"'{key}' is declared by this policy and cannot also be ignored",
                             "ignore only keys other tools own")


def check_namespace(namespace: LoadedNamespace) -> Iterator[Diagnostic]:
    yield from property_findings(namespace.defaults.properties, namespace.source)

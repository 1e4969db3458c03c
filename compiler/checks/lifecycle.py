"""Lifecycle checks on the effective settings, reported where each value was written."""

from __future__ import annotations

from collections.abc import Iterator

from .. import codes
from ..diagnostics import Diagnostic, Severity
from ..iceberg.names import parse_name
from ..iceberg.types import ERASURE_KEY_TYPES, ZORDERABLE, is_temporal
from ..model.table import partition_fields
from ..policy.lifecycle import Lifecycle
from ..policy.units import Duration
from ..yamlsource import Path, SourceMap
from .context import TableContext
from .erasure_refs import check_erasure_refs

ORPHAN_FLOOR = Duration.parse("24h")
ORPHAN_DEFAULT = Duration.parse("3d")


def check_lifecycle(ctx: TableContext) -> Iterator[Diagnostic]:
    yield from declared_lifecycle(ctx.table.policy.lifecycle, ctx.table.source)
    yield from _snapshots(ctx)
    yield from _retention(ctx)
    yield from _orphans(ctx)
    yield from _metadata(ctx)
    yield from _compaction(ctx)
    yield from _erasure(ctx)


def declared_lifecycle(lifecycle: Lifecycle | None, source: SourceMap, at: Path = ()) -> Iterator[Diagnostic]:
    """A lifecycle value that means nothing on its own, reported once where it is written: in a table file, in
    namespace defaults (whether or not a table inherits them yet) or in an environment overlay's entry at ``at``.
    The checks on a table's effective settings compare values with each other only."""
    if lifecycle is None:
        return
    snapshots, retention, orphans = lifecycle.snapshots, lifecycle.retention, lifecycle.orphan_files
    if snapshots is not None and snapshots.max_age is not None and snapshots.max_age.millis == 0:
        yield Diagnostic(codes.TP420, Severity.ERROR, source.value((*at, "lifecycle", "snapshots", "max_age")),
                         "snapshot max_age of zero would expire every snapshot",
                         "keep snapshots for at least the time readers need, e.g. 6h")
    if retention is not None and retention.keep is not None and retention.keep.millis == 0:
        yield Diagnostic(codes.TP413, Severity.ERROR, source.value((*at, "lifecycle", "retention", "keep")),
                         "retention keep of zero deletes every row", "keep rows for a positive duration")
    older = orphans.older_than if orphans is not None else None
    if older is None or older >= ORPHAN_DEFAULT:
        return
    where = source.value((*at, "lifecycle", "orphan_files", "older_than"))
    if older < ORPHAN_FLOOR:
        yield Diagnostic(codes.TP421, Severity.ERROR, where,
                         f"orphan_files.older_than {older} is under the 24h floor: it deletes files of commits "
                         "still in flight", "use at least 24h; Iceberg's default is 3d")
    else:
        yield Diagnostic(codes.TP422, Severity.WARNING, where,
                         f"orphan_files.older_than {older} is shorter than Iceberg's 3d default",
                         "make sure no write runs longer than this")


def _snapshots(ctx: TableContext) -> Iterator[Diagnostic]:
    snapshots = ctx.effective.lifecycle.snapshots
    if snapshots is None or snapshots.max_age is None:
        return
    where = ctx.setting("lifecycle.snapshots.max_age")
    travel = ctx.effective.workload.time_travel
    if travel is not None and snapshots.max_age.millis < travel.millis:
        yield Diagnostic(codes.TP425, Severity.WARNING, where,
                         f"snapshots expire after {snapshots.max_age} but workload.time_travel needs {travel}",
                         f"raise max_age to at least {travel}")


def _retention(ctx: TableContext) -> Iterator[Diagnostic]:
    retention = ctx.effective.lifecycle.retention
    if retention is None:
        return
    if retention.column is None or retention.keep is None:
        missing = "column" if retention.column is None else "keep"
        yield Diagnostic(codes.TP410, Severity.ERROR, ctx.key_at(("lifecycle", "retention")),
                         f"retention needs '{missing}' (here or in the namespace defaults)",
                         "e.g. retention: {column: event_time, keep: 365d}")
        return
    where = ctx.setting("lifecycle.retention.column")
    path = _path(retention.column)
    found = ctx.resolve(path) if path else None
    if found is None:
        yield Diagnostic(codes.TP411, Severity.ERROR, where,
                         f"retention column '{retention.column}' does not exist", ctx.suggest(path or ()))
    elif not is_temporal(found.field_type):
        yield Diagnostic(codes.TP412, Severity.ERROR, where,
                         f"retention column '{retention.column}' is {found.field_type}, not a date or timestamp",
                         "retention compares a date/timestamp column with now() - keep")


def _orphans(ctx: TableContext) -> Iterator[Diagnostic]:
    orphans = ctx.effective.lifecycle.orphan_files
    if orphans is None or orphans.older_than is None:
        return
    older, where = orphans.older_than, ctx.setting("lifecycle.orphan_files.older_than")
    longest = ctx.effective.workload.longest_write
    if longest is not None and older.millis <= longest.millis:
        yield Diagnostic(codes.TP423, Severity.WARNING, where,
                         f"orphan_files.older_than {older} is not longer than workload.longest_write {longest}: "
                         "files of a running write would be deleted", f"use more than {longest}")


def _metadata(ctx: TableContext) -> Iterator[Diagnostic]:
    metadata = ctx.effective.lifecycle.metadata
    if metadata is None or metadata.previous_versions_max is None or metadata.delete_after_commit:
        return
    yield Diagnostic(codes.TP424, Severity.WARNING, ctx.setting("lifecycle.metadata.previous_versions_max"),
                     "previous_versions_max deletes nothing without delete_after_commit: true",
                     "add delete_after_commit: true to lifecycle.metadata")


def _compaction(ctx: TableContext) -> Iterator[Diagnostic]:
    compaction = ctx.effective.lifecycle.compaction
    if compaction is None:
        return
    strategy = compaction.strategy
    if strategy == "zorder" and not compaction.zorder_by:
        yield Diagnostic(codes.TP430, Severity.ERROR, ctx.setting("lifecycle.compaction.strategy"),
                         "compaction strategy zorder needs zorder_by columns", "add zorder_by: [col_a, col_b]")
    if compaction.zorder_by and strategy != "zorder":
        yield Diagnostic(codes.TP434, Severity.ERROR, ctx.setting("lifecycle.compaction.zorder_by"),
                         f"zorder_by is only used by strategy zorder (strategy is {strategy or 'binpack'})",
                         "set strategy: zorder or remove zorder_by")
    if strategy == "sort" and not ctx.table.policy.sort_by:
        yield Diagnostic(codes.TP431, Severity.ERROR, ctx.setting("lifecycle.compaction.strategy"),
                         "compaction strategy sort needs the table's sort_by", "declare sort_by or use binpack")
    for i, column in enumerate(compaction.zorder_by or []):
        path = _path(column)
        resolved = ctx.resolve(path) if path is not None else None
        where = ctx.at(("lifecycle", "compaction", "zorder_by", i))
        if path is None or resolved is None:
            yield Diagnostic(codes.TP432, Severity.ERROR, where, f"zorder column '{column}' does not exist",
                             ctx.suggest(path or ()))
        elif len(path) > 1 or not isinstance(resolved.field_type, ZORDERABLE):
            what = "a nested field" if len(path) > 1 else f"of type {resolved.field_type}"
            yield Diagnostic(codes.TP433, Severity.ERROR, where,
                             f"zorder column '{column}' is {what}: Iceberg z-orders top-level columns of type int, "
                             "long, float, double, string, uuid, binary, fixed, boolean, date or timestamptz",
                             "z-order by other columns, or use strategy sort")


def _erasure(ctx: TableContext) -> Iterator[Diagnostic]:
    erasure = ctx.effective.lifecycle.erasure
    if erasure is None:
        return
    if not erasure.key or erasure.within is None:
        yield Diagnostic(codes.TP440, Severity.ERROR, ctx.key_at(("lifecycle", "erasure")),
                         f"erasure needs '{'key' if not erasure.key else 'within'}'",
                         "e.g. erasure: {key: [user_id], within: 30d}")
        return
    if erasure.batch_margin is not None and erasure.batch_margin.millis > erasure.within.millis:
        yield Diagnostic(codes.TP448, Severity.ERROR, ctx.at(("lifecycle", "erasure", "batch_margin")),
                         f"erasure batch_margin {erasure.batch_margin} is longer than within {erasure.within}: a "
                         "request would be due before it arrived",
                         "a margin shorter than within, e.g. batch_margin: 2d with within: 30d (held until 28 days in)")
    yield from check_erasure_refs(ctx)
    # partition values that are a key or a prefix of one
    revealing = {f.source: f.transform.kind for f in partition_fields(ctx.table.policy)
                 if f.transform.kind in ("identity", "truncate")}
    for i, column in enumerate(erasure.key):
        path = _path(column)
        found = ctx.resolve(path) if path else None
        if found is None:
            yield Diagnostic(codes.TP441, Severity.ERROR, ctx.at(("lifecycle", "erasure", "key", i)),
                             f"erasure key column '{column}' does not exist", ctx.suggest(path or ()))
        elif not isinstance(found.field_type, ERASURE_KEY_TYPES):
            yield Diagnostic(codes.TP442, Severity.ERROR, ctx.at(("lifecycle", "erasure", "key", i)),
                             f"erasure key column '{column}' is of type {found.field_type}: requests name subjects "
                             "by string or integer keys", "key erasure on an id column such as user_id")
        elif path in revealing:
            yield Diagnostic(codes.TP444, Severity.WARNING, ctx.at(("lifecycle", "erasure", "key", i)),
                             f"erasure key column '{column}' is partitioned by {revealing[path]}: its values"
                             + (" (their prefixes)" if revealing[path] == "truncate" else "")
                             + " name partition directories and fill partition tuples, which erase's proof does "
                             "not read",
                             f"partition by bucket(16, {column}) instead: a bucket number reveals no key")
    yield from _bloom_columns(ctx, erasure.key)


def _bloom_columns(ctx: TableContext, key: list[str]) -> Iterator[Diagnostic]:
    """A per-column bloom filter setting names a key column (TP449): the filters exist for erase's lookups."""
    spec = ctx.effective.lifecycle.erasure.bloom_filter if ctx.effective.lifecycle.erasure else None
    keys = {_path(k) for k in key} - {None}
    for column in (spec.columns or {}) if spec is not None else {}:
        if _path(column) in keys:
            continue
        path = _path(column)
        exists = path is not None and ctx.resolve(path) is not None
        written = (source.key(at[:-1]) for name, (source, at) in ctx.effective.origins.items()
                   if name.startswith("lifecycle.erasure.bloom_filter.columns.") and at[-3:-1] == ("columns", column))
        where = next(written, None) or ctx.key_at(("lifecycle", "erasure", "bloom_filter", "columns", column))
        yield Diagnostic(codes.TP449, Severity.ERROR, where,
                         f"bloom filter setting for '{column}', " + (
                             "which is no erasure key column" if exists else "a column that does not exist"),
                         f"the key columns are {', '.join(key)}: set a filter on another column under "
                         f"properties (write.parquet.bloom-filter-enabled.column.{column}: true)"
                         if exists else ctx.suggest(path or ()))


def _path(text: str) -> tuple[str, ...] | None:
    try:
        return parse_name(text)
    except ValueError:
        return None

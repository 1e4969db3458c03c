"""Maintenance actions -> Spark SQL: Iceberg's stored procedures, and DELETE for expired rows.

A procedure's ``table`` argument is a string Spark parses as a multi-part identifier, so each part is
backquoted inside the literal, and it starts with the catalog: unqualified, a namespace named like a
catalog (``iso.plain`` in catalog ``iso``) would be read as that catalog. Timestamps carry their UTC offset.
"""

from __future__ import annotations

from typing import assert_never

from ..maintenance import actions
from ..maintenance.actions import Action, TimeCutoff
from ..sql.filters import literal, qualified, string_map, time_literal
from ..sql.templating import render

# remove_orphan_files: s3a:// and s3n:// name the store s3:// names (the JVM-free scan, runtime/orphans.py, reads
# them so too), and a file listed under another scheme or bucket (authority) than the metadata names it fails the
# call instead of being deleted
ORPHAN_EQUAL_SCHEMES = {"s3a,s3n": "s3"}


def action_sql(action: Action, catalog: str) -> str:
    table = literal(qualified((catalog, *action.table)))
    match action:
        case actions.DeleteExpiredRows():
            cutoff = action.cutoff
            return render("delete_expired_rows", table=(catalog, *action.table), column=cutoff.column,
                          kind=cutoff.kind, before=cutoff.before)
        case actions.RewriteDataFiles():
            arguments = [("table", table), ("strategy", literal("sort" if action.strategy == "zorder"
                                                                else action.strategy))]
            if action.zorder_by:
                columns = ", ".join(qualified(c) for c in action.zorder_by)
                arguments.append(("sort_order", literal(f"zorder({columns})")))
            if action.only_before is not None:
                arguments.append(("where", literal(_before(action.only_before))))
            options = {"min-input-files": str(action.min_input_files),
                       "target-file-size-bytes": str(action.target_file_size)}
            arguments.append(("options", string_map(options)))
            return _call(catalog, "rewrite_data_files", arguments)
        case actions.RewritePositionDeletes():
            options = {"min-input-files": str(action.min_input_files)}
            return _call(catalog, "rewrite_position_delete_files", [("table", table), ("options", string_map(options))])
        case actions.RewriteManifests():
            return _call(catalog, "rewrite_manifests", [("table", table)])
        case actions.ExpireSnapshots():
            older_than = time_literal("timestamptz", action.older_than)
            return _call(catalog, "expire_snapshots",
                         [("table", table), ("older_than", older_than), ("retain_last", str(action.retain_last))])
        case actions.RemoveOrphanFiles():
            older_than = time_literal("timestamptz", action.older_than)
            return _call(catalog, "remove_orphan_files", [
                ("table", table), ("older_than", older_than), ("equal_schemes", string_map(ORPHAN_EQUAL_SCHEMES)),
                ("prefix_mismatch_mode", literal("ERROR"))])
        case _:
            assert_never(action)


def _before(cutoff: TimeCutoff) -> str:
    return f"{qualified(cutoff.column)} < {time_literal(cutoff.kind, cutoff.before)}"


def _call(catalog: str, procedure: str, arguments: list[tuple[str, str]]) -> str:
    return render("call_procedure", catalog=catalog, procedure=procedure, arguments=arguments)

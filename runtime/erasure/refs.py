"""Snapshots that tags and branches keep: erasure may not expire them, and says who keeps what.

A tag keeps its snapshot; a branch other than main keeps its head, and a branch under legal hold its
whole history too (a hold preserves what the branch shows at every point). Iceberg refuses to expire a
snapshot a ref points at, so an undeclared ref that keeps a file with a key blocks the erasure loudly.
"""

from __future__ import annotations

from pyiceberg.table import Table
from pyiceberg.table.refs import SnapshotRefType

from compiler.diagnostics import Diagnostic, Diagnostics, Severity
from compiler.erasure.plan import TableErasure
from compiler.model.names import format_name

MAIN = "main"


def kept_by_refs(table: Table, holds: set[str]) -> dict[str, set[int]]:
    """Ref name -> the snapshot ids it keeps (main excluded: erasure rewrites it)."""
    parents = {s.snapshot_id: s.parent_snapshot_id for s in table.metadata.snapshots}
    kept: dict[str, set[int]] = {}
    for name, ref in sorted(table.metadata.refs.items()):
        if name == MAIN:
            continue
        ids = {ref.snapshot_id}
        if name in holds and ref.snapshot_ref_type == SnapshotRefType.BRANCH:
            parent = parents.get(ref.snapshot_id)
            while parent is not None and parent in parents:
                ids.add(parent)
                parent = parents[parent]
        kept[name] = ids
    return kept


def hold_findings(erasure: TableErasure, table: Table) -> Diagnostics:
    """TP443: a declared hold that names no tag or branch of the table, or names main."""
    found = Diagnostics()
    refs = sorted(n for n in table.metadata.refs if n != MAIN)
    for hold in erasure.holds:
        if hold.ref in refs:
            continue
        problem = ("the main branch cannot be held: erasure deletes from it" if hold.ref == MAIN else
                   f"hold '{hold.ref}' names no tag or branch of {format_name(erasure.table)}")
        found.add(Diagnostic("TP443", Severity.ERROR, hold.location, problem,
                             f"its tags and branches: {', '.join(refs) or 'none'}; create the tag "
                             "(ALTER TABLE ... CREATE TAG) or remove the entry"))
    return found

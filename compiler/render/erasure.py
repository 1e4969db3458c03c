"""Erasure steps -> Spark SQL and the dry-run view. Key values never appear: the DELETE reads them from a
temporary view the runtime registers from data, so every statement here is the same for 1 or 10,000 keys.

>>> delete_sql(("lake", "p", "t"), [(("user", "uid"), "k3")], "erasure_keys")
'DELETE FROM `lake`.`p`.`t` WHERE `user`.`uid` IN (SELECT `k3` FROM `erasure_keys`)'
"""

from __future__ import annotations

from collections.abc import Sequence

from ..erasure.cost import EXCLUSIONS, ErasureCost
from ..erasure.plan import ErasurePreview
from ..iceberg.names import format_name
from ..model.table import ColumnPath
from ..sql.filters import literal, qualified, string_map
from ..sql.templating import render
from .maintenance_report import byte_size

JAVA_LONG_MAX = 2**63 - 1
# rewrite exactly the files that have delete files, whatever their size: the rows a merge-on-read DELETE
# masked are still in them
REWRITE_MASKED = {"delete-file-threshold": "1", "min-file-size-bytes": "0",
                  "max-file-size-bytes": str(JAVA_LONG_MAX)}


def delete_sql(table: Sequence[str], columns: Sequence[tuple[ColumnPath, str]], view: str) -> str:
    """``columns``: each key column and the view's column holding its values."""
    target = qualified(columns[0][0]) if len(columns) == 1 else "(" + ", ".join(qualified(c) for c, _ in columns) + ")"
    selected = ", ".join(qualified((alias,)) for _, alias in columns)
    return render("delete_in_view", table=tuple(table), target=target, selected=selected, view=view)


def rewrite_sql(table: Sequence[str], catalog: str) -> str:
    """Rewrite every file behind a delete file: what a merge-on-read DELETE masked is then gone from it. The
    table is named with its catalog, as maintain names it: a namespace named like the catalog resolves."""
    return render("call_procedure", catalog=catalog, procedure="rewrite_data_files", arguments=[
        ("table", literal(qualified((catalog, *table)))), ("options", string_map(REWRITE_MASKED))])


def ref_rewrite_text(table: Sequence[str], catalog: str, ref: str, kind: str) -> str:
    """How the proof and the dry run show a rewrite through a ref (the delete's statement comes before it)."""
    name = qualified((catalog, *table))
    if kind == "branch":
        return f"-- committed on branch {qualified((ref,))} (its head moves to a snapshot without the keys)"
    return (f"-- committed as a new snapshot on the snapshot of tag {qualified((ref,))}, and the tag re-pointed to "
            f"it in the same commit, its retention kept: ALTER TABLE {name} REPLACE TAG {qualified((ref,))} AS OF "
            "VERSION <the new snapshot>")


def drop_ref_sql(table: Sequence[str], catalog: str, ref: str, kind: str) -> str:
    """The drop of a ref the policy says erasure expires through."""
    return f"ALTER TABLE {qualified((catalog, *table))} DROP {kind.upper()} {qualified((ref,))}"


def render_preview(preview: ErasurePreview) -> str:
    """The dry run of one table: what holds the keys, what will go and why, and every statement."""
    name = format_name(preview.table)
    lines = [f"  {name}: {len(preview.files)} file(s) hold {preview.rows} row(s) with a key "
             f"({preview.rows_current} row(s) in {len(preview.files_current)} file(s) of the current snapshot, "
             f"{len(preview.orphans)} file(s) no snapshot references)"]
    lines += [f"    file {path}" for path in preview.files]
    lines += [f"    expire snapshot {s.snapshot_id}: {s.reason}" for s in preview.expire]
    lines += [f"    {step.summary}" for step in preview.through_refs]
    lines += [f"    unreadable {path}: not parquet, the proof cannot read it" for path in preview.unreadable]
    lines += [f"    {line}" for statement in preview.statements for line in (statement + ";").splitlines()]
    lines += [f"    delete file {path}  -- holds a key, referenced by no snapshot" for path in preview.orphans]
    if not preview.files:
        lines.append("    nothing holds a key: nothing to run")
    if preview.cost is not None:
        lines += [f"    {line}" for line in cost_lines(preview.cost)]
    return "\n".join(lines) + "\n"


def cost_lines(cost: ErasureCost) -> list[str]:
    """The cost before the work: what the survey and the proof read after pruning, what is rewritten, and where."""
    excluded = [f"{files:,} by {EXCLUSIONS.get(evidence, evidence)}" for evidence, files, _ in cost.excluded if files]
    pruning = (f"; excluded unread: {', '.join(excluded)}" if excluded else "") if cost.pruned else "; pruning off"
    return [f"cost: the survey reads the key columns of {cost.files_read:,} of {cost.files_listed:,} file(s) "
            f"({byte_size(cost.bytes_read)} of {byte_size(cost.bytes_listed)} listed{pruning}), and the proof as many "
            f"again, in {cost.reads.text}",
            f"cost: the delete rewrites {cost.files_rewritten:,} file(s) ({byte_size(cost.bytes_rewritten)}) and "
            f"{cost.files_deleted:,} file(s) no snapshot reads are deleted ({byte_size(cost.bytes_deleted)}), "
            f"the rewrite in {cost.rewrite.text}"]

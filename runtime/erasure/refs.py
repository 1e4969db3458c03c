"""Snapshots that tags and branches keep, and what erasure does with them as the policy decides per ref.

A tag keeps its snapshot; a branch other than main keeps its head, and a branch under legal hold its
whole history too (a hold preserves what the branch shows at every point). Iceberg refuses to expire a
snapshot a ref points at, so each ref keeping a file with a key needs a decision in git
(``lifecycle.erasure.refs``, or ``holds``): hold keeps it, rewrite deletes the keys through it (ref_steps.py),
expire drops the ref. A ref keeping a key with no decision blocks the erasure loudly, naming the requests.
"""

from __future__ import annotations

from typing import Literal

from pyiceberg.table import Table
from pyiceberg.table.refs import SnapshotRefType

from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics, Severity
from tablepolicy.compiler.erasure.plan import RefStep, TableErasure
from tablepolicy.compiler.iceberg.names import format_name, natural_key

from .keys import KeySet
from .survey import Survey

MAIN = "main"
CHOICES = "hold (legal hold: kept, the request held for this table), rewrite (the keys deleted through it) or " \
          "expire (the ref dropped so its snapshots can be expired)"


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


def ref_kind(table: Table, name: str) -> Literal["tag", "branch"]:
    return "tag" if table.metadata.refs[name].snapshot_ref_type == SnapshotRefType.TAG else "branch"


def keeping_refs(table: Table, erasure: TableErasure, keys: KeySet, found: Survey) -> list[RefStep]:
    """Each tag or branch (main aside) whose kept snapshots read a file holding a key, or a manifest with a key as
    a bound, with the policy's rule for it (None: no decision, the ref blocks). In natural order of names."""
    steps = []
    for name, ids in sorted(kept_by_refs(table, erasure.decided("hold")).items(), key=lambda i: natural_key(i[0])):
        files = set().union(*(found.live_in(i) for i in ids))
        bounds = {f: s for i in ids for f, s in found.bounded_in(i).items()}
        if not files and not bounds:
            continue
        requests = {r for f in files for r in found.held[f].requests}
        requests |= {keys.requests[i] for subjects in bounds.values() for i in subjects}
        steps.append(RefStep(name, ref_kind(table, name), table.metadata.refs[name].snapshot_id,
                             tuple(sorted(files | bounds.keys())), tuple(sorted(requests)), erasure.rule(name)))
    return steps


def blocked_text(table: tuple[str, ...], kind: str, ref: str, snapshot_id: int, files: int,
                 requests: list[str]) -> str:
    """The error of a ref that keeps a key with no decision: which requests, which ref, the three choices."""
    return (f"{format_name(table)}: {kind} '{ref}' keeps snapshot {snapshot_id}, which reads {files} file(s) "
            f"holding a key of {', '.join(requests)}, and the policy does not say what erasure does with it: "
            f"declare lifecycle.erasure.refs: {{{ref}: hold | rewrite | expire}} ({CHOICES}) and run erase again")


def hold_findings(erasure: TableErasure, table: Table) -> Diagnostics:
    """TP443: a declared hold or ref decision that names no tag or branch of the table, or names main; TP447 (a
    warning) for an expire decision whose ref is gone (an earlier erase dropped it, or the name is wrong)."""
    found = Diagnostics()
    refs = sorted(n for n in table.metadata.refs if n != MAIN)
    for rule in erasure.rules:
        if rule.ref in refs:
            continue
        if rule.decision == "expire" and rule.ref != MAIN:  # done by an earlier run, or misspelled: said, not refused
            found.add(Diagnostic("TP447", Severity.WARNING, rule.location,
                                 f"erasure.refs expire '{rule.ref}' names no tag or branch of "
                                 f"{format_name(erasure.table)}: nothing to drop",
                                 f"its tags and branches: {', '.join(refs) or 'none'}; if an earlier erase dropped it, "
                                 "remove the entry; otherwise correct the name"))
            continue
        label = "hold" if rule.decision == "hold" else f"erasure.refs {rule.decision}"
        problem = (f"the main branch cannot be {'held' if rule.decision == 'hold' else 'decided on'}: erasure "
                   "deletes from it" if rule.ref == MAIN else
                   f"{label} '{rule.ref}' names no tag or branch of {format_name(erasure.table)}")
        found.add(Diagnostic("TP443", Severity.ERROR, rule.location, problem,
                             f"its tags and branches: {', '.join(refs) or 'none'}; create the tag "
                             "(ALTER TABLE ... CREATE TAG) or remove the entry"))
    return found

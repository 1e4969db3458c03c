"""Validation of the erasure policy's ref decisions (``lifecycle.erasure.refs`` and ``holds``): what git can say
is contradictory without the catalog. A decision naming no ref of the table is refused by ``erase`` (TP443):
refs made by hand are in the catalog only."""

from __future__ import annotations

from collections.abc import Iterator

from .. import codes
from ..diagnostics import Diagnostic, Severity
from ..erasure.plan import ref_rules
from ..policy.refs import TagRef, ref_name
from .context import TableContext


def check_erasure_refs(ctx: TableContext) -> Iterator[Diagnostic]:
    erasure = ctx.effective.lifecycle.erasure
    if erasure is None or (not erasure.refs and not erasure.holds):
        return
    origins = ctx.effective.origins
    held = set(erasure.holds or ())
    for ref, decision in (erasure.refs or {}).items():
        if ref in held and decision != "hold":
            yield Diagnostic(codes.TP445, Severity.ERROR, ctx.effective.origin(f"lifecycle.erasure.refs.{ref}")
                             or ctx.at(("lifecycle", "erasure", "refs", ref)),
                             f"'{ref}' is under legal hold (lifecycle.erasure.holds) and erasure.refs says {decision}",
                             f"decide once: remove '{ref}' from holds, or write {ref}: hold")
    declared = {ref_name(r): "tag" if isinstance(r, TagRef) else "branch" for r in ctx.table.policy.refs or ()}
    for rule in ref_rules(origins, erasure):
        if rule.decision == "expire" and rule.ref in declared:
            yield Diagnostic(codes.TP446, Severity.ERROR, rule.location,
                             f"erasure would drop {declared[rule.ref]} '{rule.ref}', which this table declares in "
                             "refs: (the next apply would create it again on the current snapshot)",
                             f"remove '{rule.ref}' from refs: to let erasure drop it, or write {rule.ref}: rewrite "
                             "(the keys deleted through it, the ref kept) or hold")

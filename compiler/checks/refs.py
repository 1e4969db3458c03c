"""Branches and tags of one table: each name declared once (TP451)."""

from __future__ import annotations

from collections.abc import Iterator

from .. import codes
from ..diagnostics import Diagnostic, Severity
from ..policy.refs import TagRef, ref_name
from .context import TableContext


def check_refs(ctx: TableContext) -> Iterator[Diagnostic]:
    first: dict[str, int] = {}
    for index, ref in enumerate(ctx.table.policy.refs):
        name, key = ref_name(ref), "tag" if isinstance(ref, TagRef) else "branch"
        if name in first:
            yield Diagnostic(codes.TP451, Severity.ERROR, ctx.at(("refs", index, key)),
                             f"ref '{name}' is declared twice", f"first declared at {ctx.at(('refs', first[name]))}; "
                             "keep one entry (a name is a branch or a tag, not both)")
        else:
            first[name] = index

"""Approvals that mean one thing: an ``allow_destructive`` entry approves one destructive change of one
field (or one retention value) as git held it when it was approved.

When apply runs an approved destructive change it records on the table, in ``tablepolicy.approvals``,
the entry qualified by what it approved: ``drop_column order_id (field id 3)``. From then on the plain
entry ``drop_column order_id`` approves only field id 3; dropping a later column re-added under the
same name needs the qualified line the plan prints. Entries that approve nothing are reported (TA101).

A dropped table keeps no record, so the record is made when a table is created: a ``drop_table`` entry
already in git then is spent on it (``BEFORE_CREATE``), and dropping the new table needs the line bound
to its UUID, ``drop_table (table uuid ...)``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from .. import jsontext
from ..diff import changes
from ..diff.changes import Change, duration_text
from ..model.properties import APPROVALS_KEY

UNUSED_APPROVAL = "TA101"
BEFORE_CREATE = "drop_table (in git before this table was created)"


def identity(change: Change) -> str | None:
    """What one approval of this change is bound to (None: the change is not recorded per field)."""
    if isinstance(change, changes.DropColumn):
        return f"field id {change.field_id}"
    if isinstance(change, changes.TightenRetention):
        return f"keep {change.new}"
    if isinstance(change, changes.DropTable) and change.uuid is not None:
        return f"table uuid {change.uuid}"
    if isinstance(change, changes.DropRef):
        return f"snapshot {change.snapshot_id}"
    if isinstance(change, changes.SetRefRetention):
        new = change.new
        values = [("max_ref_age", new.max_ref_age_ms), *(
            [("min_snapshots_to_keep", new.min_snapshots_to_keep), ("max_snapshot_age", new.max_snapshot_age_ms)]
            if change.kind == "branch" else [])]
        return ", ".join(f"{k} {'unset' if v is None else v if k == 'min_snapshots_to_keep' else duration_text(v)}"
                         for k, v in values)
    return None


def spent_at_create(allowed: list[str]) -> tuple[str, ...]:
    """What a table created now records as consumed: a drop_table entry git already holds approves nothing
    on the new table (it was written for the table before)."""
    return (BEFORE_CREATE,) if "drop_table" in allowed else ()


def qualified(change: Change) -> str | None:
    """The id-qualified entry approving exactly this change: ``drop_column order_id (field id 7)``."""
    bound = identity(change)
    return f"{change.approval} ({bound})" if change.approval is not None and bound is not None else None


def consumed_in(properties: Mapping[str, str]) -> tuple[str, ...]:
    """The qualified approvals a table records as consumed (none if unstamped or unreadable)."""
    try:
        entries = jsontext.loads(properties.get(APPROVALS_KEY, "[]"))
    except ValueError:
        return ()
    return tuple(sorted({e for e in entries if isinstance(e, str)})) if isinstance(entries, list) else ()


def consumed_stamp(consumed: tuple[str, ...], changes: list[Change]) -> str | None:
    """The APPROVALS_KEY value after applying ``changes``: earlier records plus what these consume."""
    new = {q for c in changes if (q := qualified(c)) is not None}
    if not new:
        return None
    return json.dumps(sorted({*consumed, *new}), separators=(",", ":"))


@dataclass(frozen=True)
class Verdict:
    approved: bool
    entry: str | None  # the allow_destructive entry that approves it, or the one to write
    reason: str | None = None  # why a plain entry present in git does not approve it


def judge(change: Change, allowed: list[str], consumed: tuple[str, ...]) -> Verdict:
    """Whether git approves a destructive change, given what earlier applies consumed on the table."""
    plain, exact = change.approval, qualified(change)
    if plain is None:
        return Verdict(True, None)
    if exact is not None and exact in allowed:
        return Verdict(True, exact)
    if plain not in allowed:
        return Verdict(False, plain)
    used = [c for c in consumed if c.startswith(f"{plain} (") and c != exact]
    if exact is None or not used:
        return Verdict(True, plain)
    earlier = used[0].removeprefix(f"{plain} (").removesuffix(")")
    return Verdict(False, exact, f"the entry '{plain}' in git was consumed by an earlier apply ({earlier}); "
                                 f"it does not approve this change ({identity(change)})")


def unused(allowed: list[str], changes: list[Change], consumed: tuple[str, ...]) -> list[int]:
    """Positions of ``allowed`` entries that approve none of ``changes``."""
    used = {v.entry for c in changes if (v := judge(c, allowed, consumed)).approved}
    return [i for i, entry in enumerate(allowed) if entry not in used]

"""Branches and tags: the refs git declares against those the table has.

A ref is owned when the policy declares it, or when the table's stamp says the policy declared it at the last
apply (``tablepolicy.declared-refs``), so removing it from git drops it (with approval); refs made by hand,
by erase or by apply's safety tags are never touched. ``main`` is never compared. A ref that exists is never
moved: only its retention is compared, each value as Iceberg's expiry reads it (the ref's own, else the
table's ``history.expire.*`` property, else Iceberg's default), so a change that lets any snapshot or the
ref itself expire sooner is destructive (TC603).
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import codes
from ..iceberg.names import format_name
from ..model.properties import DECLARED_REFS, declared_in
from ..model.table import RefRetention, RefState, TableHistory, TableState
from . import changes
from .changes import Change
from .refusals import Refusal

SAFETY_TAG_PREFIX = "tablepolicy-before-"  # apply's tags before a destructive step (kept 7 days, never declared)
NEVER = 2**63 - 1  # Iceberg's default max-ref-age: refs are kept forever
# Iceberg's table properties a ref's unset value falls back to, and their defaults
REF_DEFAULTS = {
    "max_ref_age_ms": ("history.expire.max-ref-age-ms", NEVER),
    "min_snapshots_to_keep": ("history.expire.min-snapshots-to-keep", 1),
    "max_snapshot_age_ms": ("history.expire.max-snapshot-age-ms", 5 * 86_400_000),
}


def effective(keep: RefRetention, kind: str, properties: Mapping[str, str]) -> dict[str, int]:
    """Each retention value as expiry reads it: the ref's own, else the table's property, else the default."""
    out = {}
    for key, (prop, default) in REF_DEFAULTS.items():
        if kind == "tag" and key != "max_ref_age_ms":
            continue
        own: int | None = getattr(keep, key)
        text = properties.get(prop, "")
        out[key] = own if own is not None else int(text) if text.isdigit() else default
    return out


def diff_refs(current: TableState | None, history: TableHistory, desired: TableState) -> tuple[
        list[Change], list[Refusal]]:
    """``current`` None: the table is created by this plan (no snapshot yet)."""
    have = {r.name: r for r in current.refs} if current is not None else {}
    props = current.properties if current is not None else {}
    want = {r.name: r for r in desired.refs}
    planned: list[Change] = []
    refusals: list[Refusal] = []
    for name in sorted(set(have) & (declared_in(props, DECLARED_REFS) - set(want))):
        ref = have[name]
        planned.append(changes.DropRef(table=desired.name, name=name, kind=ref.kind, snapshot_id=ref.snapshot_id or 0))
    for name, wanted in sorted(want.items()):
        found = have.get(name)
        if found is None:
            change, refusal = _create(desired, history, wanted)
            planned += [change] if change is not None else []
            refusals += [refusal] if refusal is not None else []
        elif found.kind != wanted.kind:
            refusals.append(Refusal(desired.name, (), codes.TR111, f"{format_name((name,))} is a {found.kind} of "
                                    f"the table, the policy declares a {wanted.kind}",
                                    f"declare it as '{found.kind}: {name}', or give the {wanted.kind} another name",
                                    ref=name))
        elif found.retention != wanted.retention:
            old = effective(found.retention, found.kind, props)
            new = effective(wanted.retention, wanted.kind, desired.properties)
            shorter = any(new[k] < old[k] for k in new)
            planned.append(changes.SetRefRetention(table=desired.name, name=name, kind=found.kind,
                                           snapshot_id=found.snapshot_id or 0, old=found.retention,
                                           new=wanted.retention, code=codes.TC603 if shorter else codes.TC602))
    return planned, refusals


def _create(desired: TableState, history: TableHistory, ref: RefState
            ) -> tuple[changes.CreateRef | None, Refusal | None]:
    name = format_name((ref.name,))
    if ref.snapshot_id is not None and ref.snapshot_id not in history.snapshot_ids:
        known = ", ".join(map(str, sorted(history.snapshot_ids)[-5:])) or "none: the table has no snapshot yet"
        return None, Refusal(desired.name, (), codes.TR112, f"{ref.kind} {name} starts at snapshot "
                             f"{ref.snapshot_id}, which the table does not have",
                             f"name a snapshot the table keeps (the latest: {known}), or remove snapshot_id to "
                             "start at the current one", ref=ref.name)
    start = ref.snapshot_id if ref.snapshot_id is not None else history.current_snapshot_id
    if start is None and ref.kind == "tag":
        return None, Refusal(desired.name, (), codes.TP452, f"tag {name} waits for the table's first snapshot: "
                             "there is nothing to tag yet", "write to the table, then plan again: that plan "
                             "creates the tag at the current snapshot", ref=ref.name, warning=True)
    return changes.CreateRef(table=desired.name, name=ref.name, kind=ref.kind, snapshot_id=start,
                     declared_start=ref.snapshot_id is not None, retention=ref.retention), None

"""Property and lifecycle differences: only keys the policy owns are compared.

A key is owned when the policy declares it, when a policy setting manages it (lifecycle, write
modes, ...), when the table's stamp says the policy declared it at the last apply (so removing it
from git unsets it), or when it is a ``tablepolicy.*`` key; anything engines or other tools set is
left alone, and ``ignore_properties`` removes keys from the comparison entirely.
"""

from __future__ import annotations

from .. import codes
from ..model import bloom
from ..model.properties import MANAGED_PROPERTIES, SERVER_PROPERTIES, STAMP_KEYS, declared_in
from ..model.table import TableState
from ..policy.units import Duration
from . import changes
from .changes import Change, PropertyChange

RETENTION_KEYS = ("tablepolicy.retention.column", "tablepolicy.retention.keep")
SNAPSHOT_AGE = "history.expire.max-snapshot-age-ms"


def owned_keys(current: TableState, desired: TableState) -> set[str]:
    keys = set(desired.properties) | set(MANAGED_PROPERTIES) | declared_in(current.properties)
    keys |= bloom.owned_keys(current.properties) | bloom.owned_keys(desired.properties)
    keys |= {k for k in current.properties if k.startswith("tablepolicy.")}
    keys.discard("format-version")
    if "write.distribution-mode" not in desired.properties:
        keys.discard("write.distribution-mode")  # WRITE ORDERED BY sets it as a side effect
    return keys - desired.ignore_properties - STAMP_KEYS - set(SERVER_PROPERTIES)


def diff_properties(current: TableState, desired: TableState) -> list[Change]:
    safe: list[PropertyChange] = []
    shorter_history: list[PropertyChange] = []
    unset: list[PropertyChange] = []
    filters = bloom.owned_keys(current.properties) | bloom.owned_keys(desired.properties)
    filters -= desired.declared_properties  # a filter on a former key column, now written by hand
    for key in sorted(owned_keys(current, desired) - set(RETENTION_KEYS)):
        old, new = current.properties.get(key), desired.properties.get(key)
        if old == new or (key in filters and bloom.same_filter(key, old, new)):
            continue
        setting = bloom.SETTING if key in filters else MANAGED_PROPERTIES.get(key)
        change = PropertyChange(key=key, old=old, new=new, setting=setting)
        if new is None:
            unset.append(change)
        elif key == SNAPSHOT_AGE and old is not None and old.isdigit() and int(new) < int(old):
            shorter_history.append(change)
        else:
            safe.append(change)
    found: list[Change] = []
    if desired.comment is not None and desired.comment != current.comment:
        found.append(changes.SetComment(table=desired.name, comment=desired.comment))
    if safe:
        found.append(changes.SetProperties(table=desired.name, changes=tuple(safe)))
    if shorter_history:
        found.append(changes.SetProperties(table=desired.name, changes=tuple(shorter_history), code=codes.TC505))
    if unset:
        found.append(changes.UnsetProperties(table=desired.name, changes=tuple(unset)))
    found += _retention(current, desired)
    return found


def _retention(current: TableState, desired: TableState) -> list[Change]:
    old_column, old_keep = (current.properties.get(k) for k in RETENTION_KEYS)
    new_column, new_keep = (desired.properties.get(k) for k in RETENTION_KEYS)
    if (old_column, old_keep) == (new_column, new_keep):
        return []
    marks = tuple(
        PropertyChange(key=k, old=o, new=n, setting=MANAGED_PROPERTIES[k])
        for k, o, n in zip(RETENTION_KEYS, (old_column, old_keep), (new_column, new_keep), strict=True)
        if o != n
    )
    if new_column is None or new_keep is None:  # retention removed: rows are kept from now on
        return [changes.UnsetProperties(table=desired.name, changes=marks)]
    tighter = old_keep is None or old_column != new_column or Duration.parse(new_keep) < Duration.parse(old_keep)
    if tighter:
        return [changes.TightenRetention(table=desired.name, column=new_column, old=old_keep, new=new_keep,
                                         properties=marks)]
    return [changes.SetProperties(table=desired.name, changes=marks)]

"""Branches and tags a table policy declares (``refs:``), with Iceberg's retention settings.

    refs:
      - tag: month_end_2026_10        # pins a snapshot, e.g. for an audit
        max_ref_age: 400d            # the tag itself is dropped by expiry after this long
      - branch: audit                 # a write-audit-publish branch
        min_snapshots_to_keep: 2
        max_snapshot_age: 2d
        max_ref_age: 30d

``main`` stays implicit (declaring it is TP450). A retention value left unset is unset on the ref, and
Iceberg's expiry then uses the table's own setting, ``lifecycle.snapshots.max_ref_age`` / ``min_keep`` /
``max_age`` (table file over namespace defaults and environment overlays, as every lifecycle value): the
plan compares values as expiry reads them (compiler/diff/refs.py), and the ``ref_max_age`` rule bounds them.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Discriminator, Field, Tag
from pydantic_core import PydanticCustomError

from .. import codes
from ..iceberg.names import _UNSAFE, UNSAFE_HINT, unsafe_character
from ..iceberg.types import LONG_MAX
from .base import Count, Spec
from .units import PositiveDuration

MAIN = "main"


def _check_ref_name(text: str) -> str:
    bad = unsafe_character(text)
    if bad:
        raise PydanticCustomError(codes.TP101, "name {name} holds {bad}", {"name": repr(text), "bad": bad,
                                                                         "hint": UNSAFE_HINT})
    if text == MAIN:
        raise PydanticCustomError(codes.TP450, "'main' is the table's own branch and is never declared",
                                  {"hint": "remove this entry: main's retention is lifecycle.snapshots"})
    return text


class RefDuration(PositiveDuration):
    """A ref's retention: Spark's RETAIN and WITH SNAPSHOT RETENTION count minutes, hours or days."""

    UNITS: ClassVar[dict[str, int]] = {"m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
    HINT: ClassVar[str] = "Spark's RETAIN counts minutes, hours or days: the units are m, h, d and w"
    EXAMPLES: ClassVar[str] = "30m, 6h, 30d, 2w"


RefName = Annotated[str, AfterValidator(_check_ref_name),
                    Field(min_length=1, json_schema_extra={"pattern": "^[^" + _UNSAFE.pattern[1:-1] + "]*$"})]
SnapshotId = Annotated[int, Field(ge=1, le=LONG_MAX)]

_MAX_REF_AGE = "How long the ref itself is kept: expiry drops it once its snapshot is older (default: the " \
               "table's lifecycle.snapshots.max_ref_age, else forever)."
_SNAPSHOT_ID = "Where a new ref starts: a snapshot id of the table (default: its current snapshot when planned). " \
               "An existing ref is never moved."


class TagRef(Spec):
    """A tag: one snapshot kept, e.g. a month-end state for an audit."""

    tag: RefName = Field(description="The tag's name.")
    max_ref_age: RefDuration | None = Field(None, description=_MAX_REF_AGE)
    snapshot_id: SnapshotId | None = Field(None, description=_SNAPSHOT_ID)


class BranchRef(Spec):
    """A branch other than main: its head and its history along the retention declared here."""

    branch: RefName = Field(description="The branch's name.")
    max_ref_age: RefDuration | None = Field(None, description=_MAX_REF_AGE)
    min_snapshots_to_keep: Count | None = Field(
        None, description="Snapshots of the branch's history always kept (default: the table's "
                          "lifecycle.snapshots.min_keep, else 1).")
    max_snapshot_age: RefDuration | None = Field(
        None, description="Older snapshots of the branch's history may expire (default: the table's "
                          "lifecycle.snapshots.max_age, else Iceberg's 5d).")
    snapshot_id: SnapshotId | None = Field(None, description=_SNAPSHOT_ID)


def _kind(value: Any) -> str | None:
    if isinstance(value, TagRef | BranchRef):
        return "tag" if isinstance(value, TagRef) else "branch"
    if isinstance(value, dict):
        return "tag" if "tag" in value else "branch" if "branch" in value else None
    return None


Ref = Annotated[
    Annotated[TagRef, Tag("tag")] | Annotated[BranchRef, Tag("branch")],
    Discriminator(_kind, custom_error_type=codes.TP104,
                  custom_error_message="expected a mapping with 'tag: NAME' or 'branch: NAME'",
                  custom_error_context={"hint": "e.g. {tag: month_end, max_ref_age: 400d} or {branch: audit}"}),
]


def ref_name(ref: TagRef | BranchRef) -> str:
    return ref.tag if isinstance(ref, TagRef) else ref.branch

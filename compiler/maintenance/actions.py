"""The closed set of maintenance actions: small frozen models joined in one union on ``action``.

Each knows a stable code (TM1xx deletes rows, TM2xx rewrites files, TM3xx removes history or files) whose
registered safety (compiler/codes.py) is its safety class, a one-line summary, and the reason read from the
table's health that made it due.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..codes import registered_safety
from ..iceberg.names import format_name
from ..safety import Safety

ColumnKind = Literal["date", "timestamp", "timestamptz"]


class ActionBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    table: tuple[str, ...] = Field(description="The table the action maintains.")
    reason: str = Field(description="What the table's health showed that made the action due.")
    safety: Safety = Field(Safety.SAFE, description="The code's registered safety (compiler/codes.py), set from it.")
    code: str  # registered in compiler/codes.py with its safety

    @model_validator(mode="before")
    @classmethod
    def _registered_safety(cls, data: Any) -> Any:
        return registered_safety(data, cls.model_fields["code"].default)

    @property
    def summary(self) -> str:
        raise NotImplementedError


class TimeCutoff(BaseModel):
    """Rows (or partitions) whose ``column`` is before ``before`` are meant."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    column: tuple[str, ...]
    kind: ColumnKind
    before: datetime


class DeleteExpiredRows(ActionBase):
    action: Literal["delete_expired_rows"] = "delete_expired_rows"
    code: Literal["TM101"] = "TM101"
    cutoff: TimeCutoff
    keep: str

    @property
    def summary(self) -> str:
        return f"delete rows with {format_name(self.cutoff.column)} before {_when(self.cutoff)} (retention {self.keep})"


class RewriteDataFiles(ActionBase):
    action: Literal["rewrite_data_files"] = "rewrite_data_files"
    code: Literal["TM201"] = "TM201"
    strategy: Literal["binpack", "sort", "zorder"]
    zorder_by: tuple[tuple[str, ...], ...] = ()
    target_file_size: int
    min_input_files: int
    only_before: TimeCutoff | None = Field(None, description="Leave partitions at or after this alone.")

    @property
    def summary(self) -> str:
        window = f", only {format_name(self.only_before.column)} before {_when(self.only_before)}" \
            if self.only_before else ""
        return f"compact small data files ({self.strategy}, target {self.target_file_size:,} bytes{window})"


class RewritePositionDeletes(ActionBase):
    action: Literal["rewrite_position_delete_files"] = "rewrite_position_delete_files"
    code: Literal["TM202"] = "TM202"
    min_input_files: int

    @property
    def summary(self) -> str:
        return "rewrite position delete files"


class RewriteManifests(ActionBase):
    action: Literal["rewrite_manifests"] = "rewrite_manifests"
    code: Literal["TM203"] = "TM203"

    @property
    def summary(self) -> str:
        return "rewrite manifests"


class ExpireSnapshots(ActionBase):
    action: Literal["expire_snapshots"] = "expire_snapshots"
    code: Literal["TM301"] = "TM301"
    older_than: datetime
    retain_last: int

    @property
    def summary(self) -> str:
        return (f"expire snapshots older than {self.older_than.isoformat(' ', 'seconds')}, "
                f"keeping the last {self.retain_last}")


class RemoveOrphanFiles(ActionBase):
    action: Literal["remove_orphan_files"] = "remove_orphan_files"
    code: Literal["TM302"] = "TM302"
    older_than: datetime

    @property
    def summary(self) -> str:
        return f"remove files no snapshot references, written before {self.older_than.isoformat(' ', 'seconds')}"


def _when(cutoff: TimeCutoff) -> str:
    return cutoff.before.date().isoformat() if cutoff.kind == "date" else cutoff.before.isoformat(" ", "seconds")


Action = Annotated[
    DeleteExpiredRows | RewriteDataFiles | RewritePositionDeletes | RewriteManifests | ExpireSnapshots
    | RemoveOrphanFiles,
    Field(discriminator="action"),
]


# Each action by the lifecycle section users write to declare it (and select it with ``maintain --only``), in
# the order actions run.
SECTIONS: dict[str, str] = {
    "delete_expired_rows": "retention",
    "rewrite_data_files": "compaction",
    "rewrite_position_delete_files": "delete_files",
    "rewrite_manifests": "manifests",
    "expire_snapshots": "snapshots",
    "remove_orphan_files": "orphan_files",
}
RANK: dict[str, int] = {action: i for i, action in enumerate(SECTIONS)}

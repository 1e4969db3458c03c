"""What one table's erasure did and what storage shows afterwards. Names requests, files and snapshots,
never a key value."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from tablepolicy.compiler.erasure.cost import Placement
from tablepolicy.compiler.erasure.plan import ExpiredSnapshot
from tablepolicy.compiler.iceberg.names import format_name

from .pruning import Pruning


@dataclass(frozen=True)
class PendingDebris:
    """An unreadable file no snapshot reaches, kept because it is younger than the guard: another writer (a
    user's Spark job) may still be writing it and commit it later."""

    path: str
    mtime: datetime  # UTC
    retry_after: datetime  # mtime + the guard: from then on erase deletes it

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "mtime": _utc(self.mtime), "retry_after": _utc(self.retry_after)}


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class ProofStep:
    """One step of a table's erasure as it ran: its time (with the survey that checked it), the files it replaced
    or deleted and their bytes as listed before it (None when a file was not under a listed location)."""

    action: str  # delete_rows, rewrite_masked, rewrite_manifests, expire_snapshots, delete_orphans, ...
    seconds: float
    files: int
    bytes: int | None

    def as_json(self) -> dict[str, Any]:
        return {"action": self.action, "seconds": round(self.seconds, 3), "files": self.files, "bytes": self.bytes}


@dataclass
class RefOutcome:
    """A tag or branch that kept a file holding a key when the run began, and what erasure did with it as the
    policy decides (``decision`` None: the policy decides nothing and the ref blocks the erasure)."""

    ref: str
    kind: str  # tag or branch
    decision: str | None  # hold, rewrite, expire
    reason: str  # where the policy says so, or that it does not
    snapshot_before: int
    files: list[str]  # files holding a key that the ref kept
    requests: list[str]  # whose keys they held
    snapshot_after: int | None = None  # rewrite: the ref's new snapshot; expire: None (the ref is dropped)

    @property
    def outcome(self) -> str:
        """What the certificate says happened to the ref."""
        if self.decision is None:
            return "blocked the erasure"
        if self.decision == "hold":
            return "kept"
        if self.decision == "expire":
            return "dropped, its snapshots expirable"
        return (f"rewritten without the keys (now snapshot {self.snapshot_after}"
                + (", retention kept)" if self.kind == "tag" else ")"))

    def as_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "kind": self.kind, "decision": self.decision, "reason": self.reason,
                "outcome": self.outcome, "snapshot_before": self.snapshot_before,
                "snapshot_after": self.snapshot_after, "files": self.files, "requests": self.requests}


# complete: no file under the location or referenced by a kept snapshot holds a key (as a row, or as a
# manifest's column bound);
# held: the only files left are kept by declared legal holds; incomplete: something else still holds a
# key (an undeclared tag or branch, an unreadable file); failed: a step failed, the run says which
class ProofState(StrEnum):
    """What the proof of one table shows (``held``: erased but for what a declared legal hold keeps)."""

    COMPLETE = "complete"
    HELD = "held"
    INCOMPLETE = "incomplete"
    FAILED = "failed"


@dataclass
class TableProof:
    table: tuple[str, ...]
    requests: list[str]
    files_with_keys: list[str] = field(default_factory=list)  # every file holding a key when the run began
    rows_before: int = 0  # rows with a key in the files the current snapshot read when the run began
    statements: list[str] = field(default_factory=list)  # what ran in Spark (keys came from a view)
    files_rewritten: list[str] = field(default_factory=list)  # current files the DELETE (and rewrite) replaced
    snapshots_expired: list[ExpiredSnapshot] = field(default_factory=list)
    orphans_deleted: list[str] = field(default_factory=list)  # held a key, referenced by no snapshot
    manifests_deleted: list[str] = field(default_factory=list)  # read by no snapshot, a bound revealed a key
    debris_deleted: list[str] = field(default_factory=list)  # unreadable (torn by a killed writer), read by no
    # snapshot: it might have held a key
    debris_pending: list[PendingDebris] = field(default_factory=list)  # such files younger than the age guard:
    # maybe a write in flight, kept; the proof is incomplete until a later run deletes them
    # the check, from a fresh listing and read of storage after the run
    snapshots_checked: list[int] = field(default_factory=list)
    files_scanned: int = 0
    bytes_scanned: int = 0
    rows_after: int = 0
    files_still_referenced: list[str] = field(default_factory=list)
    files_still_stored: list[str] = field(default_factory=list)
    pruning: Pruning = field(default_factory=lambda: Pruning(enabled=False))  # how the proof's survey decided each
    # file: excluded by manifest bounds, row-group statistics or bloom filters, or its key columns read
    manifests_scanned: int = 0  # every manifest in storage, referenced or not (runtime/erasure/manifests.py)
    manifests_with_keys: list[str] = field(default_factory=list)  # a bound still reveals a key
    held_by: dict[str, list[str]] = field(default_factory=dict)  # declared hold -> the files it keeps
    blocking_refs: list[str] = field(default_factory=list)  # undeclared refs keeping a file with a key
    refs: list[RefOutcome] = field(default_factory=list)  # each ref that kept a key, and what erasure did with it
    unreadable: list[str] = field(default_factory=list)
    steps: list[ProofStep] = field(default_factory=list)  # what ran, in order, each with its seconds and bytes
    seconds: float = 0.0
    survey_ran: Placement | None = None  # where the first survey read the files, and why (None: it did not run)
    proof_ran: Placement | None = None  # the proof's
    error: str | None = None  # a step failed: this table is not done, the others still run

    @property
    def state(self) -> ProofState:
        if self.error:
            return ProofState.FAILED
        kept = set().union(*map(set, self.held_by.values()))
        left = set(self.files_still_referenced) | set(self.files_still_stored) | set(self.manifests_with_keys)
        if self.blocking_refs or self.unreadable or self.debris_pending or left - kept:
            return ProofState.INCOMPLETE
        return ProofState.HELD if left else ProofState.COMPLETE

    @property
    def complete(self) -> bool:
        return self.state is ProofState.COMPLETE

    def as_json(self) -> dict[str, Any]:
        return {"table": format_name(self.table), "requests": self.requests, "state": self.state,
                "complete": self.complete, "rows_before": self.rows_before, "rows_after": self.rows_after,
                "files_with_keys_before": self.files_with_keys, "statements": self.statements,
                "files_rewritten": self.files_rewritten,
                "snapshots_expired": [s.as_json() for s in self.snapshots_expired],
                "orphans_deleted": self.orphans_deleted, "manifests_deleted": self.manifests_deleted,
                "debris_deleted": self.debris_deleted,
                "debris_pending": [d.as_json() for d in self.debris_pending],
                "snapshots_checked": self.snapshots_checked,
                "files_scanned": self.files_scanned, "bytes_scanned": self.bytes_scanned,
                "pruning": self.pruning.as_json(),
                "files_still_referenced": self.files_still_referenced,
                "files_still_stored": self.files_still_stored, "manifests_scanned": self.manifests_scanned,
                "manifests_with_keys": self.manifests_with_keys, "held_by": self.held_by,
                "blocking_refs": self.blocking_refs, "unreadable": self.unreadable,
                "steps": [s.as_json() for s in self.steps],
                "reads": {"survey": self.survey_ran and self.survey_ran.as_json(),
                          "proof": self.proof_ran and self.proof_ran.as_json()},
                "error": self.error, "seconds": round(self.seconds, 3),
                **({"refs": [r.as_json() for r in self.refs]} if self.refs else {})}

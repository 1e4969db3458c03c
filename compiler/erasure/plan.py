"""Requests x policies -> per table, the subjects whose rows must go and what erasure does with each tag or
branch the policy decides on (hold, rewrite through it, or drop it and expire).

A request reaches every table whose ``lifecycle.erasure.key`` names exactly the request's key columns
(tables without an erasure section are never touched). Values are checked against the column types
before anything runs, and each subject's deadline is its received date plus the table's ``within``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Literal

from pyiceberg.types import IntegerType, LongType, StringType

from ..diagnostics import Diagnostic, Diagnostics, Location, Severity
from ..effective import effective_settings
from ..iceberg.names import format_name, natural_key, parse_name
from ..loader import Project
from ..model.table import ColumnPath, TableState
from ..policy.lifecycle import Erasure, RefDecision
from ..yamlsource import Path as YamlPath
from ..yamlsource import SourceMap
from .cost import ErasureCost

if TYPE_CHECKING:  # the requests' models load with erase: validating a policy checks its ref decisions only
    from .requests import KeyValue, LoadedRequests

    ColumnValue = Callable[..., KeyValue | None]  # requests.column_value, handed down once per plan

KeyKind = Literal["string", "integer"]
KEY_KINDS: dict[type, KeyKind] = {StringType: "string", IntegerType: "integer", LongType: "integer"}  # TP442


@dataclass(frozen=True)
class Subject:
    request: str
    values: tuple[KeyValue, ...]  # in the order of the table's key columns
    deadline: date


@dataclass(frozen=True)
class RefRule:
    """What the policy says erasure does with a tag or branch (``lifecycle.erasure.refs``, or ``holds`` for
    hold), and where it says so."""

    ref: str
    decision: RefDecision
    location: Location

    @property
    def reason(self) -> str:
        """Why the certificate says what happened to the ref."""
        what = "legal hold" if self.decision == "hold" else self.decision
        return f"{what} declared at {self.location.file}:{self.location.line}"



@dataclass(frozen=True)
class TableErasure:
    table: tuple[str, ...]
    columns: tuple[ColumnPath, ...]
    subjects: tuple[Subject, ...]
    rules: tuple[RefRule, ...] = ()  # by ref name
    margin: timedelta | None = None  # lifecycle.erasure.batch_margin: requests held until deadline - margin
    cluster_above: int | None = None  # lifecycle.erasure.cluster_above, in bytes

    def requests(self) -> list[str]:
        return sorted({s.request for s in self.subjects})

    @property
    def holds(self) -> tuple[RefRule, ...]:
        return tuple(r for r in self.rules if r.decision == "hold")

    def decided(self, decision: RefDecision) -> set[str]:
        """The refs the policy gives ``decision``."""
        return {r.ref for r in self.rules if r.decision == decision}

    def rule(self, ref: str) -> RefRule | None:
        return next((r for r in self.rules if r.ref == ref), None)

    @property
    def summary(self) -> str:
        return (f"erase {len(self.subjects)} subject(s) from {format_name(self.table)} by "
                f"{', '.join(format_name(c) for c in self.columns)}")


@dataclass(frozen=True)
class ExpiredSnapshot:
    """A snapshot erasure expires, and why: the files it reads that held a key, and whose."""

    snapshot_id: int
    files: tuple[str, ...]
    requests: tuple[str, ...]

    @property
    def reason(self) -> str:
        more = f" (and {len(self.files) - 1} more file(s))" if len(self.files) > 1 else ""
        return f"referenced data file {self.files[0]} which held a key of {', '.join(self.requests)}{more}"

    def as_json(self) -> dict[str, object]:
        return {"snapshot_id": self.snapshot_id, "reason": self.reason, "files": list(self.files),
                "requests": list(self.requests)}


@dataclass(frozen=True)
class RefStep:
    """A tag or branch keeping a file with a key (or a manifest with a key as a bound), and the policy's rule
    for it (None: the policy decides nothing, and the ref blocks the erasure)."""

    ref: str
    kind: Literal["tag", "branch"]
    snapshot_id: int  # the snapshot the ref points at before erasure
    files: tuple[str, ...]  # files holding a key that the ref keeps
    requests: tuple[str, ...]  # whose keys they hold
    rule: RefRule | None = None

    @property
    def summary(self) -> str:
        ref = f"{self.kind} '{self.ref}'"
        kept = (f"snapshot {self.snapshot_id} reads {len(self.files)} file(s) holding a key of "
                f"{', '.join(self.requests)}")
        if self.rule is None:
            return f"blocked by {ref}: {kept}; lifecycle.erasure.refs decides nothing for it"
        what = {"hold": f"{ref} is kept (legal hold)",
                "rewrite": f"{ref}: the keys are deleted through it"
                           + (" (a new snapshot on the tag's, the tag re-pointed, its retention kept)"
                              if self.kind == "tag" else " (a commit on the branch)"),
                "expire": f"{ref} is dropped so its snapshots can be expired"}
        return f"{what[self.rule.decision]}: {kept} ({self.rule.reason})"


@dataclass(frozen=True)
class ErasurePreview:
    """What an erasure of one table would do, read from metadata and storage before anything runs."""

    table: tuple[str, ...]
    files: tuple[str, ...]  # every file holding a key, referenced or not
    rows: int
    files_current: tuple[str, ...]  # those the current snapshot reads: the DELETE rewrites them
    rows_current: int
    expire: tuple[ExpiredSnapshot, ...]  # the current snapshot included: after the DELETE it is history
    orphans: tuple[str, ...]  # files holding a key that no snapshot references: deleted
    held: dict[str, tuple[str, ...]]  # declared hold -> the files it keeps
    blocking_refs: tuple[str, ...]  # undeclared tags or branches that keep a file holding a key
    unreadable: tuple[str, ...]
    statements: tuple[str, ...]
    through_refs: tuple[RefStep, ...] = ()  # each ref keeping a key that the policy decides on
    cost: ErasureCost | None = None  # what the run will read and rewrite, and where

    def as_json(self) -> dict[str, object]:
        """The dry run of one table for machines (erase --dry-run --format json): no key value in it."""
        return {"table": format_name(self.table), "files_with_keys": list(self.files), "rows": self.rows,
                "files_current": list(self.files_current), "rows_current": self.rows_current,
                "expire": [s.as_json() for s in self.expire], "orphans": list(self.orphans),
                "held": {ref: list(files) for ref, files in self.held.items()},
                "blocking_refs": list(self.blocking_refs), "unreadable": list(self.unreadable),
                "refs": [step.summary for step in self.through_refs], "statements": list(self.statements),
                "cost": self.cost.as_json() if self.cost is not None else None}


def erasure_plan(
    project: Project, requests: LoadedRequests, states: dict[tuple[str, ...], TableState]
) -> tuple[list[TableErasure], Diagnostics]:
    """``states``: the tables as the catalog holds them (column types decide how values are quoted)."""
    from .requests import column_value  # once: the helpers below run per request

    diagnostics, plans, reached = Diagnostics(), [], set()
    for loaded in sorted((t for t in project.tables if t.state == "present"), key=lambda t: natural_key(t.name)):
        effective = effective_settings(project, loaded)
        erasure = effective.lifecycle.erasure
        state = states.get(loaded.name)
        if erasure is None or not erasure.key or erasure.within is None or state is None:
            continue
        columns = tuple(parse_name(c) for c in erasure.key)
        kinds = _key_kinds(state, columns)
        subjects = []
        for index, request in enumerate(requests.model.requests):
            if set(request.keys) != set(erasure.key):
                continue
            reached.add(request.id)
            values = tuple(_typed(request.keys[c], kind, column_value)
                           for c, kind in zip(erasure.key, kinds, strict=True))
            diagnostics.extend(_misfits(requests, index, loaded.name, erasure.key, kinds, column_value))
            deadline = request.received + timedelta(milliseconds=erasure.within.millis)
            if request.deadline is not None:  # the request's own deadline, when earlier than the policy's SLA
                deadline = min(deadline, request.deadline)
            subjects.append(Subject(request.id, values, deadline))
        if subjects:
            margin = None if erasure.batch_margin is None else timedelta(milliseconds=erasure.batch_margin.millis)
            plans.append(TableErasure(loaded.name, columns, tuple(subjects), ref_rules(effective.origins, erasure),
                                      margin, erasure.cluster_above.bytes if erasure.cluster_above else None))
    for index, request in enumerate(requests.model.requests):
        if request.id not in reached:
            diagnostics.add(Diagnostic(
                "TP602", Severity.ERROR, requests.at(index, "keys"),
                f"request '{request.id}': no table declares erasure keyed on {', '.join(sorted(request.keys))}",
                "use the key columns of a table's lifecycle.erasure.key"))
    return plans, diagnostics


def _misfits(
    requests: LoadedRequests, index: int, table: tuple[str, ...], columns: list[str], kinds: list[KeyKind | None],
    column_value: ColumnValue,
) -> Iterator[Diagnostic]:
    """Values that do not fit their key column: strings for string columns, integers for integer ones."""
    request = requests.model.requests[index]
    for column, kind in zip(columns, kinds, strict=True):
        value = request.keys[column]
        if kind is not None and column_value(value, integer=kind == "integer") is not None:
            continue
        problem = (f"{column} of {format_name(table)} is not a string or integer column" if kind is None
                   else f"{column} = {value!r} does not fit the {kind} key column of {format_name(table)}")
        yield Diagnostic("TP603", Severity.ERROR, requests.at(index, "keys", column),
                         f"request '{request.id}': {problem}",
                         "erasure keys are string or integer columns; quote strings, write integers bare")


def _typed(value: KeyValue, kind: KeyKind | None, column_value: ColumnValue) -> KeyValue:
    """The value as its column holds it (a CSV cell ``42`` of a long column is 42); a misfit stays as it is,
    refused by _misfits."""
    typed = column_value(value, integer=kind == "integer") if kind is not None else None
    return value if typed is None else typed


def ref_rules(origins: dict[str, tuple[SourceMap, YamlPath]], erasure: Erasure) -> tuple[RefRule, ...]:
    """Each ref decision with the position of its own entry (table file, namespace defaults or overlay), in natural
    order of names: the ``holds`` shorthand first, then ``refs``."""
    rules: dict[str, RefRule] = {}
    if erasure.holds:
        source, path = origins["lifecycle.erasure.holds"]
        for i, ref in enumerate(erasure.holds):
            rules.setdefault(ref, RefRule(ref, "hold", source.value((*path, i))))
    for ref, decision in (erasure.refs or {}).items():
        source, path = origins[f"lifecycle.erasure.refs.{ref}"]
        if ref not in rules:  # under holds too: the hold stands (another decision is TP445 at validate)
            rules[ref] = RefRule(ref, decision, source.key(path))  # the ref's name: what TP443 and TP446 are about
    return tuple(rules[ref] for ref in sorted(rules, key=natural_key))


def _key_kinds(state: TableState, columns: tuple[ColumnPath, ...]) -> list[KeyKind | None]:
    fields = [state.field_at(column) for column in columns]
    return [KEY_KINDS.get(type(f.field_type)) if f is not None else None for f in fields]

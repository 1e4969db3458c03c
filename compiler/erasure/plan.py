"""Requests x policies -> per table, the subjects whose rows must go and the predicate that finds them.

A request reaches every table whose ``lifecycle.erasure.key`` names exactly the request's key columns
(tables without an erasure section are never touched). Values are checked against the column types
before anything runs, and each subject's deadline is its received date plus the table's ``within``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal

from pyiceberg.expressions import And, BooleanExpression, EqualTo, Or
from pyiceberg.types import IntegerType, LongType, StringType

from compiler.diagnostics import Diagnostic, Diagnostics, Severity
from compiler.effective import effective_settings
from compiler.erasure.requests import KeyValue, LoadedRequests, column_value
from compiler.loader import Project
from compiler.model.names import format_name, parse_name
from compiler.model.table import ColumnPath, TableState
from compiler.render.filters import literal, qualified

KeyKind = Literal["string", "integer"]
KEY_KINDS: dict[type, KeyKind] = {StringType: "string", IntegerType: "integer", LongType: "integer"}  # TP442


@dataclass(frozen=True)
class Subject:
    request: str
    values: tuple[KeyValue, ...]  # in the order of the table's key columns
    deadline: date


@dataclass(frozen=True)
class TableErasure:
    table: tuple[str, ...]
    columns: tuple[ColumnPath, ...]
    subjects: tuple[Subject, ...]

    def sql_predicate(self) -> str:
        """``(k1 = v1 AND k2 = v2) OR ...``: every value quoted for its column type."""
        return " OR ".join(
            "(" + " AND ".join(f"{qualified(c)} = {_sql_value(v)}" for c, v in zip(self.columns, s.values,
                                                                                    strict=True)) + ")"
            for s in self.subjects
        )

    def row_filter(self) -> BooleanExpression:
        """The same predicate for pyiceberg scans (the proof)."""
        terms = [_all(_equal(c, v) for c, v in zip(self.columns, s.values, strict=True)) for s in self.subjects]
        result = terms[0]
        for term in terms[1:]:
            result = Or(result, term)
        return result

    @property
    def summary(self) -> str:
        return (f"erase {len(self.subjects)} subject(s) from {format_name(self.table)} by "
                f"{', '.join(format_name(c) for c in self.columns)}")


def _equal(column: ColumnPath, value: KeyValue) -> BooleanExpression:
    # keyword form: the pydantic mypy plugin reads EqualTo's fields, not its __init__(term, literal)
    arguments: dict[str, Any] = {"term": ".".join(column), "literal": value}
    return EqualTo(**arguments)


def _all(terms: Any) -> BooleanExpression:
    terms = list(terms)
    result: BooleanExpression = terms[0]
    for term in terms[1:]:
        result = And(result, term)
    return result


def _sql_value(value: KeyValue) -> str:
    return str(value) if isinstance(value, int) else literal(value)


def erasure_plan(
    project: Project, requests: LoadedRequests, states: dict[tuple[str, ...], TableState]
) -> tuple[list[TableErasure], Diagnostics]:
    """``states``: the tables as the catalog holds them (column types decide how values are quoted)."""
    diagnostics, plans, reached = Diagnostics(), [], set()
    for loaded in sorted((t for t in project.tables if t.state == "present"), key=lambda t: t.name):
        erasure = effective_settings(project, loaded).lifecycle.erasure
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
            values = tuple(_typed(request.keys[c], kind) for c, kind in zip(erasure.key, kinds, strict=True))
            diagnostics.extend(_misfits(requests, index, loaded.name, erasure.key, kinds))
            deadline = request.received + timedelta(milliseconds=erasure.within.millis)
            subjects.append(Subject(request.id, values, deadline))
        if subjects:
            plans.append(TableErasure(loaded.name, columns, tuple(subjects)))
    for index, request in enumerate(requests.model.requests):
        if request.id not in reached:
            diagnostics.add(Diagnostic(
                "TP602", Severity.ERROR, requests.at(index, "keys"),
                f"request '{request.id}': no table declares erasure keyed on {', '.join(sorted(request.keys))}",
                "use the key columns of a table's lifecycle.erasure.key"))
    return plans, diagnostics


def _misfits(
    requests: LoadedRequests, index: int, table: tuple[str, ...], columns: list[str], kinds: list[KeyKind | None]
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


def _typed(value: KeyValue, kind: KeyKind | None) -> KeyValue:
    """The value as its column holds it (a CSV cell ``42`` of a long column is 42); a misfit stays as it is,
    refused by _misfits."""
    typed = column_value(value, integer=kind == "integer") if kind is not None else None
    return value if typed is None else typed


def _key_kinds(state: TableState, columns: tuple[ColumnPath, ...]) -> list[KeyKind | None]:
    fields = [state.field_at(column) for column in columns]
    return [KEY_KINDS.get(type(f.field_type)) if f is not None else None for f in fields]

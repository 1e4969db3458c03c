"""Whole documents generated from the JSON Schemas (tests/schema_strategy.py), in the schema and near it (one
value in WILD any JSON value): table policies and namespace defaults, org rules, environment overlays, erasure
requests in YAML, JSON lines and CSV. Each goes through the reader the tool uses (tests/document_readers.py):
it never raises; every finding has a registered code, a file:line:col in a file read and a hint; a document with
no error loads. And the schema and the validator agree: what the schema refuses the validator refuses, and what
the schema accepts draws no finding about shape (SHAPE) -- only about meaning the schema cannot say (a column
that does not exist, a name that does not parse) -- but for the cases in EXPLAINED. Disagreements the fuzz found
are kept in FOUND as @examples. Deterministic (derandomize) and bounded in examples, not in time."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings

from tests.document_readers import KINDS, assert_well_formed
from tests.schema_strategy import from_schema, schema_validator

# Findings about shape, which a JSON Schema says as well: the schema must refuse what the validator refuses so.
SHAPE = {"TP001", "TP002", "TP003", "TP101", "TP102", "TP103", "TP104", "TP105", "TP106", "TP110", "TP111", "TP112",
         "TP203", "TP605", "TP610", "TP611", "TP612"}
VALIDATORS = {name: schema_validator(kind.schema) for name, kind in KINDS.items()}


# What a JSON Schema cannot say, so the two may disagree: (kind or None for any, the schema's verdict, a test on
# the document and the validator's error codes, why).
EXPLAINED: list[tuple[str | None, bool, Callable[[Any, set[str]], bool], str]] = [
    ("environment", False, lambda doc, errors: doc is None and not errors,
     "an empty overlay file (null) is an overlay with no values; the schema describes a written one"),
    (None, True, lambda doc, errors: "TP104" in errors and bool(_INTEGRAL_FLOAT.search(json.dumps(doc))),
     "2.0 is an integer to JSON Schema (and in its enums) and a float to the validator, which refuses it"),
]
_INTEGRAL_FLOAT = re.compile(r"(?<![\w.\"])-?[0-9]+\.0(?![0-9])")


def explained(kind: str, doc: Any, schema_ok: bool, errors: set[str]) -> str | None:
    """Why the schema and the validator may disagree on ``doc``, or None when they must not."""
    for only, verdict, holds, why in EXPLAINED:
        if only in (None, kind) and verdict == schema_ok and holds(doc, errors):
            return why
    return None


COUNTS: Counter[str] = Counter()


def check(kind_name: str, doc: Any) -> None:
    kind = KINDS[kind_name]
    text = kind.text(doc)
    outcome = kind.read(text)  # never raises
    assert_well_formed(kind, outcome, text)
    if not kind.typed:  # CSV cells are text: "" is no key, 7 and "7" are one cell; only the reading is checked
        return
    errors = outcome.errors
    schema_ok = VALIDATORS[kind_name].is_valid(doc)
    COUNTS[f"{kind_name} {'valid' if schema_ok else 'invalid'} by schema"] += 1
    COUNTS[f"{kind_name} loaded"] += outcome.loaded
    if (not errors & SHAPE) if schema_ok else errors:
        return
    reason = explained(kind_name, doc, schema_ok, errors)
    rendered = [f.render().splitlines()[0] for f in outcome.findings]
    assert reason is not None, (f"the schema {'accepts' if schema_ok else 'refuses'} it, the validator says "
                                f"{rendered or 'valid'}", text,
                                [e.message[:200] for e in VALIDATORS[kind_name].iter_errors(doc)][:3])
    COUNTS[f"{kind_name} explained: {reason}"] += 1


# Disagreements the fuzz found, kept as examples: each is now refused by both (or explained).
FOUND: dict[str, list[Any]] = {
    "policy": [
        {"namespace": "\x1f"},  # a control character in a name: TP101, and now the schema's pattern
        {"namespace": "s", "properties": {"k": {}}},  # one finding at properties.k, with a hint (was three)
        {"namespace": "s", "lifecycle": {"snapshots": {"max_age": "٣d"}}},  # Python's \d took an Arabic-Indic 3
        {"namespace": "s", "lifecycle": {"snapshots": {"max_age": "5d\n"}}},  # Python's $ before a final newline
        {"namespace": "s", "lifecycle": {"retention": {"keep": "365001d"}}},  # the schema bounds each unit now
        {"table": "s.t", "columns": [{"name": "c", "type": "long"}],
         "lifecycle": {"compaction": {"target_file_size": "8388608TB"}}},
        {"namespace": "s", "lifecycle": {"orphan_files": {"older_than": "0d"}}},  # defaults no table inherits
    ],
    "rules": [{"rules": {"column_name": "?"}}],  # not a regular expression: format regex, and a hint
    "environment": [None, {"defaults": {"lifecycle": {"snapshots": {"max_age": "0s"}}}}],
    "requests": [
        {"requests": [{"id": "\x1f", "received": "2000-01-01", "keys": {"u": "0"}}]},  # TP610: now a pattern
        {"requests": [{"id": None, "received": None, "keys": None}]},  # the date's finding has a hint
        {"requests": [{"id": "a", "received": "9000-01-01", "keys": {"u": 1}}]},  # past LAST_RECEIVED
        {"requests": [{"id": "a" * 201, "received": "2000-01-01", "keys": {"u": 1}}]},  # TP105 with a hint
    ],
    "request csv": [{"requests": [{"id": "a,b\n\"c", "received": "2000-01-01", "keys": {"u\r\nv": "\"", "w": ""}}]}],
    "request lines": [
        {"requests": [{"id": "0", "received": "2000-01-01", "keys": {"0": ""}}]},  # an empty value: TP112
        {"requests": [{"id": "0", "received": "2000-01-01", "keys": {"": "u"}}]},  # an empty column: TP112
        {"requests": [{"id": "0", "received": "2000-01-01", "keys": {"0": 0.0}}]},  # explained: 0.0
    ],
}
FUZZ = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
WILD = 12  # one value in 12 is any JSON value, not one the schema allows


def fuzz(kind_name: str, wild: int) -> Callable[[], None]:
    def run(doc: Any) -> None:
        assert wild or VALIDATORS[kind_name].is_valid(doc), f"the strategy drew {doc!r}, which the schema refuses"
        check(kind_name, doc)

    for doc in FOUND[kind_name] if wild else []:
        run = example(doc)(run)
    return FUZZ(given(from_schema(KINDS[kind_name].schema, wild=wild))(run))  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind_name", KINDS)
def test_documents_the_schema_allows(kind_name: str) -> None:
    fuzz(kind_name, 0)()


@pytest.mark.parametrize("kind_name", KINDS)
def test_documents_near_the_schema(kind_name: str) -> None:
    fuzz(kind_name, WILD)()

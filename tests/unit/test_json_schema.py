"""The JSON Schema: validates every example, rejects the corpus cases a schema can express, stays in sync."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from tablepolicy.compiler.schema import policy_json_schema, policy_json_schema_text
from tablepolicy.compiler.validate import validate

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "policy.schema.json"
# Codes of findings about shape (keys, types, patterns) rather than meaning: a JSON Schema can express them.
STRUCTURAL = {"TP102", "TP103", "TP104", "TP105", "TP106", "TP110", "TP111", "TP112", "TP114", "TP203"}
VALIDATOR = jsonschema.Draft202012Validator(policy_json_schema())


def load(file: Path) -> object:
    return json.loads(json.dumps(YAML(typ="safe").load(file.read_text())))


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(policy_json_schema())


@pytest.mark.parametrize("file", sorted((ROOT / "policies").rglob("*.yaml")), ids=lambda f: f.name)
def test_examples_validate(file: Path) -> None:
    assert [e.message for e in VALIDATOR.iter_errors(load(file))] == []


# What a JSON Schema cannot say: that 2.0 is no integer (JSON Schema's "integer" and enum [1, 2, 3] accept it).
INTEGRAL_FLOATS = {"delete_files_min_float", "format_version_float"}


def error_codes(file: Path) -> set[str]:
    if file.stem in INTEGRAL_FLOATS:
        return set()
    return {d.code for d in validate(file)[1].errors}


STRUCTURAL_CASES = [
    f for f in sorted((ROOT / "tests/corpus").glob("*.yaml")) if error_codes(f) and error_codes(f) <= STRUCTURAL
]


@pytest.mark.parametrize("file", STRUCTURAL_CASES, ids=lambda f: f.stem)
def test_schema_rejects_structural_corpus_cases(file: Path) -> None:
    assert list(VALIDATOR.iter_errors(load(file))), f"schema accepts {file.name} ({error_codes(file)})"


def test_structural_cases_exist() -> None:
    assert len(STRUCTURAL_CASES) >= 20


def test_committed_schema_is_in_sync() -> None:
    assert COMMITTED.read_text() == policy_json_schema_text(), "run: tablepolicy schema > docs/policy.schema.json"

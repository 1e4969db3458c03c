"""The JSON Schema of the policy format, generated from the spec models (for editors and CI)."""

from __future__ import annotations

import json
from typing import Any

from pydantic.json_schema import models_json_schema

from compiler.spec.table import NamespaceDefaults, TablePolicy


def policy_json_schema() -> dict[str, Any]:
    _, schema = models_json_schema(
        [(TablePolicy, "validation"), (NamespaceDefaults, "validation")],
        title="tablepolicy policy file",
        description="A table policy (has 'table:') or namespace defaults (has 'namespace:').",
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "anyOf": [{"$ref": "#/$defs/TablePolicy"}, {"$ref": "#/$defs/NamespaceDefaults"}],
    }


def policy_json_schema_text() -> str:
    return json.dumps(policy_json_schema(), indent=2, sort_keys=True) + "\n"

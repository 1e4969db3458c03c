"""JSON Schemas of the files tablepolicy reads, generated from the spec models (for editors, CI and tests).

``policy_json_schema`` is the one editors use (``tablepolicy schema``, docs/policy.schema.json): a table policy, a
view policy or namespace defaults. The org rules file (``_rules.yaml``), an environment overlay
(``environments/<name>.yaml``) and an erasure requests file (``requests.yaml``; a JSON lines file holds one
request per line, each of the schema of ``requests.items``) have their own, from the models that validate them.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .erasure.requests import ErasureRequests
from .policy.environment import EnvironmentOverlay
from .policy.rules import RulesFile
from .policy.table import NamespaceDefaults, TablePolicy
from .policy.view import ViewPolicy

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def policy_json_schema() -> dict[str, Any]:
    _, schema = models_json_schema(
        [(TablePolicy, "validation"), (ViewPolicy, "validation"), (NamespaceDefaults, "validation")],
        title="tablepolicy policy file",
        description="A table policy (has 'table:'), a view policy (has 'view:') or namespace defaults (has "
                    "'namespace:').",
    )
    return {
        "$schema": DRAFT,
        **schema,
        "anyOf": [{"$ref": "#/$defs/TablePolicy"}, {"$ref": "#/$defs/ViewPolicy"},
                  {"$ref": "#/$defs/NamespaceDefaults"}],
    }


def _model_schema(model: type[BaseModel], title: str) -> dict[str, Any]:
    return {"$schema": DRAFT, **model.model_json_schema(mode="validation"), "title": title}


def rules_json_schema() -> dict[str, Any]:
    """``policies/_rules.yaml``: what every table must keep."""
    return _model_schema(RulesFile, "tablepolicy org rules file")


def environment_json_schema() -> dict[str, Any]:
    """``environments/<name>.yaml``: values layered over the policies (STRUCTURE_KEYS are refused by name)."""
    return _model_schema(EnvironmentOverlay, "tablepolicy environment overlay")


def requests_json_schema() -> dict[str, Any]:
    """An erasure requests file in YAML; a JSON lines file's lines are its ``requests`` items."""
    return _model_schema(ErasureRequests, "tablepolicy erasure requests file")


def policy_json_schema_text() -> str:
    return json.dumps(policy_json_schema(), indent=2, sort_keys=True) + "\n"

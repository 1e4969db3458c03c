"""Fresh field ids follow Iceberg's assignment: the CloudTrail example gets Security Lake's exact ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyiceberg.types import IcebergType, ListType, MapType, StructType

from tablepolicy.compiler.loader import load_project
from tablepolicy.compiler.model.table import build_struct

ROOT = Path(__file__).resolve().parents[2]
# schema.name-mapping.default of the Security Lake table in seed 000 (ids 1..95)
MAPPING = json.loads((ROOT / "tests/fixtures/security_lake_cloudtrail_name_mapping.json").read_text())


def _mapping_ids(entries: list[dict[str, Any]], prefix: str = "") -> dict[str, int]:
    out: dict[str, int] = {}
    for entry in entries:
        path = prefix + entry["names"][0]
        out[path] = entry["field-id"]
        out.update(_mapping_ids(entry.get("fields", []), path + "."))
    return out


def _schema_ids(t: IcebergType, prefix: str = "") -> dict[str, int]:
    out: dict[str, int] = {}
    if isinstance(t, StructType):
        for f in t.fields:
            out[prefix + f.name] = f.field_id
            out.update(_schema_ids(f.field_type, prefix + f.name + "."))
    elif isinstance(t, ListType):
        out[prefix + "element"] = t.element_id
        out.update(_schema_ids(t.element_type, prefix + "element."))
    elif isinstance(t, MapType):
        out[prefix + "key"] = t.key_id
        out[prefix + "value"] = t.value_id
        out.update(_schema_ids(t.value_type, prefix + "value."))
    return out


def test_cloudtrail_ids_match_security_lake() -> None:
    project, diagnostics = load_project(ROOT / "policies/security/cloudtrail_mgmt.yaml")
    assert not diagnostics.has_errors
    ids = _schema_ids(build_struct(project.tables[0].policy.columns))
    assert ids == _mapping_ids(MAPPING)
    assert max(ids.values()) == 95

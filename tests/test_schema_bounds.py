"""Every bounded field of the JSON Schema, at and past its bounds, empty and of the wrong type, in a valid policy:
the real validator reports a finding with a code and file:line:col or validates, never raises; the schema and the
validator agree; and a value that means nothing (an empty name or key, a zero size, count, window or deadline) is
refused by both."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compiler.schema import policy_json_schema
from compiler.validate import validate

SCHEMA = policy_json_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
# findings about shape, which the schema expresses (as in test_json_schema)
STRUCTURAL = {"TP101", "TP102", "TP103", "TP104", "TP105", "TP106", "TP107", "TP110", "TP111", "TP112", "TP201",
              "TP203", "TP301"}
# free text, where empty is a (blank) value and not a name: description, doc, property values
FREE_TEXT = {"description", "doc"}
# a quantity past its maximum: a pattern cannot bound the number it spells, so only the validator refuses it
MAGNITUDE = "magnitude"

BASE: dict[str, Any] = {
    "table": "sales.orders",
    "state": "present",
    "description": "orders",
    "owner": "team",
    "tags": ["gold"],
    "location": "file:///tmp/w/sales/orders",
    "format_version": 2,
    "case_sensitive": False,
    "columns": [
        {"name": "id", "type": "long", "required": True, "doc": "id", "id": 1, "tags": ["key"]},
        {"name": "ts", "type": "timestamptz", "renamed_from": "time"},
        {"name": "user_id", "type": "string"},
        {"name": "l", "type": {"list": "int", "element_id": 10}},
        {"name": "m", "type": {"map": {"key": "string", "value": "int", "key_id": 11, "value_id": 12}}},
        {"name": "s", "type": {"struct": [{"name": "a", "type": "decimal(10,2)"}]}},
    ],
    "partition_by": ["day(ts)", {"field": "bucket(16, id)", "name": "id_bucket"}],
    "sort_by": ["id desc", {"field": "user_id", "direction": "asc", "nulls": "last"}],
    "identifier_fields": ["id"],
    "distribution_mode": "hash",
    "write_modes": {"delete": "merge-on-read", "update": "copy-on-write", "merge": "copy-on-write"},
    "properties": {"read.split.target-size": 134217728},
    "ignore_properties": ["owner.tool"],
    "workload": {"longest_write": "2h", "time_travel": "1d"},
    "lifecycle": {
        "snapshots": {"max_age": "5d", "min_keep": 5, "max_ref_age": "30d"},
        "retention": {"column": "ts", "keep": "365d"},
        "orphan_files": {"enabled": True, "older_than": "3d"},
        "metadata": {"delete_after_commit": True, "previous_versions_max": 10},
        "compaction": {"enabled": True, "strategy": "zorder", "target_file_size": "512MB", "min_input_files": 5,
                       "skip_recent": "1d", "zorder_by": ["user_id"]},
        "manifests": {"enabled": True, "min_manifests": 100},
        "delete_files": {"enabled": True, "min_input_files": 1},
        "erasure": {"key": ["user_id"], "within": "30d", "holds": ["audit"]},
    },
    "allow_destructive": ["drop_table"],
}
DEFAULTS: dict[str, Any] = {"namespace": "sales", "description": "d", "owner": "o", "properties": {"k": "v"},
                            "workload": BASE["workload"], "lifecycle": BASE["lifecycle"]}


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def members(schema: dict[str, Any]) -> list[dict[str, Any]]:
    schema = resolve(schema)
    if "anyOf" in schema or "oneOf" in schema:
        return [m for s in schema.get("anyOf", schema.get("oneOf", [])) for m in members(s)
                if m.get("type") != "null"]
    return [schema]


def child(schema: dict[str, Any], key: Any, value: Any) -> dict[str, Any] | None:
    """The schema of ``value`` at ``key`` under an object or array ``schema``, picking the union member that fits."""
    for member in members(schema):
        if isinstance(key, int) and member.get("type") == "array":
            return member.get("items", {})
        if isinstance(key, str) and key in member.get("properties", {}):
            return member["properties"][key]
        if isinstance(key, str) and isinstance(member.get("additionalProperties"), dict):
            return member["additionalProperties"]
    return None


def leaves(doc: Any, schema: dict[str, Any], path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, schema) of the document's values, containers included."""
    out = [(path, schema)]
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for key, value in items:
        sub = child(schema, key, value)
        if sub is not None:
            out += leaves(value, sub, (*path, key))
    return out


def candidates(path: tuple[Any, ...], schema: dict[str, Any]) -> list[tuple[str, Any, bool | str]]:
    """(family, value, meaningless) to put at ``path``: meaningless values must be refused by schema and validator."""
    out: list[tuple[str, Any, bool | str]] = []
    types = {m.get("type") for m in members(schema)}
    types |= {"enum"} if any("enum" in m for m in members(schema)) else set()
    name = next((p for p in reversed(path) if isinstance(p, str)), "")
    for member in members(schema):
        kind = member.get("type")
        if kind == "integer" and "minimum" in member:
            low, high = member["minimum"], member.get("maximum")
            out += [("integer", low - 1, True), ("integer", low, False)]
            out += [("integer", high, False), ("integer", high + 1, True)] if high is not None else []
        elif kind == "string" and "pattern" in member and "examples" in member:  # a duration or a size
            unit = "B" if member["examples"][0].endswith("B") else "d"
            top = "8388607TB" if unit == "B" else "365000d"
            out += [("quantity", f"0{unit}", True), ("quantity", f"1{'B' if unit == 'B' else 'ms'}", False),
                    ("quantity", top, False), ("quantity", "8388608TB" if unit == "B" else "365001d", MAGNITUDE)]
            out += [("quantity", "", True)]
        elif kind == "string" and "enum" not in member:
            if name not in FREE_TEXT and not (len(path) > 1 and path[-2] == "properties"):
                out.append(("text", "", True))
            if "maxLength" in member:
                out += [("text", "x" * member["maxLength"], False), ("text", "x" * (member["maxLength"] + 1), True)]
        elif kind == "array":
            out.append(("list", [], "minItems" in member))
            if resolve(member.get("items", {})).get("type") == "string":
                out.append(("list", [""], True))
        elif kind == "object" and isinstance(member.get("additionalProperties"), dict):
            out.append(("mapping", {"": "v"}, True))
    if types & {"integer", "string", "boolean", "enum"}:
        wrong = [[], {"a": 1}] + ([] if "string" in types else ["x"]) + ([] if "boolean" in types else [True])
        out += [("wrong type", w, True) for w in wrong]
    return out


def put(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return doc


CASES = [(base, path, family, value, meaningless)
         for base, root in ((BASE, "TablePolicy"), (DEFAULTS, "NamespaceDefaults"))
         for path, schema in leaves(base, SCHEMA["$defs"][root]) if path
         for family, value, meaningless in candidates(path, schema)]
FAMILIES = Counter(family for *_, family, _value, _meaningless in CASES)


def test_the_bases_are_valid(tmp_path: Path) -> None:
    for base in (BASE, DEFAULTS):
        assert VALIDATOR.is_valid(base), [e.message for e in VALIDATOR.iter_errors(base)]
        (tmp_path / "p.yaml").write_text(json.dumps(base))
        assert not validate(tmp_path / "p.yaml")[1].errors


def test_every_family_is_exercised() -> None:
    assert FAMILIES["integer"] >= 24 and FAMILIES["quantity"] >= 40 and FAMILIES["text"] >= 15, FAMILIES
    assert FAMILIES["list"] >= 10 and FAMILIES["mapping"] >= 2 and FAMILIES["wrong type"] >= 100, FAMILIES


def _id(case: tuple[Any, ...]) -> str:
    return f"{'.'.join(map(str, case[1]))}={json.dumps(case[3])}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_bounds_are_findings_the_schema_agrees_with(tmp_path: Path, case: tuple[Any, ...]) -> None:
    base, path, _family, value, meaningless = case
    doc = put(base, path, value)
    file = tmp_path / "policy.yaml"
    file.write_text(json.dumps(doc, ensure_ascii=False) + "\n")  # JSON is YAML
    _project, diagnostics = validate(file)  # never raises
    for finding in diagnostics:
        assert finding.code[:2] in ("TP", "TG") and finding.message, finding.render()
        assert finding.location.file.endswith("policy.yaml") and finding.location.line >= 1
        assert finding.location.col >= 1, finding.render()
    errors = {d.code for d in diagnostics.errors}
    schema_ok = VALIDATOR.is_valid(doc)
    if meaningless == MAGNITUDE:
        assert errors & {"TP110", "TP111"}, [d.render() for d in diagnostics]
        return
    if meaningless:
        assert not schema_ok, f"the schema accepts {value!r} at {path}"
        assert errors, f"the validator accepts {value!r} at {path}"
    elif not schema_ok:
        assert errors, f"the schema refuses {value!r} at {path}; the validator accepts it"
    else:
        assert not errors & STRUCTURAL, ([d.render() for d in diagnostics.errors], "the schema accepts it")


# A value that means nothing on its own is reported once, where it is written, however many tables inherit it
# (none, or two): in namespace defaults and in each kind of overlay entry.
COLUMNS = "columns: [{name: id, type: long}, {name: ts, type: timestamptz}]\n"
TWO_TABLES = {f"policies/sales/{t}.yaml": f"table: sales.{t}\n{COLUMNS}" for t in "ab"}
DECLARED = [
    ("policies/sales/_namespace.yaml", "namespace: sales\nlifecycle:\n  snapshots: {max_age: 0d}\n",
     "policies/sales/_namespace.yaml:3:24: error TP420: snapshot max_age of zero would expire every snapshot"),
    ("policies/sales/_namespace.yaml", "namespace: sales\nlifecycle:\n  retention: {column: ts, keep: 0s}\n",
     "policies/sales/_namespace.yaml:3:33: error TP413: retention keep of zero deletes every row"),
    ("policies/sales/_namespace.yaml", "namespace: sales\nlifecycle:\n  orphan_files: {older_than: 0m}\n",
     "policies/sales/_namespace.yaml:3:30: error TP421: orphan_files.older_than 0m is under the 24h floor: it "
     "deletes files of commits still in flight"),
    ("environments/t.yaml", "defaults: {lifecycle: {snapshots: {max_age: 0d}}}\n",
     "environments/t.yaml:1:45: error TP420: snapshot max_age of zero would expire every snapshot"),
    ("environments/t.yaml", "namespaces:\n  sales: {lifecycle: {retention: {column: ts, keep: 0d}}}\n",
     "environments/t.yaml:2:53: error TP413: retention keep of zero deletes every row"),
    ("environments/t.yaml", "tables:\n  sales.a: {lifecycle: {orphan_files: {older_than: 12h}}}\n",
     "environments/t.yaml:2:52: error TP421: orphan_files.older_than 12h is under the 24h floor: it deletes "
     "files of commits still in flight"),
]


@pytest.mark.parametrize("tables", [{}, TWO_TABLES], ids=["no table", "two tables"])
@pytest.mark.parametrize(("file", "text", "line"), DECLARED, ids=[f"{c[2].split()[2][:-1]}-{c[0]}" for c in DECLARED])
def test_meaningless_values_are_refused_once_where_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           tables: dict[str, str], file: str, text: str,
                                                           line: str) -> None:
    from compiler.project import load_selected

    if file.startswith("environments") and not tables:
        tables = {"policies/sales/a.yaml": TWO_TABLES["policies/sales/a.yaml"]}  # an overlay names declared tables
    monkeypatch.chdir(tmp_path)
    for name, content in {"policies/sales/_namespace.yaml": "namespace: sales\n", **tables, file: text}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    environment = "t" if file.startswith("environments") else None
    _project, _overlay, diagnostics = load_selected(tmp_path / "policies", environment=environment)
    rendered = [d.render() for d in diagnostics.errors]
    assert [r.splitlines()[0] for r in rendered] == [line], rendered
    assert "\n    hint: " in rendered[0]

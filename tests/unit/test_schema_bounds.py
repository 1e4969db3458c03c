"""Every bounded field of the JSON Schemas, at and past its bounds, empty and of the wrong type, in a valid
document of each kind: a table policy, namespace defaults, org rules, an environment overlay, erasure requests in
YAML and in JSON lines. The reader the tool uses (tests/document_readers.py) reports findings with a code and
file:line:col or loads the document, never raises; the schema and the validator agree; and a value that means
nothing (an empty name or key, a zero size, count, window or deadline, a number past what Iceberg or Spark hold,
a date past the last deadline) is refused by both."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tablepolicy.compiler.policy.units import Duration, Size
from tests.document_readers import KINDS, assert_well_formed
from tests.schema_strategy import schema_validator

# findings about shape, which the schema expresses (as in test_json_schema)
STRUCTURAL = {"TP101", "TP102", "TP103", "TP104", "TP105", "TP106", "TP107", "TP110", "TP111", "TP112", "TP201",
              "TP203", "TP301", "TP605", "TP610", "TP611", "TP612"}
# free text, where empty is a (blank) value and not a name: description, doc, property values
FREE_TEXT = {"description", "doc"}

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


# settings an overlay gives every table of the project (so no column is named: refunds has only id)
SETTINGS: dict[str, Any] = {
    "owner": "o", "properties": {"k": "v"}, "workload": {"longest_write": "2h", "time_travel": "1d"},
    "lifecycle": {key: value for key, value in BASE["lifecycle"].items() if key not in ("retention", "erasure")}
    | {"compaction": {"enabled": True, "strategy": "binpack", "target_file_size": "512MB", "min_input_files": 5,
                      "skip_recent": "1d"}},
}
OVERLAY: dict[str, Any] = {
    "description": "production", "catalog": "prod", "defaults": SETTINGS, "namespaces": {"sales": SETTINGS},
    "tables": {"sales.orders": {**SETTINGS, "lifecycle": {
        "retention": {"column": "ts", "keep": "365d"}, "erasure": {"key": ["user_id"], "within": "30d"},
        "compaction": {"strategy": "zorder", "zorder_by": ["user_id"]}}}},
}
RULES: dict[str, Any] = {"rules": {
    "owner_required": False, "pii_requires_erasure": True, "snapshots_max_age": {"min": "1h", "max": "30d"},
    "retention_keep": {"min": "1d", "max": "3650d"}, "orphan_older_than": {"min": "1d", "max": "30d"},
    "erasure_within": {"min": "1d", "max": "30d"}, "required_properties": {}, "table_name": "^[a-z_.]+$",
    "column_name": "^[a-z_]+$", "no_weakening": False, "ignore_unmanaged": ["tmp.*"],
}}
REQUESTS: dict[str, Any] = {"requests": [{"id": "REQ-1", "received": "2026-11-02",
                                          "keys": {"user_id": "u1", "user.uid": 7}}]}
# (kind, a valid document of it, the schema of the document: a $defs entry or the root)
DOCUMENTS = [("policy", BASE, "TablePolicy"), ("policy", DEFAULTS, "NamespaceDefaults"), ("rules", RULES, None),
             ("environment", OVERLAY, None), ("requests", REQUESTS, None), ("request lines", REQUESTS, None)]


class Walk:
    """The fields of one schema: what schema sits at each path of a document, and what to try there."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def members(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        schema = self.resolve(schema)
        if "anyOf" in schema or "oneOf" in schema:
            return [m for s in schema.get("anyOf", schema.get("oneOf", [])) for m in self.members(s)
                    if m.get("type") != "null"]
        return [schema]

    def child(self, schema: dict[str, Any], key: Any) -> dict[str, Any] | None:
        """The schema at ``key`` under an object or array ``schema``, picking the union member that fits."""
        for member in self.members(schema):
            if isinstance(key, int) and member.get("type") == "array":
                return member.get("items", {})
            if isinstance(key, str) and key in member.get("properties", {}):
                return member["properties"][key]
            if isinstance(key, str) and isinstance(member.get("additionalProperties"), dict):
                return member["additionalProperties"]
        return None

    def leaves(self, doc: Any, schema: dict[str, Any], path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...],
                                                                                                  Any]]:
        """Every (path, schema) of the document's values, containers included."""
        out = [(path, schema)]
        items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
        for key, value in items:
            sub = self.child(schema, key)
            if sub is not None:
                out += self.leaves(value, sub, (*path, key))
        return out

    def candidates(self, path: tuple[Any, ...], schema: dict[str, Any]) -> list[tuple[str, Any, bool]]:
        """(family, value, meaningless) to put at ``path``: meaningless values must be refused by schema and
        validator."""
        out: list[tuple[str, Any, bool]] = []
        members = self.members(schema)
        types = {m.get("type") for m in members} | ({"enum"} if any("enum" in m for m in members) else set())
        name = next((p for p in reversed(path) if isinstance(p, str)), "")
        for member in members:
            kind = member.get("type")
            if kind == "integer" and "minimum" in member:
                low, high = member["minimum"], member.get("maximum")
                out += [("integer", low - 1, True), ("integer", low, False)]
                out += [("integer", high, False), ("integer", high + 1, True)] if high is not None else []
            elif kind == "string" and "pattern" in member and "examples" in member:  # a duration or a size
                unit = "B" if member["examples"][0].endswith("B") else "d"
                top = "8388607TB" if unit == "B" else "365000d"
                out += [("quantity", f"0{unit}", True), ("quantity", f"1{'B' if unit == 'B' else 'ms'}", False),
                        ("quantity", top, False), ("quantity", "8388608TB" if unit == "B" else "365001d", True)]
                out += [("quantity", "", True)]
            elif kind == "string" and member.get("format") == "date":  # the received date: its deadline is a date
                out += [("date", "0001-01-01", False), ("date", "8999-12-31", False), ("date", "9000-01-01", True),
                        ("date", "2026-02-30", True), ("date", "", True)]
            elif kind == "string" and "enum" not in member:
                if name not in FREE_TEXT and not (len(path) > 1 and path[-2] == "properties"):
                    out.append(("text", "", True))
                if "maxLength" in member:
                    out += [("text", "x" * member["maxLength"], False),
                            ("text", "x" * (member["maxLength"] + 1), True)]
            elif kind == "array":
                out.append(("list", [], "minItems" in member))
                if self.resolve(member.get("items", {})).get("type") == "string":
                    out.append(("list", [""], True))
            elif kind == "object" and isinstance(member.get("additionalProperties"), dict):
                out.append(("mapping", {"": "v"}, True))
                if "minProperties" in member:
                    out.append(("mapping", {}, True))
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


def cases() -> list[tuple[str, dict[str, Any], tuple[Any, ...], str, Any, bool]]:
    out = []
    for kind, base, name in DOCUMENTS:
        walk = Walk(KINDS[kind].schema)
        top = walk.root["$defs"][name] if name else walk.root
        out += [(kind, base, path, family, value, meaningless) for path, schema in walk.leaves(base, top) if path
                for family, value, meaningless in walk.candidates(path, schema)]
    return out


CASES = cases()
FAMILIES = Counter((kind, family) for kind, _base, _path, family, _value, _meaningless in CASES)
VALIDATORS = {kind: schema_validator(KINDS[kind].schema) for kind in KINDS}


def test_the_bases_are_valid() -> None:
    for kind, base, _root in DOCUMENTS:
        validator = VALIDATORS[kind]
        assert validator.is_valid(base), [e.message for e in validator.iter_errors(base)]
        outcome = KINDS[kind].read(KINDS[kind].text(base))
        assert outcome.loaded and not outcome.findings, [d.render() for d in outcome.findings]


def test_every_family_is_exercised() -> None:
    count = Counter({family: n for (kind, family), n in FAMILIES.items() if kind == "policy"})
    assert count["integer"] >= 24 and count["quantity"] >= 40 and count["text"] >= 15, count
    assert count["list"] >= 10 and count["mapping"] >= 2 and count["wrong type"] >= 100, count
    for kind, family in [("rules", "quantity"), ("rules", "text"), ("environment", "quantity"),
                         ("environment", "integer"), ("environment", "mapping"), ("requests", "date"),
                         ("requests", "integer"), ("requests", "text"), ("request lines", "integer")]:
        assert FAMILIES[kind, family] >= 2, (kind, family, FAMILIES)


def _id(case: tuple[Any, ...]) -> str:
    return f"{case[0]}:{'.'.join(map(str, case[2]))}={json.dumps(case[4])[:40]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_bounds_are_findings_the_schema_agrees_with(case: tuple[Any, ...]) -> None:
    kind, base, path, _family, value, meaningless = case
    doc = put(base, path, value)
    text = KINDS[kind].text(doc)
    outcome = KINDS[kind].read(text)  # never raises
    assert_well_formed(KINDS[kind], outcome, text)
    errors = outcome.errors
    schema_ok = VALIDATORS[kind].is_valid(doc)
    if meaningless:
        assert not schema_ok, f"the schema accepts {value!r} at {path}"
        assert errors, f"the validator accepts {value!r} at {path}"
    elif not schema_ok:
        assert errors, f"the schema refuses {value!r} at {path}; the validator accepts it"
    else:
        assert not errors & STRUCTURAL, ([d.render() for d in outcome.findings], "the schema accepts it")


@pytest.mark.parametrize("quantity", [Duration, Size])
def test_every_unit_at_and_past_its_maximum(quantity: type[Duration] | type[Size]) -> None:
    """Each unit's largest value is valid and one more is refused, by the schema's pattern and by the parser."""
    pattern = re.compile(quantity.schema_pattern())
    for unit, factor in quantity.UNITS.items():
        top = quantity.MAX // factor
        for number, valid in ((1, True), (top, True), (top + 1, False), (0, False)):
            text = f"{number}{unit}"
            assert bool(pattern.search(text)) is valid, text
            try:
                parsed = quantity.parse(text)
            except ValueError:
                assert not valid, text
            else:
                assert parsed.value <= quantity.MAX and (valid or number == 0), text


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
    from tablepolicy.compiler.project import load_selected

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

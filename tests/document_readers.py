"""Each kind of file tablepolicy reads, with its JSON Schema and the reader the tool uses, for the tests that put
schema-derived documents through the real validator (test_schema_bounds, test_schema_fuzz).

A reader takes the file's text and returns every finding and whether the document loaded. Rules and overlays
are read against a small project (a namespace with defaults, two tables), as ``validate`` and ``--env`` do.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablepolicy.compiler import codes
from tablepolicy.compiler.checks import check_project
from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics, Severity
from tablepolicy.compiler.environment import check_references, parse_environment
from tablepolicy.compiler.erasure.requests import load_requests
from tablepolicy.compiler.guardrails import check_rules
from tablepolicy.compiler.loader import Project, load_text
from tablepolicy.compiler.schema import (
    environment_json_schema,
    policy_json_schema,
    requests_json_schema,
    rules_json_schema,
)

PROJECT_FILES = {
    "policies/sales/_namespace.yaml": "namespace: sales\nlifecycle: {snapshots: {max_age: 5d}}\n",
    "policies/sales/orders.yaml": "table: sales.orders\ncolumns:\n  - {name: id, type: long}\n"
    "  - {name: user_id, type: string, tags: [pii]}\n  - {name: ts, type: timestamptz}\n"
    "lifecycle: {retention: {column: ts, keep: 365d}, erasure: {key: [user_id], within: 30d}}\n",
    "policies/sales/eu/refunds.yaml": "table: sales.eu.refunds\ncolumns: [{name: id, type: long}]\n",
}
_YAML_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\x85\u2028\u2029]")


def yaml_text(doc: Any) -> str:
    """``doc`` as YAML: JSON (JSON is YAML), with what YAML may not hold raw (C1 controls, line separators)
    escaped."""
    text = json.dumps(doc, ensure_ascii=False)
    return _YAML_UNPRINTABLE.sub(lambda m: f"\\u{ord(m[0]):04x}", text) + "\n"


def jsonl_text(doc: Any) -> str:
    """A requests document as JSON lines: each item of ``requests`` one line (anything else: one line)."""
    items = doc.get("requests") if isinstance(doc, dict) and set(doc) == {"requests"} else None
    lines = items if isinstance(items, list) else [doc]
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def csv_text(doc: Any) -> str:
    """A requests document as CSV: a header of id, received and every key column, then a record per request
    (a cell is text: an integer key is written as its digits, a missing key or value as an empty cell)."""
    items = doc.get("requests") if isinstance(doc, dict) else None
    rows = [r for r in items if isinstance(r, dict)] if isinstance(items, list) else []
    columns = list(dict.fromkeys(k for r in rows if isinstance(r.get("keys"), dict) for k in r["keys"]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "received", *columns])
    for row in rows:
        keys = row["keys"] if isinstance(row.get("keys"), dict) else {}
        writer.writerow(["" if v is None else str(v) for v in (row.get("id"), row.get("received"),
                                                                *(keys.get(c) for c in columns))])
    return out.getvalue()


@dataclass(frozen=True)
class Outcome:
    findings: list[Diagnostic]
    loaded: bool  # the document became a model (a table or defaults, rules, an overlay, requests)

    @property
    def errors(self) -> set[str]:
        return {f.code for f in self.findings if f.severity is Severity.ERROR}


def base_project(extra: str | None = None, file: str = "") -> tuple[Project, Diagnostics]:
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    for name, text in PROJECT_FILES.items():
        load_text(text, name, project, diagnostics)
    assert not diagnostics.items, [d.render() for d in diagnostics]
    if extra is not None:
        load_text(extra, file, project, diagnostics)
    return project, diagnostics


def read_policy(text: str) -> Outcome:
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(text, "policies/sales/fuzz.yaml", project, diagnostics)
    diagnostics.extend(check_project(project))
    return Outcome(list(diagnostics), bool(project.tables or project.namespaces))


def read_rules(text: str) -> Outcome:
    project, diagnostics = base_project(text, "policies/_rules.yaml")
    for rules in project.rules:
        diagnostics.extend(check_rules(project, rules))
    return Outcome(list(diagnostics), bool(project.rules))


def read_environment(text: str) -> Outcome:
    project, _ = base_project()
    overlay, findings = parse_environment("fuzz", text, "environments/fuzz.yaml")
    if overlay is not None:
        findings += check_references(project, overlay)
    loaded = overlay is not None and overlay.loaded is not None and not findings
    if overlay is not None and overlay.loaded is not None:
        project.environment = overlay.loaded
        findings += check_project(project)
    return Outcome(findings, loaded)


def read_requests(text: str) -> Outcome:
    loaded, diagnostics = load_requests(text, "requests.yaml")
    return Outcome(list(diagnostics), loaded is not None)


def read_request_csv(text: str) -> Outcome:
    loaded, diagnostics = load_requests(text, "requests.csv")
    return Outcome(list(diagnostics), loaded is not None)


def read_request_lines(text: str) -> Outcome:
    loaded, diagnostics = load_requests(text, "requests.jsonl")
    return Outcome(list(diagnostics), loaded is not None)


@dataclass(frozen=True)
class Kind:
    schema: dict[str, Any]
    file: str  # where the reader says the document is
    read: Callable[[str], Outcome]
    text: Callable[[Any], str] = yaml_text
    typed: bool = True  # the text keeps the document's types, so the schema's verdict is the reader's (CSV: no)


KINDS = {
    "policy": Kind(policy_json_schema(), "policies/sales/fuzz.yaml", read_policy),
    "rules": Kind(rules_json_schema(), "policies/_rules.yaml", read_rules),
    "environment": Kind(environment_json_schema(), "environments/fuzz.yaml", read_environment),
    "requests": Kind(requests_json_schema(), "requests.yaml", read_requests),
    "request lines": Kind(requests_json_schema(), "requests.jsonl", read_request_lines, jsonl_text),
    "request csv": Kind(requests_json_schema(), "requests.csv", read_request_csv, csv_text, typed=False),
}


def assert_well_formed(kind: Kind, outcome: Outcome, text: str) -> None:
    """Every finding has a registered code, a file:line:col in a file read, a message and a hint; a document
    that did not load has an error."""
    for finding in outcome.findings:
        assert codes.lookup(finding.code), finding.render()
        assert finding.location.file in (kind.file, *PROJECT_FILES), finding.render()
        assert finding.location.line >= 1 and finding.location.col >= 1, finding.render()
        assert finding.message and finding.hint, finding.render()
    assert outcome.loaded or outcome.errors, f"nothing loaded and no error for {text!r}"

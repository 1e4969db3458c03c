"""validate --format github|json: the same findings as the terminal, in the forms CI reads."""

from __future__ import annotations

import doctest
import json

import tablepolicy.compiler.render.findings as findings_module
from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics, Location, Severity
from tablepolicy.compiler.render.findings import findings_json, findings_markdown, github_annotations


def sample() -> Diagnostics:
    diagnostics = Diagnostics()
    diagnostics.add(Diagnostic("TP201", Severity.ERROR, Location("policies/a, b.yaml", 5, 11),
                               "unknown type 'varchar(10)': 100% wrong\nsecond line", "use string"))
    diagnostics.add(Diagnostic("TP000", Severity.WARNING, Location("policies/x.yaml"), "file level"))
    return diagnostics


def test_annotations_escape_what_the_runner_would_split_on() -> None:
    assert github_annotations(sample()).splitlines() == [
        "::error file=policies/a%2C b.yaml,line=5,col=11,title=TP201::unknown type 'varchar(10)': 100%25 wrong"
        "%0Asecond line%0Ahint: use string",
        "::warning file=policies/x.yaml,title=TP000::file level",
    ]


def test_json_has_every_finding_and_counts() -> None:
    document = json.loads(findings_json(sample(), files=2))
    assert (document["files"], document["errors"], document["warnings"]) == (2, 1, 1)
    assert document["findings"][0] == {"file": "policies/a, b.yaml", "line": 5, "col": 11, "severity": "error",
                                       "code": "TP201", "message": "unknown type 'varchar(10)': 100% wrong\n"
                                       "second line", "hint": "use string"}


def test_markdown_lists_location_and_code() -> None:
    assert "`policies/a, b.yaml:5:11` **TP201**" in findings_markdown(sample())


def test_doctest() -> None:
    assert doctest.testmod(findings_module).failed == 0

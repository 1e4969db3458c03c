"""Findings for machines: GitHub workflow annotations, JSON, and a markdown list for a PR comment.

>>> from tablepolicy.compiler.diagnostics import Diagnostic, Location, Severity
>>> print(github_annotation(Diagnostic("TP201", Severity.ERROR, Location("p/t.yaml", 5, 3), "bad: x", "fix")))
::error file=p/t.yaml,line=5,col=3,title=TP201::bad: x%0Ahint: fix
"""

from __future__ import annotations

import json

from ..diagnostics import Diagnostic, Diagnostics, Severity


def _data(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(d: Diagnostic) -> str:
    """One ``::error``/``::warning`` line: GitHub shows it on the file and line of the pull request."""
    kind = "error" if d.severity is Severity.ERROR else "warning"
    where = [f"file={_property(d.location.file)}"]
    if d.location.line:
        where += [f"line={d.location.line}", f"col={d.location.col}"]
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return f"::{kind} {','.join(where)},title={_property(d.code)}::{_data(message)}"


def github_annotations(diagnostics: Diagnostics) -> str:
    return "".join(github_annotation(d) + "\n" for d in diagnostics)


def findings_json(diagnostics: Diagnostics, files: int) -> str:
    """Every finding and the counts, for scripts; deterministic."""
    items = [{"file": d.location.file, "line": d.location.line, "col": d.location.col, "severity": str(d.severity),
              "code": d.code, "message": d.message, "hint": d.hint} for d in diagnostics]
    errors = sum(1 for d in diagnostics.items if d.severity is Severity.ERROR)
    document = {"files": files, "errors": errors, "warnings": len(items) - errors, "findings": items}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def findings_markdown(diagnostics: Diagnostics) -> str:
    """The findings as a markdown list, for the PR comment of a plan that could not be made."""
    lines = []
    for d in diagnostics:
        icon = "❌" if d.severity is Severity.ERROR else "⚠️"
        hint = f" — {d.hint}" if d.hint else ""
        lines.append(f"- {icon} `{d.location}` **{d.code}**: {d.message}{hint}")
    return "\n".join(lines) + "\n"

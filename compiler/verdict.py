"""A whole project's findings, kept so that validating a project nothing changed in needs no policy model.

``validate`` of one file checks the whole project (a table elsewhere may take its name), then shows what concerns
the file. When no policy file and no overlay changed since a run that saved its findings (the file index vouches
for each policy file's content, the overlays are hashed), those findings are the answer: the run lists and stats
the files, and imports neither the policy models nor a YAML parser (0.64 s -> 0.25 s in a project of 10,000
files).

The findings are kept whole and restricted to the path given each time, by the rule ``restrict`` applies: a
finding is shown when its file is selected, or when its file declares no table (namespace defaults, overlays, a
file too broken to say what it is): such a finding may concern any table.

Pure: the runtime reads and writes the saved verdict (runtime/caches/verdict.py) and says what the files hold.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import __version__
from .diagnostics import Diagnostic, Diagnostics, Location, Severity
from .modelcache import CACHE_VERSION
from .paths import ProjectPaths, display_path

VERDICT_VERSION = 1  # and the model cache's CACHE_VERSION, which moves with the validation rules


@dataclass(frozen=True)
class Inputs:
    """Everything a whole project's findings follow from, as the run saw it."""

    scope: str  # the project's policies folder (absolute)
    environment: str | None  # the overlay layered on every table (``validate --env``), or None: every one checked
    flag: str  # how it was asked for (a finding may name it)
    policies: tuple[tuple[str, str], ...]  # every policy file's absolute path and the sha256 of its text
    overlays: tuple[tuple[str, str], ...]  # every overlay file's path and the sha256 of its bytes

    def key(self) -> str:
        """The digest of these inputs, of the working directory (findings show paths relative to it) and of the
        tool's version and rules."""
        parts = [VERDICT_VERSION, CACHE_VERSION, __version__, os.getcwd(), self.scope, self.environment, self.flag,
                 self.policies, self.overlays]
        return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """The whole project's findings: the policy files' (``declaring``: those of their files that declare a table,
    whose findings concern that file only) and the overlays', shown whatever the selection."""

    policies: tuple[Diagnostic, ...]
    overlays: tuple[Diagnostic, ...]
    declaring: frozenset[str]

    def selected(self, paths: ProjectPaths, listed: list[str]) -> tuple[int, Diagnostics]:
        """How many policy files ``paths.selected`` holds, and the findings it shows (see ``kept``)."""
        chosen = selection(paths)
        findings = Diagnostics([d for d in self.policies
                                if kept(d.location.file, paths, chosen, self.declaring.__contains__)])
        findings.extend(self.overlays)
        return selection_findings(paths, listed, findings)

    def to_json(self, key: str) -> str:
        return json.dumps({"version": VERDICT_VERSION, "key": key, "policies": [_fields(d) for d in self.policies],
                           "overlays": [_fields(d) for d in self.overlays], "declaring": sorted(self.declaring)},
                          separators=(",", ":"))

    @staticmethod
    def from_json(text: str, key: str) -> Verdict | None:
        """The verdict saved for ``key``; None for another key, another version or a damaged file."""
        try:
            document = json.loads(text)
            if not isinstance(document, dict) or document.get("version") != VERDICT_VERSION or document.get(
                    "key") != key:
                return None
            declaring = document["declaring"]
            if not isinstance(declaring, list) or not all(isinstance(f, str) for f in declaring):
                raise ValueError("damaged files")
            return Verdict(tuple(_finding(f) for f in document["policies"]),
                           tuple(_finding(f) for f in document["overlays"]), frozenset(declaring))
        except (ValueError, TypeError, KeyError, RecursionError):
            return None


def _fields(d: Diagnostic) -> list[Any]:
    return [d.code, int(d.severity), d.location.file, d.location.line, d.location.col, d.message, d.hint]


def _finding(fields: list[Any]) -> Diagnostic:
    code, severity, file, line, col, message, hint = fields  # another length: ValueError
    if not all(isinstance(v, str) for v in (code, file, message)) or not all(
            isinstance(v, int) for v in (line, col)) or not (hint is None or isinstance(hint, str)):
        raise ValueError("a damaged finding")
    return Diagnostic(code, Severity(severity), Location(file, line, col), message, hint)


def verdict_of(policies: Iterable[Diagnostic], overlays: Iterable[Diagnostic],
               declares: Callable[[str], bool]) -> Verdict:
    """``declares``: whether a file declares a table, asked of the files with a finding."""
    kept_policies = tuple(policies)
    files = {d.location.file for d in kept_policies}
    return Verdict(kept_policies, tuple(overlays), frozenset(f for f in files if declares(f)))


def selection(paths: ProjectPaths) -> Callable[[str], bool]:
    """Whether a file as findings show it (relative to the working directory) lies under the path given: on
    strings, once per file (10,000 Paths cost a second)."""
    here = os.getcwd()
    answers: dict[str, bool] = {}

    def selected(file: str) -> bool:
        answer = answers.get(file)
        if answer is None:
            answer = answers[file] = paths.selects(os.path.normpath(os.path.join(here, file)))
        return answer

    return selected


def kept(file: str, paths: ProjectPaths, selected: Callable[[str], bool], declares: Callable[[str], bool]) -> bool:
    """Whether a finding of ``file`` is shown for the path given: all are when the whole project is; else those of
    the selected files and of any file that declares no table (``declares`` is asked last: it may read the file)."""
    return not paths.restricted or selected(file) or not declares(file)


def selection_findings(paths: ProjectPaths, listed: list[str], findings: Diagnostics) -> tuple[int, Diagnostics]:
    """How many of the project's policy files (``listed``, absolute) the path given holds, with ``findings`` and
    the error for a path that holds none or does not exist."""
    files = sum(1 for f in listed if paths.selects(f))
    if paths.selected.exists() and not files:
        findings.error("TP006", Location(display_path(paths.selected)), "no policy files here",
                       "policy files end in .yaml or .yml; give the project's policies/ folder, a subfolder or one "
                       "policy file")
    elif not paths.selected.exists() and paths.scope.exists():
        findings.error("TP000", Location(display_path(paths.selected)), "no such file or directory")
    return files, findings

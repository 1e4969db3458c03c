"""YAML text -> plain Python data plus the source position of every key and value.

Positions let a pydantic error location such as ``('columns', 3, 'type')`` be reported as
``file:line:col``. Duplicate keys and syntax errors become findings, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from compiler.diagnostics import Diagnostic, Location, Severity

Path = tuple[str | int, ...]


@dataclass
class SourceMap:
    """Where each path of a document sits in its file (1-based)."""

    file: str
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def key(self, path: Path) -> Location:
        """Position of the key at ``path`` (falls back to its value, then to the nearest parent)."""
        return self._find(path, prefer_key=True)

    def value(self, path: Path) -> Location:
        return self._find(path, prefer_key=False)

    def _find(self, path: Path, *, prefer_key: bool) -> Location:
        order = (self.keys, self.values) if prefer_key else (self.values, self.keys)
        for end in range(len(path), -1, -1):
            sub = path[:end]
            for table in order:
                if sub in table:
                    line, col = table[sub]
                    return Location(self.file, line, col)
        return Location(self.file, 1, 1)


@dataclass
class YamlDocument:
    data: Any
    source: SourceMap


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    return yaml


def parse_yaml(text: str, file: str) -> YamlDocument | Diagnostic:
    """Parse one YAML document; a syntax error or duplicate key comes back as a finding."""
    try:
        raw = _yaml().load(text)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        key = str(exc.problem).split('"')[1] if '"' in str(exc.problem) else "?"
        return Diagnostic(
            "TP002",
            Severity.ERROR,
            Location(file, mark.line + 1, mark.column + 1) if mark else Location(file),
            f"duplicate key '{key}'",
            "each key may appear once in a mapping; merge the two entries",
        )
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = str(exc.problem or exc.context)
        if exc.context_mark and "stream end" in message:  # point at what was left open, not at EOF
            mark = exc.context_mark
            message = f"{exc.context} was never closed ({message})"
        return Diagnostic(
            "TP001",
            Severity.ERROR,
            Location(file, mark.line + 1, mark.column + 1) if mark else Location(file),
            f"YAML syntax error: {message}",
            "check indentation and that every ':' is followed by a space",
        )
    except YAMLError as exc:  # rare non-marked errors (e.g. bad encoding)
        return Diagnostic("TP001", Severity.ERROR, Location(file), f"YAML error: {exc}")
    source = SourceMap(file)
    return YamlDocument(_plain(raw, (), source), source)


def _plain(node: Any, path: Path, source: SourceMap) -> Any:
    """Copy ruamel's round-trip nodes into builtin types, recording positions on the way."""
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            name = str(key) if not isinstance(key, str) else key
            child = (*path, name)
            kline, kcol = node.lc.key(key)
            vline, vcol = node.lc.value(key)
            source.keys[child] = (kline + 1, kcol + 1)
            source.values[child] = (vline + 1, vcol + 1)
            out[name] = _plain(value, child, source)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            line, col = node.lc.item(index)
            source.values[child] = (line + 1, col + 1)
            items.append(_plain(value, child, source))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return str(node)  # dates and other YAML scalars stay textual

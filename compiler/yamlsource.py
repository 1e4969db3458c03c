"""YAML text -> plain Python data plus the source position of every key and value.

Positions let a pydantic error location such as ``('columns', 3, 'type')`` be reported as
``file:line:col``. Syntax errors and duplicate keys become findings, never exceptions.

Parsing uses libyaml (PyYAML's C composer) for speed, then resolves plain scalars with the YAML 1.2
core schema, as ruamel and most editors do: ``yes``/``no``/``on``/``off`` stay strings and
``2024-01-01`` is not a date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from compiler.diagnostics import Diagnostic, Location, Severity

try:
    from yaml import CBaseLoader as _BaseLoader
except ImportError:  # pragma: no cover - libyaml missing: same results, slower
    from yaml import BaseLoader as _BaseLoader  # type: ignore[assignment]

_DEFAULT_TAGS = {ScalarNode: "tag:yaml.org,2002:str", SequenceNode: "tag:yaml.org,2002:seq",
                 MappingNode: "tag:yaml.org,2002:map"}


class _Loader(_BaseLoader):
    """Resolves nothing: scalars are typed below, once, by the YAML 1.2 core rules."""

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        return _DEFAULT_TAGS[kind]

Path = tuple[str | int, ...]

_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+")
_INT_OCT = re.compile(r"0o[0-7]+")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_NUMBER_START = frozenset("0123456789+-.")
_WORD_START = frozenset("~nNtTfF")
_SPECIAL_FLOAT = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


@dataclass
class SourceMap:
    """Where each path of a document sits in its file (1-based), found on demand.

    Positions are looked up in the composed node tree only when a finding needs one, so a valid
    file never pays for them.
    """

    file: str
    root: Node | None = None
    text: str | None = None  # set instead of ``root`` for documents restored from a cache: parsed on demand

    def key(self, path: Path) -> Location:
        """Position of the key at ``path`` (its value for list items; the nearest parent when absent)."""
        return self._find(path, prefer_key=True)

    def value(self, path: Path) -> Location:
        return self._find(path, prefer_key=False)

    def _find(self, path: Path, *, prefer_key: bool) -> Location:
        if self.root is None and self.text is not None:
            self.root = yaml.compose(self.text, Loader=_Loader)
        node, key_node = self.root, None
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            key_node, node = child
        target = key_node if prefer_key and key_node is not None else node
        if target is None:
            return Location(self.file, 1, 1)
        return Location(self.file, target.start_mark.line + 1, target.start_mark.column + 1)


def _child(node: Node | None, part: str | int) -> tuple[Node | None, Node] | None:
    if isinstance(node, MappingNode) and isinstance(part, str):
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and str(_scalar(key_node)) == part:
                return key_node, value_node
    elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return None, node.value[part]
    return None


@dataclass
class YamlDocument:
    data: Any
    source: SourceMap


class _DuplicateKey(Exception):
    def __init__(self, key: str, node: Node) -> None:
        self.key = key
        self.node = node


def parse_yaml(text: str, file: str) -> YamlDocument | Diagnostic:
    """Parse one YAML document; a syntax error or duplicate key comes back as a finding."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        return _syntax_error(exc, file, text)
    except yaml.YAMLError as exc:
        return Diagnostic("TP001", Severity.ERROR, Location(file), f"YAML error: {exc}")
    source = SourceMap(file, root)
    if root is None:
        return YamlDocument(None, source)
    try:
        data = _plain(root)
    except _DuplicateKey as dup:
        mark = dup.node.start_mark
        return Diagnostic(
            "TP002",
            Severity.ERROR,
            Location(file, mark.line + 1, mark.column + 1),
            f"duplicate key '{dup.key}'",
            "each key may appear once in a mapping; merge the two entries",
        )
    return YamlDocument(data, source)


def _syntax_error(exc: yaml.MarkedYAMLError, file: str, text: str) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    message = str(exc.problem or exc.context)
    lines = text.splitlines()
    if exc.context_mark and mark and mark.line >= len(lines):  # ran off the end: point at what was left open
        mark = exc.context_mark
        message = f"{exc.context} was never closed ({message})"
    at_tab = mark is not None and mark.line < len(lines) and "\t" in lines[mark.line][: mark.column + 1]
    hint = "YAML indents with spaces only, never tabs" if at_tab else (
        "check indentation and that every ':' is followed by a space"
    )
    return Diagnostic(
        "TP001",
        Severity.ERROR,
        Location(file, mark.line + 1, mark.column + 1) if mark else Location(file),
        f"YAML syntax error: {message}",
        hint,
    )


def _plain(node: Node) -> Any:
    """Build builtin data from composed nodes."""
    if isinstance(node, MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = str(_scalar(key_node)) if isinstance(key_node, ScalarNode) else str(key_node.start_mark)
            if key in out:
                raise _DuplicateKey(key, key_node)
            out[key] = _plain(value_node)
        return out
    if isinstance(node, SequenceNode):
        return [_plain(item) for item in node.value]
    assert isinstance(node, ScalarNode)
    return _scalar(node)


def _scalar(node: ScalarNode) -> Any:
    """YAML 1.2 core schema for plain scalars; quoted scalars are strings."""
    value: str = node.value
    if node.style or not value:  # quoted or block scalar, or empty (null)
        return value if node.style else None
    first = value[0]
    if first in _NUMBER_START:
        if _INT.fullmatch(value):
            return int(value)
        if _INT_OCT.fullmatch(value):
            return int(value[2:], 8)
        if _INT_HEX.fullmatch(value):
            return int(value[2:], 16)
        if _FLOAT.fullmatch(value):
            return float(value)
        return _SPECIAL_FLOAT.get(value.lower(), value)
    if first in _WORD_START:  # the only other non-strings: null, ~ and booleans
        if value in _BOOL:
            return _BOOL[value]
        if _NULL.fullmatch(value):
            return None
    return value

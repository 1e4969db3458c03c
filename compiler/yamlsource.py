"""YAML text -> plain Python data plus the source position of every key and value.

Positions let a pydantic error location such as ``('columns', 3, 'type')`` be reported as
``file:line:col``. Syntax errors and duplicate keys become findings, never exceptions.

Parsing uses libyaml (PyYAML's C composer) for speed, then resolves plain scalars with the YAML 1.2
core schema, as ruamel and most editors do: ``yes``/``no``/``on``/``off`` stay strings and
``2024-01-01`` is not a date.

A small file costs what a small file should: nesting is limited to ``MAX_DEPTH`` levels (measured by
``tablepolicy.compiler.yamldepth`` before any parser sees the text, so the limit and its finding are the same on every
PyYAML and ruamel release), a recursive alias is refused, and aliases may
expand a document to at most ``ALIAS_BUDGET`` nodes per byte of text ("billion laughs").
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import codes
from .diagnostics import Diagnostic, Location, Severity
from .yamldepth import first_too_deep

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
_MAX_DIGITS = 100  # an integer longer than this fits nothing a policy holds (Java's long has 19 digits)

MAX_DEPTH = 200  # nested mappings and lists; 64 nested struct types take about 200
ALIAS_BUDGET = 4  # nodes an alias-using document may expand to, per byte of its text (plus a floor below)
_ALIAS_FLOOR = 10_000


@dataclass
class SourceMap:
    """Where each path of a document sits in its file (1-based), found on demand.

    Positions are looked up in the composed node tree only when a finding needs one, so a valid
    file never pays for them. A policy loaded from a file keeps neither its node tree nor its text: ``reread``
    reads the file again (the loader checks it is unchanged) when a position is asked for; at 10,000 files the
    texts alone were a fifth of a plan's memory. The trees of the last few files asked are kept.
    """

    file: str
    root: Node | None = None  # the tree of a document being validated and checked (``forget_tree`` lets it go)
    text: str | None = None  # the text of a document that is not read again from a file
    reread: Callable[[], str] | None = field(default=None, compare=False)
    digest: str = ""  # the text's sha256, with ``reread``

    def forget_tree(self) -> None:
        """Let the node tree go (positions are then found from the text, or the file read again)."""
        if self.text is not None or self.reread is not None:
            self.root = None

    def key(self, path: Path) -> Location:
        """Position of the key at ``path`` (its value for list items; the nearest parent when absent)."""
        return self._find(path, prefer_key=True)

    def value(self, path: Path) -> Location:
        return self._find(path, prefer_key=False)

    def _find(self, path: Path, *, prefer_key: bool) -> Location:
        node, key_node = self.root if self.root is not None else _tree(self), None
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            key_node, node = child
        target = key_node if prefer_key and key_node is not None else node
        if target is None:
            return Location(self.file, 1, 1)
        return Location(self.file, target.start_mark.line + 1, target.start_mark.column + 1)


_TREES: OrderedDict[tuple[str, str], Node | None] = OrderedDict()
_RECENT_TREES = 8  # a policy's findings and its plan's origins ask for several positions in a row


def _tree(source: SourceMap) -> Node | None:
    """The node tree of a document that keeps only its text, or only the way to read it again."""
    key = (source.file, source.digest or source.text or "")
    if key in _TREES:
        _TREES.move_to_end(key)
        return _TREES[key]
    text = source.text if source.text is not None else source.reread() if source.reread is not None else ""
    tree: Node | None = yaml.compose(text, Loader=_Loader)
    _TREES[key] = tree
    while len(_TREES) > _RECENT_TREES:
        _TREES.popitem(last=False)
    return tree


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


class _Refused(Exception):
    """A document refused while it is turned into data: a finding at ``node``."""

    def __init__(self, code: str, node: Node, message: str, hint: str) -> None:
        self.code, self.node, self.message, self.hint = code, node, message, hint

    def finding(self, file: str) -> Diagnostic:
        mark = self.node.start_mark
        return Diagnostic(self.code, Severity.ERROR, Location(file, mark.line + 1, mark.column + 1), self.message,
                          self.hint)


def parse_yaml(text: str, file: str) -> YamlDocument | Diagnostic:
    """Parse one YAML document; a syntax error, a duplicate key, a recursive or explosive alias, nesting
    deeper than ``MAX_DEPTH`` or a number too long to be one comes back as a finding."""
    too_deep = _too_deep_to_compose(text, file)
    if too_deep is not None:
        return too_deep
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        return _syntax_error(exc, file, text)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow in a file
        before = text[: exc.position]
        where = Location(file, before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1)
        message = (f"YAML does not allow the character U+{exc.character:04X} here"
                   if isinstance(exc.character, int) else f"YAML error: {exc.reason}")
        return Diagnostic(codes.TP001, Severity.ERROR, where, message,
                          "remove it, or write it as an escape in a double-quoted string")
    except yaml.YAMLError as exc:
        return Diagnostic(codes.TP001, Severity.ERROR, Location(file), f"YAML error: {exc}",
                          "check the file is one YAML document")
    source = SourceMap(file, root)
    if root is None:
        return YamlDocument(None, source)
    try:
        data = _Builder(len(text)).build(root) if "*" in text else _plain(root, 0)
    except _Refused as refused:
        return refused.finding(file)
    return YamlDocument(data, source)


def _too_deep_to_compose(text: str, file: str) -> Diagnostic | None:
    """A text nesting deeper than ``MAX_DEPTH``, measured by the tool's own scanner before a parser sees it:
    libyaml composes recursively in C and newer PyYAML stops at its own limit with a syntax error.

    Every nesting level opens with one of ``[ { - : ?``, so a text with few of them is safe without a look.
    """
    if sum(text.count(c) for c in "[{-:?") <= MAX_DEPTH:
        return None
    where = first_too_deep(text, limit=MAX_DEPTH)
    if where is None:
        return None
    return Diagnostic(codes.TP005, Severity.ERROR, Location(file, *where), f"nesting deeper than {MAX_DEPTH} levels",
                      _DEPTH_HINT)


_DEPTH_HINT = "a policy nests a few levels; check for unclosed brackets or a generated file gone wrong"


def _plain(node: Node, depth: int) -> Any:
    """Build builtin data from composed nodes (a document without aliases: every node is built once)."""
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if depth >= MAX_DEPTH:
        raise _Refused(codes.TP005, node, f"nesting deeper than {MAX_DEPTH} levels", _DEPTH_HINT)
    if isinstance(node, MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = str(_scalar(key_node)) if isinstance(key_node, ScalarNode) else str(key_node.start_mark)  # inline:
            if key in out:  # the hot loop of every parse
                raise _duplicate(key, key_node)
            out[key] = _plain(value_node, depth + 1)
        return out
    assert isinstance(node, SequenceNode)
    return [_plain(item, depth + 1) for item in node.value]


def _key(node: Node) -> str:
    return str(_scalar(node)) if isinstance(node, ScalarNode) else str(node.start_mark)


def _duplicate(key: str, node: Node) -> _Refused:
    return _Refused(codes.TP002, node, f"duplicate key '{key}'",
                    "each key may appear once in a mapping; merge the two entries")


class _Builder:
    """``_plain`` for a document that may use aliases: counts the nodes it builds and refuses a cycle."""

    def __init__(self, text_length: int) -> None:
        self.budget = ALIAS_BUDGET * text_length + _ALIAS_FLOOR
        self.open: set[int] = set()  # the collections being built: meeting one again is a recursive alias

    def build(self, node: Node, depth: int = 0) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise _Refused(codes.TP004, node, "aliases expand this document beyond a size a policy can have",
                           "write the values out instead of repeating aliases of aliases (*name)")
        if isinstance(node, ScalarNode):
            return _scalar(node)
        if id(node) in self.open:
            raise _Refused(codes.TP004, node, "recursive alias: a collection contains itself",
                           "an alias (*name) cannot refer to the collection that holds it")
        if depth >= MAX_DEPTH:
            raise _Refused(codes.TP005, node, f"nesting deeper than {MAX_DEPTH} levels", _DEPTH_HINT)
        self.open.add(id(node))
        try:
            if isinstance(node, MappingNode):
                out: dict[str, Any] = {}
                for key_node, value_node in node.value:
                    key = _key(key_node)
                    if key in out:
                        raise _duplicate(key, key_node)
                    out[key] = self.build(value_node, depth + 1)
                return out
            assert isinstance(node, SequenceNode)
            return [self.build(item, depth + 1) for item in node.value]
        finally:
            self.open.discard(id(node))


def _syntax_error(exc: yaml.MarkedYAMLError, file: str, text: str) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    message = str(exc.problem or exc.context)
    lines = text.splitlines()
    if exc.context_mark and mark and mark.line >= len(lines):  # ran off the end: point at what was left open
        mark = exc.context_mark
        message = f"{exc.context} was never closed ({message})"
    at_tab = mark is not None and mark.line < len(lines) and "\t" in lines[mark.line][: mark.column + 1]
    hint = "YAML indents with spaces only, never tabs" if at_tab else (
        "one policy per file: move each '---' document into a file of its own" if "another document" in message
        else "check indentation and that every ':' is followed by a space"
    )
    return Diagnostic(
        codes.TP001,
        Severity.ERROR,
        Location(file, mark.line + 1, mark.column + 1) if mark else Location(file),
        f"YAML syntax error: {message}",
        hint,
    )


def _scalar(node: ScalarNode) -> Any:
    """YAML 1.2 core schema for plain scalars; quoted scalars are strings."""
    value: str = node.value
    if node.style or not value:  # quoted or block scalar, or empty (null)
        return value if node.style else None
    first = value[0]
    if first in _NUMBER_START:
        if _INT.fullmatch(value):
            return int(_digits(node, value))
        if _INT_OCT.fullmatch(value):
            return int(_digits(node, value)[2:], 8)
        if _INT_HEX.fullmatch(value):
            return int(_digits(node, value)[2:], 16)
        if _FLOAT.fullmatch(value):
            return float(value)
        return _SPECIAL_FLOAT.get(value.lower(), value)
    if first in _WORD_START:  # the only other non-strings: null, ~ and booleans
        if value in _BOOL:
            return _BOOL[value]
        if _NULL.fullmatch(value):
            return None
    return value


def _digits(node: ScalarNode, value: str) -> str:
    """An integer's text, refused when no setting could hold it (and Python would not convert it)."""
    if len(value) > _MAX_DIGITS:
        raise _Refused(codes.TP105, node, f"a number of {len(value)} digits is out of range for any setting",
                       "numbers in a policy fit a 64-bit integer (at most 19 digits)")
    return value

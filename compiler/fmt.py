"""Canonical formatting of policy files: keys in the order the format documents them, one indentation
style, comments and the author's flow/block choices kept."""

from __future__ import annotations

import difflib
import io
from typing import Any

from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from .diagnostics import Diagnostic
from .policy.introspect import field_names, models_at
from .policy.table import NamespaceDefaults, TablePolicy
from .policy.view import ViewPolicy
from .yamlsource import Path, parse_yaml


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # never fold a line: flow mappings stay on the line the author wrote
    yaml.preserve_quotes = True
    return yaml


def format_text(text: str) -> str:
    """The canonical form of one policy document; raise YAMLError when it does not parse, or when its
    aliases or nesting go beyond what validate accepts (ruamel would walk them without a bound)."""
    bounded = parse_yaml(text, "")
    if isinstance(bounded, Diagnostic) and bounded.code in ("TP004", "TP005"):
        raise YAMLError(f"line {bounded.location.line}: {bounded.message}")
    yaml = _yaml()
    data = yaml.load(text)
    if isinstance(data, CommentedMap):
        model: type[BaseModel] = TablePolicy
        if "table" not in data:
            model = ViewPolicy if "view" in data else NamespaceDefaults if "namespace" in data else TablePolicy
        _reorder(data, model, ())
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _reorder(node: Any, model: type[BaseModel], path: Path) -> None:
    if isinstance(node, CommentedMap):
        models = models_at(model, path)  # a union's member whose keys the mapping uses (a tag, a branch) orders it
        order = field_names([m for m in models if set(node) <= set(field_names([m]))] or models)
        rank = {key: i for i, key in enumerate(order)}
        for key in sorted(node, key=lambda k: rank.get(k, len(rank))):
            node.move_to_end(key)
        for key, value in node.items():
            _reorder(value, model, (*path, key))
    elif isinstance(node, CommentedSeq):
        for index, value in enumerate(node):
            _reorder(value, model, (*path, index))


def format_diff(text: str, formatted: str, name: str) -> str:
    """The unified diff that turns ``text`` into ``formatted``, both sides labelled ``name`` (so ``patch -p0``
    applies it from the folder ``name`` is relative to); empty when they are equal. A last line without a
    newline is marked as diff(1) marks it."""
    lines = difflib.unified_diff(text.splitlines(keepends=True), formatted.splitlines(keepends=True), name, name)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


__all__ = ["YAMLError", "format_diff", "format_text"]

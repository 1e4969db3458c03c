"""Canonical formatting of policy files: keys in the order the format documents them, one indentation
style, comments and the author's flow/block choices kept."""

from __future__ import annotations

import io
from typing import Any

from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from compiler.diagnostics import Diagnostic
from compiler.spec.introspect import field_names, models_at
from compiler.spec.table import NamespaceDefaults, TablePolicy
from compiler.yamlsource import Path, parse_yaml


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
        model: type[BaseModel] = NamespaceDefaults if "namespace" in data and "table" not in data else TablePolicy
        _reorder(data, model, ())
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _reorder(node: Any, model: type[BaseModel], path: Path) -> None:
    if isinstance(node, CommentedMap):
        order = field_names(models_at(model, path))
        rank = {key: i for i, key in enumerate(order)}
        for key in sorted(node, key=lambda k: rank.get(k, len(rank))):
            node.move_to_end(key)
        for key, value in node.items():
            _reorder(value, model, (*path, key))
    elif isinstance(node, CommentedSeq):
        for index, value in enumerate(node):
            _reorder(value, model, (*path, index))


__all__ = ["YAMLError", "format_text"]

"""The tool's own nesting measure agrees with a YAML parser's on every document a parser accepts.

``first_too_deep(text, limit=d)`` must find nothing at the document's true depth ``d`` (as PyYAML's event
stream counts it) and must find the opening of level ``d`` at ``limit=d - 1``: one level too many would
refuse a valid policy, one too few would let a deep text reach the parsers' own limits.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from tablepolicy.compiler.yamldepth import first_too_deep


def parser_depth(text: str) -> int:
    depth = deepest = 0
    for event in yaml.parse(text, Loader=yaml.BaseLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return deepest


def assert_same_depth(text: str) -> None:
    depth = parser_depth(text)
    assert first_too_deep(text, limit=depth) is None, f"counted deeper than {depth}: {text!r}"
    if depth:
        assert first_too_deep(text, limit=depth - 1) is not None, f"missed level {depth}: {text!r}"


CASES = [
    ("anchor_and_alias", "a: &x [b, [c]]\nb: *x\n"),
    ("tag", "a: !!seq [b]\n"),
    ("flow_comment_over_lines", "a: [b, # c ]]]\n  [d]]\n"),
    ("explicit_key", "? [a, b]\n: [c, [d]]\n"),
    ("document_marker", "--- [a, [b]]\n"),
    ("literal_block_scalar", "a:\n  b: |\n    [[[[\n     - - - x\n  c: [d]\n"),
    ("folded_block_scalar", "a: >\n  x: [y\n\nb: [c]\n"),
    ("single_quoted_over_lines", "a: 'x\n  [[[y'\n"),
    ("double_quoted_escape", 'a: "x\\"[[\n [ y"\n'),
    ("escaped_backslash", 'a: ["b\\\\", [c]]\n'),
    ("doubled_single_quote", "a: {b: 'it''s [', c: [d]}\n"),
    ("list_at_key_column", "- a: 1\n  b:\n  - c\n  - - d\n"),
    ("flow_over_lines", "a: [b,\n  {c: [d,\n  e]}]\nf: g\n"),
    ("compact_lists", "- - - - a\n"),
    ("quoted_key", "'a: b': [c]\n"),
    ("bracket_in_plain_scalar", "a: b [c\nd: e\n"),
    ("bracket_in_comment", "key: value # [[[\n"),
    ("apostrophe_in_flow", "a: [it's, [x]]\n"),
    ("key_after_list", "a:\n- b\nc:\n  d: [e]\n"),
    ("crlf", "a:\r\n  b: [c]\r\n"),
    ("policy_like", "table: s.t\ncolumns:\n  - {name: a, type: {struct: [{name: b, type: {list: long}}]}}\n"
                    "  - name: c\n    type:\n      map: {key: string, value: {list: string}}\n"),
]


@pytest.mark.parametrize("text", [t for _, t in CASES], ids=[i for i, _ in CASES])
def test_depth_agrees_with_the_parser(text: str) -> None:
    assert_same_depth(text)


def _node(rng: random.Random, level: int) -> Any:
    if level > 6 or rng.random() < 0.3:
        return rng.choice(["x", "it's", "a: b", "#c", "[x", 'q"q', 3, None, "- y", "|", "multi\nline", "{", "k:x"])
    if rng.random() < 0.5:
        return {f"k{i}" + rng.choice(["", ":x", " #", "'"]): _node(rng, level + 1) for i in range(rng.randint(0, 3))}
    return [_node(rng, level + 1) for _ in range(rng.randint(0, 3))]


STYLES = [{"default_flow_style": False}, {"default_flow_style": True}, {"default_flow_style": None},
          {"default_flow_style": False, "indent": 4}, {"default_style": '"'}, {"default_style": "'"},
          {"default_style": "|"}]


@pytest.mark.parametrize("seed", range(8))
def test_depth_agrees_on_generated_documents(seed: int) -> None:
    """Random nested data with awkward scalars, written in every style PyYAML's emitter has."""
    rng = random.Random(seed)
    for _ in range(100):
        data = _node(rng, 0)
        for style in STYLES:
            assert_same_depth(yaml.safe_dump(data, width=rng.choice([20, 80, 1000]), **style))

"""parse_yaml bounds what a small text may cost, and says where: aliases, nesting, numbers, characters."""

from __future__ import annotations

import tracemalloc

import pytest

from tablepolicy.compiler.diagnostics import Diagnostic
from tablepolicy.compiler.yamlsource import MAX_DEPTH, YamlDocument, parse_yaml


def columns(n: int) -> str:
    return "table: s.t\ncolumns:\n" + "".join(f"  - {{name: c{i}, type: long, doc: 'a-b: c'}}\n" for i in range(n))


CASES = [
    # id, text, (code, line, col) or None for a valid document
    ("laughs", "a: &a [x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 8)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)), "TP004"),
    ("self_alias", "a: &a [*a]\n", "TP004"),
    ("mutual_alias", "a: &a {b: &b [*a]}\n", "TP004"),
    ("aliases_ok", "a: &a {x: 1}\nb: [*a, *a, *a]\n", None),
    ("flow_too_deep", "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n", "TP005"),
    ("flow_at_limit", "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n", None),
    ("block_too_deep", "".join("  " * i + "-\n" for i in range(MAX_DEPTH + 5)), "TP005"),
    ("large_and_deep", columns(300) + "x: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "TP005"),
    ("large_and_valid", columns(1000), None),
    ("digits", "a: " + "1" * 101 + "\n", "TP105"),
    ("hex_digits", "a: 0x" + "f" * 200 + "\n", "TP105"),
    ("digits_ok", "a: " + "9" * 19 + "\n", None),
    ("control_char", "a: b\x07c\n", "TP001"),
    ("two_documents", "a: 1\n---\nb: 2\n", "TP001"),
    # Deeper than PyYAML's own limits (about 1,000 levels since 6.0.4) and than ruamel's Python frames: the
    # tool's limit answers first, the same finding on every parser release.
    ("flow_past_pyyaml_limit", "a: " + "[" * 5_000 + "]" * 5_000 + "\n", "TP005"),
    ("flow_unclosed", "a: " + "[" * 5_000 + "\n", "TP005"),
    ("block_past_pyyaml_limit", "".join(" " * i + "k:\n" for i in range(1_500)), "TP005"),
    ("compact_lists", "- " * 50_000 + "x\n", "TP005"),
    ("brackets_in_scalars", columns(50) + "doc: '" + "[" * 5_000 + "'\nnote: |\n  " + "{" * 5_000 + "\n", None),
]


@pytest.mark.parametrize(("text", "code"), [(t, c) for _, t, c in CASES], ids=[i for i, _, _ in CASES])
def test_bounded(text: str, code: str | None) -> None:
    """Bounded in work, not in seconds: an alias bomb expanded or a deep text composed would take
    gigabytes; what parsing allocates stays a small multiple of the text whatever the machine's speed."""
    tracemalloc.start()
    try:
        parsed = parse_yaml(text, "f.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024, f"parsing {len(text):,} characters allocated {peak:,} bytes"
    if code is None:
        assert isinstance(parsed, YamlDocument)
    else:
        assert isinstance(parsed, Diagnostic) and parsed.code == code, parsed
        assert parsed.location.line >= 1 and parsed.hint, parsed.render()


def test_positions() -> None:
    found = parse_yaml("ok: 1\nbad: " + "[" * 300 + "]" * 300 + "\n", "f.yaml")
    assert isinstance(found, Diagnostic) and (found.location.line, found.location.col) == (2, 5 + MAX_DEPTH)
    found = parse_yaml("ok: 1\nbad: " + "[" * 100_000 + "]" * 100_000 + "\n", "f.yaml")
    assert isinstance(found, Diagnostic) and (found.code, found.location.line, found.location.col) == (
        "TP005", 2, 5 + MAX_DEPTH)
    found = parse_yaml("".join(" " * i + "k:\n" for i in range(1_500)), "f.yaml")  # the key opening level 201
    assert isinstance(found, Diagnostic) and (found.code, found.location.line, found.location.col) == (
        "TP005", MAX_DEPTH + 1, MAX_DEPTH + 1)
    found = parse_yaml("ok: 1\nx: &x\n  y: *x\n", "f.yaml")
    assert isinstance(found, Diagnostic) and found.code == "TP004" and found.location.line == 2  # the anchored one

"""Bad-input corpus: each file marks the line of every expected finding with ``# <- CODE``.

The validator must report exactly those (line, code) pairs for the file: nothing missing, nothing extra.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tablepolicy.compiler.validate import validate

CORPUS = Path(__file__).parents[1] / "corpus"
MARK = re.compile(r"#\s*<-\s*(TP\d{3})")


def expected(file: Path) -> set[tuple[int, str]]:
    data = file.read_bytes()
    text = data.decode("utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else data.decode("utf-8", "replace")
    lines = text.split("\n")  # YAML's line breaks; str.splitlines would also break at U+2028 and friends
    return {(n, code) for n, line in enumerate(lines, 1) for code in MARK.findall(line)}


# Policy files are found whatever the case of their suffix: the corpus holds .YAML and .Yml cases too.
CASES = sorted(f for f in CORPUS.iterdir() if f.suffix.lower() in (".yaml", ".yml"))


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize("file", CASES, ids=[f.stem for f in CASES])
def test_finding(file: Path) -> None:
    _, diagnostics = validate(file)
    found = {(d.location.line, d.code) for d in diagnostics}
    assert found == expected(file), "\n".join(d.render() for d in diagnostics)
    for d in diagnostics:
        assert d.location.file.endswith(file.name)
        assert d.message and d.hint, f"{d.render()}: every finding says how to fix it"

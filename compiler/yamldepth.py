"""How deep a YAML text nests, measured by tablepolicy itself before any YAML library sees it.

The nesting limit is the tool's own: libyaml composes recursively in C, newer PyYAML releases stop at
about 1,000 levels with a ScannerError of their own, and ruamel walks the text in Python frames. Each
would report a deep document differently (a syntax error, a RecursionError, nothing), so a document is
measured here first and one too deep is refused the same way whatever parser is installed.

The measure is a small line scanner, not a YAML parser: it follows block indentation (a ``- `` or
``key:`` at a new column opens a level), flow brackets outside quotes and comments, quoted scalars over
several lines and block scalars (``|``, ``>``), whose content it skips. Where it cannot tell, it counts
a level rather than miss one; the parser has the last word below the limit (see ``yamlsource``).

>>> first_too_deep("a: [[[]]]\\n", limit=3)
(1, 6)
>>> first_too_deep("a: [[[]]]\\n", limit=4) is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# In flow context only these characters matter; everything else is scalar text.
_FLOW_SPECIAL = re.compile(r"[\[\]{}'\"#]")
_SPACE = " \t"
_TOKEN_BEFORE = frozenset("[{, \t")  # a quote after one of these opens a quoted scalar in flow context


@dataclass
class _Scan:
    limit: int
    block: list[tuple[int, str]] = field(default_factory=list)  # open block collections: (column, "seq"|"map")
    flow: int = 0  # open flow collections
    flow_base: int = 0  # block levels open when the outermost flow collection began
    quote: str = ""  # the quote of a quoted scalar still open at the end of a line
    scalar_parent: int | None = None  # inside a block scalar: its content is indented deeper than this
    found: tuple[int, int] | None = None  # (line, column), 1-based, of the first opening beyond the limit

    def depth(self) -> int:
        return (self.flow_base + self.flow) if self.flow else len(self.block)

    def opened(self, line: int, column: int) -> None:
        if self.found is None and self.depth() > self.limit:
            self.found = (line + 1, column + 1)


def first_too_deep(text: str, *, limit: int) -> tuple[int, int] | None:
    """The 1-based (line, column) where ``text`` first opens a collection ``limit`` levels deep, or None."""
    scan = _Scan(limit)
    for number, line in enumerate(text.split("\n")):
        line = line.rstrip("\r")
        if scan.quote or scan.flow:  # a flow collection or quoted scalar goes on; what follows its end is ignored
            _inside(scan, line, number, 0)
            if scan.found is not None:
                return scan.found
            continue
        if scan.scalar_parent is not None:
            if not line.strip(_SPACE) or _indent(line) > scan.scalar_parent:
                continue
            scan.scalar_parent = None
        _block_line(scan, line, number)
        if scan.found is not None:
            return scan.found
    return scan.found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_line(scan: _Scan, line: str, number: int) -> None:
    """One line in block context: the indicators that open levels, then the value that starts on it."""
    column = _indent(line)
    if column == len(line) or line[column] == "#":
        return
    if column == 0 and line.startswith(("---", "...")) and line[3:4] in ("", " ", "\t"):
        scan.block.clear()
        _value(scan, line, number, 3 + len(line[3:]) - len(line[3:].lstrip(_SPACE)))
        return
    if column == 0 and line.startswith("%"):
        return
    first = True
    while column < len(line) and line[column] in "-?" and line[column + 1:column + 2] in ("", " ", "\t"):
        _open_block(scan, column, "seq" if line[column] == "-" else "map", first=first, number=number)
        first = False
        column += 1
        while column < len(line) and line[column] in _SPACE:
            column += 1
    if column < len(line) and line[column] != "#" and _is_key(line, column):
        _open_block(scan, column, "map", first=first, number=number)
        column = _after_key(line, column)
    _value(scan, line, number, column)


def _open_block(scan: _Scan, column: int, kind: str, *, first: bool, number: int) -> None:
    """A ``- ``, ``? `` or ``key:`` at ``column``: the same collection as an open one there, or a new level
    (a list may sit at its key's column: ``key:`` then ``- item`` is a list inside the mapping)."""
    if first:  # a line's first indicator closes what is indented deeper; a key also closes a list at its column
        while scan.block and (scan.block[-1][0] > column or scan.block[-1] == (column, "seq") != (column, kind)):
            scan.block.pop()
    if scan.block and scan.block[-1] == (column, kind):
        return
    scan.block.append((column, kind))
    scan.opened(number, column)


def _is_key(line: str, start: int) -> bool:
    """Whether the token at ``start`` is an implicit mapping key: ``name:`` followed by a space or the end."""
    position = start
    if line[start] in "'\"":
        end = _quote_end(line, start + 1, line[start])
        if end is None:
            return False
        position = end
    elif line[start] in "[{|>":
        return False
    while True:
        colon = line.find(":", position)
        if colon < 0:
            return False
        comment = line.find(" #", position, colon)
        if comment >= 0:
            return False
        if colon + 1 == len(line) or line[colon + 1] in _SPACE:
            return True
        position = colon + 1


def _after_key(line: str, start: int) -> int:
    position = start
    if line[start] in "'\"":
        position = _quote_end(line, start + 1, line[start]) or len(line)
    while True:
        colon = line.index(":", position)
        if colon + 1 == len(line) or line[colon + 1] in _SPACE:
            position = colon + 1
            break
        position = colon + 1
    while position < len(line) and line[position] in _SPACE:
        position += 1
    return position


def _value(scan: _Scan, line: str, number: int, column: int) -> None:
    """The node that starts at ``column`` of a block line: a flow collection, a quoted or block scalar."""
    while column < len(line) and line[column] in "&!":  # an anchor or a tag before the node
        while column < len(line) and line[column] not in _SPACE:
            column += 1
        while column < len(line) and line[column] in _SPACE:
            column += 1
    if column >= len(line):
        return
    char = line[column]
    if char in "[{":
        scan.flow_base = len(scan.block)
        _inside(scan, line, number, column)
    elif char in "'\"":
        scan.quote = char
        _inside(scan, line, number, column + 1)
    elif char in "|>":
        scan.scalar_parent = scan.block[-1][0] if scan.block else -1


def _inside(scan: _Scan, line: str, number: int, start: int) -> int | None:
    """Scan flow collections and quoted scalars from ``start``; the position after them, None if still open."""
    position = start
    while position < len(line):
        if scan.quote:
            end = _quote_end(line, position, scan.quote)
            if end is None:
                return None
            scan.quote = ""
            position = end
            if not scan.flow:
                return position
            continue
        match = _FLOW_SPECIAL.search(line, position)
        if match is None:
            return None if scan.flow else len(line)
        position = match.start()
        char = line[position]
        if char in "[{":
            scan.flow += 1
            scan.opened(number, position)
        elif char in "]}":
            scan.flow = max(scan.flow - 1, 0)
            if not scan.flow:
                return position + 1
        elif char == "#":
            if position == 0 or line[position - 1] in _SPACE:
                return None if scan.flow else len(line)
        elif position == 0 or line[position - 1] in _TOKEN_BEFORE:
            scan.quote = char
        position += 1
    return None if (scan.flow or scan.quote) else position


def _quote_end(line: str, start: int, quote: str) -> int | None:
    """The position after the quote closing a scalar opened before ``start``, or None if it runs on."""
    position = start
    while True:
        end = line.find(quote, position)
        if end < 0:
            return None
        if quote == "'":
            if line[end + 1:end + 2] == "'":  # '' is a quote inside a single-quoted scalar
                position = end + 2
                continue
            return end + 1
        before = end
        while before > start and line[before - 1] == "\\":
            before -= 1
        if (end - before) % 2 == 0:  # an even run of backslashes escapes itself, not the quote
            return end + 1
        position = end + 1

"""Dotted names with Spark-style backtick quoting: ``security.cloudtrail`` or ```my ns`.`t.x```.

A backticked part may hold dots, spaces and unicode; a literal backtick is written twice.

>>> parse_name("`a b`.`t.x`")
('a b', 't.x')
>>> format_name(('a b', 't.x'))
'`a b`.`t.x`'
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_name(text: str) -> tuple[str, ...]:
    """Split a dotted name into parts; raise ValueError on an empty part or an unclosed backtick."""
    parts: list[str] = []
    i, n = 0, len(text)
    while True:
        if i < n and text[i] == "`":
            i += 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise ValueError(f"unclosed backtick in name {text!r}")
                if text[i] == "`":
                    if i + 1 < n and text[i + 1] == "`":
                        buf.append("`")
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(text[i])
                i += 1
            part = "".join(buf)
        else:
            end = text.find(".", i)
            end = n if end < 0 else end
            part = text[i:end].strip()
            if "`" in part:
                raise ValueError(f"stray backtick in name {text!r}; quote the whole part: `{part}`")
            i = end
        if not part:
            raise ValueError(f"empty part in name {text!r}")
        parts.append(part)
        if i >= n:
            return tuple(parts)
        if text[i] != ".":
            raise ValueError(f"expected '.' after a quoted part in name {text!r}")
        i += 1


def format_part(part: str) -> str:
    """A part as a policy writes it: bare when plain, else backticked."""
    return part if _PLAIN.fullmatch(part) else "`" + part.replace("`", "``") + "`"


def format_name(parts: tuple[str, ...]) -> str:
    return ".".join(format_part(p) for p in parts)

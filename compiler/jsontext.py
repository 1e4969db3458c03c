"""``json.loads`` for text the tool did not write itself: nesting too deep for the parser is a JSONDecodeError
(a ValueError, with a position), never a RecursionError.

Python's JSON parser recurses once per ``[`` or ``{`` and stops at the interpreter's recursion limit; a plan
file, a requests line or a catalog property holding ``[[[[...`` a hundred thousand deep would otherwise end
the run with a traceback.

>>> loads('{"a": [1]}')
{'a': [1]}
>>> loads("[" * 100_000)
Traceback (most recent call last):
json.decoder.JSONDecodeError: nesting too deep (more than 512 levels): line 1 column 513 (char 512)
"""

from __future__ import annotations

import json
import re
from typing import Any

# Deeper than any document the tool reads or writes (a plan holds column types nested up to 64 levels, a few
# JSON levels each), and well inside the parser's own limit of about a thousand frames.
MAX_DEPTH = 512
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # a whole string (brackets in it are text), or a bracket


def _too_deep(text: str) -> int | None:
    """The offset of the first bracket that opens level MAX_DEPTH + 1 (outside strings), or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for match in _TOKENS.finditer(text):
        char = match[0]
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif char in "]}":
            depth -= 1
    return None


def loads(text: str, **kwargs: Any) -> Any:
    """json.loads(text), refusing nesting deeper than MAX_DEPTH levels with a JSONDecodeError at that bracket."""
    offset = _too_deep(text)
    if offset is not None:
        raise json.JSONDecodeError(f"nesting too deep (more than {MAX_DEPTH} levels)", text, offset)
    try:
        return json.loads(text, **kwargs)
    except RecursionError:  # a small recursion limit in this thread: still a finding, not a traceback
        raise json.JSONDecodeError("nesting too deep", text, 0) from None

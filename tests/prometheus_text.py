"""A strict parser of the Prometheus text exposition format (version 0.0.4), written from the format's
specification (https://prometheus.io/docs/instrumenting/exposition_formats/, "Text format details"), for the
tests of ``health --format prometheus``. prometheus_client is not in requirements/dev.lock; this parser refuses
more than its parser does (it is stricter where the spec says "must"):

- lines end with a line feed, the last one too; no carriage return;
- ``# HELP name text``: at most one per metric, text with only ``\\\\`` and ``\\n`` escapes;
- ``# TYPE name type``: exactly two tokens, one of counter, gauge, histogram, summary, untyped; at most one per
  metric and before its first sample;
- a sample: ``name{label="value",...} value [timestamp]``, metric names ``[a-zA-Z_:][a-zA-Z0-9_:]*``, label
  names ``[a-zA-Z_][a-zA-Z0-9_]*`` (not ``__``-prefixed, each once), label values with only ``\\\\``, ``\\"`` and
  ``\\n`` escapes, a value Go's ParseFloat reads (and NaN, +Inf, -Inf), an integer timestamp;
- a metric's lines form one group (no metric comes back after another began) and no two of its samples carry the
  same label set.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
SPECIAL = {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf, "Inf": math.inf}


class ExpositionError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")


@dataclass
class Family:
    name: str
    help: str | None = None
    type: str = "untyped"
    typed: bool = False  # a TYPE line was read
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)

    def value(self, **labels: str) -> float:
        """The one sample whose labels include ``labels``."""
        found = [v for got, v in self.samples if labels.items() <= got.items()]
        assert len(found) == 1, f"{self.name}{labels}: {len(found)} sample(s)"
        return found[0]


def _unescape(text: str, allowed: str, line: int) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            if i + 1 >= len(text) or text[i + 1] not in allowed:
                raise ExpositionError(line, f"invalid escape {text[i:i + 2]!r}")
            out.append("\n" if text[i + 1] == "n" else text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _labels(text: str, line: int) -> tuple[dict[str, str], str]:
    """``{a="x",b="y"} rest`` -> labels and the rest after the closing brace."""
    labels: dict[str, str] = {}
    i = 1
    while True:
        if text[i:i + 1] == "}":
            return labels, text[i + 1:]
        name = LABEL.match(text, i)
        if name is None:
            raise ExpositionError(line, f"bad label name at {text[i:i + 10]!r}")
        if name[0].startswith("__"):
            raise ExpositionError(line, f"reserved label name {name[0]!r}")
        if name[0] in labels:
            raise ExpositionError(line, f"label {name[0]!r} twice")
        i = name.end()
        if text[i:i + 2] != '="':
            raise ExpositionError(line, f"expected '=\"' after label {name[0]!r}")
        i += 2
        start = i
        while i < len(text) and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        if i >= len(text):
            raise ExpositionError(line, "unterminated label value")
        labels[name[0]] = _unescape(text[start:i], '\\"n', line)
        i += 1
        if text[i:i + 1] == ",":
            i += 1
        elif text[i:i + 1] != "}":
            raise ExpositionError(line, f"expected ',' or '}}' at {text[i:i + 10]!r}")


def _number(token: str, line: int) -> float:
    if token in SPECIAL:
        return SPECIAL[token]
    if not FLOAT.fullmatch(token):
        raise ExpositionError(line, f"not a number: {token!r}")
    return float(token)


def parse(text: str) -> dict[str, Family]:
    """Families by name, in the order they appear; raises ExpositionError at the first violation."""
    if text and not text.endswith("\n"):
        raise ExpositionError(text.count("\n") + 1, "the last line must end with a line feed")
    if "\r" in text:
        raise ExpositionError(1, "carriage return")
    families: dict[str, Family] = {}
    closed: set[str] = set()
    current: str | None = None

    def family(name: str, number: int) -> Family:
        nonlocal current
        if name != current:
            if name in closed:
                raise ExpositionError(number, f"{name}: its lines must form one group")
            if current is not None:
                closed.add(current)
            current = name
        return families.setdefault(name, Family(name))

    for number, line in enumerate(text.split("\n")[:-1], 1):
        stripped = line.strip(" \t")
        if not stripped:
            continue
        if stripped.startswith("#"):
            tokens = stripped[1:].lstrip(" \t").split(None, 2) if stripped[1:2] in (" ", "\t") else []
            if not tokens or tokens[0] not in ("HELP", "TYPE"):
                continue  # a comment
            if len(tokens) < 2 or not METRIC.fullmatch(tokens[1]):
                raise ExpositionError(number, f"{tokens[0]} needs a metric name")
            found = family(tokens[1], number)
            if tokens[0] == "HELP":
                if found.help is not None:
                    raise ExpositionError(number, f"second HELP for {tokens[1]}")
                found.help = _unescape(tokens[2] if len(tokens) > 2 else "", "\\n", number)
            else:
                if len(tokens) != 3 or tokens[2] not in TYPES:
                    raise ExpositionError(number, f"TYPE needs one of {', '.join(TYPES)}")
                if found.samples or found.typed:
                    raise ExpositionError(number, f"TYPE of {tokens[1]} after its samples or twice")
                found.type, found.typed = tokens[2], True
            continue
        name = METRIC.match(stripped)
        if name is None:
            raise ExpositionError(number, f"bad metric name at {stripped[:20]!r}")
        rest = stripped[name.end():]
        labels: dict[str, str] = {}
        if rest.startswith("{"):
            labels, rest = _labels(rest, number)
        if not rest[:1].isspace():
            raise ExpositionError(number, "expected a space before the value")
        tokens = rest.split()
        if len(tokens) not in (1, 2):
            raise ExpositionError(number, f"expected a value and an optional timestamp, got {tokens!r}")
        if len(tokens) == 2 and not re.fullmatch(r"-?[0-9]+", tokens[1]):
            raise ExpositionError(number, f"bad timestamp {tokens[1]!r}")
        found = family(name[0], number)
        if any(got == labels for got, _ in found.samples):
            raise ExpositionError(number, f"{name[0]}{labels}: a second sample with these labels")
        found.samples.append((labels, _number(tokens[0], number)))
    return families

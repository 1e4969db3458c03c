"""Hypothesis strategies that build documents from a JSON Schema (the subset tablepolicy.compiler.schema generates).

hypothesis-jsonschema 0.23.1 does not work with the locked hypothesis 6.170.17, so this is a small one of our own:
``$ref``/``$defs``, ``anyOf``/``oneOf``, ``const``/``enum``, string ``pattern`` (``st.from_regex``), ``format``
``date`` and ``regex``, ``examples`` (drawn half the time), lengths, integer bounds, arrays with ``minItems``,
objects with ``required``/optional ``properties``, ``additionalProperties`` (false or a schema),
``propertyNames``, ``minProperties``, keywords beside a union, and one ``if``/``else`` (the ``else`` is applied
when the ``if`` does not hold). Recursion is bounded: past ``max_depth`` a union takes a member that does not
nest, an object only its required keys and an array its fewest items.

``wild``: 1 in ``wild`` values is any JSON value instead of one the schema allows (0: never), so documents also
probe what the schema refuses. ``schema_validator`` checks a document as an editor would (ECMA-262 regular
expressions: ``$`` is the end of the text, not before a trailing newline as in Python's ``re``; ``format`` is
asserted).
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

import jsonschema
from hypothesis import strategies as st

Schema = dict[str, Any]
LONG = 2**63
# what a wild value is: small JSON of every type, integral floats (2.0) included
_WILD_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                          st.integers(-40, 40).map(lambda n: n / 4), st.text(max_size=12))
WILD = st.recursive(_WILD_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                           st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                    max_leaves=6)


def from_schema(schema: Schema, *, max_depth: int = 5, wild: int = 0) -> st.SearchStrategy[Any]:
    """Documents of ``schema`` (the root: its ``$defs`` resolve every ``$ref``)."""
    return _Builder(schema, max_depth, wild).build(schema, 0)


class _Builder:
    def __init__(self, root: Schema, max_depth: int, wild: int) -> None:
        self.root, self.max_depth, self.wild = root, max_depth, wild
        self.built: dict[tuple[str, int], st.SearchStrategy[Any]] = {}  # strategies are built once, drawn often

    def resolve(self, schema: Schema) -> Schema:
        while "$ref" in schema:
            target = self.root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema

    def build(self, schema: Schema, depth: int) -> st.SearchStrategy[Any]:
        key = (json.dumps(schema, sort_keys=True), depth)
        if key not in self.built:
            allowed = self._allowed(self.resolve(schema), depth)
            self.built[key] = allowed if not self.wild else st.integers(0, self.wild - 1).flatmap(
                lambda n: WILD if n == 0 else allowed)
        return self.built[key]

    def _nests(self, schema: Schema) -> bool:
        schema = self.resolve(schema)
        if "anyOf" in schema or "oneOf" in schema:
            return all(self._nests(m) for m in schema.get("anyOf", schema.get("oneOf", [])))
        return schema.get("type") in ("object", "array") and bool(schema.get("required") or schema.get("minItems"))

    def _allowed(self, schema: Schema, depth: int) -> st.SearchStrategy[Any]:
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        union = schema.get("anyOf", schema.get("oneOf"))
        if union is not None:  # a keyword beside the union (format, description) holds for each member
            beside = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf", "default")}
            union = [{**beside, **m} for m in union]
            flat = [m for m in union if not self._nests(m)] if depth >= self.max_depth else []
            return st.one_of([self.build(m, depth) for m in flat or union])
        kind = schema.get("type")
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            low = schema.get("minItems", 0)
            high = low if depth >= self.max_depth else max(low, 3)
            return st.lists(self.build(schema.get("items", {}), depth + 1), min_size=low, max_size=high)
        if kind == "string":
            return _string(schema)
        if kind == "integer":
            return st.integers(schema.get("minimum", -LONG), schema.get("maximum", LONG - 1))
        if kind == "number":
            low, high = schema.get("exclusiveMinimum", schema.get("minimum")), \
                schema.get("exclusiveMaximum", schema.get("maximum"))
            if low is None and high is None:
                return st.integers(-1000, 1000).map(lambda n: n / 8)
            return st.floats(low, high, exclude_min="exclusiveMinimum" in schema,  # a bounded number keeps to its
                             exclude_max="exclusiveMaximum" in schema, allow_nan=False, allow_infinity=False)  # bounds
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        return WILD  # {}: anything

    def _object(self, schema: Schema, depth: int) -> st.SearchStrategy[dict[str, Any]]:
        properties: dict[str, Schema] = schema.get("properties", {})
        required = set(schema.get("required", []))
        extra = schema.get("additionalProperties", True)
        deep = depth >= self.max_depth
        otherwise: Schema = schema.get("else", {})
        condition = jsonschema.Draft202012Validator(schema["if"]) if "if" in schema and otherwise else None

        @st.composite
        def draw_object(draw: st.DrawFn) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, sub in properties.items():
                if name in required or (not deep and draw(st.booleans())):
                    out[name] = draw(self.build(sub, depth + 1))
            if isinstance(extra, dict) and not properties:
                names = _string(schema.get("propertyNames", {}) | {"type": "string"}, max_size=10)
                low = max(schema.get("minProperties", 0), 0)
                out.update(draw(st.dictionaries(names, self.build(extra, depth + 1), min_size=low,
                                                max_size=low if deep else max(low, 3))))
            if condition is not None and not condition.is_valid(out):
                for name in otherwise.get("required", []) + list(otherwise.get("properties", {})):
                    if name in out or name in otherwise.get("required", []):
                        merged = {**self.resolve(properties[name]), **otherwise.get("properties", {}).get(name, {})}
                        out[name] = draw(self.build(merged, depth + 1))
            return out

        return draw_object()


def _string(schema: Schema, max_size: int = 16) -> st.SearchStrategy[str]:
    """Text the schema allows; half of it from the schema's ``examples`` when it has some (a type name or an
    expression that parses, so the document goes on to the checks of its meaning)."""
    examples = [e for e in schema.get("examples", []) if isinstance(e, str)]
    if examples:
        return st.one_of(st.sampled_from(examples), _string({k: v for k, v in schema.items() if k != "examples"}))
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if schema.get("format") == "date":
        dates = st.dates().map(date.isoformat)
        return dates.filter(re.compile(schema["pattern"]).search) if "pattern" in schema else dates
    if schema.get("format") == "regex":
        return st.one_of(st.sampled_from(["^[a-z_]+$", r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$", ".*", "x|y"]),
                         st.text(max_size=8).filter(_compiles)).filter(lambda s: len(s) >= low)
    if "pattern" in schema:
        within = (lambda s: low <= len(s) <= high) if high is not None else (lambda s: low <= len(s))
        return st.from_regex(schema["pattern"], fullmatch=True).filter(within)
    text = st.text(min_size=low, max_size=max(low, min(high or max_size, max_size)))
    return text if high is None else st.one_of(text, st.just("x" * high))  # a maximum is hit, not only neared


def _compiles(text: str) -> bool:
    try:
        re.compile(text)
    except re.error:
        return False
    return True


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Schema) -> Any:
    """``pattern`` as ECMA-262 reads it: ``$`` is the end of the text (Python's also matches before a final
    newline), ``\\d`` is an ASCII digit."""
    if isinstance(instance, str):
        python = re.sub(r"(?<!\\)\$$", r"\\Z", pattern).replace(r"\d", "[0-9]")
        if not re.search(python, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


EditorValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})


def schema_validator(schema: Schema) -> Any:
    """A validator that reads ``schema`` as an editor does: ECMA-262 patterns, ``format`` asserted."""
    return EditorValidator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)

"""Which spec model sits at a path of a policy document (for "did you mean" and for ``fmt``'s key order)."""

from __future__ import annotations

import types
import typing
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from ..yamlsource import Path


def models_at(model: type[BaseModel], path: Path) -> list[type[BaseModel]]:
    """The model classes that can appear at ``path`` below ``model`` (several where a union allows)."""
    candidates: list[Any] = [model]
    for part in path:
        candidates = [nxt for c in candidates for nxt in _descend(c, part)]
    return [c for c in _expand(candidates) if isinstance(c, type) and issubclass(c, BaseModel)]


def field_names(models: list[type[BaseModel]]) -> list[str]:
    """Keys (aliases where set) of the models, in declaration order, without repeats."""
    names: dict[str, None] = {}
    for model in models:
        for name, info in model.model_fields.items():
            names[info.alias or name] = None
    return list(names)


def _expand(annotations: list[Any]) -> list[Any]:
    """Unwrap Annotated, unions and forward references into concrete classes."""
    out: list[Any] = []
    for ann in annotations:
        if isinstance(ann, typing.ForwardRef | str):
            ann = _resolve(ann)
        origin = get_origin(ann)
        if origin is typing.Annotated:
            out.extend(_expand([get_args(ann)[0]]))
        elif origin in (typing.Union, types.UnionType):
            out.extend(_expand(list(get_args(ann))))
        else:
            out.append(ann)
    return out


def _descend(annotation: Any, part: str | int) -> list[Any]:
    result: list[Any] = []
    for ann in _expand([annotation]):
        origin = get_origin(ann)
        if isinstance(part, int) and origin is list:
            result.append(get_args(ann)[0])
        elif isinstance(part, str) and origin is dict:
            result.append(get_args(ann)[1])
        elif isinstance(part, str) and isinstance(ann, type) and issubclass(ann, BaseModel):
            result.extend(info.annotation for name, info in ann.model_fields.items() if part in (name, info.alias))
    return result


def _resolve(ref: typing.ForwardRef | str) -> Any:
    from . import columns

    name = ref.__forward_arg__ if isinstance(ref, typing.ForwardRef) else ref
    return getattr(columns, name, Any)

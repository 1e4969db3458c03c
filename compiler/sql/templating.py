"""The one jinja2 environment: StrictUndefined, no autoescape (SQL is quoted by filters), packaged templates."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from .filters import FILTERS


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("tablepolicy.compiler.sql", "templates"),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(f"{template}.sql.j2").render(**context).strip()

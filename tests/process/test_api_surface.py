"""The public API's surface is ``tablepolicy.__all__``, and what each name is (a function's signature, a result's
fields, an exception's base) is written down in tests/golden/api_surface.txt. A name added, removed or renamed, a
parameter added or reordered, a field changed: this test fails until the golden file changes with it, in the same
commit, where a reviewer sees it (Terraform and pyiceberg guard their public interfaces the same way).

Rewrite it with ``UPDATE_GOLDEN=1 .venv/bin/pytest -q tests/process/test_api_surface.py`` and review its diff.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tablepolicy

GOLDEN = Path(__file__).parents[1] / "golden" / "api_surface.txt"


def describe(name: str, value: object) -> str:
    if inspect.ismodule(value):
        listed = getattr(value, "__all__", None)  # a public module names its members; else what it defines
        members = sorted(listed if listed is not None else (
            n for n in vars(value) if not n.startswith("_") and _defined_in(vars(value)[n], value)))
        return f"module {name}: " + ", ".join(members)
    if inspect.isclass(value):
        bases = ", ".join(b.__name__ for b in value.__bases__)
        if dataclasses.is_dataclass(value):
            fields = ", ".join(f"{f.name}: {f.type}" for f in dataclasses.fields(value))
            extra = sorted(n for n, v in vars(value).items() if isinstance(v, property))
            return f"class {name}({bases}) fields({fields})" + (f" properties({', '.join(extra)})" if extra else "")
        if issubclass(value, enum.Enum):
            return f"enum {name}: " + ", ".join(m.name for m in value)
        return f"class {name}({bases})"
    if callable(value):
        return f"def {name}{inspect.signature(value)}"
    return f"{name}: {type(value).__name__}"


def _defined_in(value: object, module: object) -> bool:
    return getattr(value, "__module__", None) == getattr(module, "__name__", None)


def surface() -> str:
    return "".join(describe(name, getattr(tablepolicy, name)) + "\n" for name in sorted(tablepolicy.__all__)
                   if name != "__version__")


def test_the_public_names_and_their_shapes_are_the_golden_file() -> None:
    found = surface()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(found, encoding="utf-8")
    assert found == GOLDEN.read_text(encoding="utf-8"), (
        "the public API changed; if that is meant, rewrite tests/golden/api_surface.txt with UPDATE_GOLDEN=1 and "
        "review its diff")


def test_every_listed_name_exists_and_nothing_public_is_unlisted() -> None:
    assert sorted(tablepolicy.__all__) == sorted(dir(tablepolicy))
    for name in tablepolicy.__all__:
        getattr(tablepolicy, name)
    with pytest.raises(AttributeError, match="its names: BlockedPlanError"):
        tablepolicy.plan_file  # noqa: B018  (a name that is not part of the API)


def test_importing_the_package_loads_no_catalog_client_planner_or_engine() -> None:
    """``import tablepolicy`` is cheap: each function loads what it needs when called."""
    code = ("import sys, tablepolicy; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pyiceberg', 'pyspark', 'sqlalchemy') or m.startswith('tablepolicy.compiler.plan')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"

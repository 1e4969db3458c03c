"""Imports as Python resolves them, for the tests that read the source: inside compiler/, runtime/ and
tablepolicy/ a module imports its neighbours relatively (``from ..diff import changes``), so a check that reads
``node.module`` alone would miss them. Each file's installed module name comes from where its folder is mounted."""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
MOUNTS = {"compiler": "tablepolicy.compiler", "runtime": "tablepolicy.runtime", "tablepolicy": "tablepolicy"}


def module_name(file: Path) -> str:
    """The installed name of a file of compiler/, runtime/ or tablepolicy/ (``tablepolicy.compiler.plan.model``)."""
    folder, *rest = file.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join((MOUNTS[folder], *rest)).removesuffix(".__init__")


def package_of(file: Path) -> str:
    name = module_name(file)
    return name if file.name == "__init__.py" else name.rpartition(".")[0]


def absolute(node: ast.ImportFrom, package: str) -> ast.ImportFrom:
    """``node`` with its module made absolute (a level-0 copy); an absolute import as it is."""
    if not node.level:
        return node
    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
    module = ".".join([*anchor, *([node.module] if node.module else [])])
    return ast.ImportFrom(module, node.names, 0, lineno=node.lineno)


def imports_from(source: str, package: str) -> Iterator[ast.ImportFrom]:
    """Every ``from X import ...`` of ``source`` (a module of ``package``), X absolute."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            yield absolute(node, package)


def house_files() -> list[Path]:
    """Every module of the house, each once (tablepolicy/compiler and tablepolicy/runtime are links)."""
    return sorted(f for folder in MOUNTS for f in (ROOT / folder).rglob("*.py")
                  if not f.relative_to(ROOT).as_posix().startswith(("tablepolicy/compiler/", "tablepolicy/runtime/")))


def script(name: str) -> ModuleType:
    """A script of scripts/ (not installed: ``scripts/docgen.py`` -> ``script("docgen")``) loaded as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

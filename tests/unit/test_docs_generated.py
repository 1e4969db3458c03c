"""The manual's generated parts are the code rendered (scripts/docgen.py): the CLI reference from the typer
commands, the policy field tables from the JSON Schema, the code tables from compiler/codes.py, the reader table
from compiler/iceberg/readers.py. A page that differs from what the code renders fails here; ``make docs`` writes
them. And the README stays a landing page."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.imports import script

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def docgen() -> ModuleType:
    return script("docgen")


def test_no_generated_page_is_stale() -> None:
    stale = [str(p.relative_to(ROOT)) for p in docgen().stale(DOCS)]
    assert stale == [], f"stale: {stale}; run make docs (python scripts/docgen.py docs) and commit the pages"


def test_the_cli_reference_has_every_command_and_flag() -> None:
    from typer.main import get_command

    from tablepolicy.cli.app import app

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    root = get_command(app)
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        if command.hidden:
            continue
        assert f"## tablepolicy {name}\n" in page, name
        for option in getattr(command, "params", []):
            for flag in getattr(option, "opts", []):
                if flag.startswith("--") and not option.hidden:
                    assert flag in page, (name, flag)


def test_the_field_tables_have_every_key_of_the_schema() -> None:
    import json

    from tablepolicy.compiler.schema import policy_json_schema_text

    page = (DOCS / "policy-fields.md").read_text(encoding="utf-8")
    for name, spec in json.loads(policy_json_schema_text())["$defs"].items():
        assert f"\n## {name}\n" in page, name
        for key in spec.get("properties", {}):
            assert f"| `{key}` |" in page, (name, key)


def test_a_stale_page_is_named(tmp_path: Path) -> None:
    for page in DOCS.glob("*.md"):
        (tmp_path / page.name).write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    cli = tmp_path / "cli.md"
    cli.write_text(cli.read_text(encoding="utf-8").replace("--lock-timeout", "--lock-wait"), encoding="utf-8")
    assert docgen().stale(tmp_path) == [cli]


def test_the_readme_is_a_landing_page_linking_every_page_of_the_manual() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for must in ("make demo", "make test", "make install", "## Exit codes", "import tablepolicy",
                 "tablepolicy init"):
        assert must in readme, must
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", readme))
    assert pages <= linked, sorted(pages - linked)


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_every_page_is_in_the_navigation(page: str) -> None:
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python", "#"))["nav"]
    flat = re.findall(r"[\w-]+\.md", str(nav))
    assert page in flat

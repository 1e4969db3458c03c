"""tablepolicy init: a policy repository from nothing whose workflows pin what they install."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.project import load_selected
from compiler.validate import validate
from runtime.scaffold import DEFAULT_SPEC, Scaffold, ScaffoldError, check_spec, spark_spec


@pytest.mark.parametrize(("spec", "spark"), [
    ("tablepolicy==0.1.0", "tablepolicy[spark]==0.1.0"),
    (".", ".[spark]"),
    ("git+https://github.com/acme/tablepolicy@3f2a9c1", "tablepolicy[spark] @ git+https://github.com/acme/tablepolicy@3f2a9c1"),
    ("tablepolicy @ git+https://github.com/acme/tablepolicy@3f2a9c1",
     "tablepolicy[spark] @ git+https://github.com/acme/tablepolicy@3f2a9c1"),
])
def test_spark_extra_is_added_to_any_pinned_form(spec: str, spark: str) -> None:
    check_spec(spec)
    assert spark_spec(spec) == spark


@pytest.mark.parametrize("spec", ["tablepolicy", "tablepolicy[spark]", "some-other-name"])
def test_unpinned_names_are_refused(spec: str) -> None:
    with pytest.raises(ScaffoldError, match="unpinned name"):
        check_spec(spec)


def test_init_writes_a_repository_that_validates(tmp_path: Path) -> None:
    written = Scaffold(tmp_path, DEFAULT_SPEC).write()
    names = {str(p.relative_to(tmp_path)) for p in written}
    assert {".github/workflows/tablepolicy-plan.yml", ".pre-commit-config.yaml", "policy.schema.json",
            "policies/analytics/page_views.yaml", "policies/_rules.yaml", ".pyiceberg.example.yaml"} <= names
    plan = (tmp_path / ".github/workflows/tablepolicy-plan.yml").read_text()
    assert f'pip install "{DEFAULT_SPEC}"' in plan
    table = (tmp_path / "policies/analytics/page_views.yaml").read_text()
    assert table.startswith("# yaml-language-server: $schema=../../policy.schema.json\n")
    project, diagnostics = validate(tmp_path / "policies")
    assert [d.render() for d in diagnostics.errors] == []
    assert [t.declared for t in project.tables] == ["analytics.page_views"]
    # the environment overlay names the table and the catalog the example configuration defines, within the rules
    for environment in (None, "prod"):
        _, _, found = load_selected(tmp_path / "policies", environment=environment, every_environment=True)
        assert [d.render() for d in found.errors] == []
    prod = load_selected(tmp_path / "policies", environment="prod")[0].environment
    assert prod is not None and prod.overlay.catalog == "prod" and "  prod:\n" in (
        tmp_path / ".pyiceberg.example.yaml").read_text()


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("mine\n")
    with pytest.raises(ScaffoldError, match=r"already has \.gitignore; nothing was written"):
        Scaffold(tmp_path, DEFAULT_SPEC).write()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore"]

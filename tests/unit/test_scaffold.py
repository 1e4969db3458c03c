"""tablepolicy init: a policy repository from nothing whose workflows pin what they install."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.project import load_selected
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.scaffold import Scaffold, ScaffoldError, retired_calls, spark_spec
from tablepolicy.runtime.scaffold.source import check_spec
from tests.cli_runner import tablepolicy

SPEC = "tablepolicy==0.1.0"
SHA = "3f2a9c1d" * 5


@pytest.mark.parametrize(("spec", "spark"), [
    ("tablepolicy==0.1.0", "tablepolicy[spark]==0.1.0"),
    (".", ".[spark]"),
    (f"git+https://github.com/acme/tablepolicy@{SHA}", f"tablepolicy[spark] @ git+https://github.com/acme/tablepolicy@{SHA}"),
    (f"tablepolicy @ git+https://github.com/acme/tablepolicy@{SHA}",
     f"tablepolicy[spark] @ git+https://github.com/acme/tablepolicy@{SHA}"),
    ("./wheels/tablepolicy-0.1.0-py3-none-any.whl", "./wheels/tablepolicy-0.1.0-py3-none-any.whl[spark]"),
])
def test_spark_extra_is_added_to_any_pinned_form(tmp_path: Path, spec: str, spark: str) -> None:
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "tablepolicy-0.1.0-py3-none-any.whl").write_bytes(b"")
    check_spec(spec, tmp_path)
    assert spark_spec(spec) == spark


def test_init_writes_a_repository_that_validates(tmp_path: Path) -> None:
    written = Scaffold(tmp_path, SPEC).write()
    names = {str(p.relative_to(tmp_path)) for p in written}
    assert {".github/workflows/tablepolicy-plan.yml", ".pre-commit-config.yaml", "policy.schema.json",
            "policies/analytics/page_views.yaml", "policies/_rules.yaml", ".pyiceberg.example.yaml"} <= names
    plan = (tmp_path / ".github/workflows/tablepolicy-plan.yml").read_text()
    assert f'pip install "{SPEC}"' in plan
    table = (tmp_path / "policies/analytics/page_views.yaml").read_text()
    assert table.startswith("# yaml-language-server: $schema=../../policy.schema.json\n")
    project, diagnostics = validate(tmp_path / "policies")
    assert [d.render() for d in diagnostics.errors] == []
    assert [t.declared for t in project.tables] == ["analytics.page_views", "privacy.erasure_requests"]
    requests = (tmp_path / "policies/privacy/erasure_requests.yaml").read_text()  # erase's request table, not a file
    assert "--requests-table privacy.erasure_requests" in (
        tmp_path / ".github/workflows/tablepolicy-erase.yml").read_text()
    assert "requests.yaml" not in (tmp_path / ".github/workflows/tablepolicy-erase.yml").read_text()
    assert "{name: keys, type: {map: {key: string, value: string}}" in requests
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
        Scaffold(tmp_path, SPEC).write()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore"]


OLD_PLAN_JOB = """\
name: tablepolicy plan
on: pull_request
jobs:
  plan:
    runs-on: ubuntu-latest
    steps:
      - run: tablepolicy plan policies --format markdown > plan.md
      - run: python -m runtime.github comment --pr 1 --file plan.md --marker tablepolicy-plan
"""


def test_init_names_each_workflow_line_that_still_runs_a_module_no_longer_installed(tmp_path: Path) -> None:
    """Workflows written by a release before one import root ran ``python -m runtime.github``: init says which
    line and what to write instead, whether it refuses (the scaffold's files exist) or writes."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "tablepolicy-plan.yml").write_text(OLD_PLAN_JOB)
    (workflows / "nightly.yml").write_text(OLD_PLAN_JOB.replace("comment --pr 1", "reviewed-plan --commit x"))
    with pytest.raises(ScaffoldError) as refused:
        Scaffold(tmp_path, "tablepolicy==0.1.0").write()
    assert (".github/workflows/nightly.yml:8: runs `python -m runtime.github`, which tablepolicy no longer installs "
            "(everything lives under the tablepolicy package); change it to `tablepolicy github` with the same "
            "arguments") in str(refused.value)
    assert ".github/workflows/tablepolicy-plan.yml:8:" in str(refused.value)
    Scaffold(tmp_path, "tablepolicy==0.1.0").write(force=True)  # the scaffold's own file is replaced ...
    assert retired_calls(tmp_path) == [  # ... the user's other workflow is theirs to change
        ".github/workflows/nightly.yml:8: runs `python -m runtime.github`, which tablepolicy no longer installs "
        "(everything lives under the tablepolicy package); change it to `tablepolicy github` with the same arguments"]
    assert "python -m" not in (workflows / "tablepolicy-plan.yml").read_text()


def test_init_warns_of_a_retired_call_on_the_command_line(tmp_path: Path) -> None:
    workflows = tmp_path / "repo" / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "nightly.yml").write_text(OLD_PLAN_JOB)
    run = tablepolicy("init", "repo", "--install", "tablepolicy==0.1.0", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert ("warning: .github/workflows/nightly.yml:8: runs `python -m runtime.github`, which tablepolicy no longer "
            "installs") in run.stderr

def test_init_names_an_old_erase_workflow_that_reads_requests_from_git(tmp_path: Path) -> None:
    """The erase workflow of earlier releases read privacy/requests.yaml from the repository: init, asked again,
    names that line and the fix (the request table; purging the file from history)."""
    from tablepolicy.runtime.scaffold import retired_calls

    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "tablepolicy-erase.yml").write_text(
        "jobs:\n  erase:\n    steps:\n      - run: |\n"
        "          tablepolicy erase policies/ --requests privacy/requests.yaml --proof erasure-proof.json\n"
        "      - run: tablepolicy erase status policies/ --requests-table privacy.erasure_requests\n"
        "      - run: tablepolicy erase policies/ --requests - < /secure/requests.csv\n"
        "      - run: tablepolicy erase policies/ --requests \"$RUNNER_TEMP/requests.csv\"\n")
    [found] = retired_calls(tmp_path)
    assert found.startswith(".github/workflows/tablepolicy-erase.yml:5: erase reads a requests file of the repository")
    assert "--requests-table privacy.erasure_requests" in found and "git filter-repo" in found
    with pytest.raises(ScaffoldError, match="erase reads a requests file of the repository"):
        Scaffold(tmp_path, SPEC).write()

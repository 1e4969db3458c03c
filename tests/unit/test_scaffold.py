"""tablepolicy init: a policy repository from nothing whose workflows pin what they install."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from tablepolicy.compiler.project import load_selected
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.scaffold import Scaffold, ScaffoldError, install_command, retired_calls, spark_spec
from tablepolicy.runtime.scaffold.source import check_spec
from tablepolicy.runtime.scaffold.wheel import build_wheel

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
    assert {o.action for o in written} == {"wrote"}
    names = {str(o.path.relative_to(tmp_path)) for o in written}
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


def test_init_into_an_existing_repository_adds_its_lines_and_keeps_every_file_it_did_not_write(
        tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/\n.lake\n")  # no newline question: it ends with one
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    (tmp_path / "README.md").write_text("our lake\n")
    outcomes = {str(o.path.relative_to(tmp_path)): o for o in Scaffold(tmp_path, SPEC).write()}
    assert (tmp_path / ".gitignore").read_text() == (
        "node_modules/\n.lake\n# tablepolicy: the embedded catalog, caches, local catalog settings, plans\n"
        ".tablepolicy/\n.pyiceberg.yaml\nplan.json\nplan.md\n*.journal\n")
    assert outcomes[".gitignore"].action == "added lines to"
    assert (tmp_path / ".pre-commit-config.yaml").read_text() == "repos: []\n"
    assert outcomes[".pre-commit-config.yaml"].action == "kept"
    assert "merge in what tablepolicy's would add" in outcomes[".pre-commit-config.yaml"].note
    assert (tmp_path / "README.md").read_text() == "our lake\n"
    assert outcomes[".github/workflows/tablepolicy-plan.yml"].action == "wrote"
    again = Scaffold(tmp_path, SPEC).write()  # a second init changes nothing
    assert {o.action for o in again} <= {"unchanged", "kept"}
    assert (tmp_path / ".gitignore").read_text().count(".tablepolicy/") == 1


def test_a_gitignore_without_a_final_newline_gets_one_before_the_lines(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc")
    Scaffold(tmp_path, SPEC).write()
    assert (tmp_path / ".gitignore").read_text().startswith("*.pyc\n# tablepolicy:")


def test_init_refuses_to_replace_its_own_files_with_other_content_and_writes_nothing(tmp_path: Path) -> None:
    plan = tmp_path / ".github" / "workflows" / "tablepolicy-plan.yml"
    plan.parent.mkdir(parents=True)
    plan.write_text("edited\n")
    (tmp_path / ".gitignore").write_text("mine\n")
    with pytest.raises(ScaffoldError, match=r"already has \.github/workflows/tablepolicy-plan\.yml with other "
                       r"content; nothing was written \(pass --force"):
        Scaffold(tmp_path, SPEC).write()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".github", ".gitignore"]
    assert (tmp_path / ".gitignore").read_text() == "mine\n"


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


def test_force_replaces_only_tablepolicys_own_files(tmp_path: Path) -> None:
    (tmp_path / "policies" / "sales").mkdir(parents=True)
    (tmp_path / "policies" / "_rules.yaml").write_text("rules: {owner_required: false}\n")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "dependabot.yml").write_text("version: 2\nupdates: []\n")
    plan = tmp_path / ".github" / "workflows" / "tablepolicy-plan.yml"
    plan.parent.mkdir()
    plan.write_text("edited\n")
    outcomes = {str(o.path.relative_to(tmp_path)): o.action for o in Scaffold(tmp_path, SPEC).write(force=True)}
    assert outcomes[".github/workflows/tablepolicy-plan.yml"] == "replaced"
    assert f'pip install "{SPEC}"' in plan.read_text()
    assert (outcomes["policies"], outcomes[".github/dependabot.yml"]) == ("kept", "kept")
    assert (tmp_path / "policies" / "_rules.yaml").read_text() == "rules: {owner_required: false}\n"
    assert not (tmp_path / "policies" / "analytics").exists()  # no example table planned into a real repository
    assert (tmp_path / ".github" / "dependabot.yml").read_text() == "version: 2\nupdates: []\n"


def test_a_wheel_pinned_by_digest_is_checked_before_pip_installs_it() -> None:
    spec = f"./wheels/tablepolicy-0.1.0-py3-none-any.whl#sha256={'ab' * 32}"
    assert install_command(spec, spark=True) == (
        f'echo "{"ab" * 32}  wheels/tablepolicy-0.1.0-py3-none-any.whl" | sha256sum --check --strict && '
        'pip install "./wheels/tablepolicy-0.1.0-py3-none-any.whl[spark]"')


def test_the_running_tools_wheel_is_byte_deterministic_and_holds_every_module() -> None:
    first, second = build_wheel(), build_wheel()
    assert first.data == second.data and first.name == "tablepolicy-0.1.0-py3-none-any.whl"
    names = zipfile.ZipFile(io.BytesIO(first.data)).namelist()
    assert {"tablepolicy/cli/app.py", "tablepolicy/compiler/paths.py", "tablepolicy/runtime/scaffold/wheel.py",
            "tablepolicy/runtime/scaffold/workflows/tablepolicy-plan.yml", "tablepolicy-0.1.0.dist-info/METADATA",
            "tablepolicy-0.1.0.dist-info/entry_points.txt", "tablepolicy-0.1.0.dist-info/RECORD"} <= set(names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    record = zipfile.ZipFile(io.BytesIO(first.data)).read("tablepolicy-0.1.0.dist-info/RECORD").decode()
    assert len(record.splitlines()) == len(names)


def test_a_wheel_in_the_repository_with_another_digest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "t.whl").write_bytes(b"x")
    with pytest.raises(Exception, match=r"does not have that sha256 \(it has 2d711642"):
        check_spec(f"./wheels/t.whl#sha256={'ab' * 32}", tmp_path)

"""validate answers from the whole project's saved findings (``.tablepolicy/verdict.json``) when no policy file and no
overlay changed since the run that saved them, and only then: every answer is the one a run without caches gives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import tablepolicy.api as api
from tablepolicy.compiler.verdict import Inputs
from tests.cli_runner import CLI_COMMAND, ROOT, Run, process_env, tablepolicy

HOUR_NS = 3600 * 10**9


def project(where: Path) -> Path:
    """The repository's policies and overlays with a warning in a table file (TP424) and one in a namespace
    defaults file (TP422), every file as if last edited an hour ago (the file index then vouches for it)."""
    shutil.copytree(ROOT / "policies", where / "policies")
    shutil.copytree(ROOT / "environments", where / "environments")
    _edit(where / "policies/ads/click_log.yaml", "delete_after_commit: true, previous_versions_max: 10",
          "delete_after_commit: false, previous_versions_max: 5")
    _edit(where / "policies/logs/_namespace.yaml", "orphan_files: {older_than: 3d}", "orphan_files: {older_than: 2d}")
    for file in [*where.rglob("*.yaml")]:
        age(file)
    (where / ".tablepolicy").mkdir()
    return where


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text()
    assert old in text, (file, old)
    file.write_text(text.replace(old, new, 1))


def age(file: Path) -> None:
    stamp = file.stat().st_mtime_ns - HOUR_NS
    os.utime(file, ns=(stamp, stamp))


def edited(relative: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(where: Path) -> None:
        _edit(where / relative, old, new)
        age(where / relative)  # an old mtime: only the content (and the ctime) tell

    return edit


def added(relative: str, text: str) -> Callable[[Path], None]:
    def add(where: Path) -> None:
        (where / relative).write_text(text)
        age(where / relative)

    return add


def removed(relative: str) -> Callable[[Path], None]:
    return lambda where: (where / relative).unlink()


def nothing(where: Path) -> None:
    pass


def into_folder(relative: str) -> Callable[[Path], None]:
    """The file becomes a folder of its name holding the same text (the walk lists another file)."""
    def move(where: Path) -> None:
        file = where / relative
        text = file.read_text()
        file.unlink()
        file.mkdir()
        added(f"{relative}/inner.yaml", text)(where)

    return move


def linked_to_copy(relative: str, old: str, new: str) -> Callable[[Path], None]:
    """The file becomes a symlink to an edited copy of the same size and mtime (only the inode tells)."""
    def link(where: Path) -> None:
        file = where / relative
        copy = where / "copy.yaml"
        shutil.copy2(file, copy)
        _edit(copy, old, new)
        os.utime(copy, ns=(file.stat().st_mtime_ns, file.stat().st_mtime_ns))
        file.unlink()
        file.symlink_to(copy)

    return link


def copied(relative: str, to: str) -> Callable[[Path], None]:
    return lambda where: added(to, (where / relative).read_text())(where)


@dataclass(frozen=True)
class Case:
    name: str
    change: Callable[[Path], None]
    args: tuple[str, ...]
    from_verdict: bool  # answered without validating
    saves: bool = True  # when it validates, the run keeps its findings: the policy files have no error
    cwd: str = "."
    env: dict[str, str] = field(default_factory=dict)


CASES = [
    Case("unchanged, one table file", nothing, ("validate", "policies/ads/click_log.yaml"), True),
    Case("unchanged, another table file", nothing, ("validate", "policies/logs/app_events.yaml"), True),
    Case("unchanged, a folder", nothing, ("validate", "policies/security"), True),
    Case("unchanged, the project as JSON", nothing, ("validate", "policies", "--format", "json"), True),
    Case("unchanged, annotations", nothing, ("validate", "policies/ads", "--format", "github"), True),
    Case("unchanged, a path holding no policy", nothing, ("validate", "policies/nowhere"), True),
    Case("another working folder", nothing, ("validate", "app_events.yaml"), False, cwd="policies/logs"),
    Case("a table file edited", edited("policies/ads/click_log.yaml", "type: string", "type: strang"),
         ("validate", "policies/logs/app_events.yaml"), False, saves=False),
    Case("a table file edited, same size", edited("policies/ads/click_log.yaml", "previous_versions_max: 5",
                                                  "previous_versions_max: 6"), ("validate", "policies/ads"), False),
    Case("a file added taking a table's name", added("policies/logs/copy.yaml", "table: ads.click_log\ncolumns:\n"
                                                     "  - {name: id, type: long}\n"),
         ("validate", "policies/ads/click_log.yaml"), False, saves=False),
    Case("a file removed", removed("policies/logs/app_events.yaml"), ("validate", "policies"), False),
    Case("an overlay edited", edited("environments/dev.yaml", "security.cloudtrail_mgmt:", "security.cloudtrail:"),
         ("validate", "policies/ads"), False),
    Case("an overlay added", added("environments/qa.yaml", "catalog: qa\nnamespaces:\n  nowhere: {owner: x}\n"),
         ("validate", "policies/ads"), False),
    Case("an overlay removed", removed("environments/dev.yaml"), ("validate", "policies"), False),
    Case("--env", nothing, ("validate", "policies/ads", "--env", "dev"), False),
    Case("TABLEPOLICY_ENV", nothing, ("validate", "policies/ads"), False, env={"TABLEPOLICY_ENV": "prod"}),
    Case("the saved findings damaged", added(".tablepolicy/verdict.json", '{"version": 1, "key": '),
         ("validate", "policies"), False),
    Case("TABLEPOLICY_ENV empty", nothing, ("validate", "policies/ads"), True, env={"TABLEPOLICY_ENV": ""}),
    Case("a missing file as JSON", nothing, ("validate", "policies/ads/gone.yaml", "--format", "json"), True),
    Case("a file that is no policy added and selected", added("policies/ads/README.md", "# ads\n"),
         ("validate", "policies/ads/README.md"), True),
    Case("a view with a warning, another file selected",  # a view's file declares no table: shown for any path
         added("policies/ads/by_user.yaml", "view: ads.clicks_by_user\nsql: SELECT ((( FROM\n"),
         ("validate", "policies/logs/app_events.yaml"), False),
    Case("a table file replaced by a folder holding it", into_folder("policies/logs/app_events.yaml"),
         ("validate", "policies/logs"), False),
    Case("a table file a symlink to an edited copy", linked_to_copy("policies/ads/click_log.yaml",
                                                                    "delete_after_commit: false",
                                                                    "delete_after_commit: true "),
         ("validate", "policies/ads"), False),
    Case("an overlay defined twice (refused before any validation)", copied("environments/dev.yaml",
                                                                            "environments/dev.yml"),
         ("validate", "policies/ads"), True),
]


def outcome(run: Run) -> tuple[int, str, str]:
    return run.returncode, run.stdout, run.stderr


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_saved_findings_answer_only_an_unchanged_project(tmp_path: Path, case: Case,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    warm = project(tmp_path / "warm")
    first = tablepolicy("validate", "policies", cwd=warm)
    assert first.returncode == 0 and "TP424" in first.stderr and "TP422" in first.stderr, first.stderr
    assert (warm / ".tablepolicy/verdict.json").is_file()
    case.change(warm)
    cold = tmp_path / "cold"
    shutil.copytree(warm, cold, ignore=shutil.ignore_patterns(".tablepolicy"))

    validated: list[object] = []
    real = api._validated
    monkeypatch.setattr(api, "_validated", lambda *a: validated.append(a) or real(*a))

    def warm_run() -> tuple[Run, int]:
        before = len(validated)
        run = tablepolicy(*case.args, cwd=warm / case.cwd, env=case.env)
        return run, len(validated) - before

    answer, validations = warm_run()
    assert validations == (0 if case.from_verdict else 1)
    assert outcome(answer) == outcome(tablepolicy(*case.args, cwd=cold / case.cwd, env=case.env))
    again, validations = warm_run()  # the run that validated saved its findings, unless it found an error
    assert outcome(again) == outcome(answer)
    assert validations == int(not case.from_verdict and not case.saves)


def test_findings_are_kept_only_from_a_run_without_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project with an error saves no model cache and no findings: each run validates and reports it."""
    warm = project(tmp_path)
    edited("policies/ads/click_log.yaml", "type: string", "type: strang")(warm)
    runs = [tablepolicy("validate", "policies/ads/click_log.yaml", cwd=warm) for _ in range(2)]
    assert [r.returncode for r in runs] == [1, 1]
    assert "unknown type 'strang'" in runs[1].stderr
    assert not (warm / ".tablepolicy/verdict.json").exists()


def test_an_unchanged_project_is_answered_without_the_policy_models(tmp_path: Path) -> None:
    """What makes the answer fast: no policy model, no YAML parser in the process (pydantic is typer's)."""
    warm = project(tmp_path)
    assert tablepolicy("validate", "policies", cwd=warm).returncode == 0
    script = ("import sys\nfrom tablepolicy.cli.app import main\ntry:\n    main()\nexcept SystemExit as e:\n"
              "    code = e.code\n"
              "print(code, sorted(m for m in ('tablepolicy.compiler.policy.table', 'yaml', 'ruamel') "
              "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script, "validate", "policies/ads/click_log.yaml"], cwd=warm,
                          env=process_env(warm), capture_output=True, text=True, timeout=300, check=False)
    assert done.stdout.strip() == "0 []", done.stderr
    assert "TP424" in done.stderr and "TP422" in done.stderr  # the table's warning and its namespace's


def test_the_key_follows_every_input() -> None:
    base = Inputs("/p/policies", None, "--env", (("/p/policies/a.yaml", "1" * 64),), (("/p/environments/dev.yaml",
                                                                                        "2" * 64),))
    changed = [
        Inputs("/q/policies", base.environment, base.flag, base.policies, base.overlays),
        Inputs(base.scope, "dev", base.flag, base.policies, base.overlays),
        Inputs(base.scope, base.environment, "TABLEPOLICY_ENV", base.policies, base.overlays),
        Inputs(base.scope, base.environment, base.flag, (("/p/policies/a.yaml", "3" * 64),), base.overlays),
        Inputs(base.scope, base.environment, base.flag, (("/p/policies/b.yaml", "1" * 64),), base.overlays),
        Inputs(base.scope, base.environment, base.flag, (), base.overlays),
        Inputs(base.scope, base.environment, base.flag, base.policies, ()),
    ]
    keys = {base.key(), *(c.key() for c in changed)}
    assert len(keys) == 1 + len(changed)
    assert base.key() == Inputs(*vars(base).values()).key()  # the same inputs: the same key


@pytest.mark.parametrize("name", ["verdict.json", "models.tsv", "files.json"])
def test_a_fifo_in_place_of_a_cache_file_does_not_block_the_run(tmp_path: Path, name: str) -> None:
    """A named pipe where a cache file was (left by a tool or a prank) is read as no cache, never waited on: the run
    answers as a run without caches, and its cache file replaces the pipe."""
    warm = project(tmp_path / "warm")
    assert tablepolicy("validate", "policies", cwd=warm).returncode == 0
    cold = tmp_path / "cold"
    shutil.copytree(warm, cold, ignore=shutil.ignore_patterns(".tablepolicy"))
    (warm / ".tablepolicy" / name).unlink()
    os.mkfifo(warm / ".tablepolicy" / name)
    if name == "models.tsv":  # read only by a run that validates: no saved findings to answer from
        (warm / ".tablepolicy/verdict.json").unlink()
    args = ("validate", "policies/ads")
    try:  # a process of its own: a run blocked on the pipe is stopped, and the test fails
        done = subprocess.run([*CLI_COMMAND, *args], cwd=warm, env=process_env(warm), capture_output=True, text=True,
                              timeout=120, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"validate waited on a FIFO at .tablepolicy/{name}")
    assert (done.returncode, done.stdout, done.stderr) == outcome(tablepolicy(*args, cwd=cold))
    assert (warm / ".tablepolicy" / name).is_file()

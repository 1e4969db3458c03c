"""init on the command line (it builds or copies the tool's wheel into the repository: a process)."""

from __future__ import annotations

from pathlib import Path

from tests.cli_runner import tablepolicy
from tests.unit.test_scaffold import OLD_PLAN_JOB


def test_init_warns_of_a_retired_call_on_the_command_line(tmp_path: Path) -> None:
    workflows = tmp_path / "repo" / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "nightly.yml").write_text(OLD_PLAN_JOB)
    run = tablepolicy("init", "repo", cwd=tmp_path)  # the running tool's own wheel goes into the repository
    assert run.returncode == 0, run.stderr
    assert ("warning: .github/workflows/nightly.yml:8: runs `python -m runtime.github`, which tablepolicy no longer "
            "installs") in run.stderr

"""tablepolicy show PLAN: a saved plan in any format, checked as apply checks it, with no catalog and no policies
(Terraform's show): the same plan the plan command printed, the plan file's own bytes in JSON, one error line for
a file that is not a plan, and nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli_runner import tablepolicy

ROOT = Path(__file__).resolve().parents[2]


def saved(tmp_path: Path) -> dict[str, str]:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    outputs = {}
    for fmt in ("text", "markdown"):
        run = tablepolicy("plan", "policies", "--format", fmt, "--out", "plan.json", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        outputs[fmt] = run.stdout
    shutil.rmtree(tmp_path / "policies")  # show needs neither the policies
    assert not (tmp_path / ".lake").exists()  # nor a catalog: plan read an empty one and made none
    return outputs


def test_show_prints_the_saved_plan_as_plan_printed_it(tmp_path: Path) -> None:
    planned = saved(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    text = tablepolicy("show", "plan.json", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].endswith(" · saved plan plan.json")
    assert text.stdout.splitlines()[1:] == planned["text"].splitlines()[1:]
    markdown = tablepolicy("show", "plan.json", "--format", "markdown", cwd=tmp_path)
    assert markdown.stdout.splitlines()[1:] == planned["markdown"].splitlines()[1:]
    as_json = tablepolicy("show", "plan.json", "-f", "json", cwd=tmp_path)
    assert as_json.stdout == (tmp_path / "plan.json").read_text()
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_show_refuses_a_file_that_is_not_a_plan(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"tables": []}\n')
    run = tablepolicy("show", "notes.json", cwd=tmp_path)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("error: notes.json: plan file format is not recorded (no format_version)")
    assert "plan again and save it: tablepolicy plan POLICIES --out notes.json" in run.stderr

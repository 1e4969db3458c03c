"""``fmt --diff``: the unified diff of what fmt would change on stdout, nothing written, exit 1 when a file would
change (0 when none would); the diff applied with patch(1) gives exactly what fmt writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_runner import tablepolicy

FORMATTED = "table: s.t\ncolumns:\n  - {name: id, type: long}\n"
CASES = {  # file text -> the diff fmt --diff prints for policies/t.yaml
    "keys out of order": ("columns:\n  - {name: id, type: long}  # the key\ntable: s.t\n",
                          "--- policies/t.yaml\n+++ policies/t.yaml\n@@ -1,3 +1,3 @@\n+table: s.t\n columns:\n"
                          "   - {name: id, type: long}  # the key\n-table: s.t\n"),
    "no newline at the end": ("columns:\n  - {name: id, type: long}\ntable: s.t",
                              "--- policies/t.yaml\n+++ policies/t.yaml\n@@ -1,3 +1,3 @@\n+table: s.t\n columns:\n"
                              "   - {name: id, type: long}\n-table: s.t\n\\ No newline at end of file\n"),
    "indentation": ("table: s.t\ncolumns:\n- {name: id, type: long}\n",
                    "--- policies/t.yaml\n+++ policies/t.yaml\n@@ -1,3 +1,3 @@\n table: s.t\n columns:\n"
                    "-- {name: id, type: long}\n+  - {name: id, type: long}\n"),
}


def project(tmp_path: Path, text: str) -> Path:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(text)
    (policies / "formatted.yaml").write_text(FORMATTED.replace("s.t", "s.u"))
    return policies


@pytest.mark.parametrize("case", sorted(CASES))
def test_diff_shows_the_change_and_writes_nothing(tmp_path: Path, case: str) -> None:
    text, expected = CASES[case]
    policies = project(tmp_path, text)
    run = tablepolicy("fmt", "--diff", "policies", cwd=tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (1, expected, "would reformat policies/t.yaml\n")
    assert (policies / "t.yaml").read_text() == text  # nothing written
    # the patch gives what fmt itself writes
    shutil.copytree(policies, tmp_path / "patched" / "policies")
    subprocess.run(["patch", "-p0", "--quiet"], input=run.stdout, text=True, cwd=tmp_path / "patched", check=True)
    assert tablepolicy("fmt", "policies", cwd=tmp_path).returncode == 0
    assert (tmp_path / "patched/policies/t.yaml").read_text() == (policies / "t.yaml").read_text()


def test_diff_of_formatted_files_is_empty_and_exits_0(tmp_path: Path) -> None:
    project(tmp_path, FORMATTED)
    run = tablepolicy("fmt", "--diff", "policies", cwd=tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_diff_with_check_is_the_same_and_a_single_file_works(tmp_path: Path) -> None:
    text, expected = CASES["keys out of order"]
    project(tmp_path, text)
    run = tablepolicy("fmt", "--check", "--diff", "policies/t.yaml", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (1, expected)


def test_diff_of_a_file_that_does_not_parse_says_so(tmp_path: Path) -> None:
    policies = project(tmp_path, "table: s.t\ncolumns: [\n")
    run = tablepolicy("fmt", "--diff", "policies", cwd=tmp_path)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("error: policies/t.yaml: not formatted, YAML does not parse:"), run.stderr
    assert (policies / "t.yaml").read_text() == "table: s.t\ncolumns: [\n"

"""The CLI as a user runs it: exact finding lines, exit codes, no tracebacks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runtime.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_validate_examples_ok() -> None:
    result = runner.invoke(app, ["validate", str(ROOT / "policies")])
    assert result.exit_code == 0, result.output
    assert "5 file(s) checked: 0 error(s), 0 warning(s)" in result.output


def test_validate_reports_every_file_at_once(tmp_path: Path) -> None:
    for name in ("type_varchar", "transform_hourly", "orphan_under_floor"):
        shutil.copy(ROOT / "tests/corpus" / f"{name}.yaml", tmp_path / f"{name}.yaml")
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if ": error " in line]
    assert len(lines) == 3
    varchar = next(line for line in lines if "type_varchar" in line)
    assert varchar.endswith("type_varchar.yaml:3:22: error TP201: columns.0.type: unknown type 'varchar(10)'")
    assert "hint: did you mean 'string'?" in result.output
    assert "Traceback" not in result.output


def test_validate_missing_path(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "no such file or directory" in result.output


def test_ddl_prints_create_statements() -> None:
    result = runner.invoke(app, ["ddl", str(ROOT / "policies")])
    assert result.exit_code == 0, result.output
    assert "CREATE NAMESPACE IF NOT EXISTS `lake`.`security`;" in result.output
    assert "PARTITIONED BY (`asl_version`, `region`, `accountid`, days(`time_dt`))" in result.output
    assert "'history.expire.max-snapshot-age-ms' = '21600000'" in result.output


def test_ddl_refuses_invalid_policies() -> None:
    result = runner.invoke(app, ["ddl", str(ROOT / "tests/corpus/type_uuid.yaml")])
    assert result.exit_code == 1
    assert "TP212" in result.output and "CREATE" not in result.output


def test_schema_command_matches_committed_copy() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output)["$defs"]["TablePolicy"]["additionalProperties"] is False


def test_fmt_check_and_rewrite_keep_comments(tmp_path: Path) -> None:
    policy = tmp_path / "t.yaml"
    policy.write_text("columns:\n- {name: id, type: long}  # the key\ntable: shop.orders\n")
    check = runner.invoke(app, ["fmt", "--check", str(tmp_path)])
    assert check.exit_code == 1 and "would reformat" in check.output
    assert runner.invoke(app, ["fmt", str(tmp_path)]).exit_code == 0
    assert policy.read_text() == "table: shop.orders\ncolumns:\n  - {name: id, type: long} # the key\n"
    assert runner.invoke(app, ["fmt", "--check", str(tmp_path)]).exit_code == 0


def test_examples_are_formatted() -> None:
    assert runner.invoke(app, ["fmt", "--check", str(ROOT / "policies")]).exit_code == 0


@pytest.mark.parametrize("command", ["validate", "ddl", "plan", "apply", "maintain", "erase", "health", "drift",
                                     "import", "fmt", "schema", "version"])
def test_every_command_has_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_usage_errors_exit_1_so_they_never_read_as_plan_changes() -> None:
    tool = Path(sys.executable).parent / "tablepolicy"
    mistyped = subprocess.run([str(tool), "plan", "--detailed-exit-code"], capture_output=True, text=True, check=False)
    assert mistyped.returncode == 1 and "No such option" in mistyped.stderr
    missing = subprocess.run([str(tool), "erase", "policies"], capture_output=True, text=True, check=False, cwd=ROOT)
    assert missing.returncode == 1 and "Missing option '--requests'" in missing.stderr

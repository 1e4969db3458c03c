"""The CLI as a user runs it: exact finding lines, exit codes, no tracebacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tests.cli_runner import tablepolicy, tablepolicy_process

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_validate_examples_ok() -> None:
    result = runner.invoke(app, ["validate", str(ROOT / "policies")])
    assert result.exit_code == 0, result.output
    assert "6 file(s) checked: 0 error(s), 0 warning(s)" in result.output


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
                                     "import", "fmt", "schema", "version", "unlock"])
def test_every_command_has_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_usage_errors_exit_1_so_they_never_read_as_plan_changes() -> None:
    mistyped = tablepolicy("plan", "--detailed-exit-code", cwd=ROOT)
    assert mistyped.returncode == 1 and "No such option" in mistyped.stderr
    missing = tablepolicy("erase", "policies", cwd=ROOT)
    assert missing.returncode == 1
    assert "give exactly one of --requests FILE (- for standard input) and --requests-table" in missing.stderr


MISUSE = [  # argv (in a copy of the project, "req.yaml" holds one erasure request) -> exit code -> a stderr line
    (["plan", "policies", "--out", "policies"], 1, "error: --out policies: is a directory; give a file path"),
    (["plan", "policies", "--out", "missing/plan.json"], 1,
     "error: --out missing/plan.json: folder missing does not exist; create it first"),
    (["apply", "policies", "--auto-approve", "--json-report", "."], 1, "error: --json-report .: is a directory"),
    (["apply", "policies", "--auto-approve", "--json-report", "no/r.json"], 1,
     "error: --json-report no/r.json: folder no does not exist"),
    (["maintain", "policies", "--json-report", "policies/ads"], 1, "error: --json-report policies/ads: is a directory"),
    (["erase", "policies", "-r", "req.yaml", "--proof", "x/y/proof.json"], 1,
     "error: --proof x/y/proof.json: folder x/y does not exist"),
    (["apply", "policies", "--auto-approve", "--spark-master", "bogus://x"], 1,
     "error: --spark-master 'bogus://x': not a Spark master URL; use local[N], spark://host:port, yarn or "
     "k8s://https://host:port"),
    (["maintain", "policies", "--spark-master", "local[two]"], 1, "error: --spark-master 'local[two]': not a Spark "
                                                                  "master URL"),
    (["apply", "policies", "--auto-approve", "--spark-master", "spark://nohost.invalid:1"], 1,
     "error: --spark-master 'spark://nohost.invalid:1': no Spark master answers there"),
    (["erase", "policies", "-r", "req.yaml", "--spark-master", "spark://127.0.0.1:1"], 1,
     "error: --spark-master 'spark://127.0.0.1:1': no Spark master answers there (Connection refused)"),
    (["apply", "policies", "--auto-approve", "--spark-master", "yarn"], 1,
     "error: Spark did not start with --spark-master 'yarn': "
     "When running with master 'yarn' either HADOOP_CONF_DIR or YARN_CONF_DIR must be set in the environment."),
    (["apply", "policies", "--auto-approve", "--spark-conf", "novalue"], 1, "--spark-conf takes key=value"),
    (["plan", "nowhere"], 1, "error TP000: no such file or directory"),
    (["plan", "policies/ads/missing.yaml"], 1, "policies/ads/missing.yaml: error TP000: no such file or directory"),
    (["plan", "empty"], 1, "empty: error TP006: no policy files here"),
    (["plan", "policies", "--format", "yaml"], 1,
     "Error: Invalid value for '--format' / '-f': 'yaml' is not one of 'text', 'markdown', 'json'."),
    (["erase", "status", "policies", "--format", "yaml"], 1,
     "Error: Invalid value for '--format' / '-f': 'yaml' is not one of 'text', 'json'."),
    (["apply", "policies"], 1, "error: apply policies asks for confirmation and there is no terminal to answer it; "
     "nothing was applied. Apply a reviewed plan (tablepolicy plan policies --out plan.json, then tablepolicy apply "
     "plan.json) or pass --auto-approve"),
]


@pytest.mark.parametrize(("argv", "code", "line"), MISUSE, ids=[" ".join(m[0]) for m in MISUSE])
def test_cli_misuse_is_one_line_before_any_work(tmp_path: Path, argv: list[str], code: int, line: str) -> None:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (tmp_path / "empty").mkdir()
    (tmp_path / "req.yaml").write_text("requests:\n  - {id: R1, received: '2026-11-02', keys: {user_id: u1}}\n")
    # Spark's JVM writes to the process's stderr itself: only a process of the CLI's own shows what it wrote
    result = (tablepolicy_process if "yarn" in argv else tablepolicy)(*argv, cwd=tmp_path)
    assert result.returncode == code, result.stdout + result.stderr
    assert line in result.stderr
    assert "Traceback" not in result.stderr and "Exception" not in result.stderr and "at org." not in result.stderr
    if line.startswith("error:"):  # one line, no Java stack, no Spark banner
        assert result.stderr.strip().splitlines() == [next(x for x in result.stderr.splitlines() if line in x)]
    created = "yarn" in argv  # Spark fails only after the plan was read (nothing applied: see the catalog)
    assert (tmp_path / ".lake").exists() == created
    if created:
        assert "Apply complete" not in result.stdout and not list((tmp_path / ".lake/warehouse").iterdir())

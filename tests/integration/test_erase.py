"""erase through the CLI on real tables: the subjects' rows are gone from every snapshot kept and from
storage, every other row is there, tables that do not declare erasure are untouched, a tag that keeps
the rows blocks completion, and the proof names requests and files but no key values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tests.integration.conftest import Lake
from tests.integration.evolve import converge

pytestmark = pytest.mark.spark

POLICY = """
table: privacy.{name}
columns:
  - {{name: event_id, type: long, required: true}}
  - {{name: user_id, type: string}}
  - {{name: ts, type: timestamptz}}
partition_by: [day(ts)]
{extra}
"""
ERASURE = "write_modes: {{delete: {mode}}}\nlifecycle:\n  erasure: {{key: [user_id], within: 30d}}"
REQUESTS = """requests:
  - {id: REQ-1, received: "2026-11-02", keys: {user_id: "u'1"}}
  - {id: REQ-2, received: "2026-11-03", keys: {user_id: u2}}
"""
USERS = ["u'1", "u2", "u3", "u4"]


def make(lake: Lake, policies: Path, name: str, extra: str) -> None:
    text = POLICY.format(name=name, extra=extra)
    converge(lake, text)
    (policies / f"{name}.yaml").write_text(text)
    for commit in range(3):  # three snapshots, each with files holding every user
        values = ", ".join(f"({commit * 10 + i}, '{u.replace(chr(39), chr(92) + chr(39))}', "
                           f"TIMESTAMP '2026-11-0{commit + 1} 10:00:00+00:00')" for i, u in enumerate(USERS))
        lake.spark.sql(f"INSERT INTO lake.privacy.{name} VALUES {values}")


def users(lake: Lake, name: str) -> list[str]:
    return sorted(r.user_id for r in lake.spark.sql(f"SELECT user_id FROM lake.privacy.{name}").collect())


def cli(lake: Lake, *args: str) -> tuple[int, str]:
    """The real CLI on the test's catalog, configured the pyiceberg way (environment variables)."""
    env = {f"PYICEBERG_CATALOG__LAKE__{key.upper()}": value for key, value in lake.config.properties.items()}
    result = CliRunner(env=env).invoke(app, [*args, "--catalog", "lake"])
    lake.reload()  # erase commits through pyiceberg: Spark reads the catalog afresh
    return result.exit_code, result.output


def erase(lake: Lake, policies: Path, tmp_path: Path) -> tuple[int, str, dict]:  # type: ignore[type-arg]
    requests = tmp_path / "requests.yaml"
    requests.write_text(REQUESTS)
    proof = tmp_path / "proof.json"
    code, output = cli(lake, "erase", str(policies), "--requests", str(requests), "--proof", str(proof))
    return code, output, json.loads(proof.read_text()) if proof.exists() else {}


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_rows_and_files_are_gone_and_proven(lake: Lake, tmp_path: Path, mode: str) -> None:
    name = mode.replace("-", "_")
    policies = tmp_path / "policies"
    policies.mkdir()
    make(lake, policies, name, ERASURE.format(mode=mode))
    make(lake, policies, f"{name}_kept", "")  # the same users, no erasure declared: never touched

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (table,) = proof["tables"]
    assert table["complete"] and table["requests"] == ["REQ-1", "REQ-2"]
    assert (table["rows_before"], table["rows_after"]) == (6, 0)
    assert len(table["files_with_keys_before"]) >= 3
    assert not any(Path(f.removeprefix("file:")).exists() for f in table["files_with_keys_before"])
    assert table["snapshots_checked"] and table["files_still_stored"] == []
    assert "u2" not in json.dumps(proof)  # the proof holds no key values
    assert users(lake, name) == ["u3"] * 3 + ["u4"] * 3
    assert users(lake, f"{name}_kept") == sorted(USERS * 3)
    assert "erased and proven" in output


def test_a_tag_that_keeps_the_rows_blocks_completion(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    make(lake, policies, "tagged", ERASURE.format(mode="copy-on-write"))
    lake.spark.sql("ALTER TABLE lake.privacy.tagged CREATE TAG audit_2026")
    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 1
    (table,) = proof["tables"]
    assert not table["complete"] and table["blocking_refs"] == ["audit_2026"]
    assert table["files_still_referenced"] and table["rows_after"] == 6  # the tag's snapshot still holds them
    assert "tag 'audit_2026' keeps snapshot" in output
    assert ("holding a key of REQ-1, REQ-2, and the policy does not say what erasure does with it: declare "
            "lifecycle.erasure.refs: {audit_2026: hold | rewrite | expire}") in output
    assert users(lake, "tagged") == ["u3"] * 3 + ["u4"] * 3  # gone from the current table all the same


def test_requests_that_reach_no_table_are_refused_before_anything_runs(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    make(lake, policies, "unreached", ERASURE.format(mode="copy-on-write"))
    requests = tmp_path / "requests.yaml"
    requests.write_text('requests:\n  - {id: REQ-9, received: "2026-11-02", keys: {email: a@b.c}}\n')
    code, output = cli(lake, "erase", str(policies), "--requests", str(requests))
    assert code == 1
    assert "requests.yaml:2:47: error TP602: request 'REQ-9': no table declares erasure keyed on email" in output
    assert users(lake, "unreached") == sorted(USERS * 3)
